#!/usr/bin/env bash
# Configure and build the project.
# Usage: scripts/build.sh [BUILD_DIR] [extra cmake args...]
#   BUILD_DIR defaults to "build"; a relative BUILD_DIR is taken relative to
#   the repository root so the script behaves the same from any cwd.
#   BUILD_TYPE (env) defaults to RelWithDebInfo.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

dir=${1:-build}
(($# > 0)) && shift
[[ "$dir" = /* ]] || dir="$root/$dir"

"$root/scripts/deps.sh"

cmake -S "$root" -B "$dir" -DCMAKE_BUILD_TYPE="${BUILD_TYPE:-RelWithDebInfo}" "$@"
cmake --build "$dir" -j2
