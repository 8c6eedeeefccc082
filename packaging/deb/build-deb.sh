#!/usr/bin/env bash
# Builds the cage-sandbox .deb from a CMake build tree:  packaging/deb/build-deb.sh BUILD_DIR [OUT_DIR]
# The package installs /usr/bin/cage (static), cage(1), bash/zsh/fish completions, the built-in
# profiles, and /etc/apparmor.d/cage (userns for Ubuntu 23.10+). It declares `Conflicts: cage`: the
# Wayland kiosk compositor of that name also installs /usr/bin/cage. Needs dpkg-deb; no root.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:?usage: build-deb.sh BUILD_DIR [OUT_DIR]}" && pwd)
out=$(mkdir -p "${2:-$build}" && cd "${2:-$build}" && pwd)
version=$(sed -n 's/^project(cage VERSION \([0-9][0-9.]*\).*/\1/p' "$top/CMakeLists.txt")
arch=$(dpkg --print-architecture)
pkg=cage-sandbox
stage=$(mktemp -d); trap 'rm -rf "$stage"' EXIT
root=$stage/root
umask 022

DESTDIR=$root cmake --install "$build" --prefix /usr >/dev/null
strip --strip-all "$root/usr/bin/cage"
gzip -9n "$root/usr/share/man/man1/cage.1"
install -d "$root/usr/share/doc/$pkg" "$root/usr/share/lintian/overrides" "$root/etc/apparmor.d"
install -m 0644 "$top/packaging/deb/copyright" "$root/usr/share/doc/$pkg/copyright"
sed "s/@VERSION@/$version/" "$top/packaging/deb/changelog" | gzip -9n > "$root/usr/share/doc/$pkg/changelog.Debian.gz"
chmod 0644 "$root/usr/share/doc/$pkg/changelog.Debian.gz"
install -m 0644 "$top/packaging/deb/lintian-overrides" "$root/usr/share/lintian/overrides/$pkg"
install -m 0644 "$top/packaging/apparmor/cage" "$root/etc/apparmor.d/cage"

install -d "$root/DEBIAN"
install -m 0755 "$top/packaging/deb/postinst" "$top/packaging/deb/prerm" "$root/DEBIAN/"
echo /etc/apparmor.d/cage > "$root/DEBIAN/conffiles"
(cd "$root" && find usr -type f -print0 | sort -z | xargs -0 md5sum) > "$root/DEBIAN/md5sums"
size=$(du -sk --exclude=DEBIAN "$root" | cut -f1)
cat > "$root/DEBIAN/control" <<CONTROL
Package: $pkg
Version: $version-1
Architecture: $arch
Maintainer: cage maintainers <maintainers@cage-sandbox.example.org>
Installed-Size: $size
Conflicts: cage
Section: utils
Priority: optional
Description: confine a program to the files and hosts it was granted
 cage runs a command in a sandbox: a read-only view of the system, the
 directories granted with --ro and --rw, a private empty home and /tmp, no
 network unless hosts are allowed with --net (through a filtering proxy),
 and a minimal environment. It uses user, mount, pid and network
 namespaces, Landlock, seccomp and dropped capabilities, needs no setuid
 bit or daemon, and is one static executable.
 .
 The command is /usr/bin/cage, which is also the name of the Wayland kiosk
 compositor packaged as "cage"; the two packages cannot be installed
 together.
CONTROL
deb=$out/${pkg}_${version}-1_${arch}.deb
dpkg-deb --root-owner-group -Zxz --build "$root" "$deb" >/dev/null
echo "$deb"
