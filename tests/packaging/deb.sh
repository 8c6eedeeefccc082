#!/usr/bin/env bash
# The Debian package: built from this build tree, lintian-clean (no errors or warnings), installed
# with dpkg into a throwaway root (never onto this machine), where /usr/bin/cage runs --version and
# a real sandboxed command, man finds and renders cage(1), the completions sit where bash, zsh and
# fish look; `Conflicts: cage` really keeps the Wayland compositor's /usr/bin/cage out; dpkg -r and
# --purge leave nothing behind.
set -euo pipefail
: "${CAGE:?}" "${CAGE_SOURCE_DIR:?}" "${CAGE_BUILD_DIR:?}"
[ "$(id -u)" -eq 0 ] || { echo "skip: needs root (dpkg --root with maintainer scripts)"; exit 77; }
for tool in dpkg-deb lintian man gzip file; do
  command -v $tool >/dev/null || { echo "skip: $tool not installed (packaging/setup-debian.sh installs it)"; exit 77; }
done
fail=0
bad() { echo "FAIL: $*" >&2; fail=1; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
chmod 755 "$tmp"

deb=$("$CAGE_SOURCE_DIR/packaging/deb/build-deb.sh" "$CAGE_BUILD_DIR" "$tmp/out")
[ -f "$deb" ] || { echo "FAIL: no .deb built"; exit 1; }
echo "built $(basename "$deb")"

# -- metadata and lintian
dpkg-deb -f "$deb" Package | grep -qx cage-sandbox || bad "package name is not cage-sandbox"
dpkg-deb -f "$deb" Conflicts | grep -qx cage || bad "no 'Conflicts: cage' (file conflict on /usr/bin/cage)"
want_version=$(sed -n 's/^project(cage VERSION \([0-9][0-9.]*\).*/\1/p' "$CAGE_SOURCE_DIR/CMakeLists.txt")
[ "$(dpkg-deb -f "$deb" Version)" = "$want_version-1" ] || bad "package version is not $want_version-1"
lintian --fail-on error,warning "$deb" > "$tmp/lintian.txt" 2>&1 || { bad "lintian:"; cat "$tmp/lintian.txt" >&2; }
grep -v 'running with root privileges' "$tmp/lintian.txt" || true

# -- install into a throwaway root
R=$tmp/root
mkdir -p "$R/var/lib/dpkg/updates" "$R/var/lib/dpkg/info" "$R/tmp"
touch "$R/var/lib/dpkg/status"
dpkg_root() { dpkg --root="$R" --force-script-chrootless --force-not-root --log=/dev/null "$@"; }
dpkg_root -i "$deb" > "$tmp/dpkg.txt" 2>&1 || { bad "dpkg -i:"; cat "$tmp/dpkg.txt" >&2; }
# (Outputs are captured, then matched: `cmd | grep -q` under pipefail fails at random when grep exits
# at its match and cmd's next write meets SIGPIPE; see docs.sh.)
st=$(dpkg_root -s cage-sandbox 2>&1) || true
grep -qx 'Status: install ok installed' <<< "$st" || bad "dpkg does not list cage-sandbox as installed in the throwaway root"
for f in usr/bin/cage usr/share/man/man1/cage.1.gz usr/share/bash-completion/completions/cage \
         usr/share/zsh/vendor-completions/_cage usr/share/fish/vendor_completions.d/cage.fish \
         etc/apparmor.d/cage usr/share/doc/cage-sandbox/copyright usr/share/doc/cage-sandbox/changelog.Debian.gz; do
  [ -f "$R/$f" ] || bad "package lacks /$f"
done
if [ -d "$CAGE_SOURCE_DIR/profiles" ]; then
  n=$(find "$CAGE_SOURCE_DIR/profiles" -name '*.toml' | wc -l)
  [ "$(find "$R/usr/share/cage/profiles" -name '*.toml' 2>/dev/null | wc -l)" -eq "$n" ] || bad "package lacks the $n built-in profiles"
fi
grep -q '^ *userns,' "$R/etc/apparmor.d/cage" && grep -q 'profile cage /usr/bin/cage' "$R/etc/apparmor.d/cage" ||
  bad "AppArmor profile does not grant userns to /usr/bin/cage"
if command -v apparmor_parser >/dev/null; then
  apparmor_parser -Q -K "$R/etc/apparmor.d/cage" 2>/dev/null || echo "note: this host's apparmor_parser cannot parse abi 4.0 (userns) profiles"
fi

# -- the installed binary
bin=$R/usr/bin/cage
file -L "$bin" | grep -Eq 'statically linked|static-pie linked' || bad "/usr/bin/cage is not static: $(file -L "$bin")"
[ "$("$bin" --version)" = "cage $want_version" ] || bad "cage --version says '$("$bin" --version)'"
help=$("$bin" --help); [[ "$help" == *"--ro PATH"* ]] || bad "cage --help from the installed binary"

# a real sandboxed run from the installed path: write where granted, be refused where not
work=$(mktemp -d); trap 'rm -rf "$tmp" "$work"' EXIT
mkdir -p "$work/out" "$work/src"; echo hello > "$work/src/in.txt"; chmod -R a+rwX "$work"
cd "$work"
out=$("$bin" --ro src --rw out -- sh -c 'cat src/in.txt > out/copy.txt && echo ran; touch src/evil 2>/dev/null || echo refused') ||
  bad "sandboxed run from the installed binary failed (status $?)"
[ "$out" = "$(printf 'ran\nrefused')" ] || bad "sandboxed run printed '$out'"
[ "$(cat out/copy.txt 2>/dev/null)" = hello ] || bad "the --rw write did not reach the host"
[ ! -e src/evil ] || bad "a write to a --ro grant reached the host"
"$bin" --ro src -- sh -c 'test -e /etc/shadow' && bad "/etc/shadow visible in the sandbox"
cd /

# -- man page from the installed tree
man -l "$R/usr/share/man/man1/cage.1.gz" 2>/dev/null | col -b > "$tmp/man.txt" || true
grep -q 'DEFAULT FILESYSTEM VIEW' "$tmp/man.txt" || bad "man -l cannot render the installed page"
found=$(MANPATH="$R/usr/share/man" man -w cage 2>/dev/null || true)
[ "$found" = "$R/usr/share/man/man1/cage.1.gz" ] || bad "man -w cage found '$found'"

# -- completions from the installed paths
bash --norc -c "source '$R/usr/share/bash-completion/completions/cage'; COMP_WORDS=(cage --seccomp r); COMP_CWORD=2; _cage; [ \"\${COMPREPLY[*]}\" = relaxed ]" ||
  bad "installed bash completion"
if command -v fish >/dev/null; then
  fish --no-config -c "source '$R/usr/share/fish/vendor_completions.d/cage.fish'; complete -C 'cage --no-'" > "$tmp/fish.txt"; grep -q -- --no-system "$tmp/fish.txt" || bad "installed fish completion"
fi

# -- the file conflict with the Wayland compositor is declared and enforced by dpkg
mkdir -p "$tmp/other/DEBIAN" "$tmp/other/usr/bin"
printf '#!/bin/sh\necho compositor\n' > "$tmp/other/usr/bin/cage"; chmod 755 "$tmp/other/usr/bin/cage"
printf 'Package: cage\nVersion: 0.1.5-1\nArchitecture: all\nMaintainer: test <t@example.org>\nDescription: stand-in for the Wayland compositor\n' > "$tmp/other/DEBIAN/control"
dpkg-deb --root-owner-group --build "$tmp/other" "$tmp/cage-compositor.deb" >/dev/null
if dpkg_root -i "$tmp/cage-compositor.deb" > "$tmp/conflict.txt" 2>&1; then
  bad "dpkg installed the compositor's cage next to cage-sandbox"
else
  grep -q 'conflict' "$tmp/conflict.txt" || { bad "dpkg refused for another reason:"; cat "$tmp/conflict.txt" >&2; }
fi
[ "$("$bin" --version)" = "cage $want_version" ] || bad "/usr/bin/cage was replaced"

# -- removal leaves nothing (purge takes the conffile too)
dpkg_root -r cage-sandbox > /dev/null 2>&1 || bad "dpkg -r"
[ ! -e "$R/usr/bin/cage" ] || bad "dpkg -r left /usr/bin/cage"
dpkg_root --purge cage-sandbox > /dev/null 2>&1 || bad "dpkg --purge"
[ ! -e "$R/etc/apparmor.d/cage" ] || bad "dpkg --purge left /etc/apparmor.d/cage"
left=$(cd "$R" && find . -type f ! -path './var/lib/dpkg/*')
[ -z "$left" ] || bad "files left after purge: $(head -n10 <<< "$left")"
# and this machine never had it installed
if dpkg-query -W -f='${Status}' cage-sandbox 2>/dev/null | grep -q 'ok installed'; then
  bad "cage-sandbox is installed on this machine"
fi

[ $fail -eq 0 ] && echo "ok: cage-sandbox .deb builds, is lintian-clean, installs, runs, and purges"
exit $fail
