#!/usr/bin/env bash
# bench-100k.sh — 100,000 idle connections on one box: socket-bench's LP4 echo server as WORKERS processes
# sharing one port with SO_REUSEPORT (a process may hold at most 20,000 open files here), and as many
# loadgen processes (shared/bench/loadgen.c), each holding N/WORKERS connections from source addresses
# spread over 127.0.0.2–250 with a 16-byte heartbeat every H seconds, for D seconds.
#
#   scripts/bench-100k.sh                 # N=100200 WORKERS=6 H=30 D=300
#   N=20000 WORKERS=2 D=60 scripts/bench-100k.sh
#
# Prints each loadgen's RESULT line (alive=, hb_missed=, errors=) and each worker's RSS.
set -euo pipefail
cd "$(dirname "$0")/.."
BENCH=${BENCH:-$(cd ../shared/bench && pwd)}
WORKDIR=${WORKDIR:-${TMPDIR:-/tmp}/socket-bench-100k}
N=${N:-100200} WORKERS=${WORKERS:-6} H=${H:-30} D=${D:-300} PORT=${PORT:-9500}
mkdir -p "$WORKDIR"
swift build -c release --product socket-bench >&2
cc -O2 -pthread -o "$WORKDIR/loadgen" "$BENCH/loadgen.c"
ulimit -n "$(ulimit -Hn)"
.build/release/socket-bench server lp4 --port "$PORT" --workers "$WORKERS" >"$WORKDIR/server.log" 2>&1 &
server=$!
trap 'kill $server 2>/dev/null || true' EXIT
for _ in $(seq 100); do ss -Hltn "sport = :$PORT" | grep -q LISTEN && break; sleep 0.1; done
sleep 1
generators=()
for i in $(seq "$WORKERS"); do
    "$WORKDIR/loadgen" -m idle -n $((N / WORKERS)) -H "$H" -d "$D" -T 60 -p "$PORT" -L "idle$N/$i" \
        >"$WORKDIR/loadgen.$i.out" 2>"$WORKDIR/loadgen.$i.log" &
    generators+=($!)
done
sleep $((H / 2 + 10))
echo "established: $(ss -Htn state established "( sport = :$PORT )" | wc -l)"
for pid in $(pgrep -f "socket-bench server lp4 --port $PORT --reuse-port"); do
    echo "worker $pid $(grep VmRSS /proc/"$pid"/status)"
done
wait "${generators[@]}"
cat "$WORKDIR"/loadgen.*.out
