#!/usr/bin/env bash
# bench-1m.sh — N idle TCP connections on this box (issue 35 §1; default N=1,000,000), held HOLD seconds:
# socket-bench's LP4 echo server as WORKERS processes sharing one port with SO_REUSEPORT
# (`socket-bench server lp4 --workers W`), and CLIENTS processes of our load generator
# (`socket-bench client idle`), each connection from a source address spread over 127.0.0.2–250 and
# sending a 16-byte heartbeat every H seconds whose echo it checks. A process may hold at most 20,000
# open files here, so each process holds at most PER connections (16,700: room for SO_REUSEPORT's uneven
# spread over the workers).
#
#   scripts/bench-1m.sh                       # N=1000000 H=30 HOLD=300
#   N=100000 scripts/bench-1m.sh              # the same at 100,000
#
# Stops by itself: once every client has connected, the connections are held (every heartbeat
# echoed) for at least HOLD seconds, then the clients end and the servers are stopped. On any exit
# (error, Ctrl-C, too little memory) it kills every process it started and puts back the sysctls it
# changed. It refuses to start, or stops, when MemAvailable is (or would be) under MIN_FREE_GIB (4).
#
# Writes into OUT (default docs/bench-results/DATE-1m/N): /proc/meminfo, /proc/slabinfo and
# /proc/net/sockstat before the servers start, with the servers up, once every connection is
# held, and at the end of the measurement; each process's VmRSS, RssAnon and CPU ticks at those
# moments; a timeline (every 5 s: sockets, memory); each client's RESULT line and log; and the
# summary line `RESULT bench=idle-1m …` of scripts/bench-1m-report.py (also appended to SUMMARY).
set -euo pipefail
cd "$(dirname "$0")/.."
N=${N:-1000000} H=${H:-30} HOLD=${HOLD:-300} PORT=${PORT:-9600} PER=${PER:-16700}
PROCESSES=$(((N + PER - 1) / PER))
WORKERS=${WORKERS:-$PROCESSES} CLIENTS=${CLIENTS:-$PROCESSES}
# The clients connect, then wait for OUT/go, which appears once all have connected, and send
# heartbeats for D s from then on; the hold is measured from the last client's start to the first
# client's end (it must reach HOLD). Each client's heartbeat clock ticks once per TICK s (all the
# heartbeats due go out together): each process then wakes a few times a second instead of once
# per heartbeat, which at 1,000,000 connections is the difference between keeping up on 2 cores and not.
D=${D:-$((HOLD + 30))} TICK=${TICK:-1}
MIN_FREE_GIB=${MIN_FREE_GIB:-4}
# The run's own network namespace (`ip netns`, its loopback only), made with a TCP established-socket
# hash table of EHASH buckets (net.ipv4.tcp_child_ehash_entries; 0: no namespace of its own). The
# boot-time table here has 262,144 buckets: at 2,000,000 sockets every packet's lookup walked a chain
# of ~8 (__inet_lookup_established was 30 % of the processes' CPU).
EHASH=${EHASH:-2097152} NETNS=bench-1m-$$
# Memory the run is expected to take per connection (two sockets in the kernel, both processes), bytes.
BYTES_PER_CONNECTION=${BYTES_PER_CONNECTION:-12000}
OUT=${OUT:-docs/bench-results/$(date -u +%F)-1m/$N}
SUMMARY=${SUMMARY:-$(dirname "$OUT")/summary.txt}
BIN=.build/release/socket-bench
NICE=(nice -n 5)

