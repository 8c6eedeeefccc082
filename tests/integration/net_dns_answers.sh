#!/usr/bin/env bash
# cage's DNS inside the sandbox (transparent egress) answers every record type correctly and reports
# only what a --net rule could grant (issue 19 item 5; runs as root and as an unprivileged user).
# Found: apt's SRV lookup of _http._tcp.HOST and reverse (PTR) lookups were reported as denied hosts
# with remedies no rule could meet (`add --net _http._tcp.HOST:PORT`), on every run.
# Real clients: glibc (getent hosts ADDR: a PTR query) and dig. Expected: a synthetic address's PTR
# names what it was handed out for; other reverse names, SRV and TXT get NXDOMAIN or NODATA, and
# stderr stays quiet; twin: an address lookup of an unlisted name is NXDOMAIN with one denial line.
set -u
. "$(dirname "$0")/net_lib.bash"
net_test_begin getent
chmod 755 "$d"
have_dig=0; command -v dig >/dev/null && have_dig=1
[ $have_dig = 1 ] || echo "note: dig missing (packaging/setup-debian.sh installs it): SRV, TXT, MX and dig -x not tried"

# The names and their synthetic addresses are fixed by the rules (exact names in rule order), so
# nothing here is resolved outside the sandbox.
cat > "$d/ask.sh" <<'SH'
q() { echo "$*: $(dig +tries=1 +timeout=5 "$@" | sed -n 's/.*status: \([A-Z]*\).*/\1/p') $(dig +short +tries=1 +timeout=5 "$@" | tr '\n' ' ')"; }
echo "getent: $(getent hosts 198.18.0.2 | tr -s ' ')"
command -v dig >/dev/null || exit 0
q -x 198.18.0.1
q -x 198.18.0.77
q -x 10.0.0.1
q -x 2001:db8::1
q SRV _http._tcp.deb.cage.test
q SRV _https._tcp.api.cage.test
q TXT api.cage.test
q TXT evil.cage.test
q MX deb.cage.test
exit 0
SH

for mode in both transparent; do
  timeout 120 "$CAGE" --ro "$d" --net-mode "$mode" --net api.cage.test:443 --net deb.cage.test:80 -- \
    sh "$d/ask.sh" >"$d/out" 2>"$d/err" || fail "$mode: the run failed: $(cat "$d/err")"
  want="getent: 198.18.0.2 deb.cage.test"
  [ $have_dig = 1 ] && want="$want
-x 198.18.0.1: NOERROR api.cage.test. 
-x 198.18.0.77: NXDOMAIN 
-x 10.0.0.1: NXDOMAIN 
-x 2001:db8::1: NXDOMAIN 
SRV _http._tcp.deb.cage.test: NXDOMAIN 
SRV _https._tcp.api.cage.test: NXDOMAIN 
TXT api.cage.test: NOERROR 
TXT evil.cage.test: NXDOMAIN 
MX deb.cage.test: NOERROR "
  [ "$(cat "$d/out")" = "$want" ] || fail "$mode: answers differ; got:
$(cat "$d/out")
want:
$want"
  grep -q "cage: net:" "$d/err" && fail "$mode: a lookup no rule could grant was reported: $(cat "$d/err")"
  # Twin: an address lookup of an unlisted name is what a rule grants, so it is reported, once.
  if timeout 120 "$CAGE" --ro "$d" --net-mode "$mode" --net api.cage.test:443 -- getent hosts evil.cage.test \
    >"$d/out" 2>"$d/err"; then
    fail "$mode: an unlisted name resolved: $(cat "$d/out")"
  fi
  [ "$(grep -c "cage: net: denied (dns) evil.cage.test is not in the --net allowlist (add --net evil.cage.test:PORT)" "$d/err")" = 1 ] ||
    fail "$mode: the unlisted name's denial was not reported once: $(cat "$d/err")"
  echo "ok: $mode: every lookup answered as expected, quietly; an unlisted name reported once"
done
echo ok
