#!/usr/bin/env bash
# Wine smoke test of the cross-built Windows cage.exe: usage: wine_smoke.sh PATH/TO/cage.exe
#
# What Wine CAN show (checked here): argument parsing, --help/--version, exit statuses of cage's
# own errors, the --dry-run --target windows plan (with command resolution against Wine's PATH),
# and the executor's plumbing up to the AppContainer: the restore journal and the run's TEMP are
# made, grants' ACEs are added through a handle that does not follow reparse points and removed
# again, an orphaned journal from a "crashed" run is restored and deleted on the next start, a
# forged journal is not obeyed, and every run is then refused with spawn_sandbox_unavailable
# (exit 125), because Wine 8 has no AppContainer API (userenv exports no CreateAppContainerProfile).
# A missing command is not_found (127) before anything is changed: cage resolves it itself.
# The --net proxy's Windows event loop (WSAPoll with emulated edges, Winsock errors) runs for real:
# cage_proxy_wine_test.exe, built beside cage.exe, drives the same LoopbackProxy with real sockets
# (CONNECT, plain HTTP, SOCKS5, 407/403/502, 8 MiB intact through a tunnel, 200 tunnels at once).
#
# What Wine CANNOT show (a real Windows host, via `cage --self-test`): a workload running in the
# AppContainer at all (so its exit status and --timeout), and every denial: Wine enforces no
# AppContainer, DACL for a package SID, integrity level or job limit beyond kill-on-close.
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

exe_win=$(winepath -w "$exe" 2>/dev/null)  # Z:\...: cage resolves commands as Windows paths
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
if [ $rc = 0 ] && grep -q 'CreateAppContainerProfile' "$work/out" && grep -q 'LimitFlags = 0x2608' "$work/out" &&
   grep -q 'S:(ML;OICI;NW;;;LW)' "$work/out" && grep -qi 'applicationName = C:\\windows\\system32\\cmd.exe' "$work/out" &&
   grep -q 'desktop = winsta0\\default' "$work/out"; then pass "--dry-run --target windows"; else fail "--dry-run --target windows (exit $rc)" "$work/out"; fi
cage --dry-run --json --rw '~/proj' -- cmd.exe
[ $rc = 0 ] && grep -q '"api" : "CreateAppContainerProfile"' "$work/out" && grep -q 'C:\\\\users\\\\' "$work/out" &&
  pass "--dry-run on the host: ~ is %USERPROFILE%" || fail "--dry-run --json (exit $rc)" "$work/out"

# A path with no Windows equivalent (a Linux profile's /usr/lib) is refused, naming the flag.
cage --dry-run --ro /usr/lib -- cmd.exe
[ $rc = 125 ] && grep -q 'invalid_policy: --ro /usr/lib: cannot be mapped to a Windows path' "$work/err" &&
  pass "unmappable path: invalid_policy naming --ro /usr/lib" || fail "unmappable path (exit $rc)" "$work/err"
cage --dry-run --verbose --rw 'C:\cage-smoke\out' --ro 'c:/cage-smoke' -- cmd.exe
[ $rc = 0 ] && grep -q 'path = C:\\cage-smoke\\out' "$work/out" && pass "backslash and lower-case drive paths" ||
  fail "backslash paths (exit $rc)" "$work/err"

# A real run needs an AppContainer, which Wine lacks: refused after the journal, the working
# directory's ACE and TEMP were made, and all of it undone.
cage -- cmd.exe /c exit 0
if [ $rc = 125 ] && grep -q 'spawn_sandbox_unavailable' "$work/err" && grep -q 'CreateAppContainerProfile' "$work/err"; then
  pass "run: refused (no AppContainer under Wine), exit 125"
else fail "run should be refused with exit 125 (exit $rc)" "$work/err"; fi
cage --json-errors -- cmd.exe /c exit 0
[ $rc = 125 ] && grep -q '"class" *: *"spawn_sandbox_unavailable"' "$work/err" && pass "--json-errors: the class" ||
  fail "--json-errors (exit $rc)" "$work/err"
leftover=$(find "$local_dir/cage" -mindepth 2 2>/dev/null | head -5)
[ -z "$leftover" ] && pass "refused run: journal and TEMP undone" || { echo "$leftover" >"$work/left"; fail "refused run left files" "$work/left"; }

