#!/usr/bin/env bash
# One meaning of a loopback rule in every --net-mode (issue 19 item 7; runs as root and as an
# unprivileged user): `--net localhost:P` is port P of the host's loopback, reached whether the client
# names it localhost or 127.0.0.1, and `--net 127.0.0.1:P` is the same destination under its address.
# Found: with `--net localhost:P`, 127.0.0.1:P was refused in proxy mode and allowed in transparent
# mode. Every client path is tried in each mode: plain HTTP, CONNECT and SOCKS5 through the proxy
# (proxy, both), a direct connect (both, transparent), and HTTP and CONNECT through the proxy of the
# Landlock-only mechanism where it is available. Twins: another loopback address (127.0.0.2)
# and another port stay refused in every mode, and the denial names the rule that would allow them.
set -u
. "$(dirname "$0")/net_lib.bash"
net_test_begin curl python3
chmod 755 "$d"; mkdir "$d/www"; echo hello > "$d/www/f"; chmod -R a+rX "$d"
start_loopback_server http "$d/www"; pids+=("$server_pid")
port=$server_port; [ -n "$port" ] || fail "the test's web server did not start"
closed=$(other_port "$port")
curl -s -o /dev/null "http://127.0.0.1:$port/f" || fail "twin: the test's web server is unreachable from the host"

# Inside: one line "CLIENT TARGET RESULT" per try; RESULT is the body, or "refused" when curl failed.
cat > "$d/try.sh" <<'SH'
port=$1 mode=$2; shift 2
try() {  # try CLIENT TARGET CURL-ARGS...
  local c=$1 t=$2 out; shift 2
  out=$(curl -fsS -m 20 "$@" 2>/dev/null) || out=refused
  echo "$c $t $out"
}
for t in "$@"; do
  url=http://$t/f
  if [ "$mode" = landlock ]; then  # the proxy on the host's loopback, with the run's secret: by the variables
    try http "$t" "$url"
    try connect "$t" -p "$url"
    continue
  fi
  if [ "$mode" != transparent ]; then
    try http "$t" -x http://127.0.0.1:3128 "$url"
    try connect "$t" -p -x http://127.0.0.1:3128 "$url"
    case $t in localhost:*) try socks5 "$t" --socks5-hostname 127.0.0.1:3128 "$url" ;;
               *) try socks5 "$t" --socks5 127.0.0.1:3128 "$url" ;; esac
  fi
  [ "$mode" != proxy ] && try direct "$t" --noproxy '*' "$url"
done
exit 0
SH

# The Landlock-only mechanism (hosts that block user namespaces) has the proxy mode only.
modes=(proxy both transparent)
if "$CAGE" --mechanism landlock --allow-degraded pid -- true 2>/dev/null; then modes+=(landlock)
else echo "note: the Landlock-only mechanism is unavailable here; its proxy is not tried"; fi
for mode in "${modes[@]}"; do
  opts=(--net-mode "$mode"); [ "$mode" = landlock ] && opts=(--mechanism landlock --allow-degraded pid)
  for rule in "localhost:$port" "127.0.0.1:$port"; do
    timeout 120 "$CAGE" --ro "$d" --net "$rule" "${opts[@]}" -- \
      sh "$d/try.sh" "$port" "$mode" "localhost:$port" "127.0.0.1:$port" "127.0.0.2:$port" "127.0.0.1:$closed" \
      >"$d/out" 2>"$d/err" || fail "$mode, --net $rule: the run failed: $(cat "$d/err")"
    [ -s "$d/out" ] || fail "$mode, --net $rule: no client ran"
    while read -r client target result; do
      case $target in
        "localhost:$port" | "127.0.0.1:$port")
          [ "$result" = hello ] || fail "$mode, --net $rule: $client to $target was not carried ($result): $(cat "$d/err")" ;;
        *)
          [ "$result" = refused ] || fail "$mode, --net $rule: $client to $target was carried ($result)" ;;
      esac
    done <"$d/out"
    # A refusal names the flag that would allow it (through the proxy, or a direct connect to a
    # listed port, which cage's listener takes and resets; lines are one per destination, so in mode
    # both the proxy's line stands for both).
    proto=http; [ "$mode" = transparent ] && proto=tcp
    grep -qF "cage: net: denied ($proto) 127.0.0.2:$port is not in the --net allowlist (add --net 127.0.0.2:$port)" "$d/err" ||
      fail "$mode, --net $rule: the 127.0.0.2 denial was not reported: $(cat "$d/err")"
    # Every client tried every target (4 targets; clients: proxy 3, both 4, transparent 1, landlock 2).
    case $mode in proxy) per=3 ;; both) per=4 ;; transparent) per=1 ;; *) per=2 ;; esac
    [ "$(wc -l <"$d/out")" -eq $((per * 4)) ] && [ "$(grep -c " hello$" "$d/out")" -eq $((per * 2)) ] ||
      fail "$mode, --net $rule: not every client tried every target: $(cat "$d/out")"
    echo "ok: $mode, --net $rule: $((per * 2)) allowed tries carried, $((per * 2)) refused"
  done
done
echo ok
