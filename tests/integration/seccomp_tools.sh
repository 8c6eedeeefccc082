#!/usr/bin/env bash
# The default seccomp profile must not break ordinary work: a C build with make and gcc, python3
# (threads, fork, subprocess), git, and a shell running background jobs. Each tool is skipped
# (and counted) only when it is missing on the host.
set -u
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
. "$(dirname "$0")/seccomp_lib.bash"
require_sandbox default
chmod 777 "$work"  # the unprivileged run of this script writes here too
ran=0

in_cage() { "$CAGE" --rw "$work" --chdir "$work" -- "$@"; }

if command -v make >/dev/null && command -v gcc >/dev/null; then
  ran=$((ran + 1))
  printf '#include <stdio.h>\nint main(void) { puts("built-ok"); return 0; }\n' >"$work/hello.c"
  printf 'hello: hello.c\n\tgcc -O2 -o $@ $<\n' >"$work/Makefile"
  in_cage make -C "$work" >"$work/make.log" 2>&1 || fail "make + gcc failed: $(tail -5 "$work/make.log")"
  [ "$(in_cage "$work/hello" 2>&1)" = built-ok ] || fail "the built program did not run"
else
  echo "note: make or gcc missing, C build not tried" >&2
fi

py=$(command -v /usr/bin/python3 python3 | head -1)
if [ -n "$py" ]; then
  ran=$((ran + 1))
  out=$(in_cage "$py" -c '
import os, subprocess, threading
t = threading.Thread(target=lambda: None); t.start(); t.join()
pid = os.fork()
if pid == 0: os._exit(7)
assert os.waitpid(pid, 0)[1] >> 8 == 7
print(subprocess.run(["sh", "-c", "echo sub"], capture_output=True, text=True).stdout.strip(), "py-ok")
' 2>&1) || fail "python3 failed: $out"
  [ "$out" = "sub py-ok" ] || fail "python3 output: $out"
else
  echo "note: python3 missing" >&2
fi

if command -v git >/dev/null; then
  ran=$((ran + 1))
  out=$(in_cage sh -c 'export HOME=$PWD GIT_CONFIG_NOSYSTEM=1 && git init -q repo && cd repo &&
    echo x > f && git add f && git -c user.name=t -c user.email=t@t commit -qm m && git log --oneline | wc -l' 2>&1)
  [ "$out" = 1 ] || fail "git failed: $out"
else
  echo "note: git missing" >&2
fi

if command -v bash >/dev/null; then
  ran=$((ran + 1))
  # Job 1 blocks on a fifo nobody writes until it is killed: no job may end on its own before
  # `kill %1` (a timed `sleep 0.2` ended first on Debian's 6.1 under emulation, and `wait %1`
  # found no such job).
  out=$(in_cage bash -ic 'mkfifo jobs.fifo; cat jobs.fifo & sleep 0.1 & jobs | wc -l; kill %1 && wait %1; [ $? -eq 143 ] && echo jobs-ok' 2>/dev/null)
  echo "$out" | grep -q jobs-ok || fail "bash -i with background jobs: $out"
fi

[ "$ran" -gt 0 ] || { echo "skip: none of make/gcc, python3, git, bash on this host" >&2; exit 77; }
finish