# --net: the machine's setup is checked first (slot containers on the loopback-exemption list, cage's
# WFP filters, the slot locks); Wine has no firewallapi.dll, so nothing can be verified and the run is
# refused (fail closed) before a slot is claimed or the proxy bound, naming the install command.
cage --net "127.0.0.1:9" -- cmd.exe /c exit 0
if [ $rc = 125 ] && grep -q 'spawn_sandbox_unavailable: --net: cannot tell whether cage' "$work/err" &&
   grep -q 'cage --install-windows-network' "$work/err"; then
  pass "--net run: the install cannot be verified, refused before the proxy (exit 125)"
else fail "--net run should be refused at the install check with exit 125 (exit $rc)" "$work/err"; fi
# --dry-run shows the slot decision: the port of slot 0 and the install's state, claiming nothing.
cage --dry-run --verbose --net "example.com:443" -- cmd.exe /c exit 0
if [ $rc = 0 ] && grep -q 'listen = 127.0.0.1:47300' "$work/out" && grep -q 'install: unknown' "$work/out" &&
   grep -q 'HTTPS_PROXY=http://127.0.0.1:47300' "$work/out"; then
  pass "--net --dry-run: slot cage.net.0, its port, the install's state"
else fail "--net --dry-run (exit $rc)" "$work/out"; fi

cage --share-net -- cmd.exe /c exit 7
[ $rc = 125 ] && grep -q 'CreateAppContainerProfile' "$work/err" && pass "--share-net run: refused likewise (exit 125)" ||
  fail "--share-net run (exit $rc)" "$work/err"
# cage resolves the command itself (PATH, PATHEXT; never the working directory): a missing one is
# not_found before anything is changed; one in the working directory only is not found either.
cage --share-net -- no-such-program-cage.exe
[ $rc = 127 ] && grep -q not_found "$work/err" && pass "missing command: not_found, exit 127" || fail "missing command (exit $rc)" "$work/err"
cp "$WINEPREFIX/drive_c/windows/system32/whoami.exe" "$WINEPREFIX/drive_c/smoke/cage-cwd-only.exe" 2>/dev/null ||
  cp "$WINEPREFIX/drive_c/windows/system32/cmd.exe" "$WINEPREFIX/drive_c/smoke/cage-cwd-only.exe"
cage --dry-run -- cage-cwd-only
[ $rc = 127 ] && grep -q 'working directory is not searched' "$work/err" && pass "the working directory is not searched" ||
  fail "a program in the working directory was found (exit $rc)" "$work/err"
cage --dry-run --verbose -- ./cage-cwd-only
[ $rc = 0 ] && grep -qi 'applicationName = C:\\smoke\\cage-cwd-only.EXE' "$work/out" &&
  pass "a path with a directory part: relative to the working directory, PATHEXT applied" ||
  fail "./cage-cwd-only (exit $rc)" "$work/out"
printf '@echo off\r\necho %%1\r\n' >"$WINEPREFIX/drive_c/smoke/shim.cmd"
cage --dry-run --verbose -- ./shim '50%'
[ $rc = 125 ] && grep -q "invalid_policy: 50%: argument 1 of the batch file" "$work/err" &&
  pass ".cmd argument cmd.exe would expand: refused (BatBadBut)" || fail ".cmd with % (exit $rc)" "$work/err"

mkdir -p "$WINEPREFIX/drive_c/smoke/out"
echo data >"$WINEPREFIX/drive_c/smoke/out/r.txt"
# --ro adds an ACE (through a handle, final path checked): journaled, made, removed, journal deleted.
cage --share-net --ro 'C:/smoke/out' -- "$exe_win" --self-test-probe read 'C:\smoke\out\r.txt'
[ $rc = 125 ] && grep -q 'CreateAppContainerProfile' "$work/err" && pass "--ro run: ACE added and removed, refused at the AppContainer" ||
  fail "--ro run (exit $rc)" "$work/err"
[ -z "$(find "$local_dir/cage" -mindepth 2 2>/dev/null | head -1)" ] && pass "--ro run: journal deleted, TEMP removed" ||
  fail "--ro run left its journal or TEMP behind"
# A non-ASCII grant and path: arguments are taken as UTF-16 and files opened through the wide API.
mkdir -p "$WINEPREFIX/drive_c/smoke/héllo ü"
echo data >"$WINEPREFIX/drive_c/smoke/héllo ü/r.txt"
cage --share-net --ro 'C:/smoke/héllo ü' -- "$exe_win" --self-test-probe read 'C:\smoke\héllo ü\r.txt'
[ $rc = 125 ] && grep -q 'CreateAppContainerProfile' "$work/err" && pass "non-ASCII --ro path: granted (then refused at the AppContainer)" ||
  fail "non-ASCII --ro path (exit $rc)" "$work/err"
