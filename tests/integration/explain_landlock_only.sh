#!/usr/bin/env bash
# --explain under the Landlock-only mechanism (root and unprivileged): an ungranted path is refused
# (EACCES), and each refusal's line names the flag that allows it; see explain_lib.bash.
set -u
C=("$CAGE" --mechanism landlock --allow-degraded pid,exec-written --no-cwd)
GIT_OP=read GIT_PATH=.git/HEAD
NOT=refused
if ! "${C[@]}" -- true 2>/tmp/explain_landlock_only.$$; then
  echo "skip: the Landlock-only mechanism is refused here: $(cat /tmp/explain_landlock_only.$$)"
  rm -f /tmp/explain_landlock_only.$$
  exit 77
fi
rm -f /tmp/explain_landlock_only.$$
. "$(dirname "$0")/explain_lib.bash"
