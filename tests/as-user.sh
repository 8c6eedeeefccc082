#!/usr/bin/env bash
# Runs a test as an unprivileged user: as-is when the suite already runs unprivileged, otherwise via
# setpriv as $CAGE_TEST_USER (default cagetest; .ci/run creates it). No user available: skip (77).
if [ "$(id -u)" -ne 0 ]; then exec "$@"; fi
user=${CAGE_TEST_USER:-cagetest}
if ! uid=$(id -u "$user" 2>/dev/null); then echo "skip: no test user '$user'" >&2; exit 77; fi
gid=$(id -g "$user")
home=$(getent passwd "$user" | cut -d: -f6)
cd /tmp || exit 1
exec setpriv --reuid="$uid" --regid="$gid" --init-groups --reset-env \
  env HOME="$home" USER="$user" LOGNAME="$user" \
  CAGE="$CAGE" CAGE_PROBE="$CAGE_PROBE" CAGE_UNSUPPORTED="${CAGE_UNSUPPORTED-}" CAGE_SOURCE_DIR="$CAGE_SOURCE_DIR" CAGE_BUILD_DIR="$CAGE_BUILD_DIR" \
  CAGE_LANDLOCK_ONLY="${CAGE_LANDLOCK_ONLY:-0}" CAGE_TEST_TIME_SCALE="${CAGE_TEST_TIME_SCALE:-1}" \
  "$@"