# --rw sets a Low label. Wine 8 refuses to read labels (access denied): refused either there or at
# the AppContainer, and nothing is left behind.
cage --share-net --rw 'C:/smoke/out' -- "$exe_win" --self-test-probe write 'C:\smoke\out\f.txt'
if [ $rc = 125 ] && grep -Eq 'GetSecurityInfo|CreateAppContainerProfile' "$work/err"; then pass "--rw run: refused cleanly under Wine (exit 125)"
else fail "--rw run (exit $rc)" "$work/err"; fi
[ -z "$(find "$local_dir/cage" -mindepth 2 2>/dev/null | head -1)" ] && pass "--rw run: nothing left behind" ||
  fail "--rw run left its journal or TEMP behind"

# A crashed run's journal (no process holds it): the next start restores its entries and deletes it.
mkdir -p "$local_dir/cage/restore" "$local_dir/cage/tmp/run-1-dead/sub"
printf 'cage-restore-journal 1\nremove_tree\tC:\\users\\%s\\AppData\\Local\\cage\\tmp\\run-1-dead\t\n' \
  "$(basename "$user_dir")" >"$local_dir/cage/restore/run-1-dead.journal"
cage --share-net -- cmd.exe /c exit 0
if [ $rc = 125 ] && [ ! -e "$local_dir/cage/restore/run-1-dead.journal" ] && [ ! -e "$local_dir/cage/tmp/run-1-dead" ]; then
  pass "orphaned journal: restored and deleted on the next start"
else fail "orphaned journal not restored (exit $rc)" "$work/err"; fi

# A journal naming something other than a run's TEMP is not obeyed: the tree stays, the journal too.
mkdir -p "$WINEPREFIX/drive_c/keepme"
printf 'cage-restore-journal 1\nremove_tree\tC:\\keepme\t\ndelete_profile\tMicrosoft.Other\t\n' >"$local_dir/cage/restore/run-2-evil.journal"
cage --share-net -- cmd.exe /c exit 0
if [ $rc = 125 ] && [ -d "$WINEPREFIX/drive_c/keepme" ] && grep -q 'refusing to remove C:\\keepme' "$work/err" &&
   grep -q 'refusing to delete the AppContainer Microsoft.Other' "$work/err"; then
  pass "forged journal: a tree outside the run TEMPs is not removed"
else fail "forged journal (exit $rc)" "$work/err"; fi
rm -f "$local_dir/cage/restore/run-2-evil.journal"

# A crashed run's --rw label count: its journal names the path and its holder; the lock file (named by
# the SHA-256 of the upper-cased path) lists that holder, whose pid no process has. The next start
# drops the dead holder; the path is gone, so no label is written; journal and lock file are deleted.
gone='C:\smoke\gone-rw'
lock_name=$(printf '%s' "${gone^^}" | sha256sum | cut -d' ' -f1).lock
mkdir -p "$local_dir/cage/labels"
printf 'cage-restore-journal 1\nlabel_ref\t%s\t4000000000 1 4000000000-dead\n' "$gone" >"$local_dir/cage/restore/run-4000000000-dead.journal"
printf 'cage-label-refs 1\npath\t%s\nset\tS:(ML;OICI;NW;;;LW)\noriginal\t\nholder\t4000000000 1 4000000000-dead\n' "$gone" \
  >"$local_dir/cage/labels/$lock_name"
cage --share-net -- cmd.exe /c exit 0
if [ $rc = 125 ] && [ ! -e "$local_dir/cage/restore/run-4000000000-dead.journal" ] && [ ! -e "$local_dir/cage/labels/$lock_name" ]; then
  pass "crashed run's label count: dead holder dropped, lock file and journal deleted"
else fail "crashed run's label count not cleaned up (exit $rc)" "$work/err"; fi
# A lock file that names another path than its own is not obeyed: it and the journal stay.
printf 'cage-restore-journal 1\nlabel_ref\t%s\t4000000000 1 4000000000-odd\n' "$gone" >"$local_dir/cage/restore/run-4000000000-odd.journal"
printf 'cage-label-refs 1\npath\tC:\\elsewhere\nset\tS:(ML;OICI;NW;;;LW)\noriginal\t\nholder\t4000000000 1 4000000000-odd\n' \
  >"$local_dir/cage/labels/$lock_name"
