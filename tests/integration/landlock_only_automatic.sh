#!/usr/bin/env bash
# For real: where user namespaces are blocked (a user namespace whose max_user_namespaces is 0, as on
# hardened hosts; an outer seccomp filter refusing CLONE_NEWUSER, as Docker's and Kubernetes' default
# profiles do) cage chooses the Landlock-only mechanism by itself, says so, and still enforces;
# --mechanism namespaces is refused there.
. "$(dirname "$0")/landlock_only.bash"
# For real: a user namespace where no further user namespace can be made, as on hardened hosts.
if unshare -Ur true 2>/dev/null; then
  out=$(unshare -Ur sh -c "echo 0 > /proc/sys/user/max_user_namespaces && \
        '$CAGE' --allow-degraded pid --ro '$d/ro' -- cat '$d/ro/f' && \
        '$CAGE' --allow-degraded pid --dry-run -- true | head -1" 2>&1) || fail "automatic choice of the Landlock-only mechanism failed: $out"
  echo "$out" | grep -q "^data$" || fail "automatic choice of the Landlock-only mechanism did not run: $out"
  echo "$out" | grep -q "mechanism landlock" || fail "automatic choice of the Landlock-only mechanism not reported: $out"
  if unshare -Ur sh -c "echo 0 > /proc/sys/user/max_user_namespaces && '$CAGE' --mechanism namespaces -- true" 2>/dev/null; then
    fail "--mechanism namespaces ran where user namespaces are blocked"
  fi
fi
# For real, the container way: an outer seccomp filter refusing unshare/clone(CLONE_NEWUSER), as
# Docker's and Kubernetes' default profiles do. cage notices, falls back, and still enforces.
out=$("$CAGE_PROBE" deny-userns "$CAGE" --no-cwd --allow-degraded pid --ro "$d/ro" --ro "$probe_dir" -- sh -c \
      "cat '$d/ro/f'; cat '$d/secret' 2>/dev/null || echo secret-denied; '$CAGE_PROBE' write '$d/out/z' >/dev/null 2>&1 || echo write-denied" 2>&1)
[ "$(echo $out)" = "data secret-denied write-denied" ] || fail "under a container-like seccomp filter: $out"
"$CAGE_PROBE" deny-userns "$CAGE" --allow-degraded pid --dry-run -- true | grep -q "mechanism landlock" ||
  fail "the container-like filter was not detected"
if "$CAGE_PROBE" deny-userns "$CAGE" --mechanism namespaces -- true 2>"$d/err"; then fail "namespaces ran under the filter"; fi
grep -q spawn_sandbox_unavailable "$d/err" || fail "refusal under the filter: $(cat "$d/err")"
nothing_left
echo "landlock_only_automatic: ok"