mkdir -p "$OUT"
rm -f "$OUT"/*.out "$OUT"/*.log "$OUT"/*.procs "$OUT"/*.time "$OUT"/timeline.tsv "$OUT/go"
if [[ ${BUILD:-1} == 1 ]]; then "${NICE[@]}" swift build -c release --product socket-bench >&2; fi

available_kib() { awk '/^MemAvailable:/ { print $2 }' /proc/meminfo; }
min_free_kib=$((MIN_FREE_GIB * 1024 * 1024))
needed_kib=$((N * BYTES_PER_CONNECTION / 1024 + min_free_kib))
if (($(available_kib) < needed_kib)); then
    echo "bench-1m: MemAvailable $(available_kib) KiB < $needed_kib KiB ($N connections at $BYTES_PER_CONNECTION B + $MIN_FREE_GIB GiB)" >&2
    exit 2
fi

# --- sysctls: each raised only if below what the run needs, put back on exit ---
declare -A saved=()
raise() { # raise NAME VALUE...: set NAME to VALUE (one or more numbers) when its first number is below
    local name=$1 current
    shift
    current=$(sysctl -n "$name")
    if (($(awk '{ print $1 }' <<<"$current") < $1)); then
        saved[$name]=$current
        sysctl -q -w "$name=$*"
    fi
}
started=()
server=""
IN_NS=()
cleanup() {
    local status=$?
    trap - EXIT INT TERM
    for pid in "${started[@]}"; do kill "$pid" 2>/dev/null || true; done
    if [[ -n $server ]]; then kill "$server" 2>/dev/null || true; fi
    for pid in "${started[@]}" $server; do wait "$pid" 2>/dev/null || true; done
    for name in "${!saved[@]}"; do sysctl -q -w "$name=${saved[$name]}" || true; done
    if [[ -n ${IN_NS[*]} ]]; then ip netns del "$NETNS" 2>/dev/null || true; fi
    exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
sockets=$((2 * N))
# Every connection is two descriptors on this box (client and server side).
raise fs.file-max $((sockets + 500000))
# Loopback packets queue in the per-CPU backlog (1,000 by default): SYN bursts of 256 connects per client.
raise net.core.netdev_max_backlog 16384
raise net.ipv4.tcp_max_syn_backlog 16384
raise net.core.somaxconn 4096
if ((EHASH > 0)); then
    old_ehash=$(sysctl -n net.ipv4.tcp_child_ehash_entries)
    sysctl -q -w net.ipv4.tcp_child_ehash_entries="$EHASH"
    ip netns add "$NETNS"
    IN_NS=(ip netns exec "$NETNS")
    sysctl -q -w net.ipv4.tcp_child_ehash_entries="$old_ehash"
    "${IN_NS[@]}" ip link set lo up
    # Per namespace: the listen queues (the namespace's own defaults otherwise).
    "${IN_NS[@]}" sysctl -q -w net.ipv4.tcp_max_syn_backlog=16384 net.core.somaxconn=4096
fi
sockstat() { "${IN_NS[@]}" cat /proc/net/sockstat; }
# tcp_mem (pages) bounds the bytes queued in socket buffers, not the sockets: an idle socket holds
# none, but a heartbeat in flight on each of 2N sockets at once must stay under "pressure".
pressure=$((sockets / 2))
raise net.ipv4.tcp_mem $((pressure > 383878 ? pressure : 383878)) $((pressure * 2 > 575814 ? pressure * 2 : 575814)) \
    $((pressure * 3 > 863721 ? pressure * 3 : 863721))
{
    echo "# sysctls during the run"
    for name in fs.file-max net.core.netdev_max_backlog net.ipv4.tcp_max_syn_backlog net.core.somaxconn net.ipv4.tcp_mem \
        net.ipv4.ip_local_port_range fs.nr_open net.ipv4.tcp_ehash_entries; do
        echo "$name = $("${IN_NS[@]}" sysctl -n "$name" 2>/dev/null || sysctl -n "$name")"
    done
    echo "network namespace: ${IN_NS[*]:-none of its own}"
    echo "ulimit -n = $(ulimit -Hn)"
} >"$OUT/sysctl.txt"

pids_of() { pgrep -P "$1" | tr '\n' ' '; }
snapshot() { # snapshot NAME: kernel memory and every process's memory and CPU
    cp /proc/meminfo "$OUT/$1.meminfo"
    cp /proc/slabinfo "$OUT/$1.slabinfo"
    sockstat >"$OUT/$1.sockstat"
    date -u +%s.%N >"$OUT/$1.time"
    # One awk for all the processes: under load, an awk per process took a minute for 120 of them.
    local role list
    for role in server client; do
        list=$workers
        [[ $role == client ]] && list="${started[*]}"
        [[ -n $list ]] || continue
        local status=() stat=() pid
        for pid in $list; do
            if [[ -r /proc/$pid/stat ]]; then status+=("/proc/$pid/status") stat+=("/proc/$pid/stat"); fi
        done
        ((${#status[@]})) || continue
        paste -d ' ' \
            <(awk -v role=$role '/^Pid:/ { pid = $2 } /^VmRSS:/ { rss = $2 } /^RssAnon:/ { print role, pid, rss, $2 }' "${status[@]}") \
            <(awk '{ sub(/.*\) /, ""); print $12 + $13 }' "${stat[@]}")
    done >"$OUT/$1.procs" 2>/dev/null || true
}
established() { # established NAME: connections established to the port, counted in the background (slow at 1M)
    ("${IN_NS[@]}" ss -Htn state established "( sport = :$PORT )" | wc -l >"$OUT/$1.established") &
}

workers=""
snapshot before
: >"$OUT/server.log"
"${IN_NS[@]}" "${NICE[@]}" "$BIN" server lp4 --port "$PORT" --workers "$WORKERS" >"$OUT/server.log" 2>&1 &
server=$!
for _ in $(seq 600); do
    (($(grep -c listening "$OUT/server.log") == WORKERS)) && break
    kill -0 "$server" 2>/dev/null || { echo "bench-1m: the server ended: $(cat "$OUT/server.log")" >&2; exit 1; }
    sleep 0.1
done
workers=$(pids_of "$server")
sleep 2
snapshot servers-up

start=$(date +%s.%N)
echo "$start" >"$OUT/start.time"
for i in $(seq "$CLIENTS"); do
    count=$((N / CLIENTS + (i <= N % CLIENTS ? 1 : 0)))
    "${IN_NS[@]}" "${NICE[@]}" "$BIN" client idle --port "$PORT" -c "$count" -H "$H" -d "$D" --tick "$TICK" --go-file "$OUT/go" --label "idle$N/$i" \
        >"$OUT/client.$i.out" 2>"$OUT/client.$i.log" &
    started+=($!)
    sleep 0.2
done

# Timeline until every client has connected, then through the hold, until every client has ended.
printf 'unix_s\ttcp_inuse\ttcp_tw\ttcp_mem_pages\tmem_available_kib\tmem_free_kib\tclients_connected\tclients_running\n' >"$OUT/timeline.tsv"
all_connected="" all_started=""
held="" measured=""
while :; do
    now=$(date +%s)
    connected=$(cat "$OUT"/client.*.log 2>/dev/null | grep -c '^socket-bench: connected ' || true)
    running=0
    for pid in "${started[@]}"; do kill -0 "$pid" 2>/dev/null && running=$((running + 1)); done
    printf '%s\t%s\t%s\t%s\t%s\n' "$now" \
        "$(sockstat | awk '/^TCP:/ { print $3 "\t" $7 "\t" $11 }')" \
        "$(awk '/^MemAvailable:/ { a = $2 } /^MemFree:/ { f = $2 } END { print a "\t" f }' /proc/meminfo)" \
        "$connected" "$running" >>"$OUT/timeline.tsv"
    if (($(available_kib) < min_free_kib)); then
        echo "bench-1m: MemAvailable $(available_kib) KiB is under $MIN_FREE_GIB GiB: stopping" >&2
        exit 3
    fi
    if [[ -z $all_connected && $connected == "$CLIENTS" ]]; then
        all_connected=$(date +%s.%N)
        echo "$all_connected" >"$OUT/connected.time"
        touch "$OUT/go"
        echo "bench-1m: all $CLIENTS clients connected after $(awk -v a="$start" -v b="$all_connected" 'BEGIN { printf "%.1f", b - a }') s" >&2
    fi
    if [[ -n $all_connected && -z $all_started ]] &&
        (($(cat "$OUT"/client.*.log | grep -c '^socket-bench: heartbeats every ' || true) == CLIENTS)); then
        all_started=$(date +%s.%N)
        # Snapshot after a whole heartbeat period, when every connection has sent and received once.
        held=$(awk -v t="$all_started" -v h="$H" 'BEGIN { printf "%d", t + h + 10 }')
        # CPU measured over whole heartbeat periods, ending before the first client stops sending.
        measured=$(awk -v t="$held" -v h="$H" -v hold="$HOLD" 'BEGIN { printf "%d", t + h * int((hold - h - 20) / h) }')
    fi
    if [[ -n $held && $now -ge $held ]]; then
        snapshot held
        established held
        echo "bench-1m: every connection held" >&2
        held=""
    fi
    if [[ -n $measured && -z $held && $now -ge $measured ]]; then
        snapshot measured
        established measured
        echo "bench-1m: measured" >&2
        measured=""
    fi
    ((running == 0)) && break
    sleep 5
done
[[ -n $all_connected ]] || { echo "bench-1m: not every client connected" >&2; exit 1; }
[[ -z $measured ]] || { echo "bench-1m: the clients ended before the measurement" >&2; exit 1; }
for pid in "${started[@]}"; do wait "$pid" || true; done
started=()
kill "$server"
wait "$server" || true
server=""
snapshot after

cat "$OUT"/client.*.out >"$OUT/results.txt"
python3 scripts/bench-1m-report.py "$OUT" --connections "$N" --heartbeat "$H" --hold "$HOLD" | tee -a "$SUMMARY"
