#!/usr/bin/env bash
# The workload's privilege state (src/linux/caps.cc): every capability set empty (effective,
# permitted, inheritable, ambient, bounding), no_new_privs set and the securebits locked, under each
# mechanism, as root and as an unprivileged caller. One exception, by design: an unprivileged caller
# under the Landlock-only mechanism holds no CAP_SETPCAP, so its bounding set stays the one it came
# with (checked equal to the outside's; with no_new_privs and no permitted set it grants nothing). Its twin: the same read outside shows the caller's
# own state (root's full sets), so the read itself is meaningful.
. "$(dirname "$0")/../escape/lib.bash"
read_state='grep -E "^(CapInh|CapPrm|CapEff|CapBnd|CapAmb|NoNewPrivs):" /proc/self/status'
outside=$(sh -c "$read_state")
if [ "$(id -u)" -eq 0 ]; then
  grep -q "^CapEff:.*[1-9a-f]" <<<"$outside" && pass "outside, root has capabilities (the twin)" || fail "outside: $outside"
fi
mechs=(namespaces)
landlock_mechanism && mechs+=(landlock)
for m in "${mechs[@]}"; do
  opts=(--mechanism "$m"); [ "$m" = landlock ] && opts+=(--allow-degraded pid)
  cage_run "${opts[@]}" -- sh -c "$read_state"
  expect_rc 0 "$m: status readable"
  for set in CapInh CapPrm CapEff CapBnd CapAmb; do
    if [ "$set" = CapBnd ] && [ "$m" = landlock ] && [ "$(id -u)" -ne 0 ]; then
      [ "$(grep "^CapBnd:" <<<"$out")" = "$(grep "^CapBnd:" <<<"$outside")" ] &&
        pass "$m: CapBnd is the caller's own (not changeable without CAP_SETPCAP)" || fail "$m: CapBnd grew: $out"
      continue
    fi
    grep -q "^$set:[[:space:]]*0000000000000000$" <<<"$out" && pass "$m: $set empty" || fail "$m: $set in '$out'"
  done
  grep -q "^NoNewPrivs:[[:space:]]*1$" <<<"$out" && pass "$m: no_new_privs set" || fail "$m: NoNewPrivs in '$out'"
done
finish
