#!/usr/bin/env bash
# experiment: RSS after logins, then gdb malloc_trim(0), RSS again
set -uo pipefail
cd "$(dirname "$0")/../../../.."
USERS=${USERS:-19000}
SERVER=${SERVER:-$(pwd)/.build/release/im-server}
BENCH=${BENCH:-$(pwd)/.build/release/socket-bench}
W=${TMPDIR:-/tmp}/trim-experiment-$$
mkdir -p $W
ulimit -n "$(ulimit -Hn)"
"$SERVER" --host 127.0.0.1 --port 0 --no-discovery --store :memory: --log-level warning \
    --rate 1000000 --burst 1000000 --max-connections 20000 --login-timeout 120 \
    --presence-interval 10 --password-cost minimum >"$W/server.log" 2>&1 &
SPID=$!
for _ in $(seq 100); do port=$(sed -n 's/^.* im-server listening on 127\.0\.0\.1:\([0-9]*\) .*/\1/p' "$W/server.log"); [[ -n $port ]] && break; sleep 0.1; done
rss() { awk '/VmRSS/{print $2}' /proc/$SPID/status; }
sleep 1; gdb -p $SPID -batch -ex "call (void)malloc_stats()" >/dev/null 2>&1; echo "rss before: $(rss)"
nice -n 5 "$BENCH" client chat --server "127.0.0.1:$port" --server-pid $SPID --users "$USERS" --login-rate 1000 --login-timeout 300 --direct-rate 0 --duration 40 --sources on > "$W/client.txt" 2>&1 &
CPID=$!
for _ in $(seq 600); do grep -q "messages start" "$W/client.txt" && break; sleep 0.5; done
echo "rss at logins done: $(rss)"
sleep 3
echo "rss +3s: $(rss)"
gdb -p $SPID -batch -ex 'call (void)malloc_stats()' >/dev/null 2>&1
echo "rss after malloc_stats: $(rss)"
T0=$(date +%s.%N)
gdb -p $SPID -batch -ex 'call (int)malloc_trim(0)' 2>&1 | grep '^\$'
echo "rss after trim: $(rss)"
gdb -p $SPID -batch -ex 'call (void)malloc_stats()' >/dev/null 2>&1
wait $CPID
grep -E "server RSS" "$W/client.txt"
kill $SPID; wait $SPID
echo "--- server stderr (malloc_stats)"; grep -v "^20" "$W/server.log" | head -60
