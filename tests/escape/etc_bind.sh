#!/usr/bin/env bash
# Attack: the curated /etc binds a directory (read-only) instead of copying it when the copy "would
# equal the bind" (etc_view.cc, copy_is_bind); make the bind show what the copy leaves out. (1) Files
# past the copy budget: nine world-readable files of 1.9 MB each (every one under the 2 MiB a file may
# have; 17 MB in all, the copy keeps 8 MiB). (2) A file whose mode lets others read it but not the
# caller (mode 0004, owned by the caller: the owner's bits apply): the copy cannot read it and shows
# no name; the bind showed the name, owner and size.
# Policy: default view. The curated directory is a tmpfs mounted over the first of /etc/fonts,
# /etc/xdg, ... that the host has, in a private mount namespace (the host's /etc is not touched); as
# the unprivileged user that namespace belongs to a user namespace of the user, and cage runs there
# without capabilities. Expected: inside, the directory's files hold 8 MiB or less; the unreadable
# file has no name. Twins: the first big file and the readable small files are there, byte for byte.
# Found on main (both, root and user: 17 MB and all nine files; the name `not-readable`); now the bytes
# count against the budget and a file cage cannot read keeps the copy.
. "$(dirname "$0")/etc_cover.bash"

# (1) the budget
cover
for i in 1 2 3 4 5 6 7 8 9; do head -c 1900000 /dev/urandom >"$dir/big$i"; chmod 644 "$dir/big$i"; done
want=$(sha256sum <"$dir/big1")
cage_run -- sh -c "cat $dir/* 2>/dev/null | wc -c; sha256sum <$dir/big1"
bytes=$(sed -n 1p <<<"$out")
[ "$rc" -eq 0 ] && [ "$(sed -n 2p <<<"$out")" = "$want" ] && pass "twin: $dir/big1 shown byte for byte" ||
  fail "twin: $dir/big1 not shown as on the host (exit $rc): $out $err"
[ -n "$bytes" ] && [ "$bytes" -le $((8 << 20)) ] && pass "$dir shows $bytes bytes: no more than the 8 MiB a copy holds" ||
  fail "$dir shows $bytes bytes inside: past the 8 MiB copy budget (the bind showed what the copy drops)"

# (2) a file others may read, but not the caller (as root, every file is readable: the copy shows it)
cover
for i in 1 2 3 4 5 6 7 8; do echo "small $i" >"$dir/small$i"; chmod 644 "$dir/small$i"; done
echo "not for the caller" >"$dir/not-readable"
chmod 0004 "$dir/not-readable"
cage_run -- sh -c "cat $dir/small1 $dir/small8; ls -a $dir"
[ "$rc" -eq 0 ] && [ "$(sed -n 1,2p <<<"$out" | tr '\n' ' ')" = "small 1 small 8 " ] &&
  pass "twin: the readable files of $dir shown" || fail "twin: exit $rc: $out $err"
if is_root && [ "${CAGE_ETC_USERNS:-0}" != 1 ]; then
  grep -qx not-readable <<<"$out" && pass "root: the file root may read is shown, as the copy shows it" ||
    fail "root: $dir/not-readable missing: $out"
else
  grep -qx not-readable <<<"$out" && fail "the name of a file the caller may not read is shown in $dir" ||
    pass "a file the caller may not read has no name inside"
fi
finish
