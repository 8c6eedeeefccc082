#!/usr/bin/env bash
# cage inside a real Docker container (issue 18): Debian's docker.io engine, a bookworm image made here
# with debootstrap (no registry), the Release build shared read-only at its own path. Three settings:
#   default     Docker's own default seccomp profile, not privileged: no user namespaces, so
#               --mechanism auto must pick the Landlock-only mechanism (with --allow-degraded=pid);
#               --check explains; the escape suite's Landlock-only variants and the workloads pass.
#   unconfined  --security-opt seccomp=unconfined: user namespaces work but Docker's masked /proc
#               paths make a new proc mount fail, so auto must again pick Landlock-only.
#   privileged  --privileged: full namespaces. Where this host's runc cannot start a privileged
#               container at all, the nearest setting (seccomp and the masked /proc paths lifted) runs
#               instead, and the log says so.
# Each setting ends by checking that nothing of cage's is left in the container.
# Usage: bash tests/docker/run.sh [BUILD_DIR]   (root; installs docker.io and debootstrap if missing)
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:-${CAGE_BUILD:-$top/build}}" && pwd)
here="$top/tests/docker"
image=cage-test:bookworm
docker=/usr/bin/docker  # Debian's client, whatever else PATH holds
[ "$(id -u)" -eq 0 ] || { echo "docker tests: need root" >&2; exit 77; }
[ -x "$build/cage" ] && [ -x "$build/cage-probe" ] || { echo "docker tests: no build in $build" >&2; exit 1; }

need=()
for p in docker.io debootstrap; do dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || need+=("$p"); done
if [ ${#need[@]} -gt 0 ]; then
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi

# An engine: the running one, or one started here and stopped at the end (no systemd on CI machines).
dockerd_pid=""
cleanup() {
  if [ -n "$dockerd_pid" ]; then kill "$dockerd_pid" 2>/dev/null; wait "$dockerd_pid" 2>/dev/null || true; fi
}
trap cleanup EXIT
if ! "$docker" info >/dev/null 2>&1; then
  /usr/sbin/dockerd >/tmp/cage-dockerd.log 2>&1 &
  dockerd_pid=$!
  for _ in $(seq 100); do "$docker" info >/dev/null 2>&1 && break; sleep 0.2; done
  "$docker" info >/dev/null 2>&1 || { echo "docker tests: dockerd did not start:" >&2; tail -5 /tmp/cage-dockerd.log >&2; exit 1; }
fi

# The image: built once per machine from the configured Debian mirror; the packages are what the
# escape and workload scripts call.
if ! "$docker" image inspect "$image" >/dev/null 2>&1; then
  mirror=$(awk '/^URIs:/{print $2; exit}' /etc/apt/sources.list.d/debian.sources 2>/dev/null || true)
  [ -n "$mirror" ] || mirror=$(awk '/^deb /{print $2; exit}' /etc/apt/sources.list)
  root=$(mktemp -d /var/tmp/cage-rootfs.XXXXXX)
  debootstrap --variant=minbase --include=python3,python3-venv,procps,util-linux,iproute2,gcc,libc6-dev,make,git,keyutils,e2fsprogs,bsdextrautils \
    bookworm "$root" "$mirror" >/tmp/cage-debootstrap.log 2>&1 ||
    { tail -5 /tmp/cage-debootstrap.log >&2; rm -rf "$root"; exit 1; }
  chroot "$root" useradd --create-home --shell /bin/bash cagetest
  tar -C "$root" -c . | "$docker" import - "$image" >/dev/null
  rm -rf "$root"
fi

status=0
# run_in SETTING DOCKER_OPTS...: the in-container script (inside.sh) with this checkout and build.
run_in() {
  local setting=$1; shift
  echo "== docker: $setting ($*)"
  if ! "$docker" run --rm "$@" -v "$top:$top:ro" -v "$build:$build:ro" -e CI=1 "$image" \
    bash "$here/inside.sh" "$setting" "$build" "$top"; then
    echo "docker: $setting: FAILED" >&2
    status=1
  fi
}
run_in default
run_in unconfined --security-opt seccomp=unconfined
# --privileged adds every capability; runc then fails to start the container where this host's own
# root lacks one (CAP_SYS_RESOURCE on some VMs): that is the engine refusing, not cage.
if out=$("$docker" run --rm --privileged "$image" true 2>&1); then
  run_in privileged --privileged
else
  echo "docker: --privileged cannot start any container on this host ($(tail -c 200 <<<"$out")); running the nearest setting"
  run_in privileged --cap-add SYS_ADMIN --security-opt seccomp=unconfined --security-opt apparmor=unconfined \
    --security-opt systempaths=unconfined
fi
exit $status
