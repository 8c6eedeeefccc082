#!/usr/bin/env bash
# README recipe "A dev server you open from the host's browser": with the README's flags
# (--share-net) a server started inside answers the host; its twin without them listens on the
# sandbox's own loopback, where the host's connection is refused. The server writes a ready file into
# its --rw directory once it listens, so each check waits for that event, not for a time.
. "$(dirname "$0")/recipe_lib.bash"
line=$(readme_line 'cage --rw . --share-net -- npm run dev')
require_sandbox
mkdir "$work/site" && echo "served from inside" >"$work/site/index.html"
port=$("$py" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
server='import http.server, functools, os, sys
h = functools.partial(http.server.SimpleHTTPRequestHandler, directory=sys.argv[2])
srv = http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])), h)
open(os.path.join(sys.argv[2], "ready"), "w").close()
srv.serve_forever()'
serve() {  # FLAGS...: starts the server inside with FLAGS, waits for its ready file (or its end)
  rm -f "$work/site/ready"
  (cd "$work/site" && exec "$CAGE" "$@" -- "$py" -c "$server" "$port" "$work/site") </dev/null >"$work/srv.log" 2>&1 &
  pid=$!
  at_exit "kill $pid"
  while [ ! -e "$work/site/ready" ] && kill -0 "$pid" 2>/dev/null; do sleep 0.05; done
  [ -e "$work/site/ready" ] || { fail "server did not start with $*: $(cat "$work/srv.log")"; finish; }
}
fetch() { "$py" -c 'import sys, urllib.request
try: print(urllib.request.urlopen("http://127.0.0.1:%s/" % sys.argv[1], timeout=30).read().decode().strip())
except OSError as e: print("refused:", e)' "$port"; }
# The README's flags: --rw . --share-net (the README runs npm run dev; a Python server stands in).
flags=${line#cage }; flags=${flags% -- npm run dev}
read -ra flags <<<"$flags"
serve "${flags[@]}"
got=$(fetch)
[ "$got" = "served from inside" ] && pass "README flags (${flags[*]}): the host reached the server inside" || fail "with ${flags[*]}: $got"
kill "$pid"; wait "$pid" 2>/dev/null
# The twin: without --share-net the server listens on the sandbox's own loopback.
serve --rw .
got=$(fetch)
[[ $got == refused:* ]] && pass "without --share-net the host cannot reach it ($got)" || fail "reached without --share-net: $got"
finish
