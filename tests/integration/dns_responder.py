#!/usr/bin/env python3
# A minimal DNS responder for the network tests (used by net_search_domain.sh): ADDR NAME=IPV4...;
# a listed name gets its A record (AAAA: no data), every other name NXDOMAIN. Exits after 120 s.
import socket, struct, sys
addr, answers = sys.argv[1], dict(a.split('=') for a in sys.argv[2:])
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind((addr, 53)); s.settimeout(120)
while True:
    q, peer = s.recvfrom(512)
    tid, flags, qd = struct.unpack('>HHH', q[:6])
    i, labels = 12, []
    while q[i]:
        labels.append(q[i + 1:i + 1 + q[i]].decode()); i += 1 + q[i]
    qtype = struct.unpack('>H', q[i + 1:i + 3])[0]
    question = q[12:i + 5]
    name = '.'.join(labels).lower()
    ip = answers.get(name)
    if ip is None:
        s.sendto(struct.pack('>HHHHHH', tid, 0x8183, 1, 0, 0, 0) + question, peer); continue
    if qtype != 1:
        s.sendto(struct.pack('>HHHHHH', tid, 0x8180, 1, 0, 0, 0) + question, peer); continue
    rr = b'\xc0\x0c' + struct.pack('>HHIH', 1, 1, 5, 4) + socket.inet_aton(ip)
    s.sendto(struct.pack('>HHHHHH', tid, 0x8180, 1, 1, 0, 0) + question + rr, peer)
