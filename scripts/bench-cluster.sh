#!/usr/bin/env bash
# bench-cluster.sh — the chat as a cluster on NATS (issue 14 §3; docs/BENCHMARKS.md "Issue 14"). Builds
# release, starts nats-server -js and NODES im-server nodes on it (free loopback ports, --cluster), then
# WORKERS `socket-bench client chat` processes at once, each logging in USERS/WORKERS users (user i of a
# worker on node i mod NODES, source addresses spread over 127.0.0.2-250) with a heartbeat every
# HEARTBEAT seconds, and sending direct messages from random users to random users (on any node) at
# RATE_PER_MINUTE of the users a minute for DURATION seconds: every delivery checked off exactly once.
# The logins are paced at LOGIN_RATE a second in all: a new user costs its node about six JetStream
# round trips on the routing queue, so 100,000 at once would outlast the nodes' login timeout. The
# nodes announce presence every PRESENCE_INTERVAL seconds: each announcement costs one frame per online
# user, so at the default 0.2 s a crowd of 100,000 costs 500,000 frames a second (the first run of this
# script: 23,350 logins, then the login queues fell behind and the rest timed out; see BENCHMARKS.md).
# KILL_AFTER=S kills node KILL_NODE with kill -9 S seconds after every worker's messages have started
# (issue 14 §3 "kill one node mid-run"). Sessions are then stored (passwords; the nodes hash them with
# --password-cost minimum, so 100,000 first logins do not take hours of Argon2) and the workers run
# with --failover: the dead node's users log in again on the next node and resend what was not stored;
# every delivery is still checked off exactly once (STORED=1 alone gives stored sessions, no kill).
# Capacity: a process holds at most 20,000 connections here, so after a kill the survivors must hold
# every user: 100,000 users need NODES=7 (6 survivors × 20,000), not 6 (5 × 20,000 less NATS's and
# the listener's descriptors is under 100,000: 3,398 users found no room).
# Prints each worker's RESULT line (socket-bench client chat --help: the fields), each node's RSS and a
# TOTAL line: every worker summed; the nodes' RSS growth per logged-in user (before the logins → after
# them) and their CPU per delivery over the messages, both as the first worker saw them (every worker
# reads every node; their login and message phases coincide). Logs stay in $WORKDIR.
#
#   scripts/bench-cluster.sh                                  # 100,000 users, 6 nodes, 6 workers, 5 min
#   USERS=12000 NODES=3 WORKERS=2 DURATION=30 scripts/bench-cluster.sh
#
# USERS (100000), NODES (6), WORKERS (6; one process holds at most about 19,000 connections here),
# HEARTBEAT (30), RATE_PER_MINUTE (0.01: 1 % of the users a minute), DURATION (300), LOGIN_RATE (200),
# PRESENCE_INTERVAL (10), STORED (0), KILL_AFTER (none), KILL_NODE (1), DRAIN (10; 180 with KILL_AFTER),
# WORKDIR (a new temporary directory), SERVER and BENCH (the im-server and socket-bench binaries to run;
# default: this checkout's, built release). Loopback only.
set -euo pipefail
cd "$(dirname "$0")/.."
USERS=${USERS:-100000} NODES=${NODES:-6} WORKERS=${WORKERS:-6} HEARTBEAT=${HEARTBEAT:-30}
RATE_PER_MINUTE=${RATE_PER_MINUTE:-0.01} DURATION=${DURATION:-300} LOGIN_RATE=${LOGIN_RATE:-200}
PRESENCE_INTERVAL=${PRESENCE_INTERVAL:-10}
KILL_AFTER=${KILL_AFTER:-} KILL_NODE=${KILL_NODE:-1} STORED=${STORED:-0}
if [[ -n $KILL_AFTER ]]; then STORED=1; fi
DRAIN=${DRAIN:-$([[ -n $KILL_AFTER ]] && echo 180 || echo 10)}
session_flags=() node_flags=()
if [[ $STORED == 1 ]]; then
    session_flags=(--stored)
    node_flags=(--password-cost minimum)
    if [[ -n $KILL_AFTER ]]; then session_flags+=(--failover); fi
fi
WORKDIR=${WORKDIR:-$(mktemp -d "${TMPDIR:-/tmp}/bench-cluster.XXXXXX")}
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

