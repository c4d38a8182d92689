#!/usr/bin/env python3
"""exact-echo-load.py — an echo load of an exact number of messages, for counting a server's instructions.

Opens C connections to 127.0.0.1:PORT, keeps D messages of S bytes in flight on each until every
connection has had N messages echoed and checked byte for byte, then closes them all and prints
"messages=C*N". The server's work is then start-up + accepting + C*N echoes + closing, with no
clock in it: two runs with different N give the instructions per echoed message by difference
(scripts/count-instructions.sh).

  --proto ws    a WebSocket upgrade (RFC 6455), then binary messages, masked (one fixed key: the
                server's work does not depend on it); Pings from the server are answered
  --proto lp4   LP4 frames: a 4-byte big-endian payload length, then the payload

Usage: exact-echo-load.py --proto ws|lp4 --port P [-c 100] [-D 16] [-s 64] [-n 1000]
"""
import argparse
import base64
import os
import selectors
import socket
import struct
import sys


def ws_frame(opcode, payload, key=b"\x37\xfa\x21\x3d"):
    """A masked client frame (payload at most 65,535 bytes)."""
    n = len(payload)
    head = bytes([0x80 | opcode])
    head += bytes([0x80 | n]) if n < 126 else bytes([0x80 | 126]) + struct.pack("!H", n)
    masked = bytes(b ^ key[i % 4] for i, b in enumerate(payload))
    return head + key + masked


def upgrade(sock, port):
    key = base64.b64encode(os.urandom(16)).decode()
    sock.sendall(
        (f"GET / HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
         f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n").encode())
    head = b""
    while b"\r\n\r\n" not in head:
        chunk = sock.recv(4096)
        if not chunk:
            sys.exit("the server closed during the upgrade")
        head += chunk
    status, _, rest = head.partition(b"\r\n\r\n")
    if not status.startswith(b"HTTP/1.1 101"):
        sys.exit(f"no upgrade: {status!r}")
    return rest


class Conn:
    def __init__(self, sock, proto, payload, frame, pending):
        self.sock, self.proto, self.payload, self.frame = sock, proto, payload, frame
        self.buf = bytearray(pending)
        self.sent = self.echoed = 0

    def messages(self):
        """Yields each whole message's (opcode, payload) in the buffer, consuming it."""
        buf = self.buf
        pos = 0
        while True:
            if self.proto == "lp4":
                if len(buf) - pos < 4:
                    break
                (n,) = struct.unpack_from("!I", buf, pos)
                if len(buf) - pos < 4 + n:
                    break
                yield 2, bytes(buf[pos + 4:pos + 4 + n])
                pos += 4 + n
            else:
                if len(buf) - pos < 2:
                    break
                b0, b1 = buf[pos], buf[pos + 1]
                n, h = b1 & 0x7F, 2
                if n == 126:
                    if len(buf) - pos < 4:
                        break
                    (n,) = struct.unpack_from("!H", buf, pos + 2)
                    h = 4
                elif n == 127:
                    if len(buf) - pos < 10:
                        break
                    (n,) = struct.unpack_from("!Q", buf, pos + 2)
                    h = 10
                if len(buf) - pos < h + n:
                    break
                if not b0 & 0x80:
                    sys.exit("a fragmented echo: not expected from these servers")
                yield b0 & 0x0F, bytes(buf[pos + h:pos + h + n])
                pos += h + n
        del buf[:pos]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--proto", choices=["ws", "lp4"], required=True)
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("-c", type=int, default=100)
    ap.add_argument("-D", type=int, default=16)
    ap.add_argument("-s", type=int, default=64)
    ap.add_argument("-n", type=int, default=1000)
    args = ap.parse_args()
    payload = bytes((i * 7 + 1) & 0xFF for i in range(args.s))
    frame = ws_frame(2, payload) if args.proto == "ws" else struct.pack("!I", args.s) + payload
    sel = selectors.DefaultSelector()
    conns = []
    for _ in range(args.c):
        sock = socket.create_connection(("127.0.0.1", args.port))
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        pending = upgrade(sock, args.port) if args.proto == "ws" else b""
        conns.append(Conn(sock, args.proto, payload, frame, pending))
    for conn in conns:
        first = min(args.D, args.n)
        conn.sock.sendall(frame * first)
        conn.sent = first
        sel.register(conn.sock, selectors.EVENT_READ, conn)
    done = 0
    while done < len(conns):
        for key, _ in sel.select(timeout=120):
            conn = key.data
            chunk = conn.sock.recv(1 << 16)
            if not chunk:
                sys.exit("the server closed a connection")
            conn.buf += chunk
            out = b""
            for opcode, body in conn.messages():
                if opcode == 9:
                    out += ws_frame(10, body)
                    continue
                if opcode != 2 or body != conn.payload:
                    sys.exit(f"mismatch: opcode {opcode}, {len(body)} bytes")
                conn.echoed += 1
                if conn.sent < args.n:
                    out += frame
                    conn.sent += 1
            if out:
                conn.sock.sendall(out)
            if conn.echoed == args.n:
                sel.unregister(conn.sock)
                done += 1
    for conn in conns:
        conn.sock.close()
    print(f"messages={args.c * args.n}")


if __name__ == "__main__":
    main()
