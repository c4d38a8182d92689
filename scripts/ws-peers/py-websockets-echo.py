#!/usr/bin/python3
"""py-websockets-echo.py: a WebSocket echo server on the Python `websockets` library (Debian's
python3-websockets, 10.4), the Python peer of scripts/bench-websocket.sh.

    /usr/bin/python3 py-websockets-echo.py --port P [--deflate] [--uvloop]

Upgrades any path on 127.0.0.1:P; every message goes back with its type (str as text, bytes as
binary). websockets itself answers pings, echoes the peer's close code and pings every 20 s
(ping_interval/ping_timeout 20 s, its defaults). max_size is 64 MiB, our library's message limit
(websockets' default is 1 MiB); max_queue stays at its default 32. Without --deflate the server
refuses permessage-deflate (compression=None); with it, websockets' default server settings
(server_max_window_bits 12 offered by the client is honoured; its own defaults otherwise).
SIGTERM ends it (default action).
"""
import argparse
import asyncio
import os

import websockets


async def echo(ws, path=None):
    try:
        async for message in ws:
            await ws.send(message)
    except websockets.ConnectionClosed:
        pass


async def main(port, deflate):
    async with websockets.serve(
        echo, "127.0.0.1", port, compression="deflate" if deflate else None, max_size=64 << 20, backlog=4096
    ):
        print(f"py-websockets-echo listening on ws://127.0.0.1:{port}/ (pid {os.getpid()}, "
              f"websockets {websockets.__version__}, deflate {'on' if deflate else 'off'})", flush=True)
        await asyncio.Future()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, default=9202)
    parser.add_argument("--deflate", action="store_true")
    parser.add_argument("--uvloop", action="store_true")
    args = parser.parse_args()
    if args.uvloop:
        import uvloop
        uvloop.install()
    asyncio.run(main(args.port, args.deflate))
