#!/usr/bin/env bash
# bench-websocket.sh — WebSocket echo servers side by side (issue 33 §5), in one run: ours
# (`socket-bench server websocket`), SwiftNIO's NIOWebSocket (scripts/ws-peers/swift-nio-websocket),
# Python `websockets` (scripts/ws-peers/py-websockets-echo.py, Debian python3-websockets), libwebsockets
# (scripts/ws-peers/lws-echo.c, when Debian's libwebsockets-dev is installed) and, as the TCP reference,
# our LP4 echo (`socket-bench server lp4`). Each run gets a fresh server pinned to core 0 (`taskset`) and
# the load (`socket-bench client websocket …`, or `socket-bench client pipeline|bulk|idle` for LP4) pinned
# to core 1, as shared/bench/run-peers.sh does. Servers are stopped by PID; every client run is bounded
# by `timeout`, so the script ends by itself. Prints one Markdown table per scenario.
#
#   scripts/bench-websocket.sh                          # everything, REPEAT=1
#   SCENARIOS="echo64 bulk" REPEAT=3 scripts/bench-websocket.sh
#
# Scenarios:
#   echo64    100 connections x 16 in flight, 64-byte binary messages; msgs/s, p50/p99 (LP4: 64-byte frames)
#   bulk      1 connection x 4 in flight of 1 MiB messages; MB/s (LP4: 1 MiB frames, same depth; row lp4-64k:
#             LP4's own bulk, 64 KiB frames x 32 in flight, as docs/BENCHMARKS.md's TCP bulk)
#   deflate   permessage-deflate throughput on a JSON chat corpus (`--corpus chat`: 256 messages of 115-171
#             bytes, 100 connections x 16 in flight), with the payload bytes per message byte each way:
#             ours and Python with deflate offered (rows "+deflate"; "deflate accepted" says whether the
#             server took it), and ours without (row "ours")
#   idle      IDLE_N (10,000) connections, a 16-byte Ping (LP4: frame) every 5 s for DUR_IDLE s; the server's
#             RSS per connection (end minus before the first connect); with and without permessage-deflate
#             offered (rows "+deflate": ours --deflate, Python compression="deflate")
#
# Environment: DUR=10 WARM=2 DUR_IDLE=10 IDLE_N=10000 REPEAT=1 SERVER_CPU=0 CLIENT_CPU=1
#   PEERS="ours nio py lws lp4"   (those not available are skipped with a note)
#   NIO_WS_BIN   the NIOWebSocketEcho binary (default: built into $WORKDIR/nio-ws by its README's recipe,
#                when $WORKDIR/nio-ws/.build/release/NIOWebSocketEcho exists)
#   WORKDIR      results and logs (default ${TMPDIR:-/tmp}/ws-bench)
set -uo pipefail
cd "$(dirname "$0")/.."
REPO=$(pwd)
export PATH=/opt/swift/usr/bin:$PATH
DUR=${DUR:-10}
WARM=${WARM:-2}
DUR_IDLE=${DUR_IDLE:-10}
IDLE_N=${IDLE_N:-10000}
REPEAT=${REPEAT:-1}
SERVER_CPU=${SERVER_CPU:-0}
CLIENT_CPU=${CLIENT_CPU:-1}
SCENARIOS=${SCENARIOS:-"echo64 bulk deflate idle"}
PEERS=${PEERS:-"ours nio py lws lp4"}
WORKDIR=${WORKDIR:-${TMPDIR:-/tmp}/ws-bench}
OUT="$WORKDIR/results/$(date +%Y%m%d-%H%M%S)"
mkdir -p "$OUT"
RES="$OUT/results.txt"
: >"$RES"
log() { echo "[bench-websocket] $*" >&2; }

swift build -c release --product socket-bench >&2 || { log "cannot build socket-bench"; exit 1; }
SB="$REPO/.build/release/socket-bench"
NIO_WS_BIN=${NIO_WS_BIN:-$WORKDIR/nio-ws/.build/release/NIOWebSocketEcho}
LWS_BIN="$WORKDIR/lws-echo"
if pkg-config --exists libwebsockets 2>/dev/null; then
    cc -O2 -Wall -o "$LWS_BIN" scripts/ws-peers/lws-echo.c $(pkg-config --cflags --libs libwebsockets) || rm -f "$LWS_BIN"
fi

# Descriptors: one per connection in the server and in the client (20,000 per process here).
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
NOFILE=$(ulimit -n)
if ((IDLE_N + 200 > NOFILE)); then
    log "IDLE_N=$IDLE_N does not fit RLIMIT_NOFILE=$NOFILE: clamped to $((NOFILE - 1000))"
    IDLE_N=$((NOFILE - 1000))
