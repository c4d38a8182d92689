#!/usr/bin/env python3
"""Idle TLS connections and the server's memory: opens N TLS connections (Python's ssl, TLS 1.3, no
data sent after the handshake) to a server on loopback, holds them, and reports the server process's
resident memory (VmRSS) before and while they are held, per connection. The same client for every
server measured (ours, nginx), so the figures compare.

    scripts/tls-idle-rss.py --port 9443 --pid 1234 [-c 10000] [--hold 5] [--ca FILE]

Prints one RESULT line: `RESULT tls-idle connections=N rss_before_kb=… rss_held_kb=… per_connection_kb=…`.
Exits 1 when a connection failed or closed while held.
"""
import argparse
import asyncio
import resource
import ssl
import sys
import time


def rss_kb(pid):
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise RuntimeError(f"no VmRSS for pid {pid}")


async def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--pid", type=int, required=True, help="the server process to measure")
    parser.add_argument("-c", "--connections", type=int, default=10_000)
    parser.add_argument("--hold", type=float, default=5, help="seconds the connections stay idle before measuring")
    parser.add_argument("--ca", help="verify the server against this CA (default: no verification)")
    parser.add_argument("--parallel", type=int, default=64, help="handshakes in flight at once")
    parser.add_argument("--label", default="-")
    args = parser.parse_args()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    if args.connections + 64 > hard:
        sys.exit(f"{args.connections} connections need more than the open-file limit {hard}")

    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.minimum_version = ssl.TLSVersion.TLSv1_3
    if args.ca:
        context.load_verify_locations(args.ca)
    else:
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE

    before = rss_kb(args.pid)
    gate = asyncio.Semaphore(args.parallel)
    streams = []
    failures = 0

    async def open_one():
        nonlocal failures
        async with gate:
            try:
                streams.append(await asyncio.open_connection(args.host, args.port, ssl=context, server_hostname="localhost"))
            except (OSError, ssl.SSLError) as error:
                failures += 1
                if failures <= 3:
                    print(f"connect failed: {error}", file=sys.stderr)

    started = time.monotonic()
    await asyncio.gather(*(open_one() for _ in range(args.connections)))
    opened = time.monotonic() - started
    await asyncio.sleep(args.hold)
    held = rss_kb(args.pid)
    closed = sum(1 for reader, _ in streams if reader.at_eof())
    for _, writer in streams:
        writer.close()
    per_connection = (held - before) / max(1, len(streams))
    print(f"{len(streams)} TLS connections opened in {opened:.1f} s ({len(streams) / opened:.0f}/s), held {args.hold:g} s; "
          f"server RSS {before} KiB before, {held} KiB held: {per_connection:.2f} KiB per connection", file=sys.stderr)
    print(f"RESULT tls-idle label={args.label} connections={len(streams)} failed={failures} closed_while_held={closed} "
          f"rss_before_kb={before} rss_held_kb={held} per_connection_kb={per_connection:.2f}")
    return 1 if failures or closed else 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
