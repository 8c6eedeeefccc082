#!/usr/bin/env bash
# --explain under namespaces (root and unprivileged): an ungranted path is hidden (absent), and each
# refusal's line names the flag that allows it; see explain_lib.bash.
set -u
C=("$CAGE" --no-cwd)
GIT_OP=stat GIT_PATH=.git
NOT=hidden
. "$(dirname "$0")/explain_lib.bash"
