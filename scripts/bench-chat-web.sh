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
# Each run's users message each other only (a run's names carry a random tag). Writes every RESULT
# line, summary and log to OUT, with the load average before and after each run.
#
#   scripts/bench-chat-web.sh
#   SCENARIOS="both" USERS=2000 scripts/bench-chat-web.sh
#
# SCENARIOS ("tcp ws both"), USERS (10000), RATE (1000 direct messages a second per run), DURATION (30),
# BOTH_TCP_DURATION (90), OUT (docs/bench-results/DATE-chat-web).
set -euo pipefail
cd "$(dirname "$0")/.."
SCENARIOS=${SCENARIOS:-tcp ws both}
USERS=${USERS:-10000}
RATE=${RATE:-1000}
DURATION=${DURATION:-30}
BOTH_TCP_DURATION=${BOTH_TCP_DURATION:-90}
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
}
trap cleanup EXIT

say() { echo "$*" | tee -a "$OUT/runs.txt"; }
loadavg() { say "load average $(cut -d' ' -f1-3 /proc/loadavg) ($1)"; }

start_server() {
    local log="$OUT/$1-server.log"
    "$SERVER" --host 127.0.0.1 --port 0 --web-port 0 --no-discovery --store :memory: --log-level warning \
        --rate 1000000 --burst 1000000 --max-connections 25000 --login-timeout 120 >"$log" 2>&1 &
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

for scenario in $SCENARIOS; do
    start_server "$scenario"
    tcp=(client chat --server "127.0.0.1:$tcp_port" --server-pid "$server_pid" --users "$USERS" --direct-rate "$RATE")
    ws=(client chat --websocket --server "127.0.0.1:$web_port" --server-pid "$server_pid" --users "$USERS" --direct-rate "$RATE")
    loadavg "before $scenario"
    case $scenario in
        tcp) run tcp "${tcp[@]}" --duration "$DURATION" --label tcp-alone ;;
        ws) run ws "${ws[@]}" --duration "$DURATION" --label ws-alone ;;
        both)
            say "== both-tcp: socket-bench ${tcp[*]} --duration $BOTH_TCP_DURATION --label tcp-beside-ws"
            "$BENCH" "${tcp[@]}" --duration "$BOTH_TCP_DURATION" --label tcp-beside-ws >"$OUT/both-tcp.txt" 2>&1 &
            bench_pid=$!
            for _ in $(seq 1200); do
                grep -q "messages start" "$OUT/both-tcp.txt" && break
                sleep 0.1
            done
            loadavg "TCP users in, before the WebSocket users"
            run both-ws "${ws[@]}" --duration "$DURATION" --label ws-beside-tcp
            loadavg "WebSocket run done"
            wait "$bench_pid" || true
            bench_pid=""
            grep -E '^RESULT' "$OUT/both-tcp.txt" | tee -a "$OUT/runs.txt" || say "(no RESULT line: see $OUT/both-tcp.txt)"
            ;;
        *) echo "unknown scenario $scenario" >&2; exit 64 ;;
    esac
    loadavg "after $scenario"
    stop_server
done
echo "results: $OUT"
