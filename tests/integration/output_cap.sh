#!/usr/bin/env bash
# Output caps (--max-output, --max-stdout, --max-stderr): under the cap the stream passes through
# byte for byte; past it exactly the cap is written, then one marker line with the exact count, and
# --result records written, dropped and the SHA-256 of all the command wrote. A command writing
# 100 MB past a 1K cap finishes; a reader that leaves ends the command as without a cap; a terminal
# gets a pipe. Denial twin: the command cannot reach the real stdout past the cap (/proc/self/fd,
# /dev/stdout, init's and cage's /proc/PID/fd); without a cap the same trick reaches it. Both
# mechanisms (namespaces, and Landlock alone where the kernel has it).
. "${CAGE_SOURCE_DIR:?}/tests/escape/lib.bash"
require_sandbox
d=$work
sha() { sha256sum "$1" | cut -d' ' -f1; }
# field FILE STREAM KEY: the result's output.STREAM.KEY ("None" if absent)
field() { "$py" -c 'import json,sys; o=json.load(open(sys.argv[1])).get("output",{}).get(sys.argv[2]); print(None if o is None else o[sys.argv[3]])' "$@"; }
valid() { "$py" "$CAGE_SOURCE_DIR/tests/integration/limits_schema.py" "$CAGE_SOURCE_DIR/docs/schema/result.schema.json" "$1" ||
  fail "result does not match the schema: $(cat "$1")"; }
# expect_capped OUT INPUT CAP DROPPED STREAM: OUT is INPUT's first CAP bytes, then the marker line
# (after a newline when the cut fell inside a line).
expect_capped() {
  "$py" - "$@" <<'PY' || fail "$1 is not $3 bytes of $2 and one marker"
import sys
out, src, cap, dropped, name = open(sys.argv[1], "rb").read(), open(sys.argv[2], "rb").read(), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
capt = str(cap) + "-byte"
for u, s in (("G", 30), ("M", 20), ("K", 10)):
    if cap and cap % (1 << s) == 0: capt = str(cap >> s) + u; break
marker = ("" if cap == 0 or src[cap - 1:cap] == b"\n" else "\n") + f"cage: {name} truncated: {dropped} bytes dropped past the {capt} cap\n"
want = src[:cap] + marker.encode()
if out != want:
    print(f"got {len(out)} bytes ending {out[-120:]!r}, want {len(want)} ending {want[-120:]!r}", file=sys.stderr); sys.exit(1)
PY
}

