#!/usr/bin/env bash
# --net resolves exactly the name the client asked for: the resolver's search list (resolv.conf
# "search") is never appended. Found: with "search corp.test", a listed name that does not exist
# (nx.allowed.test) was looked up again as nx.allowed.test.corp.test, whose answer (here 127.0.0.1)
# the proxy then used under the listed name's consent, so whoever controls a search domain's DNS
# chose where an allowed name led (any address, the host's loopback included).
# Root only (a private network and mount namespace with its own resolv.conf and a test DNS server on
# 127.0.0.53); cage runs there as root and as the unprivileged user. Expected: the missing name gets
# 502 (cannot resolve) through HTTP and SOCKS5, nothing is fetched; twin: a listed name that exists
# (ok.allowed.test -> 127.0.0.1) is fetched.
set -u
[ "$(id -u)" -eq 0 ] || { echo "skip: needs root for a private network namespace with its own resolv.conf"; exit 77; }
for t in unshare ip curl python3 setpriv; do command -v $t >/dev/null || { echo "skip: $t missing"; exit 77; }; done
CAGE=${CAGE:?}
here=$(cd "$(dirname "$0")" && pwd)
user=${CAGE_TEST_USER:-cagetest}
d=$(mktemp -d) && chmod 755 "$d" || exit 1
trap 'rm -rf "$d"' EXIT
mkdir "$d/www" && echo SECRET-LOOPBACK >"$d/www/s.txt" && printf 'nameserver 127.0.0.53\nsearch corp.test\n' >"$d/resolv.conf"
# Everything runs inside one unshare: its processes, mounts and network vanish with it.
unshare -m -n --fork bash -s "$CAGE" "$here" "$d" "$user" <<'INNER'
set -u
CAGE=$1 here=$2 d=$3 user=$4 failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }
ip link set lo up && mount --make-rprivate / && mount --bind "$d/resolv.conf" /etc/resolv.conf || { echo "FAIL: setup" >&2; exit 1; }
python3 "$here/dns_responder.py" 127.0.0.53 nx.allowed.test.corp.test=127.0.0.1 ok.allowed.test=127.0.0.1 &
dns=$!
timeout 120 python3 -c "
import functools, http.server, os, sys
class Q(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *a): pass
s = http.server.ThreadingHTTPServer(('127.0.0.1', 0), functools.partial(Q, directory='$d/www'))
open('$d/port.tmp', 'w').write(str(s.server_port)); os.replace('$d/port.tmp', '$d/port')
s.serve_forever()" &
web=$!
trap 'kill $dns $web 2>/dev/null' EXIT
for _ in $(seq 100); do [ -s "$d/port" ] && break; sleep 0.1; done
P=$(cat "$d/port")
python3 -c "import socket; socket.getaddrinfo('nx.allowed.test', None)" 2>/dev/null &&
  echo "note: the host's own resolver appends the search domain (the lookup the proxy must not make)"
uid=$(id -u "$user" 2>/dev/null) && as_user=(setpriv --reuid="$uid" --regid="$(id -g "$user")" --init-groups --reset-env env HOME=/tmp) || as_user=()
for who in root user; do
  run=()
  if [ $who = user ]; then [ ${#as_user[@]} -gt 0 ] || { echo "note: no user $user, user part skipped"; continue; }; run=("${as_user[@]}"); fi
  for proto in http socks; do
    opt=(); [ $proto = socks ] && opt=(--socks5-hostname 127.0.0.1:3128)
    out=$(cd / && "${run[@]}" "$CAGE" --net "nx.allowed.test:$P" --net "ok.allowed.test:$P" -- \
          curl -s -m 10 -o /dev/null -w '%{http_code}' "${opt[@]}" "http://nx.allowed.test:$P/s.txt" 2>&1)
    twin=$(cd / && "${run[@]}" "$CAGE" --net "nx.allowed.test:$P" --net "ok.allowed.test:$P" -- \
          curl -s -m 10 "${opt[@]}" "http://ok.allowed.test:$P/s.txt" 2>&1)
    case "$out" in
      *200*) fail "$who/$proto: nx.allowed.test reached the search domain's answer (127.0.0.1): $out" ;;
      *) echo "ok: $who/$proto: nx.allowed.test not resolved through the search list ($out)" ;;
    esac
    [ "$twin" = SECRET-LOOPBACK ] && echo "ok: $who/$proto twin: ok.allowed.test fetched" || fail "$who/$proto twin: $twin"
  done
done
[ $failures -eq 0 ] && echo "all ok" || { echo "$failures failure(s)" >&2; exit 1; }
INNER
