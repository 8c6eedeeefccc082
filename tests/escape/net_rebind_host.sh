#!/usr/bin/env bash
# Attack: DNS rebinding into the host itself. A wildcard rule's name is answered (by DNS the attacker
# controls) with an address the host holds on one of its interfaces (a public-looking one: docker0's,
# a VPN's, the machine's own), or with a special-purpose one (TEST-NET-2); the proxy connected there
# and the workload reached a service the host offers only to itself. Found by an outside review.
# Policy: --net '*.allowed.test:PORT'. Expected: 403 naming the address and why, through HTTP and
# SOCKS5, nothing fetched. Twins: the same service listed by its literal address is fetched.
# Root only (a private network and mount namespace: a dummy interface, or lo, holding 45.77.0.7 and
# 198.51.100.7, a web server on them, a DNS server on 127.0.0.53 and its resolv.conf); cage runs
# there as root and as the unprivileged user, with the mechanism lib.bash picks.
if [ -z "${CAGE_REBIND_NETNS:-}" ]; then
  [ "$(id -u)" -eq 0 ] || { echo "skip: needs root for a private network namespace with its own resolv.conf"; exit 77; }
  for t in unshare ip curl python3 setpriv; do command -v $t >/dev/null || { echo "skip: $t missing"; exit 77; }; done
  exec unshare -m -n --fork env CAGE_REBIND_NETNS=1 bash "$0" "$@"
fi
here=$(cd "$(dirname "$0")/../integration" && pwd)
. "$(dirname "$0")/lib.bash"
require_sandbox  # skips where the mechanism is refused (the Landlock-only one below Landlock ABI 6)
user=${CAGE_TEST_USER:-cagetest}
host_ip=45.77.0.7 doc_ip=198.51.100.7
ip link set lo up && mount --make-rprivate / || { fail "setup"; finish; }
dev=lo
ip link add cage-rb0 type dummy 2>/dev/null && ip link set cage-rb0 up && dev=cage-rb0
ip addr add $host_ip/32 dev $dev && ip addr add $doc_ip/32 dev $dev || { fail "cannot add addresses to $dev"; finish; }
printf 'nameserver 127.0.0.53\n' >"$work/resolv.conf" && mount --bind "$work/resolv.conf" /etc/resolv.conf ||
  { fail "cannot bind a resolv.conf"; finish; }
mkdir "$work/www" && echo HOST-ONLY-SERVICE >"$work/www/s.txt"
python3 "$here/dns_responder.py" 127.0.0.53 h.allowed.test=$host_ip doc.allowed.test=$doc_ip &
at_exit "kill $!"
python3 -c "
import functools, http.server, os, sys
class Q(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *a): pass
s = http.server.ThreadingHTTPServer(('0.0.0.0', 0), functools.partial(Q, directory='$work/www'))
open('$work/port.tmp', 'w').write(str(s.server_port)); os.replace('$work/port.tmp', '$work/port')
s.serve_forever()" &
at_exit "kill $!"
for _ in $(seq 100); do [ -s "$work/port" ] && break; sleep 0.1; done
P=$(cat "$work/port" 2>/dev/null)
[ -n "$P" ] || { fail "web server did not start"; finish; }
curl -s -m 5 "http://$host_ip:$P/s.txt" | grep -q HOST-ONLY-SERVICE || { fail "the service is not up on $host_ip"; finish; }
as_user=()
uid=$(id -u "$user" 2>/dev/null) && as_user=(setpriv --reuid="$uid" --regid="$(id -g "$user")" --init-groups --reset-env env HOME=/tmp)
# fetch WHO PROTO RULE URL: curl inside cage through the proxy the environment names (HTTP or SOCKS5)
fetch() {
  local who=$1 proto=$2 rule=$3 url=$4 run=() var=http_proxy
  [ "$who" = user ] && run=("${as_user[@]}")
  [ "$proto" = socks ] && var=ALL_PROXY
  rc=0
  (cd "$work/cwd" && "${run[@]}" "$CAGE" ${mech[@]+"${mech[@]}"} --net "$rule" -- \
    sh -c "curl -s -m 10 -x \"\$$var\" -w ' code=%{http_code}' '$url'") </dev/null >"$work/.out" 2>"$work/.err" || rc=$?
  out=$(cat "$work/.out") err=$(cat "$work/.err")
}
for who in root user; do
  if [ $who = user ] && [ ${#as_user[@]} -eq 0 ]; then echo "note: no user $user, user part skipped"; continue; fi
  for proto in http socks; do
    for target in "h.allowed.test $host_ip answers" "doc.allowed.test $doc_ip special-purpose"; do
      set -- $target
      fetch $who $proto "*.allowed.test:$P" "http://$1:$P/s.txt"
      if grep -q HOST-ONLY-SERVICE <<<"$out"; then
        fail "$who/$proto: *.allowed.test reached the host's own service at $2 through $1: $out"
      elif grep -q "$2" <<<"$err" && grep -q "$3" <<<"$err"; then
        pass "$who/$proto: $1 -> $2 refused ($(grep -m1 -o "resolves to.*" <<<"$err" | cut -c1-110))"
      else
        fail "$who/$proto: $1 -> $2 not fetched, but the refusal does not name the address and why: $out; $err"
      fi
      [ "$proto" = http ] && ! grep -q "code=403" <<<"$out" && fail "$who/http: $1 got no 403: $out"
      fetch $who $proto "$2:$P" "http://$2:$P/s.txt"
      grep -q HOST-ONLY-SERVICE <<<"$out" && pass "$who/$proto twin: --net $2:$P fetches it" ||
        fail "$who/$proto twin: --net $2:$P: rc $rc, $out; $err"
    done
  done
done
finish
