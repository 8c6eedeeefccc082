#!/bin/bash
# The test user's systemd user manager in a guest booted with systemd (entry variant "systemd").
#   user-session.sh start        start user@UID.service, as a login through logind would
#   user-session.sh run CMD...   run CMD as the test user inside that session's environment
#                                (XDG_RUNTIME_DIR and the user bus, so `systemd-run --user` works)
set -euo pipefail
user=${TEST_USER:-${CAGE_TEST_USER:-cagetest}}
uid=$(id -u "$user") gid=$(id -g "$user")
case $1 in
  start) systemctl start "user@$uid.service" ;;
  run)
    shift
    cd /tmp
    exec setpriv --reuid="$uid" --regid="$gid" --init-groups --reset-env \
      env HOME="$(getent passwd "$user" | cut -d: -f6)" USER="$user" LOGNAME="$user" \
      XDG_RUNTIME_DIR="/run/user/$uid" DBUS_SESSION_BUS_ADDRESS="unix:path=/run/user/$uid/bus" "$@" ;;
  *) echo "usage: user-session.sh start | run CMD..." >&2; exit 2 ;;
esac
