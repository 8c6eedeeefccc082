# tests/escape/net_handoff_dead_callers.sh's workload: CHURN times, a child connects to HOST:FULL (a
# host listener whose accept queue is full: the dial waits) and is SIGKILLed while it waits; then an
# allowed connect to HOST:OK and a bind (run by the performer) must still be answered. HOST: 127.0.0.1
# (the direct path) or the synthetic address cage gave `localhost` (the proxy loop's path).
import errno, os, signal, socket, sys, time
full, ok, churn, host = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
def result(f):
    t = time.time()
    try:
        f(); r = "ok"
    except OSError as e:
        r = errno.errorcode.get(e.errno, str(e))
    return "%s %.2f" % (r, time.time() - t)
def connect_ok():
    socket.create_connection((host, ok), timeout=5).close()
def bind():
    s = socket.socket(); s.bind(("127.0.0.1", 0)); s.close()
# Each child says when it is about to connect, so that it is killed in its connect (waiting for the
# dial) and not before, however busy the machine is (the assertion counts the abandoned dials).
ready_r, ready_w = os.pipe()
for _ in range(churn):
    pid = os.fork()
    if pid == 0:
        try:
            s = socket.socket(); os.write(ready_w, b"c"); s.connect((host, full))
        finally: os._exit(0)
    os.read(ready_r, 1)
    time.sleep(0.003)
    os.kill(pid, signal.SIGKILL); os.waitpid(pid, 0)
print("connect", result(connect_ok), flush=True)
print("bind", result(bind), flush=True)
time.sleep(1)  # the abandoned dials are reported
