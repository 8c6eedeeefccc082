# Loopback services for the network tests, each on a port the kernel picks (bind to port 0), so a
# test never collides with another test, another user's run of the same test, or anything else on
# the host. Sourced by net_*.sh, landlock_only.sh and limits_audit.sh.
#   start_loopback_server http DIR   serves DIR over HTTP on 127.0.0.1
#   start_loopback_server listen     accepts nothing, only listens on 127.0.0.1
# Sets server_pid (the python process itself: it can be signalled and killed by pid) and
# server_port; the caller kills server_pid on EXIT. Fails (returns 1) if no port was reported.
# The common start of a network test: net_test_begin [TOOL...]. Needs $CAGE; skips (77) naming a
# TOOL (a command name or a path) that is missing; defines fail (print, exit 1); a private directory
# $d, and the pids a test appends to `pids` (its servers) are killed and $d removed when the script
# exits, also on failure.
net_test_begin() {
  : "${CAGE:?CAGE must point at the cage binary}"
  local t
  for t in "$@"; do command -v "$t" >/dev/null || { echo "skip: $t missing"; exit 77; }; done
  fail() { echo "FAIL: $*" >&2; exit 1; }
  d=$(mktemp -d); pids=()
  trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; rm -rf "$d"' EXIT
}
# Skips (77) where cage makes no egress hand-off (a kernel before 5.14: the relay carries --net).
net_require_handoff() {
  grep -q '"handoff"' < <("$CAGE" --dry-run --json --net 127.0.0.1:1 -- true 2>/dev/null) ||
    { echo "skip: no hand-off on this kernel (SO_NETNS_COOKIE needs Linux 5.14): the relay carries it"; exit 77; }
}
# A web root $d/www holding f ("ok"), served on loopback: sets port, the server joins pids.
serve_ok_file() {
  mkdir "$d/www"; echo ok > "$d/www/f"
  start_loopback_server http "$d/www" || fail "the test's web server did not start"
  pids+=("$server_pid"); port=$server_port
}
start_loopback_server() {
  local mode=$1 dir=${2:-.} portfile
  portfile=$(mktemp) || return 1
  # The port is written only after bind and listen: once it is there, the server accepts.
  python3 - "$mode" "$dir" "$portfile" >/dev/null 2>&1 <<'PY' &
import functools, http.server, os, socket, sys, time
mode, root, portfile = sys.argv[1], sys.argv[2], sys.argv[3]
def report(port):
    with open(portfile + ".tmp", "w") as f:
        f.write(str(port))
    os.replace(portfile + ".tmp", portfile)
if mode == "http":
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=root))
    report(srv.server_port)
    srv.serve_forever()
else:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen(16)
    report(s.getsockname()[1])
    time.sleep(600)
PY
  server_pid=$!
  server_port=
  for _ in $(seq 200); do  # up to 10 s on a loaded machine
    [ -s "$portfile" ] && break
    sleep 0.05
  done
  server_port=$(cat "$portfile" 2>/dev/null)
  rm -f "$portfile" "$portfile.tmp"
  [ -n "$server_port" ]
}

# A port number other than PORT, for "an unlisted port" (the denials never connect to it).
other_port() { echo $(($1 < 65535 ? $1 + 1 : $1 - 1)); }
