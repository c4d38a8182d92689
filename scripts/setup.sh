#!/usr/bin/env bash
# Installs what the build needs beyond the Swift 6.3 toolchain: Debian's zlib headers (zlib1g-dev),
# for the SocketFraming compression. Safe to run again; does nothing when all is present.
set -euo pipefail

packages=(zlib1g-dev pkg-config)
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
echo "setup: installing ${missing[*]}"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}"
