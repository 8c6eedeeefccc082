#!/usr/bin/env bash
# Attack: under --seccomp relaxed or none (which allow user namespaces), the workload creates a nested
# user namespace, where it has CAP_SETFCAP again, and writes a file capability (cap_setuid+ep) on a
# file in its --rw grant. For a root caller the nested namespace's root is host uid 0, so the kernel
# stores the capability for host root: any host user running the file would get setuid.
# Policy: --rw rw, --seccomp relaxed and none.
# Outcome: root: no nested user namespace (namespaces: the sandbox's user.max_user_namespaces is 0;
# Landlock-only: the xattr call goes through cage's per-call check, which cannot grant it); the host
# file carries no capability valid for host root. Twin (unprivileged user, namespaces): the nested
# namespace works, and whatever it writes is tied to the user's own uid. (Found by review; here the
# chain also stops at writing the nested namespace's uid_map from inside, so the step that fails on
# the old binary is the nested namespace itself.)
. "$(dirname "$0")/lib.bash"
require_sandbox
mkdir "$work/rw" && : >"$work/rw/f" && chmod 755 "$work/rw/f"
# v2 security.capability (VFS_CAP_REVISION_2 | effective, permitted CAP_SETUID); the kernel rewrites it
# as v3 with the writer's namespace root as rootid.
attack='import os, struct, sys
blob = struct.pack("<IIIII", 0x02000001, 1 << 7, 0, 0, 0)
try:
    os.setxattr(sys.argv[1], "security.capability", blob)
    print("written")
except OSError as e:
    print("refused", e.errno)'
# The host's view: no capability, or one whose rootid is not host root.
host_root_cap() {
  "$py" - "$1" <<'EOF'
import os, struct, sys
try:
    v = os.getxattr(sys.argv[1], "security.capability")
except OSError:
    sys.exit(1)
rootid = struct.unpack("<I", v[20:24])[0] if len(v) >= 24 else 0
sys.exit(0 if rootid == 0 else 1)
EOF
}
for profile in relaxed none; do
  cage_run --seccomp "$profile" --rw "$work/rw" -- unshare -Ur "$py" -c "$attack" "$work/rw/f"
  if host_root_cap "$work/rw/f"; then
    fail "$profile: a file capability for host root was written: $out $err"
    "$py" -c 'import os,sys; os.removexattr(sys.argv[1], "security.capability")' "$work/rw/f" 2>/dev/null
  else
    pass "$profile: no file capability for host root ($(echo $out $err | head -c 120))"
  fi
done
# Twin: an unprivileged caller keeps nested user namespaces under relaxed (browsers, nested sandboxes).
if ! is_root && ! landlock_only; then
  cage_run --seccomp relaxed -- unshare -U true
  expect_rc 0 "unprivileged caller: a nested user namespace under relaxed"
fi
if is_root && ! landlock_only; then
  cage_run --seccomp relaxed -- unshare -U true
  [ "$rc" -ne 0 ] && grep -q "No space left" <<<"$err" && pass "root caller: no nested user namespace (ENOSPC)" ||
    fail "root caller: nested user namespace: exit $rc $err"
fi
finish
