#!/usr/bin/env bash
# README recipe "A GUI program": the README's X11 and Wayland lines, against a real X server (Xvfb)
# and a real Wayland compositor (weston, headless) started by this test as the user running it, with a
# real client (xdpyinfo, wayland-info) in place of the README's xterm and foot. Each grant of the
# display socket connects; its twin without the grant cannot (the network namespace keeps the X
# server's abstract socket out of reach too).
. "$(dirname "$0")/recipe_lib.bash"
x11=$(readme_line 'cage --ro /tmp/.X11-unix/X0 --env DISPLAY -- xterm')
wl=$(readme_line 'cage --ro "$XDG_RUNTIME_DIR/$WAYLAND_DISPLAY" --env WAYLAND_DISPLAY --env XDG_RUNTIME_DIR -- foot')
require_sandbox
for t in Xvfb xdpyinfo weston wayland-info; do
  command -v $t >/dev/null || { echo "skip: $t not installed (packaging/setup-debian.sh installs it)"; exit 77; }
done
run_line() {  # LINE: as the README has it, in $work/cwd; sets rc, out, err
  rc=0
  eval "$(as_cage "$1")" </dev/null >"$work/.out" 2>"$work/.err" || rc=$?
  out=$(cat "$work/.out"); err=$(cat "$work/.err")
}
# X11: Xvfb says its display number on a pipe once it accepts connections.
mkfifo "$work/displayfd"
Xvfb -displayfd 3 -nolisten tcp 3>"$work/displayfd" >"$work/xvfb.log" 2>&1 &
at_exit "kill $!"
read -r n <"$work/displayfd"
[ -S "/tmp/.X11-unix/X$n" ] || { fail "Xvfb gave display '$n' without a socket: $(cat "$work/xvfb.log")"; finish; }
export DISPLAY=:$n
line=${x11//X11-unix\/X0/X11-unix\/X$n}
run_line "${line% xterm} xdpyinfo"
[ "$rc" -eq 0 ] && grep -q '^vendor string:' <<<"$out" && pass "X11: xdpyinfo reached :$n through the granted socket" ||
  fail "X11: exit $rc: $err"
run_line "cage --env DISPLAY -- xdpyinfo"
[ "$rc" -ne 0 ] && grep -q 'unable to open display' <<<"$err" && pass "X11 twin: without the grant: $err" ||
  fail "X11 twin: exit $rc: $out $err"
# Wayland: weston's headless backend; it creates the socket when it is ready to accept.
export XDG_RUNTIME_DIR=$work/run WAYLAND_DISPLAY=wayland-cage-test
mkdir -m 700 "$XDG_RUNTIME_DIR"
weston --backend=headless-backend.so --socket="$WAYLAND_DISPLAY" --idle-time=0 >"$work/weston.log" 2>&1 &
wpid=$!
at_exit "kill $wpid"
while [ ! -S "$XDG_RUNTIME_DIR/$WAYLAND_DISPLAY" ] && kill -0 "$wpid" 2>/dev/null; do sleep 0.05; done
[ -S "$XDG_RUNTIME_DIR/$WAYLAND_DISPLAY" ] || { fail "weston did not start: $(tail -5 "$work/weston.log")"; finish; }
run_line "${wl% foot} wayland-info"
[ "$rc" -eq 0 ] && grep -q "'wl_compositor'" <<<"$out" && pass "Wayland: wayland-info reached the compositor" ||
  fail "Wayland: exit $rc: $err"
run_line "cage --env WAYLAND_DISPLAY --env XDG_RUNTIME_DIR -- wayland-info"
[ "$rc" -ne 0 ] && ! grep -q "'wl_compositor'" <<<"$out" && pass "Wayland twin: without the grant: $err" ||
  fail "Wayland twin: exit $rc: $out"
finish
