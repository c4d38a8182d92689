#!/usr/bin/env bash
# bench-crowd.sh — the chat server under a crowd (issue 12 §3; docs/BENCHMARKS.md "Issue 12"). Builds
# release, then runs each scenario against a fresh `im-server` (memory store, default limits but the
# per-connection rate moved out of the way of the load) on a free loopback port:
#   crowd    2,000 users logging in at once while two users exchange 20 direct messages a second
#   fanout   10,000 logged-in users, 10 broadcasts a second for 10 s (each to 9,999 users)
#   direct   10,000 logged-in users, 2,000 direct messages a second for 20 s
# Prints each run's RESULT line (socket-bench client chat --help: the fields); logs stay in $WORKDIR.
#
#   scripts/bench-crowd.sh
#   SCENARIOS="crowd" scripts/bench-crowd.sh
#
# SCENARIOS ("crowd fanout direct"), USERS (10000, for fanout and direct), WORKDIR (a new temporary directory),
# PIN (1: the server on core 0 and the load generator on core 1 with taskset, as in the other benchmarks;
# 0: not pinned).
set -euo pipefail
cd "$(dirname "$0")/.."
SCENARIOS=${SCENARIOS:-crowd fanout direct}
USERS=${USERS:-10000}
PIN=${PIN:-1}
server_cpu=() bench_cpu=()
if [[ $PIN == 1 ]]; then server_cpu=(taskset -c 0) bench_cpu=(taskset -c 1); fi
WORKDIR=${WORKDIR:-$(mktemp -d "${TMPDIR:-/tmp}/bench-crowd.XXXXXX")}
mkdir -p "$WORKDIR"
# 10,000 users need 10,000 descriptors in the server and in the load generator.
ulimit -n "$(ulimit -Hn)"

swift build -c release --product im-server >&2
swift build -c release --product socket-bench >&2
SERVER="$(pwd)/.build/release/im-server"
BENCH="$(pwd)/.build/release/socket-bench"

server_pid=""
cleanup() { if [[ -n $server_pid ]]; then kill "$server_pid" 2>/dev/null || true; fi; }
trap cleanup EXIT

for scenario in $SCENARIOS; do
    log="$WORKDIR/$scenario-server.log"
    # One user sends at most a few messages a second here; the default 20/s would not be reached, but a
    # burst of probes or a slow start could: the rate limit is not what is measured.
    "${server_cpu[@]}" "$SERVER" --host 127.0.0.1 --port 0 --no-discovery --store :memory: --log-level warning \
        --rate 1000000 --burst 1000000 >"$log" 2>&1 &
    server_pid=$!
    port=""
    for _ in $(seq 100); do
        port=$(sed -n 's/^.* im-server listening on 127\.0\.0\.1:\([0-9]*\) .*/\1/p' "$log")
        [[ -n $port ]] && break
        sleep 0.1
    done
    [[ -n $port ]] || { echo "im-server did not start:" >&2; cat "$log" >&2; exit 1; }
    common=(client chat --server "127.0.0.1:$port" --server-pid "$server_pid")
    case $scenario in
        crowd) args=(--mode crowd --users 2000) ;;
        fanout) args=(--users "$USERS" --direct-rate 0 --broadcast-rate 10 --duration 10) ;;
        direct) args=(--users "$USERS" --direct-rate 2000 --duration 20) ;;
        *) echo "unknown scenario $scenario" >&2; exit 64 ;;
    esac
    echo "== $scenario: socket-bench ${common[*]} ${args[*]}"
    "${bench_cpu[@]}" "$BENCH" "${common[@]}" "${args[@]}" 2>&1 | tee "$WORKDIR/$scenario.txt" | grep -E '^RESULT|^  ' || true
    kill "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
    server_pid=""
done
echo "logs: $WORKDIR"
