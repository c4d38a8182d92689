#!/usr/bin/env bash
# count-allocs.sh — heap allocations per echoed frame of a socket-bench server mode, counted by valgrind.
#
# Runs the server under valgrind's memcheck twice, with the same loadgen pipeline load for a short and
# a long time, and divides the difference in allocations (valgrind's "total heap usage") by the
# difference in frames echoed: what start-up, accepting and warm-up cost cancels out, leaving the
# steady-state allocations per frame.
#
# Usage: scripts/count-allocs.sh [MODE] [loadgen options]     (default: lp4 -c 100 -D 16 -s 64)
# Needs valgrind (apt-get install valgrind) and shared/bench/loadgen.c (built into $WORKDIR).
# valgrind 3.19 cannot read the DWARF 5 that Swift emits, so it runs a copy of the binary without debug info.
set -euo pipefail
cd "$(dirname "$0")/.."
MODE=${1:-lp4}
shift || true
LOAD=${*:-"-c 100 -D 16 -s 64"}
WORKDIR=${WORKDIR:-${TMPDIR:-/tmp}/socket-bench-allocs}
PORT=${PORT:-9390}
mkdir -p "$WORKDIR"
swift build -c release --product socket-bench >&2
cp .build/release/socket-bench "$WORKDIR/socket-bench" && strip -g "$WORKDIR/socket-bench"
cc -O2 -pthread -o "$WORKDIR/loadgen" ../shared/bench/loadgen.c 2>/dev/null \
    || cc -O2 -pthread -o "$WORKDIR/loadgen" "${BENCH:-/work/shared/bench}/loadgen.c"

run() { # seconds -> "allocs frames"
    valgrind --tool=memcheck --leak-check=no "$WORKDIR/socket-bench" server "$MODE" --port "$PORT" >"$WORKDIR/valgrind.$1.log" 2>&1 &
    local vg=$!
    for _ in $(seq 100); do ss -Hltn "sport = :$PORT" | grep -q LISTEN && break; sleep 0.1; done
    # shellcheck disable=SC2086
    local frames
    frames=$("$WORKDIR/loadgen" -m pipeline $LOAD -d "$1" -w 1 -p "$PORT" 2>/dev/null | sed -n 's/.* msgs=\([0-9]*\).*/\1/p')
    kill -TERM "$vg"
    wait "$vg" 2>/dev/null || true
    local allocs
    allocs=$(sed -n 's/.*total heap usage: \([0-9,]*\) allocs.*/\1/p' "$WORKDIR/valgrind.$1.log" | tr -d ,)
    echo "$allocs $frames"
}
read -r a1 f1 < <(run 3)
read -r a2 f2 < <(run 9)
echo "mode=$MODE load=\"$LOAD\" short: $a1 allocs $f1 frames; long: $a2 allocs $f2 frames"
python3 -c "print(f'allocations per echoed frame: {($a2 - $a1) / ($f2 - $f1):.3f}')"
