#!/usr/bin/env python3
"""Render and check cage's package manifests (Homebrew, Scoop, winget, PKGBUILD, RPM spec).

  manifests.py render --version V --dist DIST --out OUT   fill the templates in packaging/ with the
      version and the SHA-256 of DIST/cage-V.tar.gz (source), DIST/cage-V-windows-x86_64.zip
      (Scoop, winget) and DIST/cage-V-macos-{x86_64,arm64}.tar.gz (Homebrew); a manifest whose
      binaries are not in DIST (a release without --cross) is skipped, with a note
  manifests.py check --version V --dist DIST OUT          parse each rendered file and check it
      against packaging/manifest-schema.json (fields, version, checksums of the files in DIST)
"""
import argparse
import hashlib
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
TEMPLATES = ["homebrew/cage-sandbox.rb", "arch/PKGBUILD", "rpm/cage-sandbox.spec", "scoop/cage-sandbox.json",
             "winget/CageSandbox.Cage.yaml", "winget/CageSandbox.Cage.installer.yaml",
             "winget/CageSandbox.Cage.locale.en-US.yaml"]
# The binary artefacts each manifest points at, besides the source tarball.
NEEDS = {"scoop/": ("sha_windows",), "winget/": ("sha_windows",),
         "homebrew/": ("sha_macos_x86_64", "sha_macos_arm64")}


def missing(rel, sums):
    """The artefacts `rel` needs that DIST lacks (empty: it can be rendered)."""
    for prefix, keys in NEEDS.items():
        if rel.startswith(prefix):
            return [k for k in keys if sums[k] is None]
    return []


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def artefact_sums(version, dist):
    sums = {}
    for key, name in (("sha_source", f"cage-{version}.tar.gz"), ("sha_windows", f"cage-{version}-windows-x86_64.zip"),
                      ("sha_macos_x86_64", f"cage-{version}-macos-x86_64.tar.gz"),
                      ("sha_macos_arm64", f"cage-{version}-macos-arm64.tar.gz")):
        path = os.path.join(dist, name)
        sums[key] = sha256(path) if os.path.exists(path) else None
    return sums


def render(args):
    sums = artefact_sums(args.version, args.dist)
    if sums["sha_source"] is None:
        sys.exit(f"manifests.py: {args.dist}/cage-{args.version}.tar.gz missing")
    for rel in TEMPLATES:
        if missing(rel, sums):
            print(f"manifests.py: {', '.join(missing(rel, sums))} not in {args.dist} (no --cross): {rel} not rendered")
            continue
        with open(os.path.join(HERE, rel)) as f:
            text = f.read()
        text = (text.replace("@VERSION@", args.version).replace("@SHA256_SOURCE@", sums["sha_source"])
                .replace("@SHA256_WINDOWS_X86_64@", sums["sha_windows"] or "")
                .replace("@SHA256_MACOS_X86_64@", sums["sha_macos_x86_64"] or "")
                .replace("@SHA256_MACOS_ARM64@", sums["sha_macos_arm64"] or ""))
        left = re.search(r"@[A-Z0-9_]+@", text)
        if left:
            sys.exit(f"manifests.py: {rel}: placeholder left: {left.group(0)}")
        dest = os.path.join(args.out, rel)
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        with open(dest, "w") as f:
            f.write(text)


def lookup(doc, dotted):
    cur = doc
    for part in re.findall(r"[^.\[\]]+|\[\d+\]", dotted):
        if part.startswith("["):
            cur = cur[int(part[1:-1])]
        else:
            cur = cur[part]
    return cur


def check(args):
    with open(os.path.join(HERE, "manifest-schema.json")) as f:
        schema = json.load(f)["files"]
    sums = artefact_sums(args.version, args.dist)
    subst = {"version": re.escape(args.version), "sha_source": sums["sha_source"] or "(missing)",
             "sha_windows": sums["sha_windows"] or "(missing)",
             "sha_macos_x86_64": sums["sha_macos_x86_64"] or "(missing)",
             "sha_macos_arm64": sums["sha_macos_arm64"] or "(missing)"}
    errors, checked = [], 0
    for rel, spec in schema.items():
        path = os.path.join(args.rendered, rel)
        if not os.path.exists(path):
            if missing(rel, sums):
                continue
            errors.append(f"{rel}: not rendered")
            continue
        with open(path) as f:
            text = f.read()
        try:
            if spec["format"] == "json":
                doc = json.loads(text)
            elif spec["format"] == "yaml":
                import yaml
                doc = yaml.safe_load(text)
            else:
                doc = None
        except Exception as e:  # a manifest that does not parse is the failure this check exists for
            errors.append(f"{rel}: does not parse: {e}")
            continue
        for field, pattern in spec["fields"].items():
            rx = re.compile(pattern.format(**subst) if "{" in pattern and "\\{" not in pattern else
                            pattern.replace("{version}", subst["version"]), re.M)
            if doc is None:
                if not rx.search(text):
                    errors.append(f"{rel}: no line for {field} matching {rx.pattern}")
                continue
            try:
                value = str(lookup(doc, field))
            except (KeyError, IndexError, TypeError):
                errors.append(f"{rel}: field {field} missing")
                continue
            if not rx.search(value):
                errors.append(f"{rel}: {field} = {value!r} does not match {rx.pattern}")
        checked += 1
    for e in errors:
        print("FAIL:", e, file=sys.stderr)
    if not errors:
        print(f"manifests.py: {checked} manifests parse and carry version {args.version} and the artefacts' SHA-256")
    return 1 if errors else 0


def main():
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("render")
    r.add_argument("--version", required=True)
    r.add_argument("--dist", required=True)
    r.add_argument("--out", required=True)
    c = sub.add_parser("check")
    c.add_argument("--version", required=True)
    c.add_argument("--dist", required=True)
    c.add_argument("rendered")
    args = p.parse_args()
    if args.cmd == "render":
        render(args)
        return 0
    return check(args)


if __name__ == "__main__":
    sys.exit(main())
