#!/usr/bin/env bash
# Install the build and test dependencies (Debian/Ubuntu) if any is missing.
# A machine that already has them all does nothing and needs no network.
# Usage: scripts/deps.sh [demo]
#   demo: only what building the library and the examples, and running
#   redis-server, need (scripts/demo.sh): no test framework, clang or doxygen.
set -euo pipefail

packages=(
  g++ cmake make pkg-config
  libboost-dev libboost-system-dev libhiredis-dev libfmt-dev libcli11-dev libssl-dev
  redis-server redis-tools
)
case "${1:-}" in
  "") packages+=(catch2 libsqlite3-dev openssl lintian man-db groff-base doxygen clang-14 libclang-rt-14-dev) ;;
  demo) ;;
  *)
    echo "usage: $0 [demo]" >&2
    exit 2
    ;;
esac

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