cage --share-net -- cmd.exe /c exit 0
if [ $rc = 125 ] && [ -e "$local_dir/cage/restore/run-4000000000-odd.journal" ] && [ -e "$local_dir/cage/labels/$lock_name" ] &&
   grep -q "could not restore $(printf '%s' "$gone" | sed 's/\\/\\\\/g')" "$work/err"; then
  pass "label lock file naming another path: not obeyed, left in place"
else fail "odd label lock file (exit $rc)" "$work/err"; fi
rm -f "$local_dir/cage/restore/run-4000000000-odd.journal" "$local_dir/cage/labels/$lock_name"

# The one-time --net setup: Wine has no firewallapi.dll. Whether Wine's token counts as elevated or
# not, the answer is a structured refusal with exit 125 naming the flag, never a success.
for flag in --install-windows-network --uninstall-windows-network; do
  cage $flag
  if [ $rc = 125 ] && { grep -q "capability_denied: $flag: .*administrator" "$work/err" ||
                        grep -q "spawn_sandbox_unavailable: $flag: NetworkIsolation.*not available" "$work/err"; }; then
    pass "$flag under Wine: refused with a structured error, exit 125"
  else fail "$flag under Wine (exit $rc)" "$work/err"; fi
done
cage --install-windows-network -- cmd.exe
[ $rc = 125 ] && grep -q 'usage_error: --install-windows-network: takes no command' "$work/err" &&
  pass "--install-windows-network with a command: usage_error" || fail "--install-windows-network -- cmd.exe (exit $rc)" "$work/err"

# --check tries each mechanism: the job is created; the AppContainer (and so --net) is missing under Wine.
cage --check
if [ $rc = 125 ] && grep -q '^MISSING appcontainer' "$work/out" && grep -q '^ok      job' "$work/out" &&
   grep -q '^MISSING net: unknown: .*NetworkIsolationGetAppContainerConfig is not available' "$work/out"; then
  pass "--check: job ok, AppContainer and the loopback-exemption list missing, exit 125"
else fail "--check (exit $rc)" "$work/out"; fi

# The self-test runs, says it is under Wine, and fails (Wine enforces none of it): nonzero exit.
cage --self-test
if [ $rc != 0 ] && grep -q '^NOTE  running under Wine' "$work/out" && grep -q '^FAIL ' "$work/out"; then
  pass "--self-test under Wine: reports FAIL lines and exits nonzero"
else fail "--self-test under Wine (exit $rc)" "$work/out"; fi

# wine_test EXE SECONDS MIN_CHECKS WHAT: a test program built beside cage.exe, run under Wine; it prints
# a PASS or FAIL line per check, and passes with exit 0, at least MIN_CHECKS passes and no FAIL. Exit 77
# with a "SKIP reason" line is a skip, counted and shown with its reason (no free ports for the slots).
skipped=0
wine_test() {
  local test=$(dirname "$exe")/$1 log=$work/${1%.exe}.log checks rc
  if [ ! -f "$test" ]; then fail "$1 not found beside $exe (.ci/cross.sh builds it)"; return; fi
  timeout "$2" wine "$test" >"$work/out" 2>"$work/err"; rc=$?
  tr -d '\r' <"$work/out" >"$log"
  checks=$(grep -c '^PASS ' "$log")
  if [ $rc = 77 ] && grep -q '^SKIP ' "$log" && ! grep -q '^FAIL ' "$log"; then
    skipped=$((skipped + 1)); echo "SKIP $4 under Wine: $(grep -m1 '^SKIP ' "$log" | cut -c6-)"
  elif [ $rc = 0 ] && [ "$checks" -ge "$3" ] && ! grep -q '^FAIL ' "$log"; then
    pass "$4 under Wine: $checks checks"
  else fail "$4 under Wine (exit $rc)" "$log"; fi
}
# The proxy's Windows event loop, for real (see the header).
wine_test cage_proxy_wine_test.exe 180 16 "proxy event loop"

# The --net slot claim, for real: lock files held unshared, the proxy bound to the slot's port, a
# port held by another program, a holder killed while holding its slot (tests/cross/net_slot_wine_test.cc).
wine_test cage_net_slot_wine_test.exe 120 12 "--net slot claim"

echo "wine_smoke: $((n - failures)) of $n passed$([ $skipped = 0 ] || echo ", $skipped test program(s) skipped")"
[ $failures = 0 ]
