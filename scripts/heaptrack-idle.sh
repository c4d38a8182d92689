#!/usr/bin/env bash
# heaptrack-idle.sh — where each idle connection's heap bytes go in a socket-bench server (issue 33 §5):
# runs the server under heaptrack (Debian `heaptrack`), holds N idle connections from
# `socket-bench client … idle` (a 16-byte Ping or frame every 5 s), stops the server with SIGTERM while
# they are still open, and prints, per allocation site, the bytes still allocated divided by N (requested
# sizes: glibc adds 8 bytes and rounds each block up to 16, at least 32). Sites under 4 B per connection
# are left out; the loop's fixed buffers show up divided by N too.
#
#   scripts/heaptrack-idle.sh                       # websocket server, 2,000 connections
#   N=2000 SERVER="server lp4" CLIENT="idle" scripts/heaptrack-idle.sh
#
# Environment: N=2000 PORT=9390 SERVER="server websocket" CLIENT="websocket idle" OUT=/tmp/heaptrack-idle
#   FRAMES=4 (the innermost frames shown per site)
set -uo pipefail
cd "$(dirname "$0")/.."
export PATH=/opt/swift/usr/bin:$PATH
N=${N:-2000}
PORT=${PORT:-9390}
SERVER=${SERVER:-server websocket}
CLIENT=${CLIENT:-websocket idle}
OUT=${OUT:-/tmp/heaptrack-idle}
FRAMES=${FRAMES:-4}
command -v heaptrack >/dev/null || { echo "heaptrack-idle: needs heaptrack (apt-get install heaptrack)" >&2; exit 1; }
swift build -c release --product socket-bench >&2 || exit 1
SB=$(pwd)/.build/release/socket-bench
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
rm -f "$OUT.zst"
# shellcheck disable=SC2086
heaptrack -o "$OUT" "$SB" $SERVER --port "$PORT" >"$OUT.server.log" 2>&1 &
for _ in $(seq 100); do ss -Hltn "sport = :$PORT" 2>/dev/null | grep -q LISTEN && break; sleep 0.2; done
SPID=$(pgrep -f "^$SB $SERVER --port $PORT" | head -1)
[[ -n $SPID ]] || { echo "heaptrack-idle: the server did not start ($OUT.server.log)" >&2; exit 1; }
# shellcheck disable=SC2086
timeout 120 "$SB" client $CLIENT -c "$N" -s 16 -H 5 -d 25 --port "$PORT" >"$OUT.client.log" 2>&1 &
CPID=$!
sleep 14 # connecting N takes a few seconds; then a few idle seconds (pings answered)
kill -TERM "$SPID"
wait "$CPID"
sleep 2
heaptrack_print -f "$OUT.zst" -p 0 -a 0 -T 0 --flamegraph-cost-type leaked -F "$OUT.stacks" >/dev/null 2>&1
python3 - "$OUT.stacks" "$N" "$FRAMES" <<'PY' | swift demangle --simplified | cut -c1-260
import sys
n, frames = int(sys.argv[2]), int(sys.argv[3])
rows = []
for line in open(sys.argv[1]):
    stack, _, size = line.rstrip("\n").rpartition(" ")
    if int(size) >= 4 * n:
        rows.append((int(size), [f for f in stack.split(";") if f.strip()]))
total = 0
for size, stack in sorted(rows, key=lambda r: -r[0]):
    total += size
    print(f"{size / n:8.1f} B/conn  | " + " ; ".join(f.split(" (")[0][:90] for f in stack[-frames:]))
print(f"total {total / n:.1f} B/conn (sites of 4 B/conn or more)")
PY
