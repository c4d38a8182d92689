#!/usr/bin/env bash
# bench-chat-memory.sh — server RSS per logged-in idle chat user (issue 35 §2; docs/BENCHMARKS.md
# "Issue 35 §2: memory per chat user"). Builds release, then, REPEAT times, starts a fresh `im-server`
# (memory store, limits out of the way, presence announced every PRESENCE_INTERVAL s) on a free loopback
# port and logs USERS idle users in with `socket-bench client chat --server-pid` (live version 2
# sessions by default, as im-client without a password; STORED=1: with passwords, stored sessions),
# which reads the server's RSS before and after the logins, and at the end (5 s later). Prints each
# run's RESULT line and an END line (the RSS per user at the end); the logs stay in $WORKDIR.
#
#   scripts/bench-chat-memory.sh                       # 19,000 users (one process holds at most 20,000
#                                                      # descriptors here), 3 runs
#   USERS=10000 STORED=1 scripts/bench-chat-memory.sh
#
# USERS (19000), REPEAT (3), LOGIN_RATE (1000 per second), PRESENCE_INTERVAL (10), STORED (0),
# WEBSOCKET (0: TCP; 1: every user over the web port), WARM (0; 1: two probe users logged in before the
# RSS before the logins is read, so what a first login touches once is not counted per user), STORE
# (memory: `--store :memory:`; sqlite: a new SQLite file in WORKDIR per run, as im-server keeps by
# default), WORKDIR (a new temporary directory), SERVER and BENCH (the im-server and socket-bench
# binaries to run; default: this checkout's, built release).
set -euo pipefail
cd "$(dirname "$0")/.."
USERS=${USERS:-19000}
REPEAT=${REPEAT:-3}
LOGIN_RATE=${LOGIN_RATE:-1000}
PRESENCE_INTERVAL=${PRESENCE_INTERVAL:-10}
STORED=${STORED:-0}
WEBSOCKET=${WEBSOCKET:-0}
WARM=${WARM:-0}
STORE=${STORE:-memory}
WORKDIR=${WORKDIR:-$(mktemp -d "${TMPDIR:-/tmp}/bench-chat-memory.XXXXXX")}
mkdir -p "$WORKDIR"
ulimit -n "$(ulimit -Hn)"

if [[ -z ${SERVER:-} ]]; then
    swift build -c release --product im-server >&2
    SERVER="$(pwd)/.build/release/im-server"
fi
if [[ -z ${BENCH:-} ]]; then
    swift build -c release --product socket-bench >&2
    BENCH="$(pwd)/.build/release/socket-bench"
fi

server_pid=""
cleanup() { if [[ -n $server_pid ]]; then kill "$server_pid" 2>/dev/null || true; fi; }
trap cleanup EXIT

extra=()
[[ $STORED == 1 ]] && extra+=(--stored)
[[ $WEBSOCKET == 1 ]] && extra+=(--websocket)
# Two probe users log in before the RSS before the logins is read (and exchange a message a second):
# what any first login touches once (library code and data pages, caches made on first use) is then in
# the "before" figure, not divided among the users.
[[ $WARM == 1 ]] && extra+=(--probe-rate 1)
for run in $(seq "$REPEAT"); do
    log="$WORKDIR/server-$run.log"
    web_args=()
    [[ $WEBSOCKET == 1 ]] && web_args=(--web-port 0)
    store=:memory:
    if [[ $STORE == sqlite ]]; then
        store="$WORKDIR/chat-$run.sqlite"
        rm -f "$store" "$store-wal" "$store-shm"
    fi
    "$SERVER" --host 127.0.0.1 --port 0 "${web_args[@]}" --no-discovery --store "$store" --log-level warning \
        --rate 1000000 --burst 1000000 --max-connections 20000 --login-timeout 120 \
        --presence-interval "$PRESENCE_INTERVAL" --password-cost minimum >"$log" 2>&1 &
    server_pid=$!
    port="" web=""
    for _ in $(seq 100); do
        port=$(sed -n 's/^.* im-server listening on 127\.0\.0\.1:\([0-9]*\) .*/\1/p' "$log")
        web=$(sed -n 's/^.* im-server web port on http:\/\/127\.0\.0\.1:\([0-9]*\)\/.*/\1/p' "$log")
        [[ -n $port && ( $WEBSOCKET == 0 || -n $web ) ]] && break
        sleep 0.1
    done
    [[ -n $port ]] || { echo "im-server did not start:" >&2; cat "$log" >&2; exit 1; }
    target=$port
    [[ $WEBSOCKET == 1 ]] && target=$web
    args=(client chat --server "127.0.0.1:$target" --server-pid "$server_pid" --users "$USERS"
        --login-rate "$LOGIN_RATE" --login-timeout 300 --direct-rate 0 --duration 5 --sources on "${extra[@]}")
    echo "== run $run: socket-bench ${args[*]}"
    nice -n 5 "$BENCH" "${args[@]}" >"$WORKDIR/run-$run.txt" 2>&1 || echo "(run $run not clean: $WORKDIR/run-$run.txt)"
    grep -E '^RESULT' "$WORKDIR/run-$run.txt" || tail -5 "$WORKDIR/run-$run.txt"
    # The RSS at the end (the idle users still logged in, DURATION 5 s after the last login: im-server
    # has trimmed its heap after the burst by then, 2 s after it) per user, as the RESULT's after-logins figure.
    sed -n 's/^RESULT .* logged_in=\([0-9]*\) .* server_rss_before_kib=\([0-9]*\) .* server_rss_end_kib=\([0-9]*\) .*/\1 \2 \3/p' \
        "$WORKDIR/run-$run.txt" | awk '$1 > 0 { printf "END run=%d rss_end_per_user_bytes=%d\n", '"$run"', ($3 - $2) * 1024 / $1 }'
    kill "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
    server_pid=""
done
