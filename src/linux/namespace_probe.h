// Whether cage's namespaces can really be built here, tried in a throwaway child: used by --check and,
// where cheap signs say a host may refuse them (an outer seccomp filter, AppArmor's userns restriction,
// a container's masked /proc), by --mechanism auto before it picks the namespaces mechanism.
#pragma once

namespace cage::lx {

// Forks a child that creates user, mount, pid, net, ipc, uts and cgroup namespaces, mounts a tmpfs,
// makes it read-only with mount_setattr and mounts a proc for the new pid namespace; returns 0 when
// all of it worked, else the errno of the first step that failed. Nothing of it reaches the host.
int probe_namespaces();

// True when something is mounted over a part of /proc (Docker and Podman mask /proc/kcore, /proc/keys,
// /proc/acpi... this way): the kernel then refuses a new proc mount in a user namespace
// (fs/namespace.c, mnt_already_visible), so only a probe tells whether the namespaces work.
bool proc_has_overmounts();

}  // namespace cage::lx
