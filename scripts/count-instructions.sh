#!/usr/bin/env bash
# count-instructions.sh — instructions a socket-bench server executes per echoed message, counted by
# valgrind's callgrind (instruction counts do not depend on the machine's load, unlike seconds).
#
# Runs the server under callgrind twice with an exact echo load (scripts/exact-echo-load.py: C
# connections x D in flight, N1 then N2 messages per connection, each echo checked) and divides the
# difference in instructions (callgrind's "Collected" Ir, every thread) by the difference in messages:
# start-up, accepting and closing cancel out, leaving the steady-state instructions per echoed message.
#
# Usage: scripts/count-instructions.sh [MODE ...]   (default: websocket lp4 lp4-per-frame)
#   env: C=100 D=16 S=64 N1=200 N2=1000, BIN (default .build/release/socket-bench, built if missing),
#        WORKDIR, PORT, KEEP=1 keeps the callgrind.out files (for callgrind_annotate).
# Needs valgrind. valgrind 3.19 cannot read the DWARF 5 that Swift emits, so it runs a copy of the
# binary without debug info (function names stay).
set -euo pipefail
cd "$(dirname "$0")/.."
MODES=${*:-"websocket lp4 lp4-per-frame"}
C=${C:-100} D=${D:-16} S=${S:-64} N1=${N1:-200} N2=${N2:-1000}
WORKDIR=${WORKDIR:-${TMPDIR:-/tmp}/socket-bench-instructions}
PORT=${PORT:-9391}
BIN=${BIN:-.build/release/socket-bench}
mkdir -p "$WORKDIR"
[ -x "$BIN" ] || swift build -c release --product socket-bench >&2
cp "$BIN" "$WORKDIR/socket-bench" && strip -g "$WORKDIR/socket-bench"

run() { # mode n -> "instructions messages"
    local mode=$1 n=$2 proto=lp4 out="$WORKDIR/callgrind.out.$1.$2"
    [ "$mode" = websocket ] && proto=ws
    valgrind --tool=callgrind --callgrind-out-file="$out" "$WORKDIR/socket-bench" server "$mode" --port "$PORT" \
        >"$WORKDIR/callgrind.$mode.$n.log" 2>&1 &
    local vg=$!
    for _ in $(seq 300); do ss -Hltn "sport = :$PORT" | grep -q LISTEN && break; sleep 0.1; done
    local messages
    messages=$(python3 scripts/exact-echo-load.py --proto "$proto" --port "$PORT" -c "$C" -D "$D" -s "$S" -n "$n" |
        sed -n 's/^messages=//p')
    sleep 1  # the server sees the connections close (their cost is in both runs alike)
    kill -TERM "$vg"
    wait "$vg" 2>/dev/null || true
    local ir
    ir=$(sed -n 's/.*Collected : \([0-9]*\).*/\1/p' "$WORKDIR/callgrind.$mode.$n.log")
    [ -n "$ir" ] || ir=$(sed -n 's/^summary: \([0-9]*\).*/\1/p' "$out")
    [ "${KEEP:-0}" = 1 ] || rm -f "$out"
    echo "$ir $messages"
}
for mode in $MODES; do
    read -r i1 m1 < <(run "$mode" "$N1")
    read -r i2 m2 < <(run "$mode" "$N2")
    echo "mode=$mode C=$C D=$D S=$S short: $i1 instructions $m1 messages; long: $i2 instructions $m2 messages"
    python3 -c "print(f'$mode: instructions per echoed message: {($i2 - $i1) / ($m2 - $m1):.0f}')"
done
