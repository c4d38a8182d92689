#!/usr/bin/env bash
# bench-tls.sh — TLS on our stack next to plaintext, OpenSSL's own tools and nginx, in one run (issue 13
# §4; docs/BENCHMARKS.md "Issue 13"). Servers on core 0, clients on core 1 (taskset), loopback only:
#   ceiling    `openssl speed -evp aes-128-gcm -bytes 16384` on one core: the crypto ceiling
#   echo       socket-bench client bulk, pipeline and pingpong against `socket-bench server lp4`, plaintext
#              and then TLS 1.3 with TLS_AES_128_GCM_SHA256; the server's CPU seconds for each run
#   sink       one direction, 64 KiB writes for SECONDS_EACH: the same sender (scripts/tls-sink.py send, Python's
#              ssl, TLS 1.2 ECDHE-ECDSA-AES128-GCM-SHA256) into `socket-bench server discard` and into
#              tls-sink.py receive (the thinnest OpenSSL receiver Python has), TLS and plaintext; MB/s and
#              MB per CPU second of the receiver (plaintext: what the kernel's loopback receive costs alone)
#   handshake  `openssl s_time` (full handshakes with -new; resumed with -reuse, TLS 1.2, where s_time can
#              reuse a session) against socket-bench's TLS server and against `openssl s_server`
#   idle       10,000 idle TLS connections (scripts/tls-idle-rss.py, the same Python client for both):
#              socket-bench's TLS server's RSS next to nginx's (`listen … ssl`)
# A certificate (EC P-256, for localhost and 127.0.0.1) is made in $WORKDIR; nothing is kept elsewhere.
#
#   scripts/bench-tls.sh
#   PARTS="echo handshake" SECONDS_EACH=5 scripts/bench-tls.sh
#
# PARTS ("ceiling echo sink handshake idle"), SECONDS_EACH (10), IDLE (10000 connections), WORKDIR (a new
# temporary directory).
set -euo pipefail
cd "$(dirname "$0")/.."
PARTS=${PARTS:-ceiling echo sink handshake idle}
SECONDS_EACH=${SECONDS_EACH:-10}
IDLE=${IDLE:-10000}
WORKDIR=${WORKDIR:-$(mktemp -d "${TMPDIR:-/tmp}/bench-tls.XXXXXX")}
mkdir -p "$WORKDIR"
ulimit -n "$(ulimit -Hn)"
server_cpu=(taskset -c 0) client_cpu=(taskset -c 1)

swift build -c release --product socket-bench >&2
BENCH="$(pwd)/.build/release/socket-bench"
cert="$WORKDIR/cert.pem" key="$WORKDIR/key.pem"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout "$key" -out "$cert" -days 2 \
    -subj /CN=localhost -addext "subjectAltName=DNS:localhost,IP:127.0.0.1" 2>/dev/null

pids=()
cleanup() { for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done; }
trap cleanup EXIT

# Starts `socket-bench server MODE` with extra arguments; sets $server_pid and $port.
start_ours() {
    local log="$WORKDIR/server-$RANDOM.log" mode=$1
    shift
    "${server_cpu[@]}" "$BENCH" server "$mode" --port 0 "$@" >"$log" 2>&1 &
    server_pid=$!
    pids+=("$server_pid")
    port=""
    for _ in $(seq 100); do
        port=$(sed -n 's/^.* listening on 127\.0\.0\.1:\([0-9]*\) .*/\1/p' "$log")
        [[ -n $port ]] && return
        sleep 0.1
    done
    echo "socket-bench server did not start:" >&2
    cat "$log" >&2
    exit 1
}

# A free loopback port for the servers that take one (s_server, nginx).
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

# CPU seconds (user + system) process $1 has used so far.
cpu_seconds() { awk -v hz="$(getconf CLK_TCK)" '{ printf "%.2f", ($14 + $15) / hz }' "/proc/$1/stat"; }

