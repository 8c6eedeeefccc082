#!/usr/bin/env bash
# Exit status conventions: the workload's own (0, 3), 128+N when it dies of signal N (kill -9 $$
# inside: 137), 127 command not found, 126 not executable, 125 cage's own errors (bad flags).
. "$(dirname "$0")/../escape/lib.bash"
require_sandbox
mkdir "$work/bin"
printf '#!/bin/sh\necho hi\n' >"$work/bin/noexec" && chmod 644 "$work/bin/noexec"
cage_run -- true;                        expect_rc 0 "true"
cage_run -- sh -c 'exit 3';              expect_rc 3 "exit 3"
cage_run -- sh -c 'kill -9 $$';          expect_rc 137 "kill -9 \$\$ inside"
cage_run -- sh -c 'kill -SEGV $$';       expect_rc 139 "SIGSEGV inside"
cage_run -- cage-no-such-command-$$;     expect_rc 127 "missing command"
cage_run -- /usr/bin/cage-no-such-$$;    expect_rc 127 "missing absolute command"
cage_run --ro "$work/bin" -- "$work/bin/noexec"; expect_rc 126 "non-executable command"
cage_run --ro "$work/bin" -- "$work/bin";  expect_rc 126 "a directory as command"
cage_run --no-such-flag -- true;         expect_rc 125 "unknown flag"
cage_run --timeout -- true;              expect_rc 125 "flag without its value"
finish
