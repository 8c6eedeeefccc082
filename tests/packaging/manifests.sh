#!/usr/bin/env bash
# Package manifests: the templates render with a release's version and artefact checksums, every
# rendered file parses (JSON, YAML) and carries the fields of packaging/manifest-schema.json; the
# Homebrew formula passes `ruby -c`; the RPM spec builds a binary RPM with rpmbuild from a source
# tarball of this tree (when rpmbuild is installed).
set -euo pipefail
: "${CAGE_SOURCE_DIR:?}"
src=$CAGE_SOURCE_DIR
for tool in ruby python3; do
  command -v $tool >/dev/null || { echo "skip: $tool not installed (packaging/setup-debian.sh installs it)"; exit 77; }
done
py=python3; [ -x /usr/bin/python3 ] && /usr/bin/python3 -c 'import yaml' 2>/dev/null && py=/usr/bin/python3
$py -c 'import yaml' 2>/dev/null || { echo "skip: python3-yaml not installed"; exit 77; }
fail=0
bad() { echo "FAIL: $*" >&2; fail=1; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
version=$(sed -n 's/^project(cage VERSION \([0-9][0-9.]*\).*/\1/p' "$src/CMakeLists.txt")

# Stand-in artefacts: the checks are about the manifests carrying *these* files' checksums.
mkdir -p "$tmp/dist"
echo "source $version" > "$tmp/dist/cage-$version.tar.gz"
echo "windows $version" > "$tmp/dist/cage-$version-windows-x86_64.zip"
echo "macos x86_64 $version" > "$tmp/dist/cage-$version-macos-x86_64.tar.gz"
echo "macos arm64 $version" > "$tmp/dist/cage-$version-macos-arm64.tar.gz"
$py "$src/packaging/manifests.py" render --version "$version" --dist "$tmp/dist" --out "$tmp/r" || bad "render"
$py "$src/packaging/manifests.py" check --version "$version" --dist "$tmp/dist" "$tmp/r" || bad "check"
ruby -c "$tmp/r/homebrew/cage-sandbox.rb" >/dev/null || bad "ruby -c homebrew/cage-sandbox.rb"
ruby -c "$src/packaging/homebrew/cage-sandbox.rb" >/dev/null || bad "ruby -c on the template"
bash -n "$tmp/r/arch/PKGBUILD" || bad "PKGBUILD is not valid bash"
# The check must notice a wrong checksum and a wrong version.
sed -i 's/"hash": "[0-9a-f]*"/"hash": "'"$(printf '0%.0s' {1..64})"'"/' "$tmp/r/scoop/cage-sandbox.json"
if $py "$src/packaging/manifests.py" check --version "$version" --dist "$tmp/dist" "$tmp/r" 2>/dev/null; then
  bad "check accepted a Scoop manifest with the wrong hash"
fi
cp "$tmp/r/homebrew/cage-sandbox.rb" "$tmp/brew.rb"
sed -i "s/$(sha256sum "$tmp/dist/cage-$version-macos-arm64.tar.gz" | cut -c1-64)/$(printf '0%.0s' {1..64})/" "$tmp/r/homebrew/cage-sandbox.rb"
brew_check=$($py "$src/packaging/manifests.py" check --version "$version" --dist "$tmp/dist" "$tmp/r" 2>&1 || true)
if ! grep -q 'homebrew/cage-sandbox.rb: no line for sha256_macos_arm64' <<< "$brew_check"; then
  bad "check accepted a Homebrew formula with the wrong arm64 checksum"
fi
cp "$tmp/brew.rb" "$tmp/r/homebrew/cage-sandbox.rb"
if $py "$src/packaging/manifests.py" check --version 9.9.9 --dist "$tmp/dist" "$tmp/r" 2>/dev/null; then
  bad "check accepted manifests of another version"
fi

# rpmbuild from a source tarball of this tree (tracked files + mimalloc), as release.sh makes it.
if command -v rpmbuild >/dev/null && [ -f "$src/third_party/mimalloc/src/static.c" ]; then
  s=$tmp/rpm/SOURCES/cage-$version; mkdir -p "$s" "$tmp/rpm/SPECS"
  (cd "$src" && git ls-files -z --cached --others --exclude-standard 2>/dev/null | xargs -0 cp --parents -t "$s" 2>/dev/null) || true
  mkdir -p "$s/third_party"; cp -a "$src/third_party/mimalloc" "$s/third_party/"
  tar -C "$tmp/rpm/SOURCES" -czf "$tmp/rpm/SOURCES/cage-$version.tar.gz" "cage-$version"; rm -rf "$s"
  cp "$tmp/r/rpm/cage-sandbox.spec" "$tmp/rpm/SPECS/"
  if rpmbuild -bb --nodeps --define "_topdir $tmp/rpm" --define "_smp_mflags -j2" \
       "$tmp/rpm/SPECS/cage-sandbox.spec" > "$tmp/rpmbuild.log" 2>&1; then
    rpm=$(find "$tmp/rpm/RPMS" -name "cage-sandbox-$version-1*.rpm" -print -quit)  # no `| head` under pipefail
    [ -n "$rpm" ] || bad "rpmbuild made no cage-sandbox RPM"
    if [ -n "$rpm" ]; then
      rpm -qlp "$rpm" 2>/dev/null > "$tmp/rpm.files"
      for f in /usr/bin/cage /usr/share/man/man1/cage.1 /usr/share/bash-completion/completions/cage /etc/apparmor.d/cage; do
        grep -q "^$f" "$tmp/rpm.files" || bad "RPM lacks $f"
      done
      conflicts=$(rpm -qp --conflicts "$rpm" 2>/dev/null) || true  # captured: see docs.sh on SIGPIPE
      grep -qx cage <<< "$conflicts" || bad "RPM does not conflict with cage"
      echo "rpmbuild: $(basename "$rpm")"
    fi
  else
    bad "rpmbuild failed:"; tail -30 "$tmp/rpmbuild.log" >&2
  fi
else
  echo "note: rpmbuild or mimalloc source missing: RPM build not tried"
fi
[ $fail -eq 0 ] && echo "ok: manifests render, parse and carry version $version and the right checksums"
exit $fail