for part in $PARTS; do
    case $part in
    ceiling)
        echo "== ceiling: openssl speed -evp aes-128-gcm -bytes 16384 (core 1)"
        "${client_cpu[@]}" openssl speed -evp aes-128-gcm -bytes 16384 -seconds 3 2>/dev/null | tail -1
        ;;
    echo)
        for tls in plain tls; do
            if [[ $tls == tls ]]; then start_ours lp4 --tls-cert "$cert" --tls-key "$key"; flags=(--tls --cipher TLS_AES_128_GCM_SHA256)
            else start_ours lp4; flags=(); fi
            for mode in bulk pipeline pingpong; do
                before=$(cpu_seconds "$server_pid")
                echo "== echo $tls $mode: socket-bench client $mode ${flags[*]} -d $SECONDS_EACH"
                "${client_cpu[@]}" "$BENCH" client "$mode" --port "$port" -d "$SECONDS_EACH" "${flags[@]}" --label "$tls-$mode" 2>&1 \
                    | grep -E '^RESULT|msgs/s|latency' || true
                echo "   server CPU: $(awk -v a="$before" -v b="$(cpu_seconds "$server_pid")" 'BEGIN { printf "%.2f", b - a }') s"
            done
            kill "$server_pid"; wait "$server_pid" 2>/dev/null || true
        done
        ;;
    sink)
        for tls in plain tls; do
            if [[ $tls == tls ]]; then send_flags=(--tls) receive_flags=(--tls "$cert" "$key") ours_flags=(--tls-cert "$cert" --tls-key "$key")
            else send_flags=() receive_flags=() ours_flags=(); fi
            start_ours discard "${ours_flags[@]}"
            before=$(cpu_seconds "$server_pid")
            sent=$("${client_cpu[@]}" scripts/tls-sink.py send --port "$port" --seconds "$SECONDS_EACH" "${send_flags[@]}")
            echo "== sink $tls ours (socket-bench server discard): $sent; server CPU $(awk -v a="$before" -v b="$(cpu_seconds "$server_pid")" 'BEGIN { printf "%.2f", b - a }') s"
            kill "$server_pid"; wait "$server_pid" 2>/dev/null || true
            theirs=$(free_port)
            "${server_cpu[@]}" scripts/tls-sink.py receive --port "$theirs" "${receive_flags[@]}" >"$WORKDIR/sink-receive.log" &
            receiver=$!
            pids+=("$receiver")
            for _ in $(seq 100); do grep -q listening "$WORKDIR/sink-receive.log" && break; sleep 0.1; done
            sent=$("${client_cpu[@]}" scripts/tls-sink.py send --port "$theirs" --seconds "$SECONDS_EACH" "${send_flags[@]}")
            wait "$receiver" || true
            echo "== sink $tls python (tls-sink.py receive): $sent; $(tail -1 "$WORKDIR/sink-receive.log")"
        done
        ;;
    handshake)
        start_ours lp4 --tls-cert "$cert" --tls-key "$key"
        ours=$port ours_pid=$server_pid
        theirs=$(free_port)
        "${server_cpu[@]}" openssl s_server -accept "127.0.0.1:$theirs" -cert "$cert" -key "$key" -quiet -naccept 10000000 \
            >"$WORKDIR/s_server.log" 2>&1 &
        theirs_pid=$!
        pids+=("$theirs_pid")
        sleep 1
        for target in "ours:$ours:$ours_pid" "s_server:$theirs:$theirs_pid"; do
            IFS=: read -r name target_port pid <<<"$target"
            for kind in "-new" "-new -tls1_2" "-reuse -tls1_2"; do
                before=$(cpu_seconds "$pid")
                # shellcheck disable=SC2086
                line=$("${client_cpu[@]}" openssl s_time -connect "127.0.0.1:$target_port" $kind -time "$SECONDS_EACH" 2>&1 \
                    | grep "connections in .* real seconds" || true)
                echo "== handshake $name s_time $kind: $line; server CPU $(awk -v a="$before" -v b="$(cpu_seconds "$pid")" 'BEGIN { printf "%.2f", b - a }') s"
            done
        done
        kill "$ours_pid" "$theirs_pid" 2>/dev/null || true
        ;;
    idle)
        start_ours lp4 --tls-cert "$cert" --tls-key "$key"
        echo "== idle ours: scripts/tls-idle-rss.py -c $IDLE"
        "${client_cpu[@]}" scripts/tls-idle-rss.py --port "$port" --pid "$server_pid" -c "$IDLE" --label ours || true
        kill "$server_pid"
        nginx_dir="$WORKDIR/nginx"
        mkdir -p "$nginx_dir/html" "$nginx_dir/temp"
        nginx_port=$(free_port)
        cat >"$nginx_dir/nginx.conf" <<EOF
daemon off; master_process off; worker_processes 1; worker_rlimit_nofile 20000;
pid $nginx_dir/nginx.pid; error_log $nginx_dir/error.log warn;
events { worker_connections 12000; }
http {
    access_log off;
    client_body_temp_path $nginx_dir/temp/b; proxy_temp_path $nginx_dir/temp/p; fastcgi_temp_path $nginx_dir/temp/f;
    scgi_temp_path $nginx_dir/temp/s; uwsgi_temp_path $nginx_dir/temp/u;
    client_header_timeout 600s; keepalive_timeout 600s;
    server {
        listen 127.0.0.1:$nginx_port ssl;
        ssl_certificate $cert; ssl_certificate_key $key; ssl_protocols TLSv1.2 TLSv1.3;
        root $nginx_dir/html;
    }
}
EOF
        "${server_cpu[@]}" nginx -p "$nginx_dir/" -c "$nginx_dir/nginx.conf" -e "$nginx_dir/error.log" &
        nginx_pid=$!
        pids+=("$nginx_pid")
        sleep 1
        echo "== idle nginx: scripts/tls-idle-rss.py -c $IDLE"
        "${client_cpu[@]}" scripts/tls-idle-rss.py --port "$nginx_port" --pid "$nginx_pid" -c "$IDLE" --label nginx || true
        kill "$nginx_pid" 2>/dev/null || true
        ;;
    *) echo "unknown part $part" >&2; exit 64 ;;
    esac
done
echo "logs in $WORKDIR"
