#!/usr/bin/env bash
# count-client-instructions.sh — instructions the load generator (`socket-bench client`) executes per
# echoed message, counted by valgrind's callgrind: is the client, on its one core, cheaper per message
# than the server it measures?
#
# Starts the server natively (so it is never the bound) and runs the client under callgrind twice, for
# T1 then T2 seconds with no warm-up, against a fresh server each time; the difference in instructions
# divided by the difference in messages (its RESULT line's msgs) leaves out start-up and connecting.
#
# Usage: scripts/count-client-instructions.sh [websocket|lp4 ...]   (default: websocket lp4)
#   env: C=100 D=16 S=64 T1=4 T2=12, BIN (default .build/release/socket-bench), WORKDIR, PORT.
# Needs valgrind; the client runs from a copy of the binary without debug info (valgrind 3.19 cannot
# read Swift's DWARF 5).
set -euo pipefail
cd "$(dirname "$0")/.."
PROTOS=${*:-"websocket lp4"}
C=${C:-100} D=${D:-16} S=${S:-64} T1=${T1:-4} T2=${T2:-12}
WORKDIR=${WORKDIR:-${TMPDIR:-/tmp}/socket-bench-client-instructions}
PORT=${PORT:-9392}
BIN=${BIN:-.build/release/socket-bench}
mkdir -p "$WORKDIR"
[ -x "$BIN" ] || swift build -c release --product socket-bench >&2
cp "$BIN" "$WORKDIR/socket-bench" && strip -g "$WORKDIR/socket-bench"

run() { # proto seconds -> "instructions messages"
    local proto=$1 seconds=$2 server=lp4 client=pipeline
    [ "$proto" = websocket ] && server=websocket client=websocket
    "$BIN" server "$server" --port "$PORT" >/dev/null 2>&1 &
    local sp=$!
    for _ in $(seq 100); do ss -Hltn "sport = :$PORT" | grep -q LISTEN && break; sleep 0.1; done
    valgrind --tool=callgrind --callgrind-out-file=/dev/null "$WORKDIR/socket-bench" client $client -c "$C" -D "$D" -s "$S" \
        -d "$seconds" -w 0 --port "$PORT" >"$WORKDIR/client.$proto.$seconds.out" 2>"$WORKDIR/client.$proto.$seconds.log" || true
    kill "$sp"
    wait "$sp" 2>/dev/null || true
    local ir messages
    ir=$(sed -n 's/.*Collected : \([0-9]*\).*/\1/p' "$WORKDIR/client.$proto.$seconds.log")
    messages=$(sed -n 's/.* msgs=\([0-9]*\) .*/\1/p' "$WORKDIR/client.$proto.$seconds.out")
    echo "$ir $messages"
}
for proto in $PROTOS; do
    read -r i1 m1 < <(run "$proto" "$T1")
    read -r i2 m2 < <(run "$proto" "$T2")
    echo "client=$proto C=$C D=$D S=$S short: $i1 instructions $m1 messages; long: $i2 instructions $m2 messages"
    python3 -c "print(f'client $proto: instructions per echoed message: {($i2 - $i1) / ($m2 - $m1):.0f}')"
done
