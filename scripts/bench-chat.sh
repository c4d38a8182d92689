#!/usr/bin/env bash
# bench-chat.sh — the chat server's stored-and-acknowledged throughput, delivery latency and store size
# (issue 11 §7; docs/BENCHMARKS.md "Issue 11"). Builds release, then for each repetition and each store
# configuration starts a fresh `im-server` on a free loopback port and runs against it:
#   socket-bench client chat --mode throughput (SENDERS senders × MESSAGES numbered direct messages, WINDOW unacknowledged),
#   socket-bench client chat --mode latency (RATE messages/s for SECONDS s, one sender to one receiver),
#   and, for a file store, stops the server and runs socket-bench store-size on the file.
# Configurations: normal (a temporary file, --store-sync normal), full (--store-sync full), memory (:memory:).
# The configurations take turns within each repetition, so the machine's noise falls on all of them.
# Prints one table (median [min..max] over the repetitions); RESULT lines and logs stay in $WORKDIR.
#
#   scripts/bench-chat.sh
#   REPEAT=1 MESSAGES=2000 LATENCY_SECONDS=3 CONFIGS="memory" scripts/bench-chat.sh     # a quick look
#
# REPEAT (3), SENDERS (4), MESSAGES (25000 per sender), WINDOW (256), RATE (1000), LATENCY_SECONDS (20, the
# latency run's length), CONFIGS ("normal full memory"), WORKDIR (a new temporary directory).
set -euo pipefail
cd "$(dirname "$0")/.."
REPEAT=${REPEAT:-3}
SENDERS=${SENDERS:-4}
MESSAGES=${MESSAGES:-25000}
WINDOW=${WINDOW:-256}
RATE=${RATE:-1000}
LATENCY_SECONDS=${LATENCY_SECONDS:-20}
CONFIGS=${CONFIGS:-normal full memory}
WORKDIR=${WORKDIR:-$(mktemp -d "${TMPDIR:-/tmp}/bench-chat.XXXXXX")}
mkdir -p "$WORKDIR"
RESULTS="$WORKDIR/results.txt"

swift build -c release >&2
SERVER="$(pwd)/.build/release/im-server"
BENCH="$(pwd)/.build/release/socket-bench"

server_pid=""
cleanup() { if [[ -n $server_pid ]]; then kill "$server_pid" 2>/dev/null || true; fi; }
trap cleanup EXIT

# Starts im-server with the store flags in "$@" on a free loopback port; sets server_pid and port.
start_server() {
    local log=$1; shift
    # Throughput is measured, so no per-connection rate limit in the way (im-server --help: --rate, --burst).
    "$SERVER" --host 127.0.0.1 --port 0 --no-discovery --rate 1000000 --burst 1000000 "$@" >"$log" 2>&1 &
    server_pid=$!
    port=""
    for _ in $(seq 100); do
        port=$(sed -n 's/^.* im-server listening on 127\.0\.0\.1:\([0-9]*\) .*/\1/p' "$log")
        [[ -n $port ]] && return 0
        kill -0 "$server_pid" 2>/dev/null || break
        sleep 0.1
    done
    echo "im-server did not start:" >&2; cat "$log" >&2; exit 1
}

stop_server() {
    kill "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
    server_pid=""
}

{
    echo "# $(date -u +%Y-%m-%dT%H:%M:%SZ) commit $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- Sources Package.swift || echo '+changes')"
    echo "# $(uname -srm); $(nproc) cores; $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); $(swift --version 2>&1 | head -1)"
    echo "# SENDERS=$SENDERS MESSAGES=$MESSAGES WINDOW=$WINDOW RATE=$RATE LATENCY_SECONDS=$LATENCY_SECONDS REPEAT=$REPEAT"
} | tee "$RESULTS" >&2

