#!/usr/bin/env python3
"""A WebSocket peer nobody here wrote: the Python `websockets` library (Debian python3-websockets),
as an echo server or as a client that checks an echo server, for the WebSocket interoperability tests.

  ws_peer.py server [--port P] [--deflate] [--max-size BYTES]
      Echoes every message with its type on 127.0.0.1:P (0: any port); prints `listening PORT` once
      it listens, and one line per connection closed: `closed CODE REASON`.
  ws_peer.py client --url ws://127.0.0.1:P/PATH [--deflate] [--big BYTES] [--close-code C]
      Sends a text, a binary of every byte value, a fragmented text (3 fragments, a UTF-8 sequence split
      across two) and a binary of BIG bytes (default 10 MB); checks each echo; closes with C (default
      4000, "bye"); prints one JSON line: {"ok": …, "echoes": N, "extensions": […], "close_code": …,
      "close_reason": …, "error": …}.

Loopback only: the server binds 127.0.0.1.
"""
import argparse
import asyncio
import json
import sys

import websockets


async def serve(port, deflate, max_size):
    async def echo(socket):
        try:
            async for message in socket:
                await socket.send(message)
        except websockets.ConnectionClosed:
            pass
        print(f"closed {socket.close_code} {socket.close_reason}", flush=True)

    compression = "deflate" if deflate else None
    async with websockets.serve(echo, "127.0.0.1", port, compression=compression, max_size=max_size) as server:
        bound = server.sockets[0].getsockname()[1]
        print(f"listening {bound}", flush=True)
        await asyncio.Future()


async def check(url, deflate, big, close_code):
    result = {"ok": False, "echoes": 0, "extensions": [], "close_code": None, "close_reason": None, "error": None}
    compression = "deflate" if deflate else None
    try:
        async with websockets.connect(url, compression=compression, max_size=big + 1024) as socket:
            result["extensions"] = [extension.name for extension in socket.extensions]
            messages = ["hello, wörld", bytes(range(256)), ["frag", "mént é", "nd"], bytes(big)]
            for message in messages:
                await socket.send(message)
                echo = await socket.recv()
                expected = "".join(message) if isinstance(message, list) else message
                if echo != expected:
                    raise AssertionError(f"echo {len(echo)} bytes differs from {len(expected)} sent")
                result["echoes"] += 1
            await socket.close(code=close_code, reason="bye")
            result["close_code"] = socket.close_code
            result["close_reason"] = socket.close_reason
            result["ok"] = True
    except Exception as error:  # reported, not raised: the test reads the JSON
        result["error"] = f"{type(error).__name__}: {error}"
    print(json.dumps(result), flush=True)
    return 0 if result["ok"] else 1


def main():
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="mode", required=True)
    server = sub.add_parser("server")
    server.add_argument("--port", type=int, default=0)
    server.add_argument("--deflate", action="store_true")
    server.add_argument("--max-size", type=int, default=64 << 20)
    client = sub.add_parser("client")
    client.add_argument("--url", required=True)
    client.add_argument("--deflate", action="store_true")
    client.add_argument("--big", type=int, default=10_000_000)
    client.add_argument("--close-code", type=int, default=4000)
    args = parser.parse_args()
    if args.mode == "server":
        asyncio.run(serve(args.port, args.deflate, args.max_size))
        return 0
    if not args.url.startswith(("ws://127.", "ws://[::1]", "wss://127.", "wss://[::1]")):
        print("loopback URLs only", file=sys.stderr)
        return 2
    return asyncio.run(check(args.url, args.deflate, args.big, args.close_code))


if __name__ == "__main__":
    sys.exit(main())