pids=()
# The nodes first (newest first), NATS last: a node shutting down removes its users from presence.
cleanup() { for ((i = ${#pids[@]} - 1; i >= 0; i--)); do kill "${pids[$i]}" 2>/dev/null || true; done; }
trap cleanup EXIT

free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
# Waits (at most 30 s) until file $1 has a line matching $2; prints it.
wait_for() {
    for _ in $(seq 300); do
        if line=$(grep -m1 -E -- "$2" "$1" 2>/dev/null); then echo "$line"; return 0; fi
        sleep 0.1
    done
    echo "no line matching $2 in $1:" >&2
    cat "$1" >&2
    return 1
}

nats_port=$(free_port)
nats-server -js -a 127.0.0.1 -p "$nats_port" -sd "$WORKDIR/nats" >"$WORKDIR/nats.log" 2>&1 &
pids+=($!)
wait_for "$WORKDIR/nats.log" "Server is ready" >/dev/null

servers=() node_pids=()
for node in $(seq "$NODES"); do
    log="$WORKDIR/node-$node.log"
    # The load is what is measured, not the rate limit; presence changes are batched for every user.
    "$SERVER" --port 0 --no-discovery --log-level warning --rate 1000000 --burst 1000000 \
        --max-connections 20000 --login-timeout 120 --presence-interval "$PRESENCE_INTERVAL" ${node_flags[@]+"${node_flags[@]}"} --cluster "nats://127.0.0.1:$nats_port" --node-id "n$node" >"$log" 2>&1 &
    node_pids+=($!)
    pids+=($!)
    port=$(wait_for "$log" "listening on 127\.0\.0\.1:[0-9]+ " | sed -E 's/.*127\.0\.0\.1:([0-9]+) .*/\1/')
    servers+=(--server "127.0.0.1:$port")
done
server_pids=()
for pid in "${node_pids[@]}"; do server_pids+=(--server-pid "$pid"); done

per_worker=$((USERS / WORKERS))
direct_rate=$(awk -v u="$per_worker" -v r="$RATE_PER_MINUTE" 'BEGIN { printf "%.3f", u * r / 60 }')
login_rate=$(awk -v w="$WORKERS" -v r="$LOGIN_RATE" 'BEGIN { printf "%.3f", r / w }')
echo "== $NODES nodes on nats-server :$nats_port; $WORKERS workers x $per_worker users at $login_rate logins/s each, heartbeat $HEARTBEAT s, $direct_rate direct messages/s each, $DURATION s"
workers=()
for worker in $(seq "$WORKERS"); do
    "$BENCH" client chat "${servers[@]}" --users "$per_worker" --heartbeat "$HEARTBEAT" \
        --direct-rate "$direct_rate" --duration "$DURATION" --login-rate "$login_rate" --login-timeout 900 --sources on \
        --drain "$DRAIN" ${session_flags[@]+"${session_flags[@]}"} \
        "${server_pids[@]}" --label "worker$worker" \
        >"$WORKDIR/worker-$worker.out" 2>"$WORKDIR/worker-$worker.log" &
    workers+=($!)
done
if [[ -n $KILL_AFTER ]]; then
    # Every worker's messages have started (at most the login timeout), then KILL_AFTER seconds.
    for worker in $(seq "$WORKERS"); do
        for _ in $(seq 9000); do grep -q "messages start" "$WORKDIR/worker-$worker.log" 2>/dev/null && break; sleep 0.1; done
    done
    sleep "$KILL_AFTER"
    victim=${node_pids[$((KILL_NODE - 1))]}
    echo "== kill -9 node n$KILL_NODE (pid $victim) at $(date -u +%H:%M:%S)"
    kill -9 "$victim"
fi
status=0
for pid in "${workers[@]}"; do wait "$pid" || status=1; done
cat "$WORKDIR"/worker-*.out
for node in $(seq "$NODES"); do
    echo "node n$node: $(grep VmRSS "/proc/${node_pids[$((node - 1))]}/status" 2>/dev/null || echo gone)"
done
# Totals over the workers' RESULT lines; the nodes' figures from the first worker's.
total() { sed -n "s/.* $1=\([0-9.]*\) .*/\1/p" "$WORKDIR"/worker-*.out | awk '{ t += $1 } END { print t + 0 }'; }
first() { sed -n "s/.* $1=\([0-9.]*\) .*/\1/p" "$WORKDIR/worker-1.out"; }
delivered=$(total delivered) logged_in=$(total logged_in)
rss_before=$(first server_rss_before_kib) rss_after=$(first server_rss_after_logins_kib) cpu=$(first server_cpu_s)
echo "TOTAL users=$USERS logged_in=$logged_in expected=$(total expected) delivered=$delivered missing=$(total missing)" \
    "duplicates=$(total duplicates) out_of_order=$(total out_of_order) heartbeats_missed=$(total heartbeats_missed)" \
    "connection_failures=$(total connection_failures) nodes_rss_kib=$rss_before..$rss_after" \
    "rss_per_user_bytes=$(awk -v a="$rss_before" -v b="$rss_after" -v u="$logged_in" 'BEGIN { if (u > 0) printf "%.0f", (b - a) * 1024 / u; else print "-" }')" \
    "drops=$(total drops) users_away=$(total users_away) messages_resent=$(total messages_resent) resent_deliveries=$(total resent)" \
    "nodes_cpu_s=$cpu cpu_us_per_delivery=$(awk -v c="$cpu" -v d="$delivered" 'BEGIN { if (d > 0) printf "%.1f", c * 1e6 / d; else print "-" }')"
echo "logs: $WORKDIR"
exit $status
