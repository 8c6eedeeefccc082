#!/usr/bin/env bash
# Runs a test as the invoking user. Named "root" for the CI run (which is root); when the suite runs
# unprivileged, the root variant is skipped (exit 77) and counted as such.
if [ "$(id -u)" -ne 0 ]; then echo "skip: not running as root" >&2; exit 77; fi
exec "$@"
