# Helper of tests/escape/net_handoff_peer.sh and net_handoff_lowport.sh (the egress hand-off's
# performer, src/linux/performer.h):
#   serve PATH LOG   (outside) a unix server at PATH; per connection it writes "PID DEPTH OWN" to LOG:
#                    SO_PEERCRED's pid, the depth of its pid namespace (NSpid's fields) and the
#                    server's own depth, read while the peer waits for the answer, then answers "hi"
#   connect PATH     (inside) prints what the server answers
#   bind PORT        (inside) binds a TCP socket to 127.0.0.1:PORT; prints "ok" or the errno's name
import errno, os, socket, struct, sys


def depth(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("NSpid:"):
                return len(line.split()) - 1
    return 0


def serve(path, log):
    s = socket.socket(socket.AF_UNIX)
    s.bind(path)
    os.chmod(path, 0o777)
    s.listen(16)
    while True:
        c, _ = s.accept()
        pid, _, _ = struct.unpack("3i", c.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12))
        try:
            d = depth(pid)
        except OSError:
            d = -1
        with open(log, "a") as f:
            f.write(f"{pid} {d} {depth('self')}\n")
        c.sendall(b"hi")
        c.close()


def main():
    mode = sys.argv[1]
    if mode == "serve":
        serve(sys.argv[2], sys.argv[3])
    elif mode == "connect":
        s = socket.socket(socket.AF_UNIX)
        s.connect(sys.argv[2])
        print(s.recv(16).decode())
    elif mode == "bind":
        s = socket.socket()
        try:
            s.bind(("127.0.0.1", int(sys.argv[2])))
            print("ok")
        except OSError as e:
            print(errno.errorcode.get(e.errno, str(e.errno)))


main()
