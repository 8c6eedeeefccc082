#!/usr/bin/env bash
# Attack surface: vmsplice maps the caller's pages into a pipe. It was the way into two local-root
# exploits (CVE-2008-0009/0010) and plays a part in later page-cache bugs; cage's compiler spec lists
# it as denied, and no common tool needs it (those that use it fall back to write()).
# Policy: default grants. Expected: vmsplice fails with EPERM under --seccomp default; twins: splice
# and tee between pipes still work under default, and relaxed lets vmsplice reach the kernel.
. "$(dirname "$0")/lib.bash"
require_sandbox
try='import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
class iovec(ctypes.Structure):
    _fields_ = [("base", ctypes.c_void_p), ("len", ctypes.c_size_t)]
buf = ctypes.create_string_buffer(b"hello")
iov = iovec(ctypes.cast(buf, ctypes.c_void_p), 5)
r, w = os.pipe()
n = libc.vmsplice(w, ctypes.byref(iov), 1, 0)
print("vmsplice", n if n >= 0 else "errno %d" % ctypes.get_errno())
r2, w2 = os.pipe()
r3, w3 = os.pipe()
os.write(w2, b"abc")
print("splice", os.splice(r2, w3, 3), flush=True)'
cage_run --seccomp default -- "$py" -c "$try"
[[ "$out" == *"vmsplice errno 1"* ]] && pass "--seccomp default: vmsplice refused (EPERM)" || fail "vmsplice under default: exit $rc, $out $err"
[[ "$out" == *"splice 3"* ]] && pass "twin: splice between pipes works under default" || fail "twin splice: $out $err"
cage_run --seccomp relaxed -- "$py" -c "$try"
[[ "$out" == *"vmsplice 5"* ]] && pass "twin: relaxed lets vmsplice reach the kernel" || fail "twin relaxed vmsplice: $out $err"
finish