head -c 300000 /dev/urandom >"$d/in"
printf 'line one\nline two\n' >>"$d/in"
mechs=(default)
landlock_mechanism && mechs+=(landlock)
for m in "${mechs[@]}"; do
  mech=()
  [ "$m" = landlock ] && mech=(--mechanism landlock --allow-degraded pid)
  # Under the cap: byte-identical, nothing dropped, no marker.
  cage_run --ro "$d" --max-output 1M --result "$d/r1.json" -- cat "$d/in"
  expect_rc 0 "$m: under the cap"
  cmp -s "$d/.out" "$d/in" || fail "$m: output under the cap differs from the input"
  valid "$d/r1.json"
  [ "$(field "$d/r1.json" stdout written_bytes)" = "$(stat -c %s "$d/in")" ] &&
    [ "$(field "$d/r1.json" stdout dropped_bytes)" = 0 ] &&
    [ "$(field "$d/r1.json" stdout sha256)" = "$(sha "$d/in")" ] || fail "$m: result under the cap: $(cat "$d/r1.json")"

  # Over the cap: exactly the cap, then the marker with the exact count; the hash covers everything.
  cage_run --ro "$d" --max-stdout 100000 --result "$d/r2.json" -- cat "$d/in"
  expect_rc 0 "$m: over the cap"
  total=$(stat -c %s "$d/in")
  expect_capped "$d/.out" "$d/in" 100000 $((total - 100000)) stdout
  valid "$d/r2.json"
  [ "$(field "$d/r2.json" stdout written_bytes)" = 100000 ] &&
    [ "$(field "$d/r2.json" stdout dropped_bytes)" = $((total - 100000)) ] &&
    [ "$(field "$d/r2.json" stdout sha256)" = "$(sha "$d/in")" ] &&
    [ "$(field "$d/r2.json" stderr cap_bytes)" = None ] || fail "$m: result over the cap: $(cat "$d/r2.json")"

  # 100 MB past a 1K cap: drained, never blocked; the count and hash are exact.
  cage_run --max-output 1K --result "$d/r3.json" -- head -c 104857600 /dev/zero
  expect_rc 0 "$m: 100 MB past a 1K cap"
  head -c 1024 /dev/zero >"$d/zero1k"
  expect_capped "$d/.out" "$d/zero1k" 1024 $((104857600 - 1024)) stdout
  want=$("$py" -c 'import hashlib; print(hashlib.sha256(bytes(104857600)).hexdigest())')
  [ "$(field "$d/r3.json" stdout sha256)" = "$want" ] || fail "$m: hash of 100 MB of zeros: $(cat "$d/r3.json")"

  # stderr on its own cap; stdout (not capped) is the real file, untouched.
  cage_run --max-stderr 10 --result "$d/r4.json" -- sh -c 'echo 0123456789abcdef >&2; echo out; ls -l /proc/self/fd/1 /proc/self/fd/2 >&2'
  expect_rc 0 "$m: stderr capped alone"
  [ "$out" = out ] || fail "$m: uncapped stdout changed: $out"
  printf '0123456789abcdef\n' >"$d/e"
  dropped=$(field "$d/r4.json" stderr dropped_bytes)
  [ "$(head -c 10 "$d/.err")" = 0123456789 ] && grep -qx "cage: stderr truncated: $dropped bytes dropped past the 10-byte cap" "$d/.err" &&
    [ "$(wc -l <"$d/.err")" = 2 ] || fail "$m: stderr over its cap: $(cat "$d/.err")"
  [ "$(field "$d/r4.json" stdout cap_bytes)" = None ] || fail "$m: stdout recorded though not capped"

  # A reader that leaves: the command's writes fail as they would without a cap (yes dies of SIGPIPE).
  rc=0
  "$CAGE" ${mech[@]+"${mech[@]}"} --max-output 1G --result "$d/r5.json" -- yes </dev/null 2>"$d/.err" | head -c 4 >"$d/.out" || rc=$?
  [ "$(cat "$d/.out")" = "$(printf 'y\ny\n')" ] && [ "$(field "$d/r5.json" stdout reader_left)" = True ] ||
    fail "$m: reader left: $(cat "$d/.out") $(cat "$d/r5.json" 2>/dev/null) $(cat "$d/.err")"
  pass "$m: a reader that leaves ends the command"

  # Denial twin. Without a cap, /proc/self/fd/1 is the real file (granted writable here, so Landlock
  # lets it be reopened): the trick reaches it.
  trick='printf aaaaaaaaaaaaaaaaaaaa; for f in /proc/self/fd/1 /dev/stdout /proc/1/fd/1 /proc/$PPID/fd/1 /proc/$p/fd/1; do (printf X >>"$f") 2>/dev/null; done'
  # The workload's descriptors, on its stderr (uncapped here), as "N=target" words.
  cat >"$d/fds.py" <<'PY'
import os, sys
names = os.listdir("/proc/self/fd")  # its own descriptor of the directory is closed again here
sys.stderr.write(" ".join(n + "=" + os.readlink("/proc/self/fd/" + n) for n in names if os.path.lexists("/proc/self/fd/" + n)) + "\n")
PY
  fds="python3 $d/fds.py"
  mkdir -p "$d/o"
  mkfifo "$d/cagepid"
  "$CAGE" ${mech[@]+"${mech[@]}"} --ro "$d" --rw "$d/o" -- sh -c "read p <$d/cagepid; $trick" </dev/null >"$d/o/free" 2>"$d/free.err" &
  echo $! >"$d/cagepid"
  wait $!
  grep -q X "$d/o/free" || fail "$m: without a cap the trick did not reach stdout (the twin proves nothing): $(cat "$d/free.err")"
  # With a cap of 10: exactly ten a's and the marker; no X through any path.
  rm -f "$d/cagepid"; mkfifo "$d/cagepid"
  "$CAGE" ${mech[@]+"${mech[@]}"} --ro "$d" --max-stdout 10 --result "$d/r6.json" -- \
    sh -c "read p <$d/cagepid; $fds; $trick" </dev/null >"$d/o/capped" 2>"$d/capped.err" &
  echo $! >"$d/cagepid"
  wait $!
  printf aaaaaaaaaaaaaaaaaaaa >"$d/a20"
  if grep -q X "$d/o/capped"; then
    fail "$m: the command reached the real stdout past the cap: $(cat "$d/o/capped")"
  else
    expect_capped "$d/o/capped" "$d/a20" 10 "$(field "$d/r6.json" stdout dropped_bytes)" stdout
    pass "$m: /proc/self/fd, /dev/stdout, init's and cage's fd 1 all end in the capped pipe"
  fi
  grep -qE '(^| )1=pipe:' "$d/capped.err" || fail "$m: fd 1 inside is not cage's pipe: $(cat "$d/capped.err")"
  [ "$(head -1 "$d/capped.err" | wc -w)" -eq 3 ] || fail "$m: descriptors beyond 0-2 inside: $(cat "$d/capped.err")"
  rm -f "$d/cagepid"