fi
{
    echo "# $(date -u +%FT%TZ) $(uname -srm), $(nproc) cores, swift $(swift --version 2>/dev/null | head -1)"
    echo "# load before: $(uptime)"
    echo "# server cpu $SERVER_CPU, client cpu $CLIENT_CPU, dur $DUR warm $WARM, idle $IDLE_N conns for $DUR_IDLE s, nofile $NOFILE"
} | tee -a "$RES" >&2

# peer -> server command ({port} replaced); the deflate variants for the idle scenario
declare -A CMD
CMD[ours]="$SB server websocket --port {port}"
CMD[ours+deflate]="$SB server websocket --port {port} --deflate"
[[ -x $NIO_WS_BIN ]] && CMD[nio]="$NIO_WS_BIN -p {port}"
/usr/bin/python3 -c 'import websockets' 2>/dev/null && {
    CMD[py]="/usr/bin/python3 $REPO/scripts/ws-peers/py-websockets-echo.py --port {port}"
    CMD[py+deflate]="/usr/bin/python3 $REPO/scripts/ws-peers/py-websockets-echo.py --port {port} --deflate"
}
[[ -x $LWS_BIN ]] && CMD[lws]="$LWS_BIN -p {port}"
CMD[lp4]="$SB server lp4 --port {port}"
CMD[lp4-64k]="$SB server lp4 --port {port}"
for p in $PEERS; do [[ -n ${CMD[$p]:-} ]] || log "peer $p not available, skipped"; done

SRV_PID=""
cleanup() {
    if [[ -n $SRV_PID ]]; then
        kill "$SRV_PID" 2>/dev/null
        for _ in $(seq 50); do kill -0 "$SRV_PID" 2>/dev/null || break; sleep 0.1; done
        kill -0 "$SRV_PID" 2>/dev/null && kill -KILL "$SRV_PID" 2>/dev/null
        wait "$SRV_PID" 2>/dev/null
        SRV_PID=""
    fi
}
trap 'cleanup; exit 130' INT TERM
trap cleanup EXIT

PORT=9211
run_one() { # peer scenario rep
    local peer=$1 sc=$2 rep=$3
    [[ -n ${CMD[$peer]:-} ]] || return 0
    PORT=$((PORT + 1))
    local cmd=${CMD[$peer]//\{port\}/$PORT} tag="$peer.$sc.$rep"
    # shellcheck disable=SC2086
    taskset -c "$SERVER_CPU" $cmd >"$OUT/$tag.server.log" 2>&1 &
    SRV_PID=$!
    local up=""
    for _ in $(seq 100); do
        ss -Hltn "sport = :$PORT" 2>/dev/null | grep -q LISTEN && { up=1; break; }
        sleep 0.1
    done
    if [[ -z $up ]]; then
        log "$peer did not listen on $PORT"
        echo "RESULT label=$peer/$sc/$rep error=server_did_not_start" >>"$RES"
        cleanup
        return
    fi
    sleep 0.3
    local args
    case $peer/$sc in
    lp4/echo64) args="pipeline -c 100 -D 16 -s 64 -d $DUR -w $WARM" ;;
    lp4/bulk) args="bulk -c 1 -D 4 -s 1048576 -d $DUR -w $WARM" ;;
    lp4-64k/bulk) args="bulk -c 1 -D 32 -s 65536 -d $DUR -w $WARM" ;;
    lp4/idle) args="idle -c $IDLE_N -s 16 -H 5 -d $DUR_IDLE" ;;
    */echo64) args="websocket echo -c 100 -D 16 -s 64 -d $DUR -w $WARM" ;;
    */bulk) args="websocket bulk -c 1 -D 4 -s 1048576 -d $DUR -w $WARM" ;;
    *+deflate/idle) args="websocket idle --deflate -c $IDLE_N -s 16 -H 5 -d $DUR_IDLE" ;;
    *+deflate/deflate) args="websocket echo --corpus chat --deflate -c 100 -D 16 -d $DUR -w $WARM" ;;
    */deflate) args="websocket echo --corpus chat -c 100 -D 16 -d $DUR -w $WARM" ;;
    */idle) args="websocket idle -c $IDLE_N -s 16 -H 5 -d $DUR_IDLE" ;;
    esac
    log "$tag: socket-bench client $args"
    # shellcheck disable=SC2086
    timeout -k 5 $((DUR + WARM + DUR_IDLE + 120)) taskset -c "$CLIENT_CPU" "$SB" client $args --port "$PORT" \
        --server-pid "$SRV_PID" --label "$peer/$sc/$rep" 2>"$OUT/$tag.client.log" | tee -a "$RES" | sed 's/^/    /' >&2
    grep -E "msgs/s|per connection|per message|deflate accepted|connected" "$OUT/$tag.client.log" | sed 's/^/    /' >&2
    kill -0 "$SRV_PID" 2>/dev/null || {
        log "$peer died during $sc"
        echo "RESULT label=$peer/$sc/$rep error=server_died" >>"$RES"
    }
    cleanup
    sleep 1
}

