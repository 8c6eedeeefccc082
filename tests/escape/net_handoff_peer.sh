#!/usr/bin/env bash
# Attack on egress hand-off (src/linux/handoff.h, performer.h): a unix server outside the sandbox,
# reached through a --rw grant, that trusts its peer by SO_PEERCRED's pid (portals, polkit-style
# checks of /proc/PID). With transparent --net the workload's connect() is a seccomp notification;
# were cage itself to run it, the server would see cage, a process of the host, as its peer.
# Policy: --rw DIR (the server's socket), --net 127.0.0.1:PORT; twin: the same without --net.
# Expected: the connect works (absolute and relative path) and the peer is a process of the sandbox's
# pid namespace (one level deeper than the server's), with --net as without it.
. "$(dirname "$0")/lib.bash"
require_handoff
mkdir "$work/rw" && chmod 777 "$work/rw"
"$py" "$escape_dir/handoff_unix.py" serve "$work/rw/s.sock" "$work/peers" & at_exit "kill $!"
for _ in $(seq 100); do [ -S "$work/rw/s.sock" ] && break; sleep 0.1; done
[ -S "$work/rw/s.sock" ] || { fail "the test's unix server did not start"; finish; }
helper="$escape_dir/handoff_unix.py"
for net in "" "--net 127.0.0.1:1"; do
  what=${net:-"without --net"}
  for how in absolute relative; do
    path="$work/rw/s.sock"
    [ "$how" = relative ] && path=s.sock
    before=$(cat "$work/peers" 2>/dev/null | wc -l)
    # shellcheck disable=SC2086
    cage_run --rw "$work/rw" --ro "$escape_dir" $net -- sh -c "cd '$work/rw' && exec $py '$helper' connect $path"
    [ "$rc" -eq 0 ] && [ "$out" = hi ] || { fail "$what, $how: the connect failed (exit $rc): $out $err"; continue; }
    line=$(sed -n "$((before + 1))p" "$work/peers")
    read -r pid d own <<<"$line"
    if [ -z "$line" ] || [ "$d" -le "$own" ]; then
      fail "$what, $how: the server's peer (pid ${pid:-?}, pid namespace depth ${d:-?}, the server's $own) is not in the sandbox"
    else
      pass "$what, $how: the connect works and the server's peer (pid $pid) is a process of the sandbox"
    fi
  done
done
finish
