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
#
# UDP echo: `scripts/bench-side-by-side.sh udp` runs shared/bench's C UDP echo (peers/c-udp-echo.c,
# recvmmsg/sendmmsg batches of 32) and `socket-bench server udp` alternately (C, ours, C, ours, …: REPEAT
# pairs per size, a fresh server each run) under the same udp-loadgen flags, servers on core 0 and the
# load generator on core 1, and prints each pair's ratio and the medians.
#   SIZES="64 1400" FLOWS=16 DEPTH=8 DUR=10 WARM=2 REPEAT=5 scripts/bench-side-by-side.sh udp
# UDP_PORT: the port (default 9200). The RESULT lines go to $WORKDIR/udp-<date>.txt.
set -euo pipefail
cd "$(dirname "$0")/.."
BENCH=${BENCH:-$(cd ../shared/bench && pwd)}
WORKDIR=${WORKDIR:-${TMPDIR:-/tmp}/lp4-bench}
export WORKDIR
mkdir -p "$WORKDIR"
swift build -c release --product socket-bench >&2
OURS="$(pwd)/.build/release/socket-bench"

if [[ ${1:-} == udp ]]; then
    cc -O2 -Wall -o "$WORKDIR/c-udp-echo" "$BENCH/peers/c-udp-echo.c"
    cc -O2 -Wall -o "$WORKDIR/udp-loadgen" "$BENCH/udp-loadgen.c"
    port=${UDP_PORT:-9200}
    declare -A UDP_SERVER=(
        [c-udp]="$WORKDIR/c-udp-echo -p $port"
        [ours-udp]="$OURS server udp --port $port"
    )
    RESULTS="$WORKDIR/udp-$(date +%Y%m%d-%H%M%S).txt"
    echo "[udp] load before: $(uptime)" | tee -a "$RESULTS" >&2
    for size in ${SIZES:-64 1400}; do
        for rep in $(seq "${REPEAT:-5}"); do
            for peer in c-udp ours-udp; do
                # shellcheck disable=SC2086
                taskset -c 0 ${UDP_SERVER[$peer]} >"$WORKDIR/udp-$peer.log" 2>&1 &
                pid=$!
                for _ in $(seq 100); do ss -Hlun "sport = :$port" | grep -q ":$port" && break; sleep 0.1; done
                taskset -c 1 "$WORKDIR/udp-loadgen" -p "$port" -c "${FLOWS:-16}" -D "${DEPTH:-8}" -s "$size" \
                    -d "${DUR:-10}" -w "${WARM:-2}" -S "$pid" -L "$peer/rep$rep" 2>/dev/null | tee -a "$RESULTS"
                kill "$pid"; wait "$pid" 2>/dev/null || true
            done
        done
    done
    echo "[udp] load after: $(uptime)" | tee -a "$RESULTS" >&2
    python3 - "$RESULTS" <<'PY'
import re, statistics, sys
rows = []
for line in open(sys.argv[1]):
    if line.startswith("RESULT mode=udp-echo"):
        kv = dict(f.split("=", 1) for f in line.split()[1:])
        peer, rep = kv["label"].split("/")
        rows.append((int(kv["size"]), rep, peer, kv))
print("| size B | rep | c-udp dgrams/s | ours dgrams/s | ratio | c lost | ours lost | c µs/dgram | ours µs/dgram | CPU ratio |")
print("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
summary = {}
for size in sorted({r[0] for r in rows}):
    for rep in sorted({r[1] for r in rows if r[0] == size}, key=lambda x: int(x[3:])):
        pair = {r[2]: r[3] for r in rows if r[0] == size and r[1] == rep}
        if set(pair) != {"c-udp", "ours-udp"}:
            continue
        c, o = pair["c-udp"], pair["ours-udp"]
        rate = float(o["msgs_per_s"]) / float(c["msgs_per_s"])
        cpu = float(o["srv_us_per_msg"]) / float(c["srv_us_per_msg"])
        summary.setdefault(size, []).append((rate, cpu, float(c["msgs_per_s"]), float(o["msgs_per_s"]),
                                             int(c["lost"]), int(o["lost"]), float(c["srv_us_per_msg"]), float(o["srv_us_per_msg"])))
        print(f"| {size} | {rep[3:]} | {float(c['msgs_per_s']):,.0f} | {float(o['msgs_per_s']):,.0f} | {rate:.2f} | {c['lost']} | {o['lost']} "
              f"| {c['srv_us_per_msg']} | {o['srv_us_per_msg']} | {cpu:.2f} |")
print()
print("| size B | pairs | c-udp dgrams/s | ours dgrams/s | ratio (median [min..max]) | lost c / ours (total) | c µs/dgram | ours µs/dgram | CPU ratio (median [min..max]) |")
print("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
for size, pairs in sorted(summary.items()):
    med = lambda i: statistics.median(p[i] for p in pairs)
    rates, cpus = [p[0] for p in pairs], [p[1] for p in pairs]
    print(f"| {size} | {len(pairs)} | {med(2):,.0f} | {med(3):,.0f} | {med(0):.2f} [{min(rates):.2f}..{max(rates):.2f}] "
          f"| {sum(p[4] for p in pairs)} / {sum(p[5] for p in pairs)} | {med(6):.3f} | {med(7):.3f} | {med(1):.2f} [{min(cpus):.2f}..{max(cpus):.2f}] |")
PY
    echo "[udp] results: $RESULTS" >&2
    exit 0
fi

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
