#!/usr/bin/env bash
# No silent no-ops (issue 20, point 3): a --hide of a path that does not exist (a typo such as
# ./.evn for ./.env) is refused naming the path, next to its twins (the right path is hidden; a
# profile's optional = true skips an absent one); a grant of a missing path is refused too. A working
# directory the implicit grant skips ($HOME, /tmp) is said in one line at start and in --dry-run,
# next to the twin run from a project directory that says nothing.
set -u
: "${CAGE:?}"
work=$(mktemp -d); chmod 755 "$work"; trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }
run() { rc=0; "$CAGE" "$@" >"$work/out" 2>"$work/err" || rc=$?; out=$(cat "$work/out"); err=$(cat "$work/err"); }

mkdir -p "$work/proj" "$work/home"
echo SECRET >"$work/proj/.env"
run --ro "$work/proj" -- true
if [ "$rc" -ne 0 ]; then
  grep -q spawn_sandbox_unavailable <<<"$err" && { echo "skip: $err"; exit 77; }
  echo "FAIL: the sandbox does not start: $err" >&2; exit 1
fi

# --hide: the typo is refused and names itself; the right path is hidden
run --ro "$work/proj" --hide "$work/proj/.evn" -- cat "$work/proj/.env"
[ "$rc" -eq 125 ] && grep -q -- "--hide $work/proj/.evn" <<<"$err" && grep -q "nothing to hide" <<<"$err" &&
  ! grep -q SECRET <<<"$out" || fail "--hide of a missing path: exit $rc, out '$out', err '$err'"
run --ro "$work/proj" --hide "$work/proj/.env" -- cat "$work/proj/.env"
[ "$rc" -ne 0 ] && ! grep -q SECRET <<<"$out" || fail "--hide of the real path: exit $rc, out '$out'"
# relative, from the project directory, as a newcomer types it
(cd "$work/proj" && "$CAGE" --hide ./.evn -- cat .env >"$work/out" 2>"$work/err"); rc=$?
[ "$rc" -eq 125 ] && ! grep -q SECRET "$work/out" || fail "--hide ./.evn: exit $rc, out $(cat "$work/out")"
(cd "$work/proj" && "$CAGE" --hide ./.env -- cat .env >"$work/out" 2>"$work/err"); rc=$?
[ "$rc" -ne 0 ] && ! grep -q SECRET "$work/out" || fail "--hide ./.env: exit $rc, out $(cat "$work/out")"

# the same refusal where only Landlock confines (--hide there needs --allow-degraded hide)
L=(--mechanism landlock --allow-degraded pid,hide --ro "$work/proj")
. "$(dirname "$0")/../escape/mechanism.bash"
if landlock_mechanism; then
  run "${L[@]}" --hide "$work/proj/.evn" -- true
  [ "$rc" -eq 125 ] && grep -q "nothing to hide" <<<"$err" || fail "landlock: --hide of a missing path: exit $rc, err '$err'"
  run "${L[@]}" --hide "$work/proj/.env" -- true
  [ "$rc" -eq 0 ] || fail "landlock: --hide of the real path: exit $rc, err '$err'"
else
  echo "note: --mechanism landlock does not start here: its --hide refusal is not reached" >&2
fi

# a profile marks a path that may be absent optional: skipped, the run goes on
cat >"$work/opt.toml" <<EOF
[fs]
ro = ["$work/proj"]
hide = [{ path = "$work/proj/.cache-absent", optional = true }, "$work/proj/.env"]
EOF
run --profile "$work/opt.toml" -- cat "$work/proj/.env"
[ "$rc" -ne 0 ] && [ "$rc" -ne 125 ] && ! grep -q SECRET <<<"$out" || fail "optional absent hide: exit $rc, err '$err'"
sed -i 's/, optional = true//' "$work/opt.toml"
run --profile "$work/opt.toml" -- true
[ "$rc" -eq 125 ] && grep -q "cache-absent" <<<"$err" || fail "required absent hide in a profile: exit $rc, err '$err'"

# grants of a missing path: refused, naming it (twins: the existing path runs, above)
for flag in --ro --rw; do
  run "$flag" "$work/proj/typo" -- true
  [ "$rc" -eq 125 ] && grep -q -- "$flag $work/proj/typo" <<<"$err" || fail "$flag of a missing path: exit $rc, err '$err'"
