#!/usr/bin/env bash
# The default view pinned, so that a start-up change which leaks or drops an /etc entry is caught:
# every entry visible under /etc inside is a curated name, and equals the host's entry of the same
# path (a file byte for byte, a link by its text, a directory as a directory) or is one of the
# documented generated files (passwd, group, hostname, resolv.conf) with its documented content;
# copies in cage's tmpfs are 0644 files and 0755 directories; only directories are bound, keeping the
# host's mode; every world-readable host entry under a curated name is visible; no secret is. The top
# level is pinned too: names, kinds, modes and link texts, with /run, $HOME and /var/tmp empty.
. "$(dirname "$0")/../escape/lib.bash"
require_sandbox
if landlock_only; then echo "skip: the Landlock-only mechanism shows the host's /etc (documented)"; exit 77; fi

# The lister runs inside: one JSON object, path -> [kind, mode, device, link text or sha256 or null].
lister='
import hashlib, json, os, stat, sys
out = {}
def one(p):
    st = os.lstat(p)
    m = st.st_mode
    if stat.S_ISLNK(m): out[p] = ["l", stat.S_IMODE(m), st.st_dev, os.readlink(p)]
    elif stat.S_ISDIR(m): out[p] = ["d", stat.S_IMODE(m), st.st_dev, None]
    elif stat.S_ISREG(m):
        try:
            with open(p, "rb") as f: h = hashlib.sha256(f.read()).hexdigest()
        except PermissionError: h = None
        out[p] = ["f", stat.S_IMODE(m), st.st_dev, h]
    else: out[p] = ["?", stat.S_IMODE(m), st.st_dev, None]
for top in ["/"] + ["/" + n for n in os.listdir("/")]: one(top)
home = os.environ["HOME"]
for d in ("/var", "/run", "/var/tmp", home, os.path.dirname(home)):
    for n in os.listdir(d): one(d + "/" + n)
for root, dirs, files in os.walk("/etc"):
    for n in dirs + files: one(os.path.join(root, n))
one("/etc")
json.dump(out, sys.stdout)
'
cage_run -- /usr/bin/python3 -c "$lister"
expect_rc 0 "the lister ran inside the default view"
printf '%s' "$out" >"$work/inside.json"

# The same run's twin: a view with /etc bound whole shows the host's secrets' names; the curated
# one must not (so the checker below cannot pass on an empty or a whole /etc).
cage_run --ro /etc -- /usr/bin/python3 -c 'import os; print(len(os.listdir("/etc")))'
expect_rc 0 "twin: --ro /etc shows the host's /etc"
[ "$out" -gt 0 ] 2>/dev/null && [ "$out" -eq "$(ls -A /etc | wc -l)" ] ||
  fail "twin: --ro /etc shows $out entries, the host has $(ls -A /etc | wc -l)"

"$py" - "$work/inside.json" "$(id -u)" "$HOME" <<'EOF' || fail "the /etc view differs from the pinned one (above)"
import hashlib, json, os, stat, sys
inside = json.load(open(sys.argv[1]))
uid, home = int(sys.argv[2]), sys.argv[3]
bad = []
# compile.cc's kEtcEntries, and what passwd_files() generates: the only names /etc may show.
curated = set("""ld.so.cache ld.so.conf ld.so.conf.d ld.so.preload ssl ca-certificates ca-certificates.conf
pki crypto-policies localtime timezone resolv.conf hosts host.conf nsswitch.conf gai.conf services protocols
networks mime.types alternatives os-release lsb-release debian_version issue locale.alias locale.conf default
environment profile profile.d bash.bashrc inputrc terminfo vim python3 perl gitconfig manpath.config magic
mime xdg fonts java-17-openjdk login.defs shells mtab""".split())
generated = {"passwd", "group", "hostname"}
secrets = ["/etc/shadow", "/etc/gshadow", "/etc/sudoers", "/etc/sudoers.d", "/etc/ssh", "/etc/machine-id",
           "/etc/ssl/private", "/etc/passwd-", "/etc/shadow-"]
for s in secrets:
    if s in inside: bad.append(f"secret visible: {s}")
etc_dev = inside["/etc"][2]

def sha(p):
    with open(p, "rb") as f: return hashlib.sha256(f.read()).hexdigest()

