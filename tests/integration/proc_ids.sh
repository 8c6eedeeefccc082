#!/usr/bin/env bash
# The ids a workload has (src/linux/userns.cc): in the namespace mechanism exactly one uid and one gid
# exist inside, the caller's, mapped to themselves (one line, count 1), setgroups is denied, and the
# supplementary groups are gone; under the Landlock-only mechanism (no user namespace) the workload
# keeps the caller's own ids. Root and an unprivileged caller alike.
. "$(dirname "$0")/../escape/lib.bash"
uid=$(id -u) gid=$(id -g)
cage_run -- sh -c 'cat /proc/self/uid_map /proc/self/gid_map /proc/self/setgroups; id -u; id -g; id -G'
expect_rc 0 "namespaces: the ids are readable"
mapfile -t l <<<"$out"
read -r a b n <<<"${l[0]}"
[ "$a $b $n" = "$uid $uid 1" ] && pass "uid_map: only the caller's uid ($uid), mapped to itself" || fail "uid_map: '${l[0]}'"
read -r a b n <<<"${l[1]}"
[ "$a $b $n" = "$gid $gid 1" ] && pass "gid_map: only the caller's gid ($gid)" || fail "gid_map: '${l[1]}'"
[ "${#l[@]}" -eq 6 ] || fail "more map lines than one each: $out"
[ "${l[2]}" = deny ] && pass "setgroups is denied" || fail "setgroups: '${l[2]}'"
[ "${l[3]}" = "$uid" ] && [ "${l[4]}" = "$gid" ] && pass "id -u/-g: the caller's ($uid/$gid)" || fail "id: ${l[3]} ${l[4]}"
[ "${l[5]}" = "$gid" ] && pass "no supplementary group reaches the workload" || fail "id -G: '${l[5]}'"
if landlock_mechanism; then
  cage_run --mechanism landlock --allow-degraded pid -- sh -c 'id -u; id -g'
  [ "$rc" -eq 0 ] && [ "$out" = "$uid"$'\n'"$gid" ] && pass "landlock: the caller's own ids" || fail "landlock: exit $rc '$out' $err"
fi
finish
