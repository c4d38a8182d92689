#!/usr/bin/env python3
"""Python `websockets` (Debian python3-websockets) as the peer of the permessage-deflate conformance
cases (Autobahn group 13's parameter sets), in Tests/WebSocketTests/ConformanceDeflate.

  ws_deflate_peer.py server --configs JSON
      JSON: a list of keyword arguments of ServerPerMessageDeflateFactory. Starts one echo server per
      entry on 127.0.0.1 (any port) and prints `listening INDEX PORT` for each, then, per connection
      closed, `closed INDEX CODE ECHOES RESPONSE` (RESPONSE: the Sec-WebSocket-Extensions it answered).
  ws_deflate_peer.py client --cases JSON
      JSON: a list of {"url": "ws://127.0.0.1:P/", "offers": [kwargs of ClientPerMessageDeflateFactory, ...],
      "sizes": [[LENGTH, FRAGMENT, COUNT], ...]}. For each case: connects offering the offers in order,
      sends COUNT text messages of LENGTH characters (JSON text with non-ASCII names, taken round a
      corpus as Autobahn does; FRAGMENT > 0 sends each in fragments of that many characters), checks
      every echo, closes with 1000 and prints one JSON line: {"ok", "echoes", "response", "error"}.

Loopback only: the server binds 127.0.0.1 and the client refuses other URLs.
"""
import argparse
import asyncio
import json
import sys

import websockets
from websockets.extensions.permessage_deflate import ClientPerMessageDeflateFactory, ServerPerMessageDeflateFactory

CORPUS = json.dumps(
    [{"id": i, "name": f"Jürgen Müller {i}", "city": "Köln" if i % 3 else "Zürich", "score": i * 7 % 1000 / 10,
      "tags": ["straße", "grüße", str(i % 17)]} for i in range(2500)],
    ensure_ascii=False)


async def serve(configs):
    async def echo(socket, index):
        echoes = 0
        try:
            async for message in socket:
                await socket.send(message)
                echoes += 1
        except websockets.ConnectionClosed:
            pass
        response = socket.response_headers.get("Sec-WebSocket-Extensions", "")
        print(f"closed {index} {socket.close_code} {echoes} {response}", flush=True)

    servers = []
    for index, config in enumerate(configs):
        factory = ServerPerMessageDeflateFactory(**config)
        server = await websockets.serve(
            lambda socket, index=index: echo(socket, index), "127.0.0.1", 0, extensions=[factory], compression=None,
            max_size=1 << 24)
        servers.append(server)
        print(f"listening {index} {server.sockets[0].getsockname()[1]}", flush=True)
    await asyncio.Future()


async def run_case(case):
    result = {"ok": False, "echoes": 0, "response": None, "error": None}
    if not case["url"].startswith(("ws://127.", "ws://[::1]")):
        result["error"] = "loopback URLs only"
        return result
    factories = [ClientPerMessageDeflateFactory(**offer) for offer in case["offers"]]
    try:
        async with websockets.connect(case["url"], extensions=factories, compression=None, max_size=1 << 24) as socket:
            result["response"] = socket.response_headers.get("Sec-WebSocket-Extensions")
            offset = 0
            for length, fragment, count in case["sizes"]:
                for _ in range(count):
                    end = offset + length
                    message = CORPUS[offset:end] + CORPUS[:max(0, end - len(CORPUS))]
                    offset = end % len(CORPUS)
                    if fragment:
                        await socket.send([message[i:i + fragment] for i in range(0, length, fragment)])
                    else:
                        await socket.send(message)
                    echo = await socket.recv()
                    if echo != message:
                        raise AssertionError(f"echo of {len(echo)} characters differs from the {length} sent")
                    result["echoes"] += 1
            await socket.close(code=1000)
            result["ok"] = socket.close_code == 1000
    except Exception as error:  # reported, not raised: the test reads the JSON
        result["error"] = f"{type(error).__name__}: {error}"
    return result


async def run_cases(cases):
    for case in cases:
        print(json.dumps(await run_case(case)), flush=True)


def main():
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="mode", required=True)
    sub.add_parser("server").add_argument("--configs", required=True)
    sub.add_parser("client").add_argument("--cases", required=True)
    args = parser.parse_args()
    if args.mode == "server":
        asyncio.run(serve(json.loads(args.configs)))
    else:
        asyncio.run(run_cases(json.loads(args.cases)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
