#!/usr/bin/env bash
# --net as users write it (runs as root and as an unprivileged user; issue 19 item 8): a URL such as
# `npm config get registry` prints is read as its host and port (https 443, http 80, or the URL's
# own), and a path in it does not narrow anything; a URL that cannot be read so is refused with the
# HOST:PORT to write; --net-mode (flag or profile net.mode) without --net is an error naming it.
# Each refusal: exit 125, the command never started; each next to its allowed twin.
set -u
. "$(dirname "$0")/net_lib.bash"
net_test_begin curl python3
chmod 755 "$d"; mkdir "$d/www" "$d/out"; echo hello > "$d/www/f"; chmod -R a+rwX "$d"
start_loopback_server http "$d/www"; pids+=("$server_pid")
port=$server_port; [ -n "$port" ] || fail "the test's web server did not start"
closed=$(other_port "$port")
run() { timeout 60 "$CAGE" "$@"; }

# A URL with a path: its host and port are allowed, and only those.
out=$(run --net "http://127.0.0.1:$port/some/path?q=1" -- curl -sS "http://127.0.0.1:$port/f" 2>"$d/err") ||
  fail "--net http://127.0.0.1:$port/some/path: the listed host was not reached: $(cat "$d/err")"
[ "$out" = hello ] || fail "--net URL: fetched '$out'"
code=$(run --net "http://127.0.0.1:$port/" -- curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$closed/f" \
  2>"$d/err")
[ "$code" = 403 ] || fail "--net URL: another port of the URL's host was not refused (got $code)"
# The scheme's port, shown as the rule --dry-run prints.
run --dry-run --net "HTTPS://Registry.Example.org/" -- true | grep -qx "  allow Registry.Example.org:443" ||
  fail "--net https://HOST/ is not read as HOST:443"
run --dry-run --net "http://[2001:db8::1]/debian" -- true | grep -qx "  allow \[2001:db8::1\]:80" ||
  fail "--net http://[V6]/ is not read as [V6]:80"

refused() {  # NEEDLE ARGS...: cage ARGS... -- touch must exit 125 naming NEEDLE, the command never run
  local needle=$1 rc; shift
  rm -f "$d/out/started"
  run "$@" --rw "$d/out" -- touch "$d/out/started" 2>"$d/err"; rc=$?
  [ "$rc" = 125 ] || fail "$*: exit $rc, want 125 ($(cat "$d/err"))"
  [ -e "$d/out/started" ] && fail "$*: the command ran"
  grep -qF -- "$needle" "$d/err" || fail "$*: the error does not say '$needle': $(cat "$d/err")"
}
refused "write files.example.org:PORT" --net "ftp://files.example.org/pub"
refused "write code.example.org:9418" --net "git://code.example.org:9418/repo"
refused "write a.example.org:443" --net "https://user:secret@a.example.org/"
refused "--net-mode proxy: --net-mode without --net" --net-mode proxy
printf 'version = 1\n[net]\nmode = "transparent"\n' > "$d/p.toml"
refused "net.mode" --profile "$d/p.toml"
# Twins: the same mode with a destination runs.
run --net-mode proxy --net "127.0.0.1:$port" --rw "$d/out" -- touch "$d/out/started" ||
  fail "twin: --net-mode with --net did not run"
printf 'version = 1\n[net]\nmode = "proxy"\nallow = ["127.0.0.1:%s"]\n' "$port" > "$d/q.toml"
run --profile "$d/q.toml" --rw "$d/out" -- true || fail "twin: a profile's net.mode with net.allow did not run"
echo ok
