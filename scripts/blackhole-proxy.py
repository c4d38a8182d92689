#!/usr/bin/env python3
"""A loopback TCP proxy that can black-hole its connections, like a NAT that forgot their mappings.

    scripts/blackhole-proxy.py TARGET_PORT [LISTEN_PORT]

Listens on 127.0.0.1:LISTEN_PORT (default 0: a free port) and forwards every connection to
127.0.0.1:TARGET_PORT. Prints `proxy listening on 127.0.0.1:PORT` once ready. Commands, one per line on
standard input (each answered with a line `ok COMMAND`):

  hole     every connection open now is black-holed for good: bytes from either side are read and
           thrown away, nothing is closed (the peers notice only by their own timeouts); connections
           accepted while the hole lasts are black-holed too
  open     the hole ends: new connections are forwarded again (black-holed ones stay black-holed,
           as a NAT that forgot a mapping does not remember it later)
  cut      every connection is closed at once (both sides see an end of file)

End of standard input stops the proxy. Loopback only: it binds and connects to 127.0.0.1.
Standard library only (selectors), one thread.
"""
import selectors
import socket
import sys

target_port = int(sys.argv[1])
listen_port = int(sys.argv[2]) if len(sys.argv) > 2 else 0

selector = selectors.DefaultSelector()
listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
listener.bind(("127.0.0.1", listen_port))
listener.listen(128)
listener.setblocking(False)
selector.register(listener, selectors.EVENT_READ, "accept")
selector.register(sys.stdin, selectors.EVENT_READ, "command")

holing = False
peers = {}        # socket -> its partner (None while black-holed without one)
blackholed = set()


def close_pair(sock):
    partner = peers.pop(sock, None)
    blackholed.discard(sock)
    for s in (sock, partner):
        if s is None:
            continue
        peers.pop(s, None)
        blackholed.discard(s)
        try:
            selector.unregister(s)
        except (KeyError, ValueError):
            pass
        s.close()


def accept():
    client, _ = listener.accept()
    client.setblocking(False)
    if holing:
        peers[client] = None
        blackholed.add(client)
        selector.register(client, selectors.EVENT_READ, "data")
        return
    try:
        upstream = socket.create_connection(("127.0.0.1", target_port))
    except OSError:
        client.close()  # the target is down: the client sees its connection closed
        return
    upstream.setblocking(False)
    peers[client] = upstream
    peers[upstream] = client
    selector.register(client, selectors.EVENT_READ, "data")
    selector.register(upstream, selectors.EVENT_READ, "data")


def forward(sock):
    # Closed earlier in this round (its partner's end closed the pair): its event is stale.
    if sock.fileno() < 0 or sock not in peers:
        return
    try:
        data = sock.recv(65536)
    except OSError:
        data = b""
    if not data:
        close_pair(sock)
        return
    if sock in blackholed:
        return
    partner = peers.get(sock)
    if partner is not None:
        partner.setblocking(True)
        try:
            partner.sendall(data)
        except OSError:
            close_pair(sock)
            return
        partner.setblocking(False)


def command(line):
    global holing
    word = line.strip()
    if word == "hole":
        holing = True
        blackholed.update(peers.keys())
    elif word == "open":
        holing = False
    elif word == "cut":
        for sock in list(peers.keys()):
            close_pair(sock)
    elif word:
        print(f"unknown command {word!r}", flush=True)
        return
    if word:
        print(f"ok {word}", flush=True)


print(f"proxy listening on 127.0.0.1:{listener.getsockname()[1]}", flush=True)
while True:
    for key, _ in selector.select():
        if key.data == "accept":
            accept()
        elif key.data == "command":
            line = sys.stdin.readline()
            if not line:
                sys.exit(0)
            command(line)
        else:
            forward(key.fileobj)
