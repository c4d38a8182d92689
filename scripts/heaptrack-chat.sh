#!/usr/bin/env bash
# heaptrack-chat.sh — where each logged-in idle chat user's heap bytes go in `im-server` (issue 35 §2):
# runs a release `im-server` (memory store, limits out of the way) under heaptrack (Debian `heaptrack`),
# logs N idle users in with `socket-bench client chat` (live version 2 sessions; STORED=1: with
# passwords), stops the server with SIGKILL while they are still logged in (so every block still
# allocated counts as "leaked"), and prints, per allocation site, the bytes still allocated divided by
# N (requested sizes: glibc adds 8 bytes and rounds each block up to 16, at least 32), with the number
# of blocks per user. Sites under 4 B per user are left out; the server's fixed buffers (its loops'
# read buffers, the store's tables) show up divided by N too.
#
#   scripts/heaptrack-chat.sh                       # 5,000 users
#   N=5000 STORED=1 FRAMES=6 scripts/heaptrack-chat.sh
#
# Environment: N=5000 OUT=/tmp/heaptrack-chat FRAMES=5 (the innermost frames shown per site) STORED=0
#   WEBSOCKET=0 (1: the users over the web port)
set -uo pipefail
cd "$(dirname "$0")/.."
export PATH=/opt/swift/usr/bin:$PATH
N=${N:-5000}
OUT=${OUT:-/tmp/heaptrack-chat}
FRAMES=${FRAMES:-5}
STORED=${STORED:-0}
WEBSOCKET=${WEBSOCKET:-0}
command -v heaptrack >/dev/null || { echo "heaptrack-chat: needs heaptrack (apt-get install heaptrack)" >&2; exit 1; }
swift build -c release --product im-server >&2 || exit 1
swift build -c release --product socket-bench >&2 || exit 1
SERVER=$(pwd)/.build/release/im-server
SB=$(pwd)/.build/release/socket-bench
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
rm -f "$OUT.zst" "$OUT.server.log"
web_args=() extra=()
[[ $WEBSOCKET == 1 ]] && { web_args=(--web-port 0); extra+=(--websocket); }
[[ $STORED == 1 ]] && extra+=(--stored)
heaptrack -o "$OUT" "$SERVER" --host 127.0.0.1 --port 0 "${web_args[@]}" --no-discovery --store :memory: \
    --log-level warning --rate 1000000 --burst 1000000 --max-connections 20000 --login-timeout 120 \
    --presence-interval 10 --password-cost minimum >"$OUT.server.log" 2>&1 &
port="" web=""
for _ in $(seq 300); do
    port=$(sed -n 's/^.* im-server listening on 127\.0\.0\.1:\([0-9]*\) .*/\1/p' "$OUT.server.log")
    web=$(sed -n 's/^.* im-server web port on http:\/\/127\.0\.0\.1:\([0-9]*\)\/.*/\1/p' "$OUT.server.log")
    [[ -n $port && ($WEBSOCKET == 0 || -n $web) ]] && break
    sleep 0.2
done
[[ -n $port ]] || { echo "heaptrack-chat: the server did not start ($OUT.server.log)" >&2; exit 1; }
SPID=$(pgrep -f "^$SERVER --host 127.0.0.1 --port 0" | head -1)
[[ $WEBSOCKET == 1 ]] && port=$web
# The users stay logged in until the server is killed: a long drain keeps the client waiting.
timeout 600 "$SB" client chat --server "127.0.0.1:$port" --users "$N" --login-rate 500 --login-timeout 300 \
    --direct-rate 0 --duration 300 --sources on "${extra[@]}" >"$OUT.client.log" 2>&1 &
CPID=$!
for _ in $(seq 600); do grep -q "messages start" "$OUT.client.log" && break; sleep 0.5; done
grep "messages start" "$OUT.client.log" >&2 || { echo "heaptrack-chat: the users did not log in ($OUT.client.log)" >&2; }
sleep 3
kill -KILL "$SPID"
wait "$CPID" 2>/dev/null
sleep 3
heaptrack_print -f "$OUT.zst" -p 0 -a 0 -T 0 --flamegraph-cost-type leaked -F "$OUT.stacks" >/dev/null 2>&1
python3 - "$OUT.stacks" "$N" "$FRAMES" <<'PY' | swift demangle --simplified | cut -c1-300
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
    print(f"{size / n:8.1f} B/user  | " + " ; ".join(f.split(" (")[0][:90] for f in stack[-frames:]))
print(f"total {total / n:.1f} B/user (sites of 4 B/user or more)")
PY
