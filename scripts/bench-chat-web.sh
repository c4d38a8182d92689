#!/usr/bin/env bash
# bench-chat-web.sh — chat users over WebSocket beside users over TCP on one im-server (issue 34 §4;
# docs/BENCHMARKS.md "Issue 34"). Builds release, then runs each scenario against a fresh `im-server`
# (memory store, the per-connection rate moved out of the way of the load, room for 25,000
# connections) with its web port (`--web-port 0`) on free loopback ports:
#   tcp    USERS users over TCP alone, RATE direct messages a second for DURATION s
#   ws     USERS users over WebSocket (socket-bench client chat --websocket, ws://…/chat) alone, the same
#   both   USERS over TCP log in (all at once) and send for BOTH_TCP_DURATION s; once their messages
#          start, USERS more over WebSocket log in on the same server and send for DURATION s. Each
#          run's RSS before/after its own logins is then its own transport's (the other's users are
#          already in, or not yet there).
#   tcp2   the same as both with TCP for the second USERS too: the control for both (what 20,000 users
#          cost whatever their transport).
# During both and tcp2 the server's /metrics (sessions by transport, routing queue depth, presence
# frames, deliveries), its CPU seconds and the load average are sampled every second into NAME-samples.txt.
# Each run's users message each other only (a run's names carry a random tag). Writes every RESULT
# line, summary and log to OUT, with the load average before and after each run.
#
#   scripts/bench-chat-web.sh
#   SCENARIOS="both" USERS=2000 scripts/bench-chat-web.sh
#
# SCENARIOS ("tcp ws both tcp2"), USERS (10000), RATE (1000 direct messages a second per run), DURATION (30),
# BOTH_TCP_DURATION (90), LOGIN_RATE (0: each run's users all at once; else logins started per second),
# PRESENCE_INTERVAL (im-server's --presence-interval, default its own 0.2 s), OUT (docs/bench-results/DATE-chat-web).
set -euo pipefail
cd "$(dirname "$0")/.."
SCENARIOS=${SCENARIOS:-tcp ws both tcp2}
USERS=${USERS:-10000}
RATE=${RATE:-1000}
DURATION=${DURATION:-30}
BOTH_TCP_DURATION=${BOTH_TCP_DURATION:-90}
LOGIN_RATE=${LOGIN_RATE:-0}
PRESENCE_INTERVAL=${PRESENCE_INTERVAL:-0.2}
OUT=${OUT:-docs/bench-results/$(date -u +%F)-chat-web}
mkdir -p "$OUT"
# 20,000 users need 20,000 descriptors in the server: raise the hard limit when allowed (root), then the soft one.
ulimit -Hn 65536 2>/dev/null || true
ulimit -n "$(ulimit -Hn)"

swift build -c release --product im-server >&2
swift build -c release --product socket-bench >&2
SERVER="$(pwd)/.build/release/im-server"
BENCH="$(pwd)/.build/release/socket-bench"

server_pid="" bench_pid=""
cleanup() {
    if [[ -n $bench_pid ]]; then kill "$bench_pid" 2>/dev/null || true; fi
    if [[ -n $server_pid ]]; then kill "$server_pid" 2>/dev/null || true; fi
    if [[ -n $sampler_pid ]]; then kill "$sampler_pid" 2>/dev/null || true; fi
}
trap cleanup EXIT

say() { echo "$*" | tee -a "$OUT/runs.txt"; }
loadavg() { say "load average $(cut -d' ' -f1-3 /proc/loadavg) ($1)"; }

start_server() {
    local log="$OUT/$1-server.log"
    "$SERVER" --host 127.0.0.1 --port 0 --web-port 0 --no-discovery --store :memory: --log-level warning \
        --rate 1000000 --burst 1000000 --max-connections 25000 --login-timeout 120 --presence-interval "$PRESENCE_INTERVAL" \
        >"$log" 2>&1 &
    server_pid=$!
    tcp_port="" web_port=""
    for _ in $(seq 100); do
        tcp_port=$(sed -n 's/^.* im-server listening on 127\.0\.0\.1:\([0-9]*\) .*/\1/p' "$log")
        web_port=$(sed -n 's/^.* im-server web port on http:\/\/127\.0\.0\.1:\([0-9]*\)\/.*/\1/p' "$log")
        [[ -n $tcp_port && -n $web_port ]] && break
        sleep 0.1
    done
    [[ -n $tcp_port && -n $web_port ]] || { echo "im-server did not start:" >&2; cat "$log" >&2; exit 1; }
}

