#!/usr/bin/env bash
# bench-idle-ticks.sh — CPU per heartbeat of one `socket-bench server lp4` and one `socket-bench client
# idle` process, for each "CONNECTIONS:HEARTBEAT_S:TICK_S" given: does a tick's cost grow with the
# connections (it must not: issue 35 §1), and what does batching the heartbeats (--tick) save?
#
#   scripts/bench-idle-ticks.sh 2000:2:0 16000:16:0        # 1,000 heartbeats/s each, 2,000 vs 16,000 connections
#   scripts/bench-idle-ticks.sh 10000:10:0 10000:10:1      # each heartbeat on time vs batched once a second
#
# Each run: connect, wait one period, then read both processes' utime + stime (/proc/PID/stat) over
# WINDOW seconds (20) and divide by the heartbeats in it (connections × WINDOW / HEARTBEAT_S). One
# `RESULT bench=idle-ticks …` line per run; the client's own summary goes to standard error.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=.build/release/socket-bench PORT=${PORT:-9612} WINDOW=${WINDOW:-20}
ticks_per_second=$(getconf CLK_TCK)
cpu() { awk '{ sub(/.*\) /, ""); print $12 + $13 }' "/proc/$1/stat"; }
server="" client=""
trap 'kill $client $server 2>/dev/null || true' EXIT
for run in "$@"; do
    IFS=: read -r n h tick <<<"$run"
    nice -n 5 "$BIN" server lp4 --port "$PORT" >/dev/null &
    server=$!
    for _ in $(seq 100); do ss -Hltn "sport = :$PORT" | grep -q LISTEN && break; sleep 0.1; done
    settle=$(awk -v h="$h" 'BEGIN { printf "%d", h + 5 }')
    nice -n 5 "$BIN" client idle --port "$PORT" -c "$n" -H "$h" -d $((settle + WINDOW + 5)) --tick "$tick" >/dev/null &
    client=$!
    sleep "$settle"
    s0=$(cpu "$server") c0=$(cpu "$client")
    sleep "$WINDOW"
    s1=$(cpu "$server") c1=$(cpu "$client")
    wait "$client"
    kill "$server"
    wait "$server" || true
    server="" client=""
    awk -v n="$n" -v h="$h" -v tick="$tick" -v w="$WINDOW" -v hz="$ticks_per_second" -v s=$((s1 - s0)) -v c=$((c1 - c0)) 'BEGIN {
        beats = n * w / h
        printf "RESULT bench=idle-ticks conns=%d heartbeat_s=%g tick_s=%g window_s=%d heartbeats=%d server_cpu_us_per_hb=%.1f client_cpu_us_per_hb=%.1f\n",
            n, h, tick, w, beats, s / hz * 1e6 / beats, c / hz * 1e6 / beats }'
done
