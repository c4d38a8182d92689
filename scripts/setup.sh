#!/usr/bin/env bash
# Installs what the build and tests need beyond the Swift 6.3 toolchain: Debian's zlib headers
# (zlib1g-dev), for the SocketFraming compression; SQLite 3 (libsqlite3-dev), for the chat's message
# and client stores; libsodium (libsodium-dev), for the chat's Argon2id password hashes; ICU
# (libicu-dev), for the chat's user names (UTS #39 spoof checks and confusable skeletons); libedit
# (libedit-dev), the line editor of im-client's terminal; OpenSSL 3 (libssl-dev), TLS, and its
# command-line tool (openssl), which the TLS tests use to make certificates and as a peer; and the servers the interoperability tests
# talk to (redis-server, nginx-light, socat); python3 for the Python clients and the black-hole proxy
# of the chat tests; tmux, in which a test drives im-client's terminal; the official NATS C client
# (libnats-dev), for the chat's cluster mode, and the NATS server (nats-server) its tests start; and
# Chromium (chromium), whose own WebSocket the browser test runs headless against our listener;
# Prometheus (prometheus), whose promtool checks a scrape of im-server's /metrics in the tests.
# Safe to run again; does nothing when all is present.
set -euo pipefail

packages=(zlib1g-dev libsqlite3-dev libsodium-dev libicu-dev libedit-dev libssl-dev openssl pkg-config redis-server nginx-light socat python3 python3-websockets tmux libnats-dev nats-server chromium prometheus)
missing=()
for package in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
if [ ${#missing[@]} -eq 0 ]; then
    echo "setup: ${packages[*]} already installed"
    exit 0
fi
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"

# The servers' post-install scripts would start a system redis, nginx and NATS server on fixed ports
# (6379, 80, 4222). The tests start their own; a policy-rc.d that exits 101 makes invoke-rc.d start
# nothing. One that was already there is put back afterwards.
policy=/usr/sbin/policy-rc.d
saved_policy=""
if [ -e "$policy" ]; then
    saved_policy=$(mktemp)
    $sudo cp -p "$policy" "$saved_policy"
fi
restore_policy() {
    if [ -n "$saved_policy" ]; then
        $sudo cp -p "$saved_policy" "$policy"
        rm -f "$saved_policy"
    else
        $sudo rm -f "$policy"
    fi
}
trap restore_policy EXIT
printf '#!/bin/sh\n# scripts/setup.sh: start no services while installing.\nexit 101\n' | $sudo tee "$policy" >/dev/null
$sudo chmod 755 "$policy"

echo "setup: installing ${missing[*]}"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq -o DPkg::Lock::Timeout=300 "${missing[@]}"
