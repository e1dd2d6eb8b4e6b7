#!/usr/bin/env bash
# Install the build and test dependencies (Debian/Ubuntu) if any is missing.
# A machine that already has them all does nothing and needs no network.
set -euo pipefail

packages=(
  g++ cmake make pkg-config
  libboost-dev libboost-system-dev libhiredis-dev libfmt-dev libcli11-dev catch2
  libsqlite3-dev
  redis-server redis-tools libssl-dev openssl
  doxygen
  man-db groff-base
  clang-14 libclang-rt-14-dev
)

missing=()
for pkg in "${packages[@]}"; do
  # dpkg-query's status must say "installed"; a removed package still has an entry.
  status=$(dpkg-query -W -f='${db:Status-Status}' "$pkg" 2>/dev/null || true)
  if [[ "$status" != "installed" ]]; then
    missing+=("$pkg")
  fi
done

if ((${#missing[@]} == 0)); then
  exit 0
fi

echo "deps.sh: installing ${missing[*]}" >&2

# Only escalate when we are not already root (containers often lack sudo).
sudo=()
if ((EUID != 0)); then
  sudo=(sudo)
fi

export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive \
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
