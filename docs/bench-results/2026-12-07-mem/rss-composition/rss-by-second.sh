#!/usr/bin/env bash
# RSS each second after the logins, trim binary; the server's debug log for the trim's duration
set -uo pipefail
cd "$(dirname "$0")/../../../.."
USERS=${USERS:-19000}
SERVER=${SERVER:-/path/to/im-server}
BENCH=${BENCH:-$(pwd)/.build/release/socket-bench}
W=${TMPDIR:-/tmp}/rss-by-second-$$; mkdir -p $W
ulimit -n "$(ulimit -Hn)"
"$SERVER" --host 127.0.0.1 --port 0 --no-discovery --store :memory: --log-level ${LEVEL:-debug} \
    --rate 1000000 --burst 1000000 --max-connections 20000 --login-timeout 120 \
    --presence-interval 10 --password-cost minimum >"$W/server.log" 2>&1 &
SPID=$!
for _ in $(seq 100); do port=$(sed -n 's/^.* im-server listening on 127\.0\.0\.1:\([0-9]*\) .*/\1/p' "$W/server.log"); [[ -n $port ]] && break; sleep 0.1; done
rss() { awk '/VmRSS/{print $2}' /proc/$SPID/status; }
cp /proc/$SPID/smaps $W/smaps-before; grep Threads /proc/$SPID/status; nice -n 5 "$BENCH" client chat --server "127.0.0.1:$port" --server-pid $SPID --users "$USERS" --login-rate 1000 --login-timeout 300 --direct-rate 0 --duration $(( ${DUR:-25} + 15 )) --sources on > "$W/client.txt" 2>&1 &
CPID=$!
for _ in $(seq 600); do grep -q "messages start" "$W/client.txt" && break; sleep 0.5; done
line=""
for s in $(seq 0 ${DUR:-25}); do line="$line $s:$(rss)"; sleep 1; done
cp /proc/$SPID/smaps $W/smaps-after; grep Threads /proc/$SPID/status; echo "rss KiB by second after the logins:$line"; gdb -p $SPID -batch -ex "call (void)malloc_stats()" >/dev/null 2>&1; sleep 0.5
wait $CPID
grep -E "server RSS|heartbeats" "$W/client.txt"
grep -i "heap trim" "$W/server.log"; grep -A12 "^Arena 0" "$W/server.log"
kill $SPID; wait $SPID
echo "workdir $W"
