#!/usr/bin/env bash
# What ordinary clients check before they connect, with --net (issue 19 item 8): glibc's
# AI_ADDRCONFIG (getent ahostsv4) and yarn 1's "am I online?" (any address but 127.0.0.1 and ::1)
# see an address besides loopback; the host's CA-bundle variables pass when their file is visible
# inside and not otherwise; the JVM prints no JAVA_TOOL_OPTIONS banner in the default mode and
# reaches the test server; Node's built-in fetch reaches it in both modes that carry it. Each next
# to its twin without --net / with --net-mode proxy. Runs as root and as an unprivileged user.
set -u
. "$(dirname "$0")/net_lib.bash"
net_test_begin getent python3
mkdir "$d/www" "$d/ca" "$d/hidden"; echo hello > "$d/www/f"
echo "not a real CA" > "$d/ca/bundle.pem"; echo "x" > "$d/hidden/bundle.pem"
chmod -R a+rX "$d"; cd "$d" || exit 1
start_loopback_server http "$d/www"; pids+=("$server_pid"); port=$server_port
[ -n "$port" ] || fail "the test's web server did not start"
run() { timeout 120 "$CAGE" --ro "$d/www" --ro "$d/ca" "$@"; }

# AI_ADDRCONFIG: an IPv4-only lookup of an allowed name answers with --net; yarn's check sees an address.
out=$(run --net allowed.example:443 -- getent ahostsv4 allowed.example) || fail "getent ahostsv4 failed with --net"
case "$out" in 198.1[89].*) ;; *) fail "getent ahostsv4 answered '$out'" ;; esac
out=$(run --net allowed.example:443 -- sh -c "grep -c '192.0.0.8' /proc/net/fib_trie") || fail "no fib_trie with --net"
[ "$out" -ge 1 ] || fail "no address besides loopback with --net"
out=$(run -- sh -c "grep -c '192.0.0.8' /proc/net/fib_trie; :")
[ "$out" = 0 ] || fail "without --net the sandbox has an address besides loopback (it is offline)"
if command -v node >/dev/null; then
  yarn_offline='const os=require("os");let off=true;for(const[n,a]of Object.entries(os.networkInterfaces()))
    for(const x of a)if(!["lo0","awdl0","bridge0"].includes(n)&&!["127.0.0.1","::1"].includes(x.address))off=false;
    console.log(off?"offline":"online")'
  [ "$(run --net allowed.example:443 -- node -e "$yarn_offline")" = online ] || fail "yarn 1's check says offline with --net"
  [ "$(run -- node -e "$yarn_offline")" = offline ] || fail "yarn 1's check says online without --net"
fi

# CA bundles: passed when visible, dropped when not (the hidden one is not granted; started in / so
# that the current directory shows nothing), never without --net.
ca=(env -C / SSL_CERT_FILE="$d/ca/bundle.pem" NODE_EXTRA_CA_CERTS="$d/hidden/bundle.pem" SSL_CERT_DIR="$d/ca:$d/hidden"
    GIT_SSL_CAINFO="$d/ca/bundle.pem")
out=$("${ca[@]}" timeout 60 "$CAGE" --ro "$d/ca" --net allowed.example:443 -- env) || fail "env with --net failed"
echo "$out" | grep -qx "SSL_CERT_FILE=$d/ca/bundle.pem" || fail "a visible SSL_CERT_FILE did not pass"
echo "$out" | grep -qx "GIT_SSL_CAINFO=$d/ca/bundle.pem" || fail "a visible GIT_SSL_CAINFO did not pass"
echo "$out" | grep -q '^NODE_EXTRA_CA_CERTS=' && fail "a CA file the sandbox cannot see was passed"
echo "$out" | grep -q '^SSL_CERT_DIR=' && fail "an SSL_CERT_DIR with an invisible element was passed"
out=$("${ca[@]}" timeout 60 "$CAGE" --ro "$d/ca" -- env) || fail "env without --net failed"
echo "$out" | grep -q '^SSL_CERT_FILE=' && fail "SSL_CERT_FILE passed without --net"

# (A small heap for each JVM: the kernel matrix's 2 GiB guests run the root and user variants side by side.)
# The JVM: no banner in the default mode, which carries its direct connections; the proxy
# properties (and the JVM's banner) only with --net-mode proxy.
if command -v java >/dev/null && java -version >/dev/null 2>&1; then
  cat > "$d/www/Get.java" <<'JAVA'
public class Get { public static void main(String[] a) throws Exception {
  var c = java.net.http.HttpClient.newHttpClient();
  var r = c.send(java.net.http.HttpRequest.newBuilder(java.net.URI.create(a[0])).build(),
                 java.net.http.HttpResponse.BodyHandlers.ofString());
  System.out.println(r.body().trim()); } }
JAVA
  out=$(run --net "127.0.0.1:$port" -- java -Xmx64m -XX:TieredStopAtLevel=1 "$d/www/Get.java" "http://127.0.0.1:$port/f" 2>"$d/err") ||
    fail "java in the default mode failed: $(cat "$d/err")"
  [ "$out" = hello ] || fail "java returned '$out'"
  grep -q 'Picked up' "$d/err" && fail "the JVM printed a banner in the default mode: $(cat "$d/err")"
  run --net "127.0.0.1:$port" --net-mode proxy -- sh -c 'echo "$JAVA_TOOL_OPTIONS"' | grep -q 'proxyPort' ||
    fail "--net-mode proxy lacks the JVM's proxy properties"
  # --net localhost:P means the host's loopback in every mode: in proxy mode the JVM's own default
  # nonProxyHosts (localhost|127.*) would keep it on the sandbox's loopback, where nothing listens.
  rc=0; out=$(run --net "localhost:$port" --net-mode proxy -- java -Xmx64m -XX:TieredStopAtLevel=1 "$d/www/Get.java" "http://localhost:$port/f" 2>"$d/err") ||
    rc=$?
  [ "$rc" -eq 0 ] || fail "java in proxy mode with --net localhost:P: exit $rc, stdout '$out', stderr: $(cat "$d/err")"
  [ "$out" = hello ] || fail "java (proxy mode, localhost rule) returned '$out'"
else
  echo "note: no working java here; the JVM part is not run"
fi

# Node's built-in fetch (undici ignores *_PROXY before Node 24) goes through transparent egress.
if command -v node >/dev/null; then
  fetch="fetch('http://127.0.0.1:$port/f').then(r=>r.text()).then(t=>console.log(t.trim())).catch(e=>{console.log(String(e.cause||e));process.exit(1)})"
  for mode in both transparent; do
    out=$(run --net "127.0.0.1:$port" --net-mode "$mode" -- node -e "$fetch") || fail "node fetch ($mode): $out"
    [ "$out" = hello ] || fail "node fetch ($mode) returned '$out'"
  done
  if run -- node -e "$fetch" >/dev/null 2>&1; then fail "node fetch reached the host without --net"; fi
fi
echo "ok: ADDRCONFIG, online checks, CA variables, the JVM and Node's fetch as clients use them"