for rep in $(seq "$REPEAT"); do
    for sc in $SCENARIOS; do
        case $sc in
        deflate)
            for peer in ours ours+deflate py+deflate; do run_one "$peer" "$sc" "$rep"; done
            continue
            ;;
        idle) ((rep > 1)) && continue ;;
        esac
        for peer in $PEERS; do
            run_one "$peer" "$sc" "$rep"
            [[ $sc == idle && ($peer == ours || $peer == py) ]] && run_one "$peer+deflate" "$sc" "$rep"
            [[ $sc == bulk && $peer == lp4 ]] && run_one lp4-64k "$sc" "$rep"
        done
    done
done
echo "# load after: $(uptime)" | tee -a "$RES" >&2

/usr/bin/python3 - "$RES" <<'PY' | tee "$OUT/table.md"
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    if not line.startswith("RESULT "):
        continue
    kv = dict(f.split("=", 1) for f in line.split()[1:] if "=" in f)
    peer, sc, rep = kv["label"].split("/")
    rows.setdefault(sc, {}).setdefault(peer, []).append(kv)
def med(kvs, key):
    values = [float(kv[key]) for kv in kvs if key in kv]
    return statistics.median(values) if values else None
def fmt(value, digits=0):
    return "-" if value is None else f"{value:,.{digits}f}"
for sc, title, key in [("echo64", "64-byte binary echo, 100 connections x 16 in flight", "msgs_per_s"),
                       ("bulk", "bulk: 1 MiB messages, 1 connection x 4 in flight", "mb_per_s")]:
    if sc not in rows:
        continue
    peers = rows[sc]
    base = {ref: med(peers[ref], key) for ref in ("nio", "lp4") if ref in peers}
    print(f"\n### {title}\n")
    cpu = {ref: med(peers[ref], "server_cpu_us_per_msg") for ref in ("nio", "lp4") if ref in peers}
    print(f"| server | {'msgs/s' if key == 'msgs_per_s' else 'MB/s'} | p50 µs | p99 µs | x NIOWebSocket | x our lp4 "
          "| server CPU µs/msg | msgs per CPU-s x NIO | x lp4 | errors | runs |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for peer, kvs in peers.items():
        value = med(kvs, key)
        ratios = [f"{value / base[ref]:.2f}" if value and base.get(ref) else "-" for ref in ("nio", "lp4")]
        own = med(kvs, "server_cpu_us_per_msg")
        cpu_ratios = [f"{cpu[ref] / own:.2f}" if own and own > 0 and cpu.get(ref) and cpu[ref] > 0 else "-" for ref in ("nio", "lp4")]
        errors = sum(int(kv.get("errors", "1")) + int(kv.get("mismatches", "0")) for kv in kvs)
        print(f"| {peer} | {fmt(value, 0 if key == 'msgs_per_s' else 1)} | {fmt(med(kvs, 'p50_us'), 1)} | {fmt(med(kvs, 'p99_us'), 1)} "
              f"| {ratios[0]} | {ratios[1]} | {fmt(own, 3)} | {cpu_ratios[0]} | {cpu_ratios[1]} | {errors} | {len(kvs)} |")
if "deflate" in rows:
    print("\n### permessage-deflate: chat JSON corpus, 100 connections x 16 in flight\n")
    print("| server | msgs/s | p50 µs | p99 µs | server CPU µs/msg | deflate accepted | payload/message bytes sent | echoed | errors | runs |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for peer, kvs in rows["deflate"].items():
        errors = sum(int(kv.get("errors", "1")) + int(kv.get("mismatches", "0")) for kv in kvs)
        print(f"| {peer} | {fmt(med(kvs, 'msgs_per_s'))} | {fmt(med(kvs, 'p50_us'), 1)} | {fmt(med(kvs, 'p99_us'), 1)} "
              f"| {fmt(med(kvs, 'server_cpu_us_per_msg'), 3)} | {kvs[0].get('deflate_accepted', '-')} "
              f"| {fmt(med(kvs, 'sent_ratio'), 3)} | {fmt(med(kvs, 'echo_ratio'), 3)} | {errors} | {len(kvs)} |")
if "idle" in rows:
    print("\n### idle: server RSS per connection\n")
    print("| server | connections alive | server RSS at the end KiB | RSS per connection B | deflate accepted | errors |")
    print("|---|---:|---:|---:|---:|---:|")
    for peer, kvs in rows["idle"].items():
        kv = kvs[0]
        print(f"| {peer} | {kv.get('alive', '-')} | {kv.get('server_rss_kb', '-')} | {kv.get('server_rss_per_conn_b', '-')} | "
              f"{kv.get('deflate_accepted', '-')} | {kv.get('errors', kv.get('error', '-'))} |")
PY
log "raw results: $RES"
