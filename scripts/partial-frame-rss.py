#!/usr/bin/env python3
"""What connections holding an unfinished chat frame cost im-server (issue 12, docs/BENCHMARKS.md).

usage: scripts/partial-frame-rss.py IM_SERVER COUNT MODE [--after SECONDS] [im-server flags...]

Starts IM_SERVER on a free loopback port (in-memory store, no discovery), opens COUNT connections that
each send MODE's bytes and then fall silent, and prints the server's resident memory (VmRSS) before,
2 s after the last byte, and optionally SECONDS later (past the frame deadline) with how many
connections the server has closed by then. Modes:
  idle        connect only
  header      a 7-byte header announcing a 65,535-byte body
  header+4k+1 the header and 4,096 bytes of the body, then 1 byte more a second later
  trickle     the header, then 1,000 bytes a second for 5 s
  header+60k  the header and 60,000 bytes of the body
  login       a version 1 login (user uN), then idle: a logged-in idle user, for comparison
"""
import resource, socket, subprocess, sys, threading, time

binary, count, mode = sys.argv[1], int(sys.argv[2]), sys.argv[3]
rest = sys.argv[4:]
after = None
if rest[:1] == ["--after"]:
    after, rest = float(rest[1]), rest[2:]
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
server = subprocess.Popen([binary, "--port", "0", "--no-discovery", "--store", ":memory:"] + rest,
                          stdout=subprocess.PIPE, text=True)
port = int(server.stdout.readline().split()[3].rsplit(":", 1)[1])
# Keep reading the server's log, so that it never blocks on a full pipe.
threading.Thread(target=lambda: [None for _ in server.stdout], daemon=True).start()

def memory(field):
    with open(f"/proc/{server.pid}/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith(field))

def rss():
    return memory("VmRSS")

header = bytes([0, 1, 0, 0x10, 0, 0xFF, 0xFF])  # version 1, direct message, plain, 65,535 bytes
first = {"idle": b"", "login": b"", "header": header, "header+4k+1": header + b"x" * 4096, "trickle": header,
         "header+60k": header + b"x" * 60000}[mode]
later = {"header+4k+1": [b"y"], "trickle": [b"y" * 1000] * 5}.get(mode, [])
time.sleep(0.5)
before, virtual_before = rss(), memory("VmSize")
sockets = []
for index in range(count):
    connection = socket.create_connection(("127.0.0.1", port))
    if mode == "login":
        body = b'{"name":"u%d"}' % index
        connection.sendall(bytes([0, 1, 0, 1, 0, 0, len(body)]) + body)
    elif first:
        connection.sendall(first)
    sockets.append(connection)
for chunk in later:
    time.sleep(1)
    for connection in sockets:
        connection.send(chunk)
time.sleep(2)
held, virtual = rss(), memory("VmSize")
line = (f"{mode}: {count} connections: RSS {before} -> {held} KiB, {(held - before) * 1024 / count:.0f} bytes each; "
        f"virtual {(virtual - virtual_before) * 1024 / count:.0f} bytes each")
def closed_by_server(connection):
    connection.setblocking(False)
    try:
        return connection.recv(65536) is not None
    except BlockingIOError:
        return False
    except OSError:
        return True

if after is not None:
    time.sleep(after)
    closed = sum(1 for connection in sockets if closed_by_server(connection))
    line += f"; {after:g} s later {rss()} KiB, {closed} closed by the server"
print(line)
for connection in sockets:
    connection.close()
server.terminate()
server.wait()
