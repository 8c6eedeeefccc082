#!/usr/bin/env bash
# Attack: a file the user does not trust picks the policy. A vendored script whose first line reads
# like a cage shebang (#!/usr/bin/env -S cage --profile ./cage.toml -- sh) made cage re-base every
# relative path the USER typed onto the script's directory: `cd proj && cage --profile ./cage.toml --
# sh third_party/build.sh` loaded third_party/cage.toml (rw = ["~"]), and `--rw ./build` beside a
# script with a `build -> home` link granted the home directory. Policy: the user's own ./cage.toml
# (rw = ["out"]) and --rw ./build. Expected: relative paths are the caller's whatever the script says
# (cage knows a script run only from --script); judged on the host: home gets nothing, the twins'
# writes into proj/out and proj/build land.
. "$(dirname "$0")/lib.bash"
require_sandbox
home="$work/home"
proj="$work/proj"
mkdir -p "$home" "$proj/out" "$proj/build" "$proj/third_party" "$work/elsewhere"
sniffed='#!/usr/bin/env -S cage --profile ./cage.toml -- sh'
printf '[fs]\nrw = ["out"]\n' >"$proj/cage.toml"
printf '[fs]\nrw = ["~"]\n[net]\nshare_net = true\n' >"$proj/third_party/cage.toml"
cat >"$proj/third_party/build.sh" <<S
$sniffed
echo twin >"$proj/out/vendored" 2>/dev/null
echo pwned >"$home/vendored" 2>/dev/null
exit 0
S
cd "$proj" || exit 1

# 1. The vendored profile: the user's --profile ./cage.toml is proj/cage.toml.
HOME="$home" cage_run --profile ./cage.toml -- sh third_party/build.sh
expect_rc 0 "vendored script runs under the user's profile"
[ "$(cat "$proj/out/vendored" 2>/dev/null)" = twin ] && pass "twin: the user's profile grants proj/out" \
  || fail "twin: the write into proj/out (the user's ./cage.toml) did not land; $err"
[ -e "$home/vendored" ] && fail "third_party/cage.toml was loaded: the script wrote into home" \
  || pass "third_party/cage.toml ignored: home unchanged"
HOME="$home" cage_run --dry-run --verbose --profile ./cage.toml -- sh third_party/build.sh
grep -q "third_party/cage.toml" <<<"$out" && fail "the plan takes grants from third_party/cage.toml" \
  || pass "the plan names no third_party/cage.toml grant"

# 2. A `build` directory beside a script elsewhere, and a script kept in home: the user's --rw ./build
# is proj/build and --rw . is proj, not the script's neighbours.
mkdir "$work/elsewhere/build"
cat >"$work/elsewhere/tool.sh" <<S
$sniffed
echo twin >"$proj/build/tool" 2>/dev/null
echo pwned >"$work/elsewhere/build/tool" 2>/dev/null
exit 0
S
HOME="$home" cage_run --rw ./build --ro "$work/elsewhere" -- sh "$work/elsewhere/tool.sh"
expect_rc 0 "a script with a build directory beside it runs"
[ "$(cat "$proj/build/tool" 2>/dev/null)" = twin ] && pass "twin: --rw ./build is the caller's proj/build" \
  || fail "twin: the write into proj/build did not land; $err"
[ -e "$work/elsewhere/build/tool" ] && fail "--rw ./build became the script's neighbour build/" \
  || pass "the script's build/ stays unwritten"
cp "$work/elsewhere/tool.sh" "$home/tool.sh"
sed -i "s|$work/elsewhere/build/tool|$home/pwned|" "$home/tool.sh"
HOME="$home" cage_run --rw . --ro "$home/tool.sh" -- sh "$home/tool.sh"
expect_rc 0 "a script kept in home runs with --rw ."
[ -e "$home/pwned" ] && fail "--rw . became the script's directory: home was written" || pass "home unchanged"

# 3. Explicit --script: the script line's paths are the script's, the caller's stay the caller's.
cat >"$work/elsewhere/explicit.sh" <<S
#!/usr/bin/env -S cage --script -- sh
echo twin >"$proj/build/explicit" 2>/dev/null
echo pwned >"$home/explicit" 2>/dev/null
exit 0
S
HOME="$home" cage_run --rw ./build --script -- sh ../elsewhere/explicit.sh
expect_rc 0 "--script with the caller's --rw ./build before it"
[ "$(cat "$proj/build/explicit" 2>/dev/null)" = twin ] && pass "twin: --rw before --script is the caller's" \
  || fail "twin: --rw ./build before --script did not reach proj/build; $err"
[ -e "$home/explicit" ] && fail "--rw before --script followed the script's build link" || pass "home unchanged"
# 4. The kernel's form (#!CAGE --script ... reaches cage as one argument): a line ending in an option
# that takes a value (--ro) took the script's own path as that value, and the caller's first argument
# (u/arg.sh, a script with its own '# /// cage' block) became the script, run with the line's --rw out
# based on u/. Expected: the script is always the kernel's next argument; the dangling option is a
# usage error naming it (exit 125) and nothing runs.
mkdir -p "$work/s/out" "$work/u/out"
printf '#!%s --script %s --rw out --ro\necho "tool $1" >"$(dirname "$0")/out/tool"\n' "$CAGE" "${mech[*]+${mech[*]}}" \
  >"$work/s/tool.sh"
printf '#!%s --script %s --rw out -- sh\necho "tool $1" >"$(dirname "$0")/out/tool"\n' "$CAGE" "${mech[*]+${mech[*]}}" \
  >"$work/s/twin.sh"
printf '# /// cage\n# run = ["sh"]\n# [fs]\n# rw = ["out"]\n# ///\necho pwned >"$(dirname "$0")/out/arg"\n' >"$work/u/arg.sh"
chmod +x "$work/s/tool.sh" "$work/s/twin.sh"
rc=0; "$work/s/tool.sh" "$work/u/arg.sh" </dev/null >"$work/.out" 2>"$work/.err" || rc=$?
err=$(cat "$work/.err"); out=$(cat "$work/.out")
expect_rc 125 "#! line ending in --ro"
grep -qF -- "--ro" <<<"$err" && grep -q "value" <<<"$err" && pass "the error names --ro and its missing value" \
  || fail "the error does not name the option left without a value: $err"
[ -e "$work/u/out/arg" ] && fail "the caller's argument u/arg.sh ran as the script" || pass "u/arg.sh did not run"
[ -e "$work/s/out/tool" ] && fail "the script ran despite its broken #! line" || pass "nothing ran"
rm -f "$work/u/out/arg"
rc=0; "$work/s/twin.sh" "$work/u/arg.sh" </dev/null >"$work/.out" 2>"$work/.err" || rc=$?
err=$(cat "$work/.err"); out=$(cat "$work/.out")
expect_rc 0 "twin: #! line with every value given"
[ "$(cat "$work/s/out/tool" 2>/dev/null)" = "tool $work/u/arg.sh" ] && pass "twin: the script ran with its argument" \
  || fail "twin: s/out/tool missing or wrong; $err"
[ -e "$work/u/out/arg" ] && fail "twin: u/arg.sh ran" || pass "twin: u/arg.sh stays an argument"
finish
