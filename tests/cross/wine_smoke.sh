#!/usr/bin/env bash
# Wine smoke test of the cross-built Windows cage.exe: usage: wine_smoke.sh PATH/TO/cage.exe
#
# What Wine CAN show (checked here): argument parsing, --help/--version, exit statuses, the
# --dry-run --target windows plan, and the executor's plumbing: the restore journal and the run's
# TEMP are made and removed, CreateRestrictedToken and CreateProcessAsUserW run, the job object
# kills on --timeout, the workload's exit status comes back, an orphaned journal from a "crashed"
# run is restored and deleted on the next start, and a run that needs WFP is refused with
# spawn_sandbox_unavailable (exit 125), because Wine has no filtering engine (FwpmEngineOpen0 0x6E4).
# The --net proxy's Windows event loop (WSAPoll with emulated edges, Winsock errors) runs for real:
# cage_proxy_wine_test.exe, built beside cage.exe, drives the same LoopbackProxy with real sockets
# (CONNECT, plain HTTP, SOCKS5, 407/403/502, 8 MiB intact through a tunnel, 200 tunnels at once).
#
# What Wine CANNOT show (a real Windows host, via `cage --self-test`): Wine enforces no token
# restrictions, integrity levels or mandatory labels (a Low token writes anywhere), no job limits
# beyond kill-on-close/terminate (--pids, --memory, --cpu, UI restrictions), and no WFP filtering.
# So every "denied" result of the sandbox is unverified here; only refusals and plumbing are.
#
# Exit: 0 all passed, 1 a check failed, 77 skipped (no Wine and no way to install it).
set -uo pipefail
exe=${1:?usage: wine_smoke.sh PATH/TO/cage.exe}
[ -f "$exe" ] || { echo "wine_smoke: $exe not found"; exit 1; }
exe=$(readlink -f "$exe")

if ! command -v wine >/dev/null; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "wine_smoke: installing wine (Debian packages wine, wine64)"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q wine wine64 >/dev/null || { echo "SKIP: apt-get install wine failed"; exit 77; }
  else
    echo "SKIP: wine is not installed (apt-get install wine wine64)"; exit 77
  fi
fi

work=$(mktemp -d /tmp/cage-wine.XXXXXX)
export WINEPREFIX=$work/prefix WINEDEBUG=-all WINEDLLOVERRIDES="mscoree,mshtml="
cleanup() { wineserver -k >/dev/null 2>&1; rm -rf "$work"; }
trap cleanup EXIT
timeout 300 wine wineboot -i >/dev/null 2>&1 || { echo "SKIP: wineboot failed (a 64-bit Wine is needed)"; exit 77; }
# wineboot returns while the new prefix's services still start; the first process cage created then
# failed once with ERROR_INTERNAL_ERROR (0x54f) under load. Wait until the prefix has settled (as
# winetricks does after wineboot).
timeout 120 wineserver -w || true

mkdir -p "$WINEPREFIX/drive_c/smoke"
cd "$WINEPREFIX/drive_c/smoke"  # C:\smoke for the runs below
failures=0 n=0
pass() { n=$((n + 1)); echo "PASS $1"; }
fail() { n=$((n + 1)); failures=$((failures + 1)); echo "FAIL $1"; [ -n "${2:-}" ] && sed 's/^/    /' "$2" | head -20; }
# cage under Wine: stdout to $work/out, stderr to $work/err, status in $rc (timeout: 124 from timeout(1) too).
cage() { timeout 120 wine "$exe" "$@" >"$work/out" 2>"$work/err"; rc=$?; tr -d '\r' <"$work/out" >"$work/out.u"; mv "$work/out.u" "$work/out"; }

cage --help
[ $rc = 0 ] && grep -q -- '--rw' "$work/out" && pass "--help" || fail "--help (exit $rc)" "$work/err"
cage --version
[ $rc = 0 ] && grep -qE '^cage [0-9]+\.[0-9]+' "$work/out" && pass "--version" || fail "--version (exit $rc)" "$work/out"
cage --no-such-flag
[ $rc = 125 ] && grep -q usage_error "$work/err" && pass "unknown flag: usage_error, exit 125" || fail "unknown flag (exit $rc)" "$work/err"