for rep in $(seq "$REPEAT"); do
    for config in $CONFIGS; do
        dir="$WORKDIR/$config-$rep"
        mkdir -p "$dir"
        case $config in
            normal) store=(--store "$dir/chat.sqlite" --store-sync normal) ;;
            full) store=(--store "$dir/chat.sqlite" --store-sync full) ;;
            memory) store=(--store :memory:) ;;
            *) echo "unknown configuration $config (normal, full, memory)" >&2; exit 64 ;;
        esac
        echo "[$config $rep/$REPEAT] load before: $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$RESULTS" >&2
        start_server "$dir/server.log" "${store[@]}"
        "$BENCH" client chat --mode throughput --server "127.0.0.1:$port" --senders "$SENDERS" --messages "$MESSAGES" --window "$WINDOW" \
            --server-pid "$server_pid" --label "$config/$rep" 2>>"$dir/bench.log" | tee -a "$RESULTS" >&2 || true
        "$BENCH" client chat --mode latency --server "127.0.0.1:$port" --rate "$RATE" --duration "$LATENCY_SECONDS" \
            --server-pid "$server_pid" --label "$config/$rep" 2>>"$dir/bench.log" | tee -a "$RESULTS" >&2 || true
        stop_server
        if [[ $config != memory ]]; then
            "$BENCH" store-size "$dir/chat.sqlite" 2>>"$dir/bench.log" | sed "s|^RESULT |RESULT label=$config/$rep |" \
                | tee -a "$RESULTS" >&2 || true
            rm -f "$dir"/chat.sqlite*
        fi
        cat "$dir/bench.log" >&2
    done
done
echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$RESULTS" >&2

python3 - "$RESULTS" "$CONFIGS" <<'PY'
import statistics, sys

results, configs = sys.argv[1], sys.argv[2].split()
rows = {}  # (config, mode) -> list of field dicts
for line in open(results):
    if not line.startswith("RESULT "):
        continue
    fields = dict(f.split("=", 1) for f in line.split()[1:])
    config = fields["label"].split("/")[0]
    rows.setdefault((config, fields["mode"]), []).append(fields)

def cell(config, mode, key, scale=1.0, places=0):
    values = [float(r[key]) * scale for r in rows.get((config, mode), []) if key in r]
    if not values:
        return "–"
    fmt = lambda v: f"{v:,.{places}f}"
    if len(values) == 1:
        return fmt(values[0])
    return f"{fmt(statistics.median(values))} [{fmt(min(values))}..{fmt(max(values))}]"

def clean(config):
    runs = rows.get((config, "throughput"), []) + rows.get((config, "latency"), [])
    bad = [r for r in runs if r.get("clean") != "yes"]
    lost = sum(int(r.get("lost", 0)) for r in runs)
    dups = sum(int(r.get("stored_duplicates", 0)) + int(r.get("delivered_duplicates", 0)) + int(r.get("resent_deliveries", 0)) for r in runs)
    return f"{len(runs) - len(bad)}/{len(runs)} clean, lost {lost}, dup {dups}"

names = {"normal": "file, sync normal", "full": "file, sync full", "memory": ":memory:"}
print()
print("| store | stored + acked msgs/s | server CPU µs/msg | delivery p50 ms | delivery p99 ms | stored p50 ms | stored p99 ms | latency-run server CPU µs/msg | bytes / 1,000 msgs | runs |")
print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |")
for config in configs:
    print("| " + " | ".join([
        names.get(config, config),
        cell(config, "throughput", "stored_per_s"),
        cell(config, "throughput", "server_cpu_us_per_msg", places=0),
        cell(config, "latency", "delivery_p50_us", 1e-3, 2),
        cell(config, "latency", "delivery_p99_us", 1e-3, 2),
        cell(config, "latency", "stored_p50_us", 1e-3, 2),
        cell(config, "latency", "stored_p99_us", 1e-3, 2),
        cell(config, "latency", "server_cpu_us_per_msg", places=0),
        cell(config, "store-size", "bytes_per_1000"),
        clean(config),
    ]) + " |")
print()
print(f"RESULT lines: {results}")
PY
