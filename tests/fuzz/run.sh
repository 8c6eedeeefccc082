#!/usr/bin/env bash
# Builds and runs the libFuzzer targets (clang++ -fsanitize=fuzzer,address,undefined), each for N
# seconds (default 20), starting from the small corpora here. Usage: tests/fuzz/run.sh [seconds]
set -euo pipefail
secs=${1:-20}
here=$(cd "$(dirname "$0")" && pwd); src=$(cd "$here/../.." && pwd)/src
out=$(mktemp -d); trap 'rm -rf "$out"' EXIT
cxx=${CXX_FUZZ:-clang++-14}; command -v "$cxx" >/dev/null || cxx=clang++
flags=(-std=c++20 -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -I"$src")
common=("$src/policy/host_pattern.cc" "$src/proxy/allowlist.cc")
declare -A extra=([http]="$src/proxy/http_connect.cc" [socks5]="$src/proxy/socks5.cc" [host_pattern]=""
  [sbpl]="$src/macos/compile.cc $src/policy/paths.cc $src/policy/env.cc $src/proxy/env.cc"
  [dns]="$src/proxy/dns.cc")
status=0
for t in http socks5 host_pattern sbpl dns; do
  # shellcheck disable=SC2086
  "$cxx" "${flags[@]}" "$here/${t}_fuzz.cc" "${common[@]}" ${extra[$t]} -o "$out/$t"
  work="$out/corpus-$t"; mkdir -p "$work"; cp "$here/corpus/$t/"* "$work/" 2>/dev/null || true
  echo "fuzz: $t for ${secs}s"
  if ! (cd "$out" && "./$t" -max_total_time="$secs" -max_len=4096 "$work" >"$out/$t.log" 2>&1); then
    echo "fuzz: $t FAILED"; tail -40 "$out/$t.log"; status=1
  else
    grep -E '^#[0-9]+.*DONE' "$out/$t.log" | tail -1 || tail -1 "$out/$t.log"
  fi
done
exit $status
