#!/usr/bin/env bash
# --learn on a small C build (cc and make, a header outside the project): the profile grants the
# project read-write and the header read-only, comments out the credential store make looked at,
# suggests the limits it reached (commented out), and reruns the build with --profile alone; without
# the header's line the build fails.
set -u
. "$(dirname "$0")/learn_lib.bash" cc make
mkdir "$d/inc"
echo '#define GREETING "hello"' > "$d/inc/greet.h"
printf '#include <stdio.h>\n#include "greet.h"\nint main(void) { puts(GREETING); return 0; }\n' > "$d/proj/hello.c"
printf 'hello: hello.c\n\tcat $(HOME)/.ssh/config 2>/dev/null || true\n\tcc -I%s -o hello hello.c\n' \
  "$d/inc" > "$d/proj/Makefile"
chmod -R a+rX "$d"
cd "$d/proj" || fail "cd"

"$CAGE" --learn cage.toml -- make -s >/dev/null 2>"$d/err" || fail "learning failed: $(cat "$d/err")"
grep -qxF "cage: learn: wrote $P" "$d/err" || fail "no word of the profile: $(cat "$d/err")"
[ "$(./hello)" = hello ] || fail "the learning run did not build"
has "version = 1"
has "# command: make -s"
has "  \"$d/proj\","
has "  \"$d/inc\","  # the -I directory cc searched
has "  # \"$d/home/.ssh/config\",  # a credential store, hidden while learning: grant it only if the command needs it"
grep -q '^  "/usr' "$P" && fail "the default view's paths were granted: $(cat "$P")"
# The limits it reached: suggested, commented out (cc's peak is well under 64 MiB: the floor).
has "# [limits]"
grep -qE '^# memory = "[0-9]+M"  # peak [0-9]+ MiB: ' "$P" || fail "no memory figure: $(cat "$P")"
grep -qE '^# pids = [0-9]+  # [1-9][0-9]*: ' "$P" || fail "no process figure: $(cat "$P")"
grep -q '^\[limits\]' "$P" && fail "a limit was enforced: $(cat "$P")"

# Never replaced: a second --learn to the same file refuses before running anything.
"$CAGE" --learn cage.toml -- touch "$d/proj/ran" 2>"$d/err"; rc=$?
[ $rc = 125 ] || fail "an existing profile was not refused with 125 (got $rc)"
grep -q "invalid_policy: --learn cage.toml: the file exists" "$d/err" || fail "refusal unclear: $(cat "$d/err")"
[ -e "$d/proj/ran" ] && fail "the command ran although the profile exists"

rm -f hello
"$CAGE" --profile "$P" -- make -s >/dev/null 2>"$d/err" || fail "the learned profile did not rerun: $(cat "$d/err")"
[ "$(./hello)" = hello ] || fail "the rerun did not build"

rm -f hello
without "/inc\","
if "$CAGE" --profile "$d/less.toml" -- make -s >/dev/null 2>"$d/err"; then fail "built without the header's grant"; fi
grep -q "greet.h" "$d/err" || fail "the denial is not the header's: $(cat "$d/err")"
[ -e hello ] && fail "the denied build left a binary"
exit 0
