#!/usr/bin/env bash
# The curated /etc is filled by the supervisor while init mounts the rest of the view (plan_fill in
# mount.cc): init hands it the tmpfs as a detached mount (fsopen) and waits for its answer before
# anything beneath /etc. Checked here, each against its twin:
#  - the view is the same whoever fills it: /etc listed with kinds, modes, sizes and link texts, and
#    every file's sha256, equal between a normal run and one where fsopen fails (init then mounts the
#    tmpfs and creates the entries itself, as before), and under the caller's umask 077 (the entries
#    took the caller's umask before: 0600 files) against umask 022;
#  - a failure of the supervisor's fill (strace injects ENOSPC into its mkdirat/symlinkat, which only
#    the fill makes) ends the run with 125 naming the /etc entry, and the workload never runs;
#  - the supervisor killed in the middle of the fill leaves no process of the run behind.
# Needs strace; the namespaces mechanism only (Landlock alone builds no view).
. "$(dirname "$0")/../escape/lib.bash"
require_sandbox
landlock_only && { echo "skip: no view of cage's own under Landlock alone" >&2; exit 77; }
command -v strace >/dev/null || { echo "skip: no strace" >&2; exit 77; }

marker="cage-etc-fill-$$-$RANDOM"  # this instance's runs only: the user's copy of the test may run beside it
list='cd /etc && find . -printf "%p %y %m %s %l\n" | LC_ALL=C sort && find . -type f -exec sha256sum {} + | LC_ALL=C sort'
cage_run -- sh -c "$list"
expect_rc 0 "the view, filled by the supervisor"
filled=$out
[ "$(grep -c . <<<"$filled")" -gt 20 ] && pass "/etc lists $(grep -c . <<<"$filled") lines" ||
  fail "/etc lists too little: $filled"
grep -q '^\./passwd f 644 ' <<<"$filled" && pass "/etc/passwd is 0644" || fail "/etc/passwd: $(grep passwd <<<"$filled")"

st=0
strace -f -qq -o /dev/null -e trace=fsopen -e inject=fsopen:error=ENOSYS \
  "$CAGE" -- sh -c "$list" </dev/null >"$work/nofsopen" 2>"$work/err" || st=$?
if [ "$st" -eq 0 ] && [ "$(cat "$work/nofsopen")" = "$filled" ]; then
  pass "without fsopen (init fills /etc itself) the view is the same"
else
  fail "without fsopen: exit $st, $(diff <(echo "$filled") "$work/nofsopen" | head -5) $(head -c 300 "$work/err")"
fi

(umask 077 && "$CAGE" -- sh -c "$list" </dev/null >"$work/umask" 2>"$work/err") || st=$?
if [ "$(cat "$work/umask")" = "$filled" ]; then
  pass "under umask 077 the view is the same"
else
  fail "under umask 077: $(diff <(echo "$filled") "$work/umask" | head -5) $(head -c 300 "$work/err")"
fi
(umask 077 && "$CAGE" -- sh -c 'umask' </dev/null >"$work/umask" 2>"$work/err")
[ "$(cat "$work/umask")" = 0077 ] && pass "the workload keeps the caller's umask" ||
  fail "the workload's umask: $(cat "$work/umask") $(cat "$work/err")"

# The supervisor alone (no -f): its only mkdirat and symlinkat are the fill's.
st=0
timeout -s KILL 20 strace -qq -o /dev/null -e trace=mkdirat,symlinkat -e inject=mkdirat,symlinkat:error=ENOSPC \
  "$CAGE" -- sh -c 'echo RAN' </dev/null >"$work/out" 2>"$work/err" || st=$?
if [ "$st" -eq 0 ] && ! grep -qE '^\./[^ ]+ [dl] ' <<<"$filled"; then
  echo "skip: this host's curated /etc copies no directory or link" >&2
elif [ "$st" -eq 125 ] && grep -q "/etc/" "$work/err" && ! grep -q RAN "$work/out"; then
  pass "the fill fails: exit 125, nothing ran ($(head -c 160 "$work/err" | tr '\n' ' '))"
else
  fail "the fill fails: exit $st; stdout: $(cat "$work/out"); stderr: $(cat "$work/err")"
fi

st=0
timeout -s KILL 20 strace -qq -o /dev/null -e trace=mkdirat,symlinkat -e inject=mkdirat,symlinkat:signal=KILL \
  "$CAGE" -- sh -c "echo RAN; sleep 30; : $marker" </dev/null >"$work/out" 2>"$work/err" || st=$?
[ "$st" -eq 137 ] && ! grep -q RAN "$work/out" && pass "supervisor killed during the fill (exit $st), nothing ran" ||
  fail "supervisor killed during the fill: exit $st; stdout: $(cat "$work/out")"
sleep 0.3
pgrep -f "$marker" >/dev/null && fail "a process of the killed run is left" || pass "nothing left"
finish
