#!/usr/bin/env bash
# Attack: overwrite cage's own binary (or the workload's) through /proc/*/exe: /proc/1/exe is cage's
# init (the host cage binary), /proc/self/exe the workload; also through /proc/1/root, /proc/1/cwd
# and /proc/1/fd/* of init.
# Policy: the default view, --ro of the probe. Expected: every open for writing fails; the host cage
# binary is unchanged. Twin: reading the workload's own /proc/self/exe works.
. "$(dirname "$0")/lib.bash"
require_sandbox
before=$(sha256sum "$CAGE" | cut -d' ' -f1)
pol=(--ro "$probe_dir")
cage_run "${pol[@]}" -- sh -c 'head -c 4 /proc/self/exe | od -c | head -1'
expect_rc 0 "twin: reading /proc/self/exe works"
grep -q 'E   L   F' <<<"$out" || fail "twin: /proc/self/exe is not an ELF: $out"
for target in /proc/1/exe /proc/self/exe /proc/2/exe /proc/1/root/proc/1/exe /proc/1/cwd/x /proc/1/fd/0 \
              /proc/1/fd/1 /proc/1/fd/3 /proc/1/fd/4 /proc/1/fd/5 /proc/1/mem; do
  cage_run "${pol[@]}" -- "$CAGE_PROBE" write "$target"
  [ "$rc" -ne 0 ] && pass "cannot write $target ($(tail -1 <<<"$err"))" || fail "wrote $target inside cage"
done
# Any process: all of /proc/*/exe, from a shell that keeps running.
cage_run "${pol[@]}" -- sh -c 'n=0; for e in /proc/[0-9]*/exe; do
  if (exec 3<>"$e") 2>/dev/null; then echo "OPENED $e -> $(readlink "$e")"; fi; n=$((n+1)); done; echo "tried $n"'
grep -q OPENED <<<"$out" && fail "opened an exe for writing: $out" || pass "no /proc/*/exe opens for writing ($out)"
# Reading init's memory or environment: init is non-dumpable.
cage_run "${pol[@]}" -- "$CAGE_PROBE" read /proc/1/mem
[ "$rc" -ne 0 ] && pass "cannot read /proc/1/mem" || fail "read /proc/1/mem"
# (As root inside, init's fd numbers may be listed: /proc/1/fd is root's; where they lead may not.)
cage_run "${pol[@]}" -- sh -c 'for f in /proc/1/fd/*; do readlink "$f" && echo "LINK $f"; done; :'
grep -q LINK <<<"$out" && fail "read where init's fds lead: $out" || pass "cannot follow init's fds"
[ "$(sha256sum "$CAGE" | cut -d' ' -f1)" = "$before" ] || fail "the cage binary on the host changed"
finish
