#!/usr/bin/env bash
# bench-side-by-side.sh — our LP4 echo server beside the peers of shared/bench (hand-written C epoll,
# Node.js, Python asyncio) under the same loadgen scenarios, in one run. Servers are pinned to core 0
# and the load generator to core 1 (run-peers.sh does this). Results and logs go to $WORKDIR.
#
#   scripts/bench-side-by-side.sh            # pingpong, pipeline, bulk (REPEAT=3), then idle 10,000 and 19,000 (H=30 s)
#   SCENARIOS="pipeline" REPEAT=1 IDLE="" scripts/bench-side-by-side.sh
#
# BENCH: the shared/bench folder (default ../shared/bench next to this repository).
# IDLE: connection counts for the idle runs (default "10000 19000"; one process may hold 20,000 files).
# IDLE_PEERS: servers for the idle runs (default: ours c-epoll node py-asyncio).
set -euo pipefail
cd "$(dirname "$0")/.."
BENCH=${BENCH:-$(cd ../shared/bench && pwd)}
WORKDIR=${WORKDIR:-${TMPDIR:-/tmp}/lp4-bench}
export WORKDIR
mkdir -p "$WORKDIR"
swift build -c release --product socket-bench >&2
OURS="$(pwd)/.build/release/socket-bench"

# pingpong, pipeline, bulk: shared/bench's own runner, with our server as extra peers.
EXTRA_PEERS="ours=$OURS server lp4 --port {port};ours-2loops=$OURS server lp4 --loops 2 --port {port};ours-per-frame=$OURS server lp4-per-frame --port {port}" \
    SCENARIOS=${SCENARIOS:-"pingpong pipeline bulk"} REPEAT=${REPEAT:-3} "$BENCH/run-peers.sh"

# idle N connections, a heartbeat every 30 s each, held 65 s (two heartbeats per connection).
IDLE=${IDLE-"10000 19000"}
[[ -z $IDLE ]] && exit 0
cc -O2 -pthread -o "$WORKDIR/c-epoll-echo" "$BENCH/peers/c-epoll-echo.c"
cc -O2 -pthread -o "$WORKDIR/loadgen" "$BENCH/loadgen.c"
declare -A SERVER=(
    [ours]="$OURS server lp4 --port 9200"
    [c-epoll]="$WORKDIR/c-epoll-echo -p 9200"
    [node]="node $BENCH/peers/node-echo.js 9200"
    [py-asyncio]="python3 $BENCH/peers/py-asyncio-echo.py --port 9200"
)
ulimit -n "$(ulimit -Hn)"
RESULTS="$WORKDIR/idle-$(date +%Y%m%d-%H%M%S).txt"
for n in $IDLE; do
    for peer in ${IDLE_PEERS:-ours c-epoll node py-asyncio}; do
        command -v "${SERVER[$peer]%% *}" >/dev/null || { echo "[idle] $peer not available" >&2; continue; }
        # shellcheck disable=SC2086
        taskset -c 0 ${SERVER[$peer]} >"$WORKDIR/idle-$peer-$n.log" 2>&1 &
        pid=$!
        for _ in $(seq 100); do ss -Hltn "sport = :9200" | grep -q LISTEN && break; sleep 0.1; done
        sleep 0.5
        taskset -c 1 "$WORKDIR/loadgen" -m idle -n "$n" -H 30 -d 65 -T 60 -p 9200 -S "$pid" -L "$peer/idle$n" 2>/dev/null | tee -a "$RESULTS"
        kill "$pid"; wait "$pid" 2>/dev/null || true
        sleep 2
    done
done
echo "[idle] results: $RESULTS" >&2
