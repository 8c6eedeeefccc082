#!/usr/bin/env bash
# Transparent egress keeps resolving names when /etc is the user's (--ro /etc, --ro /, --rw /etc) or
# absent (--no-system): cage's resolv.conf and hosts are mounted read-only over the host's files (or
# made in the bare root), never written into the grant; the host's files are unchanged and the
# workload cannot write through. Runs as root and as an unprivileged user. Issue 19 item 6.
set -u
. "$(dirname "$0")/net_lib.bash"
net_test_begin getent sha256sum
[ -f /etc/resolv.conf ] && [ ! -L /etc/resolv.conf ] || { echo "skip: /etc/resolv.conf is not a regular file here"; exit 77; }
before=$(sha256sum /etc/resolv.conf /etc/hosts)
run() { timeout 60 "$CAGE" "$@"; }
check='tail -n 2 /etc/resolv.conf | head -n 1; getent ahostsv4 allowed.example | head -n 1 | cut -d" " -f1;
       if getent hosts other.example; then echo other-resolved; fi; if echo x 2>/dev/null > /etc/resolv.conf; then echo wrote; fi'
sysview=(--ro /usr)
for d0 in /bin /lib /lib64 /sbin; do [ -e "$d0" ] && sysview+=(--ro "$d0"); done
for grant in "--ro /etc" "--ro /" "--no-system ${sysview[*]}"; do
  # shellcheck disable=SC2086 # the grant is words
  out=$(run $grant --net allowed.example:443 -- sh -c "$check" 2>"$d/err") || fail "$grant: run failed: $(cat "$d/err")"
  [ "$(echo "$out" | sed -n 1p)" = "nameserver 127.0.0.53" ] || fail "$grant: resolv.conf is not cage's: $out"
  case "$(echo "$out" | sed -n 2p)" in 198.1[89].*) ;; *) fail "$grant: allowed name did not resolve to a synthetic address: $out" ;; esac
  # The denial next to it: an unlisted name is NXDOMAIN, and nothing is written through.
  echo "$out" | grep -q other-resolved && fail "$grant: an unlisted name resolved"
  echo "$out" | grep -q wrote && fail "$grant: the workload wrote resolv.conf"
  # shellcheck disable=SC2086
  run $grant --net allowed.example:443 --dry-run -- true | grep -q 'names may not resolve' && fail "$grant: dry-run still says names may not resolve"
done
# Proxy mode leaves the user's /etc as it is: the host's resolv.conf shows through.
out=$(run --ro /etc --net allowed.example:443 --net-mode proxy -- cat /etc/resolv.conf) || fail "proxy mode run failed"
[ "$out" = "$(cat /etc/resolv.conf)" ] || fail "proxy mode changed the granted resolv.conf"
[ "$(sha256sum /etc/resolv.conf /etc/hosts)" = "$before" ] || fail "the host's resolv.conf or hosts changed"
echo "ok: transparent names resolve with a granted or absent /etc; the host's files are untouched"
