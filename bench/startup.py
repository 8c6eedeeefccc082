#!/usr/bin/env python3
"""Start-up and teardown of a sandboxed /bin/true: cage against bare /bin/true, `unshare -Urmpf` and
`bwrap --unshare-all` with an equivalent read-only view, interleaved in one run (so machine noise
hits every contender alike); prints medians and ratios against bwrap. `--net` runs name a host
that is never dialled (start-up and teardown of the proxy, the shim and the listeners only).
`--baseline PATH` adds the same cage runs of another build (e.g. main's, built apart), interleaved
in the same rounds, for a before/after in one run. Also the supervisor's peak RSS while a child
runs. Usage: bench/startup.py [--cage PATH] [--baseline PATH] [--runs N]"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time


def bwrap_cmd(cwd):
    cmd = ["bwrap", "--unshare-all", "--die-with-parent", "--ro-bind", "/usr", "/usr"]
    for d in ("bin", "sbin", "lib", "lib32", "lib64", "libx32"):
        p = "/" + d
        if os.path.islink(p):
            cmd += ["--symlink", os.readlink(p), p]
        elif os.path.isdir(p):
            cmd += ["--ro-bind", p, p]
    cmd += ["--ro-bind", "/etc", "/etc", "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp",
            "--ro-bind", cwd, cwd, "--chdir", cwd, "--", "/bin/true"]
    return cmd


def time_once(cmd):
    t0 = time.perf_counter_ns()
    r = subprocess.run(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    dt = time.perf_counter_ns() - t0
    if r.returncode != 0:
        sys.exit(f"bench: {' '.join(cmd[:3])}... failed ({r.returncode}): {r.stderr.decode()[:300]}")
    return dt / 1e6


def peak_rss_kib(cage):
    """VmHWM of the supervisor, read while its child still runs."""
    p = subprocess.Popen([cage, "--", "sleep", "1"], stdout=subprocess.DEVNULL)
    time.sleep(0.6)
    hwm = None
    with open(f"/proc/{p.pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                hwm = int(line.split()[1])
    p.wait()
    return hwm


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser()
    ap.add_argument("--cage", default=os.path.join(here, "..", "build", "cage"))
    ap.add_argument("--baseline", help="another cage build, run interleaved as the 'before'")
    ap.add_argument("--runs", type=int, default=200)
    a = ap.parse_args()
    cwd = os.getcwd()
    contenders = {
        "bare /bin/true": ["/bin/true"],
        "unshare -Urmpf": ["unshare", "-Urmpf", "--mount-proc", "/bin/true"],
        "bwrap --unshare-all": bwrap_cmd(cwd),
    }
    for tag, exe in [("", a.cage)] + ([(" [baseline]", a.baseline)] if a.baseline else []):
        contenders[f"cage --ro . (seccomp default){tag}"] = [exe, "--ro", ".", "--", "/bin/true"]
        contenders[f"cage --ro . --seccomp none{tag}"] = [exe, "--ro", ".", "--seccomp", "none", "--", "/bin/true"]
        contenders[f"cage --ro . --net example.com:443{tag}"] = [exe, "--ro", ".", "--net", "example.com:443", "--",
                                                                 "/bin/true"]
    if not shutil.which("bwrap"):
        del contenders["bwrap --unshare-all"]
    times = {k: [] for k in contenders}
    for k, c in contenders.items():  # warm caches once
        time_once(c)
    for _ in range(a.runs):
        for k, c in contenders.items():
            times[k].append(time_once(c))
    med = {k: statistics.median(v) for k, v in times.items()}
    ref = med.get("bwrap --unshare-all")
    print(f"start-up + teardown of /bin/true, median of {a.runs} interleaved runs (ms):")
    for k, m in med.items():
        ratio = f"{m / ref:5.2f}x bwrap" if ref else ""
        print(f"  {k:48s} {m:7.3f} ms  {ratio}")
    c, s = med["cage --ro . (seccomp default)"], med["cage --ro . --seccomp none"]
    print(f"seccomp filter load: {c - s:+.3f} ms median (default vs none); load average {os.getloadavg()[0]:.1f}")
    print(f"supervisor peak RSS while a child runs: {peak_rss_kib(a.cage)} KiB")


if __name__ == "__main__":
    main()