done

# the working directory: from $HOME one line at start on a terminal (a person reads it; a script's
# stderr stays the command's own) and a note in --dry-run; --quiet drops the line
cwd_run() { local dir=$1; shift; (cd "$dir" && HOME="$work/home" "$CAGE" "$@" >"$work/out" 2>"$work/err"); rc=$?; out=$(cat "$work/out"); err=$(cat "$work/err"); }
tty_run() {  # tty_run DIR ARGS...: cage on a pty (script(1)), its output (stdout and stderr) in $tty
  local dir=$1; shift
  tty=$(cd "$dir" && HOME="$work/home" script -qec "$(printf '%q ' "$CAGE" "$@")" /dev/null </dev/null | tr -d '\r')
}
command -v script >/dev/null || { echo "skip: script(1) missing" >&2; exit 77; }
tty_run "$work/home" -- true
[ "$(grep -c . <<<"$tty")" -eq 1 ] && grep -q "^cage: note: the working directory $work/home is not granted (it is \$HOME)" <<<"$tty" ||
  fail "from \$HOME on a terminal: '$tty'"
cwd_run "$work/home" -- true
[ "$rc" -eq 0 ] && [ -z "$err" ] || fail "from \$HOME, stderr not a terminal: exit $rc, err '$err'"
tty_run "$work/home" --quiet -- true
[ -z "$tty" ] || fail "--quiet from \$HOME: '$tty'"
cwd_run "$work/home" --dry-run -- true
grep -q "^note: .*working directory $work/home is not granted" <<<"$out" || fail "--dry-run from \$HOME: $out"
cwd_run "$work/home" --dry-run --json -- true
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if "not granted" in d.get("cwd_note","") else 1)' "$work/out" ||
  fail "--dry-run --json from \$HOME has no cwd_note"
tty_run /tmp -- true
grep -q "working directory /tmp is not granted" <<<"$tty" || fail "from /tmp: '$tty'"
# twins: a project directory is granted read-only and nothing is said; nor when $HOME is granted
cwd_run "$work/proj" -- cat .env
[ "$rc" -eq 0 ] && [ "$out" = SECRET ] && [ -z "$err" ] || fail "from a project: exit $rc, out '$out', err '$err'"
cwd_run "$work/proj" --dry-run -- true
! grep -q "not granted" <<<"$out" || fail "--dry-run from a project has a note"
cwd_run "$work/home" --ro "$work/home" -- true
[ "$rc" -eq 0 ] && [ -z "$err" ] || fail "from a granted \$HOME: exit $rc, err '$err'"

# From a git repository's subdirectory only the subdirectory is shown: said on a terminal and in
# --dry-run with the grant that makes git work; with that grant git finds the repository and
# nothing is said; from the repository's root nothing is said either.
if command -v git >/dev/null; then
  mkdir -p "$work/repo/sub" && git -C "$work/repo" init -q
  tty_run "$work/repo/sub" -- true
  grep -q "^cage: note: the working directory is inside the git repository $work/repo, of which only $work/repo/sub is shown.*--ro $work/repo" <<<"$tty" ||
    fail "from a repository's subdirectory on a terminal: '$tty'"
  cwd_run "$work/repo/sub" --dry-run -- true
  grep -q "^note: .*inside the git repository $work/repo" <<<"$out" || fail "--dry-run from a repository's subdirectory: $out"
  cwd_run "$work/repo/sub" -- git rev-parse --show-toplevel
  [ "$rc" -ne 0 ] || fail "git found the repository without its grant: $out"
  cwd_run "$work/repo/sub" --ro "$work/repo" -- git -c safe.directory='*' rev-parse --show-toplevel
  [ "$rc" -eq 0 ] && [ "$out" = "$work/repo" ] || fail "with --ro REPO git did not find it: exit $rc, '$out' '$err'"
  tty_run "$work/repo/sub" --ro "$work/repo" -- true
  [ -z "$tty" ] || fail "a note with the repository granted: '$tty'"
  cwd_run "$work/repo" --dry-run -- true
  ! grep -q "git repository" <<<"$out" || fail "--dry-run from the repository's root has a note: $out"
fi

if [ "$failures" -ne 0 ]; then echo "$failures failure(s)" >&2; exit 1; fi
echo ok
