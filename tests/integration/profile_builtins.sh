#!/usr/bin/env bash
# The built-in profiles, each running its real tool offline: build (make + gcc on a tiny C project:
# out/ writable, the sources read-only, no network), npm (--version, config, an offline pack into the
# project; install scripts not run unless opted in), pip (python3 -m pip --version; wheels preferred), git-https (init and commit in the project), cargo and go
# (--version, skipped when not installed). Nothing here contacts a registry.
set -u
fail() { echo "FAIL: $*" >&2; exit 1; }
d=$(mktemp -d); trap 'rm -rf "$d"' EXIT
export PATH="/usr/local/bin:/usr/bin:/bin"
skipped=()

# build
mkdir -p "$d/c/out" && cd "$d/c" || fail "cd"
printf '#include <stdio.h>\nint main(void){puts("built");return 0;}\n' >hello.c
printf 'out/hello: hello.c\n\tgcc -o $@ hello.c\n' >Makefile
if command -v make >/dev/null && command -v gcc >/dev/null; then
  "$CAGE" --profile build -- make 2>"$d/err" >/dev/null || fail "make under build: $(cat "$d/err")"
  [ "$(./out/hello)" = built ] || fail "build output missing"
  if "$CAGE" --profile build -- sh -c 'echo x > hello.c' 2>"$d/err"; then fail "build profile let the sources be written"; fi
  grep -q 'Read-only file system' "$d/err" && grep -q 'int main' hello.c || fail "sources not read-only: $(cat "$d/err")"
  "$CAGE" --dry-run --json --profile build -- true | python3 -c '
import json,sys; p=json.load(sys.stdin); assert p["network"]["mode"]=="none", p["network"]' || fail "build profile has network"
else
  skipped+=(build)
fi

# npm: the project is writable, npm runs offline.
if command -v npm >/dev/null; then
  mkdir -p "$d/n" && cd "$d/n" || fail "cd"
  printf '{"name":"cage-profile-test","version":"1.0.0"}\n' >package.json
  "$CAGE" --profile npm -- npm --version >"$d/out" 2>"$d/err" || fail "npm --version: $(cat "$d/err")"
  grep -Eq '^[0-9]+\.[0-9]+' "$d/out" || fail "npm --version printed: $(cat "$d/out")"
  "$CAGE" --profile npm -- npm config get registry >"$d/out" 2>"$d/err" || fail "npm config: $(cat "$d/err")"
  grep -q '^https\?://' "$d/out" || fail "npm config get registry printed: $(cat "$d/out")"
  "$CAGE" --profile npm -- npm pack --offline >"$d/out" 2>"$d/err" || fail "npm pack: $(cat "$d/err")"
  [ -f cage-profile-test-1.0.0.tgz ] || fail "npm pack wrote nothing into the project"
  # Lifecycle scripts are not run, even when the caller's environment asks for them; a script
  # named on the command line still runs; the documented opt-out (a flag) runs them.
  printf '{"name":"cage-scripts-test","version":"1.0.0","scripts":{"preinstall":"echo x > pre.txt","postinstall":"echo x > post.txt","test":"echo x > test.txt"}}\n' >package.json
  npm_config_ignore_scripts=false "$CAGE" --profile npm -- sh -c 'npm install --offline && npm test' >"$d/out" 2>&1 ||
    fail "npm install/test: $(cat "$d/out")"
  [ ! -e pre.txt ] && [ ! -e post.txt ] || fail "npm profile ran install scripts (caller had npm_config_ignore_scripts=false)"
  [ -e test.txt ] || fail "npm test did not run the test script under the npm profile"
  "$CAGE" --profile npm --setenv npm_config_ignore_scripts=false -- npm install --offline >"$d/out" 2>&1 ||
    fail "npm install with the opt-out: $(cat "$d/out")"
  [ -e pre.txt ] && [ -e post.txt ] || fail "opt-out --setenv npm_config_ignore_scripts=false did not run install scripts"
else
  skipped+=(npm)
fi

# pip
if [ -x /usr/bin/python3 ] && /usr/bin/python3 -m pip --version >/dev/null 2>&1; then
  mkdir -p "$d/p" && cd "$d/p" || fail "cd"
  "$CAGE" --profile pip -- /usr/bin/python3 -m pip --version >"$d/out" 2>"$d/err" || fail "pip: $(cat "$d/err")"
  grep -q '^pip ' "$d/out" || fail "pip --version printed: $(cat "$d/out")"
  "$CAGE" --profile pip -- /usr/bin/python3 -m pip config debug >"$d/out" 2>&1
  grep -q "PIP_PREFER_BINARY='1'" "$d/out" || fail "pip profile: PIP_PREFER_BINARY not seen by pip: $(cat "$d/out")"
else
  skipped+=(pip)
fi

# git-https: a commit in the project works; the identity comes from the environment.
if command -v git >/dev/null; then
  mkdir -p "$d/g" && cd "$d/g" || fail "cd"
  echo hi >README
  "$CAGE" --profile git-https --setenv GIT_AUTHOR_NAME=t --setenv GIT_AUTHOR_EMAIL=t@t --setenv GIT_COMMITTER_NAME=t \
    --setenv GIT_COMMITTER_EMAIL=t@t -- sh -c 'git init -q . && git add README && git commit -qm first' 2>"$d/err" ||
    fail "git under git-https: $(cat "$d/err")"
  [ "$(git -C "$d/g" log --format=%s 2>/dev/null)" = first ] || fail "commit not on the host"
else
  skipped+=(git-https)
fi

# cargo and go: --version only. cargo is usually rustup's proxy in ~/.cargo/bin, which the cargo
# profile grants along with ~/.rustup (so it runs for the user who installed it).
for tool in cargo go; do
  bin=$(command -v $tool || true)
  [ -z "$bin" ] && [ -x "${HOME:-/nonexistent}/.cargo/bin/$tool" ] && bin="$HOME/.cargo/bin/$tool"
  arg=--version; [ $tool = go ] && arg=version
  if [ -z "$bin" ] || ! "$bin" $arg >/dev/null 2>&1; then skipped+=($tool); continue; fi
  mkdir -p "$d/$tool" && cd "$d/$tool" || fail "cd"
  "$CAGE" --profile $tool -- "$bin" $arg >"$d/out" 2>"$d/err" || fail "$tool $arg under its profile: $(cat "$d/err")"
  grep -qi "$tool" "$d/out" || fail "$tool printed: $(cat "$d/out")"
done

if [ ${#skipped[@]} -gt 0 ]; then
  echo "note: not installed here, not run: ${skipped[*]}"
  [ ${#skipped[@]} -ge 6 ] && { echo "skip: none of the tools is installed"; exit 77; }
fi
echo "ok: built-in profiles ran their tools"
