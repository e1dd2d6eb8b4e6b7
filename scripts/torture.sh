#!/usr/bin/env bash
# Long fault-injection run with the mutual-exclusion checker, then every
# scenario, every targeted plan with a correct client, and every negative
# control once; prints the counts that docs/safety.md quotes.
# Usage: scripts/torture.sh [--duration DUR] [--seed N] [--clients K]
#                           [--workers-per-client W] [--resources R] [--no-controls]
# DUR has a unit, as redlock-torture takes it: 660s, 11m.
# Defaults: 660s of faults, a random seed (printed, for replay), K=4
# client processes of W=8 workers sharing one client each, R=3.
# --no-controls skips the negative controls (the library's deliberate
# defects, src/detail/negative_controls.hpp).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
duration=660s
seed=""
clients=4
workers=8
resources=3
controls=1
while (($# > 0)); do
  case "$1" in
    --duration) duration=$2; shift 2 ;;
    --seed) seed=$2; shift 2 ;;
    --clients) clients=$2; shift 2 ;;
    --workers-per-client) workers=$2; shift 2 ;;
    --resources) resources=$2; shift 2 ;;
    --no-controls) controls=0; shift ;;
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
echo "=== long schedule: $duration of faults, K=$clients x W=$workers, R=$resources ==="
"$bin" --clients "$clients" --workers-per-client "$workers" --resources "$resources" \
  --duration "$duration" ${seed:+--seed "$seed"} --out "$out/long" || status=1

# Each broken assumption with the violation kinds it must produce.
declare -A detects=(
  [restart-without-persistence]="lease_overlap cs_overlap"
  [clock-jump]="lease_overlap cs_overlap"
  [fast-clock]="lease_overlap cs_overlap"
  [client-pause]="cs_overlap lost_update"
)
for scenario in restart-without-persistence clock-jump fast-clock client-pause; do
  echo "=== scenario $scenario (breaks an assumption: ${detects[$scenario]} must be found) ==="
  expect=()
  for kind in ${detects[$scenario]}; do expect+=(--expect-violation "$kind"); done
  "$bin" --scenario "$scenario" "${expect[@]}" --out "$out/$scenario" | tail -n 3 || status=1
done
for scenario in restart-with-aof-always delayed-restart clock-jump-minority \
  fast-clock-within-drift client-pause-within-validity; do
  echo "=== scenario $scenario (assumptions kept: no violation) ==="
  "$bin" --scenario "$scenario" --out "$out/$scenario" | tail -n 3 || status=1
done

for plan in fast-clock-hold late-replies contention kept leader; do
  echo "=== plan $plan, correct client (no violation) ==="
  "$bin" --plan "$plan" ${seed:+--seed "$seed"} --out "$out/plan-$plan" | tail -n 3 || status=1
done

# The fenced register under client pauses: the plain writes must be caught
# (stale writes, lost updates), the fence-checked ones must not.
echo "=== plan unfenced-pause (register written plainly: stale_write lost_update must be found) ==="
"$bin" --plan unfenced-pause --duration 60s ${seed:+--seed "$seed"} \
  --expect-violation stale_write --expect-violation lost_update \
  --out "$out/plan-unfenced-pause" | grep -E '^(acquire|critical section|faults|fencing|violations|lost updates|verdict)' || status=1
echo "=== plan fenced-pause (register written through the fence check: no violation) ==="
"$bin" --plan fenced-pause --duration 60s ${seed:+--seed "$seed"} --min-refused-writes 1 \
  --out "$out/plan-fenced-pause" | grep -E '^(acquire|critical section|faults|fencing|violations|lost updates|verdict)' || status=1

if ((controls)); then
  # Each negative control, the plan that exposes it and the kind it must produce.
  for control in drop_drift:fast-clock-hold:lease_overlap \
    count_late_votes:late-replies:lease_overlap skip_undo:contention:orphaned_votes \
    settle_twice:contention:lease_overlap; do
    IFS=: read -r name plan kind <<<"$control"
    echo "=== negative control $name in plan $plan ($kind must be found) ==="
    "$bin" --plan "$plan" --break "$name" --expect-violation "$kind" ${seed:+--seed "$seed"} \
      --out "$out/control-$name" | tail -n 3 || status=1
  done
fi
exit "$status"