stop_server() {
    kill "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
    server_pid=""
}

# run NAME ARGS…: one socket-bench run in the foreground, its output kept in OUT/NAME.txt.
run() {
    local name=$1
    shift
    say "== $name: socket-bench $*"
    "$BENCH" "$@" >"$OUT/$name.txt" 2>&1 || true
    grep -E '^RESULT' "$OUT/$name.txt" | tee -a "$OUT/runs.txt" || say "(no RESULT line: see $OUT/$name.txt)"
}

# sample NAME: one line a second until killed: seconds, sessions by transport, routing queue depth,
# presence frames and deliveries so far, the server's CPU seconds (utime + stime), the load average.
sample() {
    local start=$SECONDS ticks
    ticks=$(getconf CLK_TCK)
    while true; do
        local metrics cpu
        # A scrape slower than 5 s (a busy server) leaves the sample's metrics empty, not the sampler dead.
        metrics=$(curl -s --max-time 5 "http://127.0.0.1:$web_port/metrics" |
            sed -n 's/^chat_connections{transport="\(.*\)"} \(.*\)/\1=\2/p; s/^chat_routing_queue_depth \(.*\)/queue=\1/p;
                   s/^chat_presence_messages_sent_total \(.*\)/presence=\1/p; s/^chat_messages_delivered_total \(.*\)/delivered=\1/p' |
            tr '\n' ' ' || true)
        cpu=$(awk -v t="$ticks" '{ printf "%.2f", ($14 + $15) / t }' "/proc/$server_pid/stat" 2>/dev/null || echo -)
        echo "t=$((SECONDS - start)) $metrics server_cpu_s=$cpu load=$(cut -d' ' -f1 /proc/loadavg) at=$(date -u +%T)"
        sleep 1
    done >"$OUT/$1-samples.txt"
}

# staged NAME SECOND…: USERS over TCP log in and send for BOTH_TCP_DURATION s; once their messages start,
# the run SECOND (USERS more) logs in on the same server and sends for DURATION s.
staged() {
    local name=$1
    shift
    sample "$name" &
    sampler_pid=$!
    say "== $name-tcp: socket-bench ${tcp[*]} --duration $BOTH_TCP_DURATION --label $name-first-tcp"
    "$BENCH" "${tcp[@]}" --duration "$BOTH_TCP_DURATION" --label "$name-first-tcp" >"$OUT/$name-tcp.txt" 2>&1 &
    bench_pid=$!
    for _ in $(seq 3000); do
        grep -q "messages start" "$OUT/$name-tcp.txt" && break
        sleep 0.1
    done
    loadavg "$name: the first USERS in, before the second"
    run "$name-second" "$@" --duration "$DURATION" --label "$name-second"
    loadavg "$name: the second run done"
    wait "$bench_pid" || true
    bench_pid=""
    kill "$sampler_pid" 2>/dev/null || true
    grep -E '^RESULT' "$OUT/$name-tcp.txt" | tee -a "$OUT/runs.txt" || say "(no RESULT line: see $OUT/$name-tcp.txt)"
}

sampler_pid=""
for scenario in $SCENARIOS; do
    start_server "$scenario"
    common=(--server-pid "$server_pid" --users "$USERS" --direct-rate "$RATE" --login-rate "$LOGIN_RATE" --login-timeout 300)
    tcp=(client chat --server "127.0.0.1:$tcp_port" "${common[@]}")
    ws=(client chat --websocket --server "127.0.0.1:$web_port" "${common[@]}")
    loadavg "before $scenario"
    case $scenario in
        tcp) run tcp "${tcp[@]}" --duration "$DURATION" --label tcp-alone ;;
        ws) run ws "${ws[@]}" --duration "$DURATION" --label ws-alone ;;
        both) staged both "${ws[@]}" ;;
        tcp2) staged tcp2 "${tcp[@]}" ;;
        *) echo "unknown scenario $scenario" >&2; exit 64 ;;
    esac
    loadavg "after $scenario"
    stop_server
done
echo "results: $OUT"
