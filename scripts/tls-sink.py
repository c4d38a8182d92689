#!/usr/bin/env python3
"""tls-sink.py — one-direction throughput over loopback, plaintext or TLS, with Python's ssl (OpenSSL).

A reference for socket-bench's discard server (docs/BENCHMARKS.md "Issue 13", scripts/bench-tls.sh part
`sink`): `send` streams 64 KiB writes to a server for a number of seconds and prints the bytes the kernel
took; `receive` is the thinnest OpenSSL receiver Python has (recv_into one 1 MiB buffer, nothing else),
and prints what it received and the CPU seconds it used (user + system). TLS 1.2 with
ECDHE-ECDSA-AES128-GCM-SHA256 (Python's ssl cannot pick a TLS 1.3 suite; the record layer's work per byte is
the same AES-128-GCM). Loopback only.

  tls-sink.py receive --port P [--tls CERT KEY]        # prints "receive: BYTES bytes, SECONDS s, CPU s"
  tls-sink.py send --port P --seconds S [--tls]         # prints "send: BYTES bytes, SECONDS s"
"""
import argparse, os, resource, socket, ssl, sys, time

CIPHER = "ECDHE-ECDSA-AES128-GCM-SHA256"


def cpu_seconds():
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def receive(args):
    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", args.port))
    listener.listen()
    print(f"listening on 127.0.0.1:{listener.getsockname()[1]}", flush=True)
    connection, _ = listener.accept()
    if args.tls:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(args.tls[0], args.tls[1])
        connection = context.wrap_socket(connection, server_side=True)
    buffer = bytearray(1 << 20)
    total, cpu, start = 0, cpu_seconds(), time.monotonic()
    while True:
        count = connection.recv_into(buffer)
        if not count:
            break
        total += count
    print(f"receive: {total} bytes, {time.monotonic() - start:.3f} s, {cpu_seconds() - cpu:.3f} CPU s", flush=True)


def send(args):
    connection = socket.create_connection(("127.0.0.1", args.port))
    if args.tls:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE  # a benchmark of the record layer, not of trust
        context.set_ciphers(CIPHER)
        context.maximum_version = ssl.TLSVersion.TLSv1_2
        connection = context.wrap_socket(connection)
    chunk = os.urandom(1 << 16)
    total, start = 0, time.monotonic()
    end = start + args.seconds
    while time.monotonic() < end:
        for _ in range(64):
            connection.sendall(chunk)
        total += 64 * len(chunk)
    seconds = time.monotonic() - start
    connection.close()
    print(f"send: {total} bytes, {seconds:.3f} s", flush=True)


parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
sub = parser.add_subparsers(dest="role", required=True)
r = sub.add_parser("receive")
r.add_argument("--port", type=int, required=True)
r.add_argument("--tls", nargs=2, metavar=("CERT", "KEY"))
s = sub.add_parser("send")
s.add_argument("--port", type=int, required=True)
s.add_argument("--seconds", type=float, required=True)
s.add_argument("--tls", action="store_true")
arguments = parser.parse_args()
receive(arguments) if arguments.role == "receive" else send(arguments)