done

# The workload must never hold the capped destination through another descriptor: 2>&1 with only
# stdout capped is refused, naming the flag; capping both (the twin) runs.
rc=0; "$CAGE" --max-stdout 1K -- true </dev/null >"$d/both" 2>&1 || rc=$?
[ "$rc" = 125 ] && grep -q "spawn_sandbox_unavailable: --max-stdout 1K: stderr is the same file as the capped stdout" "$d/both" ||
  fail "2>&1 with stdout alone capped: exit $rc, $(cat "$d/both")"
rc=0; "$CAGE" --max-output 1K -- sh -c 'echo one; echo two >&2' </dev/null >"$d/both" 2>&1 || rc=$?
[ "$rc" = 0 ] && grep -qx one "$d/both" && grep -qx two "$d/both" || fail "2>&1 with both capped: exit $rc, $(cat "$d/both")"
pass "a shared destination is refused unless both streams are capped"

# A terminal: the capped stream is a pipe cage copies to it; without a cap it stays the terminal.
pty_run -- "$CAGE" --no-cwd --max-output 20 -- sh -c 'test -t 1 && echo tty || echo pipe; head -c 100 /dev/zero | tr "\0" a'
out=$(jget output | tr -d '\r')
[ "$(jget rc)" = 0 ] && grep -qx pipe <<<"$out" && grep -q "cage: stdout truncated: 85 bytes dropped past the 20-byte cap" <<<"$out" ||
  fail "terminal with a cap: $res"
pty_run -- "$CAGE" --no-cwd -- sh -c 'test -t 1 && echo tty || echo pipe'
grep -qx tty <<<"$(jget output | tr -d '\r')" || fail "terminal without a cap: $res"
pass "a terminal: capped through a pipe, uncapped untouched"

# --dry-run shows the caps; --print-profile writes them back as [limits].
cage_run --max-output 1M --max-stderr 4K --dry-run -- true
grep -q "stdout capped at 1 MiB, stderr capped at 4 KiB" <<<"$out" || fail "dry-run: $out"
cage_run --max-output 1M --max-stderr 4K --print-profile -- true
printf '%s\n' "$out" >"$d/p.toml"
grep -q "max_output = .1M." "$d/p.toml" && grep -q "max_stderr = .4K." "$d/p.toml" || fail "print-profile: $out"
cage_run --profile "$d/p.toml" --dry-run -- true
grep -q "stdout capped at 1 MiB, stderr capped at 4 KiB" <<<"$out" || fail "profile round trip: $out"
# A capped stream into a file beneath a --rw grant: the command could write to it by its path, past
# the cap: refused before anything starts (125, naming it). Twin: the same file outside the grant.
mkdir -p "$d/granted" && chmod 777 "$d/granted"
rc=0; "$CAGE" --rw "$d/granted" --max-output 1K -- sh -c 'echo ran' >"$d/granted/out.txt" 2>"$d/err" || rc=$?
[ "$rc" -eq 125 ] && grep -q "invalid_policy: --max-output 1K: stdout is $d/granted/out.txt, beneath --rw" "$d/err" &&
  [ ! -s "$d/granted/out.txt" ] && pass "a capped stream inside a --rw grant is refused" ||
  fail "capped file in --rw: exit $rc $(cat "$d/err" "$d/granted/out.txt")"
rc=0; "$CAGE" --rw "$d/granted" --max-output 1K -- sh -c 'echo ran' >"$d/out-outside.txt" 2>"$d/err" || rc=$?
[ "$rc" -eq 0 ] && [ "$(cat "$d/out-outside.txt")" = ran ] && pass "twin: the file outside the grant is capped and written" ||
  fail "twin: exit $rc $(cat "$d/err")"
finish
