#!/usr/bin/env bash
# A client that resolves a name itself through cage's DNS (--net-mode both) and then gives the proxy
# the synthetic address reaches the name it looked up, in every protocol (issue 19 item 4). Found:
# `curl --socks5` (not --socks5h) sent 198.18.0.1, which the proxy matched as an address and refused
# with "add --net 198.18.0.1:PORT", a rule cage itself rejects.
# Root only (a private network and mount namespace whose resolv.conf names a test DNS server on
# 127.0.0.53, so that the supervisor resolves app.cage.test to a web server on 127.0.0.1); cage runs
# there as root and as the unprivileged user. Real client: curl by SOCKS5 with an IPv4 and an IPv6
# address type, by CONNECT and by plain HTTP to the address. Twin: an address of the synthetic range
# that cage's DNS gave no name is refused, saying so, with no impossible remedy.
set -u
[ "$(id -u)" -eq 0 ] || { echo "skip: needs root for a private network namespace with its own resolv.conf"; exit 77; }
for t in unshare ip curl python3 setpriv getent; do command -v $t >/dev/null || { echo "skip: $t missing"; exit 77; }; done
CAGE=${CAGE:?}
here=$(cd "$(dirname "$0")" && pwd)
user=${CAGE_TEST_USER:-cagetest}
d=$(mktemp -d) && chmod 755 "$d" || exit 1
trap 'rm -rf "$d"' EXIT
mkdir "$d/www" && echo hello >"$d/www/f" && printf 'nameserver 127.0.0.53\n' >"$d/resolv.conf" && chmod -R a+rX "$d"
cat > "$d/try.sh" <<'SH'
P=$1
synth=$(getent hosts app.cage.test | awk 'NR == 1 { print $1 }')  # not ahostsv4: it asks with AI_ADDRCONFIG, which finds no address inside (issue 19 item 8)
echo "resolved $synth"
try() { c=$1; shift; echo "$c $(curl -fsS -m 20 "$@" 2>&1)"; }
try socks5-v4 --socks5 127.0.0.1:3128 "http://app.cage.test:$P/f"
try socks5-v6 --socks5 127.0.0.1:3128 "http://[::ffff:$synth]:$P/f"
try connect -p -x http://127.0.0.1:3128 "http://$synth:$P/f"
try http -x http://127.0.0.1:3128 "http://$synth:$P/f"
try unnamed-socks5 --socks5 127.0.0.1:3128 "http://198.18.0.77:$P/f"
try unnamed-connect -p -x http://127.0.0.1:3128 "http://198.18.0.77:$P/f"
exit 0
SH
# Everything runs inside one unshare: its processes, mounts and network vanish with it.
unshare -m -n --fork bash -s "$CAGE" "$here" "$d" "$user" <<'INNER'
set -u
CAGE=$1 here=$2 d=$3 user=$4 failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }
ip link set lo up && mount --make-rprivate / && mount --bind "$d/resolv.conf" /etc/resolv.conf || { echo "FAIL: setup" >&2; exit 1; }
python3 "$here/dns_responder.py" 127.0.0.53 app.cage.test=127.0.0.1 &
dns=$!
timeout 300 python3 -c "
import functools, http.server, os
class Q(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *a): pass
s = http.server.ThreadingHTTPServer(('127.0.0.1', 0), functools.partial(Q, directory='$d/www'))
open('$d/port.tmp', 'w').write(str(s.server_port)); os.replace('$d/port.tmp', '$d/port')
s.serve_forever()" &
web=$!
trap 'kill $dns $web 2>/dev/null' EXIT
for _ in $(seq 100); do [ -s "$d/port" ] && getent hosts app.cage.test >/dev/null && break; sleep 0.1; done
P=$(cat "$d/port")
[ "$(curl -s "http://app.cage.test:$P/f")" = hello ] || { echo "FAIL: twin: app.cage.test:$P does not answer on the host side" >&2; exit 1; }
uid=$(id -u "$user" 2>/dev/null) && as_user=(setpriv --reuid="$uid" --regid="$(id -g "$user")" --init-groups --reset-env env HOME=/tmp) || as_user=()
for who in root user; do
  run=()
  if [ $who = user ]; then [ ${#as_user[@]} -gt 0 ] || { echo "note: no user $user, user part skipped"; continue; }; run=("${as_user[@]}"); fi
  (cd / && "${run[@]}" "$CAGE" --ro "$d" --net "app.cage.test:$P" -- sh "$d/try.sh" "$P") >"$d/out" 2>"$d/err" ||
    fail "$who: the run failed: $(cat "$d/err")"
  grep -qx "resolved 198.18.0.1" "$d/out" || fail "$who: app.cage.test did not resolve to its synthetic address: $(cat "$d/out")"
  for client in socks5-v4 socks5-v6 connect http; do
    grep -qx "$client hello" "$d/out" && echo "ok: $who: $client to the synthetic address reached app.cage.test" ||
      fail "$who: $client: $(grep "^$client " "$d/out"); stderr: $(cat "$d/err")"
  done
  for client in unnamed-socks5 unnamed-connect; do
    grep -q "^$client hello" "$d/out" && fail "$who: $client reached something"
  done
  for proto in socks5 connect; do
    grep -qF "cage: net: denied ($proto) 198.18.0.77:$P is a synthetic address cage's DNS gave no name in this run" "$d/err" ||
      fail "$who: the unnamed synthetic address ($proto) was not refused as such: $(cat "$d/err")"
  done
  grep -q "add --net 198\.1[89]\." "$d/err" && fail "$who: a remedy cage rejects was suggested: $(cat "$d/err")"
  grep -q "denied.*app.cage.test" "$d/err" && fail "$who: the listed name was refused: $(cat "$d/err")"
done
[ $failures -eq 0 ] && echo "all ok" || { echo "$failures failure(s)" >&2; exit 1; }
INNER