local_dir=$(ls -d "$WINEPREFIX"/drive_c/users/*/AppData/Local | head -1)  # %LOCALAPPDATA%
user_dir=${local_dir%/AppData/Local}                                           # %USERPROFILE%
mkdir -p "$WINEPREFIX/drive_c/cage-smoke/out" "$user_dir/proj"
# On Windows --dry-run checks the grants exist (a missing --rw path is invalid_policy), so they do.
cage --dry-run --verbose --target windows --rw 'C:/cage-smoke/out' --pids 16 --memory 256M -- cmd.exe /c echo hi
if [ $rc = 0 ] && grep -q 'CreateRestrictedToken' "$work/out" && grep -q 'LimitFlags = 0x2608' "$work/out" &&
   grep -q 'S:(ML;OICI;NW;;;LW)' "$work/out"; then pass "--dry-run --target windows"; else fail "--dry-run --target windows (exit $rc)" "$work/err"; fi
cage --dry-run --json --rw '~/proj' -- cmd.exe
[ $rc = 0 ] && grep -q '"api" : "FwpmEngineOpen0"' "$work/out" && grep -q 'C:\\\\users\\\\' "$work/out" &&
  pass "--dry-run on the host: ~ is %USERPROFILE%" || fail "--dry-run --json (exit $rc)" "$work/out"

# A path with no Windows equivalent (a Linux profile's /usr/lib) is refused, naming the flag.
cage --dry-run --ro /usr/lib -- cmd.exe
[ $rc = 125 ] && grep -q 'invalid_policy: --ro /usr/lib: cannot be mapped to a Windows path' "$work/err" &&
  pass "unmappable path: invalid_policy naming --ro /usr/lib" || fail "unmappable path (exit $rc)" "$work/err"
cage --dry-run --verbose --rw 'C:\cage-smoke\out' --ro 'c:/cage-smoke' -- cmd.exe
[ $rc = 0 ] && grep -q 'path = C:\\cage-smoke\\out' "$work/out" && pass "backslash and lower-case drive paths" ||
  fail "backslash paths (exit $rc)" "$work/err"

# A real run needs WFP, which Wine lacks: refused, nothing left behind.
cage -- cmd.exe /c exit 0
if [ $rc = 125 ] && grep -q 'spawn_sandbox_unavailable' "$work/err" && grep -q 'FwpmEngineOpen0' "$work/err"; then
  pass "run without --share-net: refused (no WFP under Wine), exit 125"
else fail "run without --share-net should be refused with exit 125 (exit $rc)" "$work/err"; fi
cage --json-errors -- cmd.exe /c exit 0
[ $rc = 125 ] && grep -q '"class" *: *"spawn_sandbox_unavailable"' "$work/err" && pass "--json-errors: the class" ||
  fail "--json-errors (exit $rc)" "$work/err"
leftover=$(find "$local_dir/cage" -mindepth 2 2>/dev/null | head -5)
[ -z "$leftover" ] && pass "refused run: journal and TEMP undone" || { echo "$leftover" >"$work/left"; fail "refused run left files" "$work/left"; }

# --net: the proxy starts first (its port is what the WFP permit names), then the run is refused at
# WFP like any other; the proxy's thread ends with it.
cage --net "127.0.0.1:9" -- cmd.exe /c exit 0
if [ $rc = 125 ] && grep -q 'FwpmEngineOpen0' "$work/err" && ! grep -q 'no proxy' "$work/err"; then
  pass "--net run: proxy started, run refused at WFP (exit 125)"
else fail "--net run should be refused at WFP with exit 125 (exit $rc)" "$work/err"; fi

# --share-net skips WFP: the rest of the executor runs (token, job, journal, TEMP, spawn).
cage --share-net -- cmd.exe /c exit 7
[ $rc = 7 ] && pass "--share-net run: the workload's exit status (7)" || fail "--share-net exit status (exit $rc)" "$work/err"
cage --share-net -- no-such-program-cage.exe
[ $rc = 127 ] && grep -q not_found "$work/err" && pass "missing command: not_found, exit 127" || fail "missing command (exit $rc)" "$work/err"
start=$(date +%s)
cage --share-net --timeout 2s -- ping.exe -n 60 127.0.0.1
took=$(( $(date +%s) - start ))
[ $rc = 124 ] && [ $took -lt 30 ] && pass "--timeout: the job is terminated, exit 124 (${took}s)" ||
  fail "--timeout (exit $rc after ${took}s)" "$work/err"

mkdir -p "$WINEPREFIX/drive_c/smoke/out"
echo data >"$WINEPREFIX/drive_c/smoke/out/r.txt"
# --ro adds an access entry (DACL): journaled, made, restored, journal deleted.
cage --share-net --ro 'C:/smoke/out' -- "$exe" --self-test-probe read 'C:\smoke\out\r.txt'
[ $rc = 0 ] && pass "--ro run: access entry journaled and restored" || fail "--ro run (exit $rc)" "$work/err"
[ -z "$(find "$local_dir/cage" -mindepth 2 2>/dev/null | head -1)" ] && pass "--ro run: journal deleted, TEMP removed" ||
  fail "--ro run left its journal or TEMP behind"
# A non-ASCII grant and path: arguments are taken as UTF-16 and files opened through the wide API.
mkdir -p "$WINEPREFIX/drive_c/smoke/héllo ü"
echo data >"$WINEPREFIX/drive_c/smoke/héllo ü/r.txt"
cage --share-net --ro 'C:/smoke/héllo ü' -- "$exe" --self-test-probe read 'C:\smoke\héllo ü\r.txt'
[ $rc = 0 ] && pass "non-ASCII --ro path: granted and read" || fail "non-ASCII --ro path (exit $rc)" "$work/err"
# --rw sets a Low label. Wine 8 refuses to read labels (GetNamedSecurityInfoW: access denied), so the
# run must be refused cleanly; a Wine that can, must grant the write.
cage --share-net --rw 'C:/smoke/out' -- "$exe" --self-test-probe write 'C:\smoke\out\f.txt'
if [ $rc = 0 ] && [ -f "$WINEPREFIX/drive_c/smoke/out/f.txt" ]; then pass "--rw run: label set, write granted, restored"
elif [ $rc = 125 ] && grep -q 'GetNamedSecurityInfoW' "$work/err"; then pass "--rw run: refused, as Wine cannot read labels (exit 125)"
else fail "--rw run (exit $rc)" "$work/err"; fi
[ -z "$(find "$local_dir/cage" -mindepth 2 2>/dev/null | head -1)" ] && pass "--rw run: nothing left behind" ||
  fail "--rw run left its journal or TEMP behind"

# A crashed run's journal (no process holds it): the next start restores its entries and deletes it.
mkdir -p "$local_dir/cage/restore" "$local_dir/cage/tmp/run-1-dead/sub"
printf 'cage-restore-journal 1\nremove_tree\tC:\\users\\%s\\AppData\\Local\\cage\\tmp\\run-1-dead\t\n' \
  "$(basename "$user_dir")" >"$local_dir/cage/restore/run-1-dead.journal"
cage --share-net -- cmd.exe /c exit 0
if [ $rc = 0 ] && [ ! -e "$local_dir/cage/restore/run-1-dead.journal" ] && [ ! -e "$local_dir/cage/tmp/run-1-dead" ]; then
  pass "orphaned journal: restored and deleted on the next start"
else fail "orphaned journal not restored (exit $rc)" "$work/err"; fi

# A journal naming something other than a run's TEMP is not obeyed: the tree stays, the journal too.
mkdir -p "$WINEPREFIX/drive_c/keepme"
printf 'cage-restore-journal 1\nremove_tree\tC:\\keepme\t\n' >"$local_dir/cage/restore/run-2-evil.journal"
cage --share-net -- cmd.exe /c exit 0
if [ $rc = 0 ] && [ -d "$WINEPREFIX/drive_c/keepme" ] && grep -q 'refusing to remove C:\\keepme' "$work/err"; then
  pass "forged journal: a tree outside the run TEMPs is not removed"
else fail "forged journal (exit $rc)" "$work/err"; fi
rm -f "$local_dir/cage/restore/run-2-evil.journal"

# --check tries each mechanism: token and job are created; WFP is missing under Wine.
cage --check
if [ $rc = 125 ] && grep -q '^ok      token' "$work/out" && grep -q '^ok      job' "$work/out" &&
   grep -q '^MISSING wfp' "$work/out"; then pass "--check: token and job ok, WFP missing, exit 125"
else fail "--check (exit $rc)" "$work/out"; fi

# The self-test runs, says it is under Wine, and fails (Wine enforces none of it): nonzero exit.
cage --self-test
if [ $rc != 0 ] && grep -q '^NOTE  running under Wine' "$work/out" && grep -q '^FAIL ' "$work/out"; then
  pass "--self-test under Wine: reports FAIL lines and exits nonzero"
else fail "--self-test under Wine (exit $rc)" "$work/out"; fi

# The proxy's Windows event loop, for real (see the header).
proxy_test=$(dirname "$exe")/cage_proxy_wine_test.exe
if [ -f "$proxy_test" ]; then
  timeout 180 wine "$proxy_test" >"$work/out" 2>"$work/err"; rc=$?
  tr -d '\r' <"$work/out" >"$work/proxy.log"
  checks=$(grep -c '^PASS ' "$work/proxy.log")
  if [ $rc = 0 ] && [ "$checks" -ge 16 ] && ! grep -q '^FAIL ' "$work/proxy.log"; then
    pass "proxy event loop under Wine: $checks checks"
  else fail "proxy event loop under Wine (exit $rc)" "$work/proxy.log"; fi
else
  fail "cage_proxy_wine_test.exe not found beside $exe (.ci/cross.sh builds it)"
fi

echo "wine_smoke: $((n - failures)) of $n passed"
[ $failures = 0 ]
