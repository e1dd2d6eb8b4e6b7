#!/usr/bin/env bash
# Long fault-injection run with the mutual-exclusion checker, then every
# scenario once; prints the counts that docs/safety.md quotes.
# Usage: scripts/torture.sh [--duration S] [--seed N] [--clients K] [--resources R]
# Defaults: 660 s of faults (about 100,000 successful acquires with K=4 on
# 2 cores), a random seed (printed, for replay), K=4, R=3.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
duration=660
seed=""
clients=4
resources=3
while (($# > 0)); do
  case "$1" in
    --duration) duration=$2; shift 2 ;;
    --seed) seed=$2; shift 2 ;;
    --clients) clients=$2; shift 2 ;;
    --resources) resources=$2; shift 2 ;;
    *) echo "torture.sh: unknown option $1" >&2; exit 2 ;;
  esac
done

"$root/scripts/build.sh" build >/dev/null
bin="$root/build/bin/redlock-torture"

# The runs start their own servers under this directory; reap them on exit.
REDLOCK_TEST_TMPDIR=$(mktemp -d "${TMPDIR:-/tmp}/redlock-torture.XXXXXX")
export REDLOCK_TEST_TMPDIR
out="$REDLOCK_TEST_TMPDIR/runs"
cleanup() {
  local f pid
  while IFS= read -r -d '' f; do
    pid=$(tr -dc '0-9' <"$f" 2>/dev/null || true)
    [[ -n "$pid" && "$(cat "/proc/$pid/comm" 2>/dev/null)" == redis* ]] && kill -KILL "$pid" 2>/dev/null
  done < <(find "$REDLOCK_TEST_TMPDIR" -name '*.pid' -print0 2>/dev/null)
  echo "histories kept in $out" >&2
}
trap cleanup EXIT

status=0
echo "=== long schedule: $duration s of faults, K=$clients, R=$resources ==="
"$bin" --clients "$clients" --resources "$resources" --duration "$duration" \
  ${seed:+--seed "$seed"} --out "$out/long" || status=1

for scenario in restart-without-persistence clock-jump fast-clock client-pause; do
  echo "=== scenario $scenario (breaks an assumption: a violation must be found) ==="
  "$bin" --scenario "$scenario" --expect-violations --out "$out/$scenario" | tail -n 3 || status=1
done
for scenario in restart-with-aof-always delayed-restart clock-jump-minority \
  fast-clock-within-drift client-pause-within-validity; do
  echo "=== scenario $scenario (assumptions kept: no violation) ==="
  "$bin" --scenario "$scenario" --out "$out/$scenario" | tail -n 3 || status=1
done
exit "$status"
