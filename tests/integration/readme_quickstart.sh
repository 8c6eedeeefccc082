#!/usr/bin/env bash
# The README's first quick-start command, as the README prints it: the part after the build runs in
# a checkout-like directory (README.md and build/) owned by the user running the test, and its output
# is the three lines the README says it is (the checkout read-only, an empty home, build/ written).
. "$(dirname "$0")/../escape/lib.bash"
readme=$CAGE_SOURCE_DIR/README.md
line=$(grep -m1 -F 'bash packaging/build.sh && build/cage ' "$readme" | sed 's/^ *//')
[ -n "$line" ] || { fail "README has no quick-start command 1"; finish; }
cmd=${line#bash packaging/build.sh && }
# The README's expected output block follows the command: its first three lines inside ``` ```.
expected=$(awk '/^   Expected output/{f=1} f&&/^   ```$/{n++; next} f&&n==1{sub(/^   /,""); print} n==2{exit}' "$readme")
[ "$(wc -l <<<"$expected")" -eq 3 ] || fail "README's expected output is not three lines: $expected"
mkdir -p "$work/checkout/build" && cp "$readme" "$work/checkout/"
ln -s "$CAGE" "$work/checkout/build/cage"
got=$(cd "$work/checkout" && bash -c "$cmd" 2>&1)
want=${expected//\/home\/you/$HOME}
[ "$(sort <<<"$got")" = "$(sort <<<"$want")" ] && pass "quick start prints what the README says: $got" ||
  fail "quick start printed: $got; README says: $want"
[ "$(cat "$work/checkout/README.md")" = "$(cat "$readme")" ] && pass "the checkout's README.md is unchanged" ||
  fail "README.md was changed from inside"
finish
