#!/usr/bin/env bash
# --learn on `git clone` over (dumb) HTTP from a server on the host's loopback, granted with --net
# while learning: the profile allows that destination and the project directory, and the clone
# reruns with --profile alone; without the [net] line it fails.
set -u
. "$(dirname "$0")/learn_lib.bash" git python3
mkdir "$d/src" "$d/www"
git -C "$d/src" init -q && echo content > "$d/src/file" && git -C "$d/src" add file &&
  git -C "$d/src" -c user.email=t@t -c user.name=t commit -q -m one || fail "git setup"
git clone -q --bare "$d/src" "$d/www/repo.git" && git -C "$d/www/repo.git" update-server-info || fail "bare repo"
chmod -R a+rX "$d"
start_loopback_server http "$d/www"; pids+=("$server_pid")
port=$server_port; [ -n "$port" ] || fail "the test's web server did not start"
url="http://127.0.0.1:$port/repo.git"
cd "$d/proj" || fail "cd"

# Learning opens no destination the user did not name, and the profile says so.
timeout 120 "$CAGE" --learn "$d/nonet.toml" -- git clone -q "$url" r 2>"$d/err" && fail "cloned without --net"
grep -qxF "# network: none while learning (no --net); name each destination with --net when learning" \
  "$d/nonet.toml" || fail "the profile does not say the run had no network: $(cat "$d/nonet.toml")"
rm -rf r

timeout 120 "$CAGE" --learn cage.toml --net "127.0.0.1:$port" -- git clone -q "$url" r 2>"$d/err" ||
  fail "learning failed: $(cat "$d/err")"
[ "$(cat r/file)" = content ] || fail "the learning run did not clone"
has "[net]"
has "  \"127.0.0.1:$port\","
has "  \"$d/proj\","

rm -rf r
timeout 120 "$CAGE" --profile "$P" -- git clone -q "$url" r 2>"$d/err" ||
  fail "the learned profile did not rerun: $(cat "$d/err")"
[ "$(cat r/file)" = content ] || fail "the rerun did not clone"
rm -rf r
without "127.0.0.1:$port"
if timeout 120 "$CAGE" --profile "$d/less.toml" -- git clone -q "$url" r 2>"$d/err"; then
  fail "cloned without the [net] grant"
fi
grep -q "127.0.0.1:$port" "$d/err" || fail "the denial does not name the destination: $(cat "$d/err")"
exit 0