# Generated, not copied: their content is checked below (hostname and resolv.conf here by hash).
expect_generated = {
    "/etc/hostname": "cage\n",
    "/etc/resolv.conf": "# cage: no --net; every name is answered NXDOMAIN (see cage(1), NETWORK)\n"
                        "nameserver 127.0.0.53\noptions timeout:1 attempts:1\n",
    "/etc/passwd": None, "/etc/group": None,
}
for p, (kind, mode, dev, val) in sorted(inside.items()):
    if not p.startswith("/etc/"): continue
    top = p.split("/")[2]
    if top not in curated and top not in generated:
        bad.append(f"not a curated name: {p}"); continue
    copied = dev == etc_dev  # in cage's own tmpfs, not a bind of the host's
    parent = inside.get(os.path.dirname(p))
    if not copied and parent and parent[2] == etc_dev and kind != "d":
        bad.append(f"{p}: bound by itself (only directories too large to copy are bound)")
    if p in expect_generated:
        if kind != "f" or mode != 0o644 or not copied:
            bad.append(f"{p}: generated file is {kind} {mode:o}")
        text = expect_generated[p]
        if text is not None and val != hashlib.sha256(text.encode()).hexdigest():
            bad.append(f"{p}: not the documented content")
        continue
    try: hs = os.lstat(p)
    except OSError as e:
        bad.append(f"{p}: visible inside, absent on the host ({e.strerror})"); continue
    hm = hs.st_mode
    if kind == "l":
        if not stat.S_ISLNK(hm) or os.readlink(p) != val: bad.append(f"{p}: link -> {val}, host differs")
        elif copied and mode != 0o777: bad.append(f"{p}: link mode {mode:o}")
    elif kind == "d":
        if not os.path.isdir(p): bad.append(f"{p}: a directory inside, not on the host")
        elif copied and mode != 0o755: bad.append(f"{p}: copied directory mode {mode:o}, want 755")
        elif not copied and stat.S_ISDIR(hm) and mode != stat.S_IMODE(hm): bad.append(f"{p}: bound directory mode {mode:o}")
    elif kind == "f":
        real = os.path.realpath(p)
        if not os.path.isfile(real): bad.append(f"{p}: a file inside, not on the host"); continue
        if copied:
            if mode != 0o644: bad.append(f"{p}: copied file mode {mode:o}, want 644")
            # a copy is world-readable inside: the host's must be too (a link's target: root may copy it)
            if not (os.stat(real).st_mode & 0o004) and not (stat.S_ISLNK(hm) and uid == 0):
                bad.append(f"{p}: copied, but not world-readable on the host")
        elif mode != stat.S_IMODE(hm): bad.append(f"{p}: bound file mode {mode:o}, host {stat.S_IMODE(hm):o}")
        if val is None:
            if copied: bad.append(f"{p}: unreadable copy")
        else:
            try:
                if sha(real) != val: bad.append(f"{p}: content differs from the host's")
            except PermissionError: bad.append(f"{p}: readable inside, not by this user on the host")
    else: bad.append(f"{p}: unexpected kind inside")

for p in expect_generated:
    if p not in inside: bad.append(f"{p}: missing")

# Dropped: every host entry under a curated name that the view shows (a world-readable file of at most
# 2 MiB, a non-empty link into /usr, /proc or /etc, a directory open to others) must be visible.
def host_expect(p, depth):
    try: st = os.lstat(p)
    except OSError: return
    m = st.st_mode
    if p == "/etc/ssl/private" or p == "/etc/resolv.conf": return
    if stat.S_ISLNK(m):
        t = os.readlink(p)
        lex = os.path.normpath(t if t.startswith("/") else os.path.join(os.path.dirname(p), t))
        if any(lex == r or lex.startswith(r + "/") for r in ("/usr", "/proc", "/etc")):
            if p not in inside: bad.append(f"dropped: link {p}")
        return
    if stat.S_ISREG(m):
        if m & 0o004 and st.st_size <= 2 << 20 and p not in inside: bad.append(f"dropped: file {p}")
        return
    if stat.S_ISDIR(m) and (m & 0o005) == 0o005:
        if p not in inside: bad.append(f"dropped: directory {p}"); return
        try: names = os.listdir(p)
        except PermissionError: return
        for n in names: host_expect(os.path.join(p, n), depth + 1)
for n in sorted(curated):
    host_expect("/etc/" + n, 0)

# The top level: names, kinds, modes, links; /run, $HOME and /var/tmp empty, /var holds only tmp,
# $HOME's parent only $HOME.
tops = {p: v for p, v in inside.items() if p.count("/") == 1 and p != "/"}
want = {"/dev": ("d", 0o755), "/etc": ("d", 0o755), "/proc": ("d", 0o555),
        "/run": ("d", 0o755), "/tmp": ("d", 0o1777), "/usr": ("d", None), "/var": ("d", 0o755)}
home_top = "/" + home.split("/")[1]
want[home_top] = ("d", 0o700 if home_top == home else 0o755)
if inside.get(home, [None, None])[:2] != ["d", 0o700]: bad.append(f"private {home}: {inside.get(home)}")
for d in ("bin", "sbin", "lib", "lib32", "lib64", "libx32"):
    h = "/" + d
    if os.path.islink(h): want[h] = ("l", 0o777, os.readlink(h))
    elif os.path.isdir(h): want[h] = ("d", None)
for p, w in want.items():
    v = tops.get(p)
    if v is None:
        if os.path.lexists(p) or w[0] == "d": bad.append(f"top level: {p} missing")
        continue
    if v[0] != w[0] or (w[1] is not None and v[1] != w[1]) or (w[0] == "l" and v[3] != w[2]):
        bad.append(f"top level: {p} is {v[0]} {v[1]:o} {v[3]}, want {w}")
for p in tops:
    if p not in want: bad.append(f"top level: unexpected {p}")
for p in inside:
    if p.startswith(("/run/", "/var/tmp/", home + "/")) or (p.startswith("/var/") and p != "/var/tmp") or \
            (p.startswith(home_top + "/") and home_top != home and p != home and not p.startswith(home + "/")):
        bad.append(f"not empty: {p}")
for b in bad: print("FAIL:", b)
print(f"{len([p for p in inside if p.startswith('/etc/')])} /etc entries checked, {len(bad)} differences")
sys.exit(1 if bad else 0)
EOF

# The generated files' content, read inside (the lister only hashed them).
cage_run -- /bin/sh -c 'cat /etc/hostname; echo ---; cat /etc/resolv.conf; echo ---; cut -d: -f1 /etc/passwd | tr "\n" " "; echo; cut -d: -f1 /etc/group | tr "\n" " "'
expect_rc 0 "generated files read inside"
want_users="root $( [ "$(id -u)" -ne 0 ] && echo "$(id -un) ")nobody "
want_groups="root $( [ "$(id -g)" -ne 0 ] && echo "$(id -gn) ")nogroup "
want="cage
---
# cage: no --net; every name is answered NXDOMAIN (see cage(1), NETWORK)
nameserver 127.0.0.53
options timeout:1 attempts:1
---
$want_users
$want_groups"
[ "$out" = "$want" ] && pass "generated files as documented" || fail "generated files: got
$out
want
$want"
finish
