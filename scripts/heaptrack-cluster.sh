#!/usr/bin/env bash
# heaptrack-cluster.sh — where a cluster node's heap bytes per user go (issue 35 §2, the cluster figure;
# docs/BENCHMARKS.md "Issue 35 §2: memory per chat user"): starts nats-server -js and NODES release
# `im-server` nodes on it (--cluster, as scripts/bench-cluster.sh does), node n1 under heaptrack (Debian
# `heaptrack`), logs N idle users in with one `socket-bench client chat` spread over the nodes (user i on
# node i mod NODES: n1 holds N/NODES of them and knows the others as users of other nodes), stops n1 with
# SIGKILL while they are still logged in (so every block still allocated counts as "leaked"), and prints,
# per allocation site, n1's bytes still allocated divided by N (every user of the cluster: n1's share of
# one user, its own or another node's), as scripts/heaptrack-chat.sh does. Sites under 4 B per user
# are left out.
#
#   scripts/heaptrack-cluster.sh                    # 10,000 users on 2 nodes
#   N=12000 NODES=3 FRAMES=6 scripts/heaptrack-cluster.sh
#
# Environment: N=10000 NODES=2 OUT=/tmp/heaptrack-cluster FRAMES=5 (the innermost frames shown per site)
#   WORKDIR (a new temporary directory: NATS's store and the logs). Loopback only.
set -uo pipefail
cd "$(dirname "$0")/.."
export PATH=/opt/swift/usr/bin:$PATH
N=${N:-10000}
NODES=${NODES:-2}
OUT=${OUT:-/tmp/heaptrack-cluster}
FRAMES=${FRAMES:-5}
WORKDIR=${WORKDIR:-$(mktemp -d "${TMPDIR:-/tmp}/heaptrack-cluster.XXXXXX")}
command -v heaptrack >/dev/null || { echo "heaptrack-cluster: needs heaptrack (apt-get install heaptrack)" >&2; exit 1; }
command -v nats-server >/dev/null || { echo "heaptrack-cluster: needs nats-server" >&2; exit 1; }
swift build -c release --product im-server >&2 || exit 1
swift build -c release --product socket-bench >&2 || exit 1
SERVER=$(pwd)/.build/release/im-server
SB=$(pwd)/.build/release/socket-bench
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
rm -f "$OUT.zst" "$OUT.stacks"
pids=()
cleanup() { for ((i = ${#pids[@]} - 1; i >= 0; i--)); do kill "${pids[$i]}" 2>/dev/null || true; done; }
trap cleanup EXIT
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
# Waits (at most 60 s) until file $1 has a line matching $2; prints it.
wait_for() {
    for _ in $(seq 600); do
        if line=$(grep -m1 -E -- "$2" "$1" 2>/dev/null); then echo "$line"; return 0; fi
        sleep 0.1
    done
    echo "heaptrack-cluster: no line matching $2 in $1" >&2
    return 1
}
nats_port=$(free_port)
nats-server -js -a 127.0.0.1 -p "$nats_port" -sd "$WORKDIR/nats" >"$WORKDIR/nats.log" 2>&1 &
pids+=($!)
wait_for "$WORKDIR/nats.log" "Server is ready" >/dev/null || exit 1
servers=()
for node in $(seq "$NODES"); do
    log="$WORKDIR/node-$node.log"
    args=(--port 0 --no-discovery --log-level warning --rate 1000000 --burst 1000000 --max-connections 20000
        --login-timeout 120 --presence-interval 10 --cluster "nats://127.0.0.1:$nats_port" --node-id "n$node")
    if [[ $node == 1 ]]; then
        heaptrack -o "$OUT" "$SERVER" "${args[@]}" >"$log" 2>&1 &
    else
        "$SERVER" "${args[@]}" >"$log" 2>&1 &
    fi
    pids+=($!)
    port=$(wait_for "$log" "listening on 127\.0\.0\.1:[0-9]+ " | sed -E 's/.*127\.0\.0\.1:([0-9]+) .*/\1/') || exit 1
    servers+=(--server "127.0.0.1:$port")
done
SPID=$(pgrep -f "^$SERVER --port 0 .* --node-id n1\$" | head -1)
# The users stay logged in until n1 is killed: a long run keeps the client waiting.
timeout 900 "$SB" client chat "${servers[@]}" --users "$N" --login-rate 250 --login-timeout 600 \
    --direct-rate 0 --duration 600 --sources on >"$WORKDIR/client.out" 2>"$WORKDIR/client.log" &
CPID=$!
pids+=($CPID)
for _ in $(seq 1200); do grep -q "messages start" "$WORKDIR/client.log" && break; sleep 0.5; done
grep "messages start" "$WORKDIR/client.log" >&2 || echo "heaptrack-cluster: the users did not log in ($WORKDIR/client.log)" >&2
sleep 5
kill -KILL "$SPID"
sleep 3
heaptrack_print -f "$OUT.zst" -p 0 -a 0 -T 0 --flamegraph-cost-type leaked -F "$OUT.stacks" >/dev/null 2>&1
python3 - "$OUT.stacks" "$N" "$FRAMES" <<'PY' | swift demangle --simplified | cut -c1-300 | sed "s/ *$//"
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
echo "logs: $WORKDIR"
