#!/usr/bin/env bash
# API reference of the public headers with Doxygen (docs/Doxyfile), into
# build-docs/html (or $1). Fails on any warning: an undocumented public
# entity, a broken reference. Installs doxygen if it is missing.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out=$(realpath -m "${1:-$root/build-docs}")

if ! command -v doxygen >/dev/null; then
  sudo=()
  ((EUID == 0)) || sudo=(sudo)
  "${sudo[@]}" apt-get update -qq
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
    doxygen >/dev/null
fi

rm -rf "$out"
mkdir -p "$out"
cd "$root"
status=0
REDLOCK_DOCS_OUT=$out doxygen docs/Doxyfile || status=$?
if [[ -s "$out/warnings.log" ]]; then
  echo "docs.sh: doxygen warnings:" >&2
  cat "$out/warnings.log" >&2
  status=1
fi
if ((status == 0)); then
  echo "docs.sh: API reference in $out/html/index.html"
fi
exit "$status"
