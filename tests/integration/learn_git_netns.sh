#!/usr/bin/env bash
# --learn on `git clone` over (dumb) HTTP from a test host in a network namespace this test creates
# (root only: veth, 10.78.x.y), reached through cage's proxy with --net while learning: the profile
# allows exactly that destination and reruns the clone with --profile alone; without it, refused.
set -u
[ "$(id -u)" -eq 0 ] || { echo "skip: needs root to create the test host's netns"; exit 77; }
. "$(dirname "$0")/learn_lib.bash" ip git python3
ns=cagelearn$$; vh=clh$$; vn=cln$$
cleanup() {
  ip netns pids "$ns" 2>/dev/null | xargs -r kill 2>/dev/null
  ip link del "$vh" 2>/dev/null; ip netns del "$ns" 2>/dev/null; rm -rf "$d"
}
trap cleanup EXIT
net=$((RANDOM % 200 + 20)); hip=10.78.$net.1; tip=10.78.$net.2
ip netns add "$ns" && ip link add "$vh" type veth peer name "$vn" && ip link set "$vn" netns "$ns" || fail "netns setup"
ip addr add $hip/24 dev "$vh"; ip link set "$vh" up
ip -n "$ns" addr add $tip/24 dev "$vn"; ip -n "$ns" link set "$vn" up; ip -n "$ns" link set lo up
mkdir "$d/src" "$d/www"
git -C "$d/src" init -q && echo content > "$d/src/file" && git -C "$d/src" add file &&
  git -C "$d/src" -c user.email=t@t -c user.name=t commit -q -m one || fail "git setup"
git clone -q --bare "$d/src" "$d/www/repo.git" && git -C "$d/www/repo.git" update-server-info || fail "bare repo"
(cd "$d/www" && exec ip netns exec "$ns" python3 -m http.server 8080 --bind $tip >/dev/null 2>&1) &
for _ in $(seq 100); do ip netns exec "$ns" ss -ltnH "sport = :8080" | grep -q . && break; sleep 0.1; done
url="http://$tip:8080/repo.git"
git ls-remote "$url" >/dev/null 2>&1 || fail "twin: the test host's repository is unreachable from the host"
cd "$d/proj" || fail "cd"

timeout 120 "$CAGE" --learn cage.toml --net "$tip:8080" -- git clone -q "$url" r 2>"$d/err" ||
  fail "learning failed: $(cat "$d/err")"
has "  \"$tip:8080\","
has "  \"$d/proj\","
rm -rf r
timeout 120 "$CAGE" --profile "$P" -- git clone -q "$url" r 2>"$d/err" || fail "the learned profile did not rerun: $(cat "$d/err")"
[ "$(cat r/file)" = content ] || fail "the rerun did not clone"
rm -rf r
without "$tip:8080"
if timeout 120 "$CAGE" --profile "$d/less.toml" -- git clone -q "$url" r 2>"$d/err"; then fail "cloned without [net]"; fi
grep -q "$tip:8080" "$d/err" || fail "the denial does not name the destination: $(cat "$d/err")"
exit 0
