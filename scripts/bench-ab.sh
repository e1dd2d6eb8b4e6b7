#!/usr/bin/env bash
# Before/after: two builds of redlock-bench, run in turns on the same five
# local redis-server nodes, so that a refactoring's cost shows against the
# same machine state (docs/benchmarks.md, "Before and after a change").
#
# Usage: scripts/bench-ab.sh BENCH_BEFORE BENCH_AFTER
# Environment (optional):
#   ROUNDS=3        turns of each build per workload (medians are reported)
#   DURATION=5s     measured time of each run
#   WORKLOADS="latency throughput"
#   PORT_BASE=7400  the nodes listen on 127.0.0.1:PORT_BASE+1..+5
set -euo pipefail

prog=$(basename "$0")
die() {
  echo "$prog: $*" >&2
  exit 2
}
(($# == 2)) || die "usage: $prog BENCH_BEFORE BENCH_AFTER"
before=$1
after=$2
for b in "$before" "$after"; do [[ -x "$b" ]] || die "not an executable: $b"; done
ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-5s}
WORKLOADS=${WORKLOADS:-latency throughput}
PORT_BASE=${PORT_BASE:-7400}
[[ "$ROUNDS" =~ ^[1-9][0-9]*$ ]] || die "ROUNDS must be a positive number, not '$ROUNDS'"
if ! [[ "$PORT_BASE" =~ ^[0-9]+$ ]] || ((PORT_BASE + 5 >= 65536)); then
  die "PORT_BASE must be a port number below 65531, not '$PORT_BASE'"
fi
command -v redis-server >/dev/null || die "redis-server is not installed (scripts/deps.sh)"
command -v jq >/dev/null || die "jq is not installed"

work=$(mktemp -d "${TMPDIR:-/tmp}/redlock-bench-ab.XXXXXX")
pids=()
cleanup() {
  local pid
  for pid in "${pids[@]+"${pids[@]}"}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]+"${pids[@]}"}"; do wait "$pid" 2>/dev/null || true; done
  rm -rf -- "$work"
}
trap cleanup EXIT

nodes=()
for i in 1 2 3 4 5; do
  port=$((PORT_BASE + i))
  redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no \
    --dir "$work" --logfile "$work/node$i.log" &
  pids+=("$!")
  nodes+=("127.0.0.1:$port")
done
for i in 1 2 3 4 5; do
  for ((t = 0; t < 100; t++)); do
    redis-cli -p $((PORT_BASE + i)) ping >/dev/null 2>&1 && break
    sleep 0.05
  done
done
node_list=$(
  IFS=,
  echo "${nodes[*]}"
)

# median FILE FIELD: the median of a numeric field over the file's JSON lines.
median() {
  jq -s "[.[].$2] | sort | .[(length - 1) / 2 | floor]" "$1"
}
# spread FILE FIELD: "min-max" of the field.
spread() {
  jq -rs "[.[].$2] | sort | \"\\(.[0])-\\(.[-1])\"" "$1"
}

printf '%-11s %-30s %12s %12s %8s  %s\n' workload figure before after ratio \
  "spread before / after"
for workload in $WORKLOADS; do
  for ((r = 0; r < ROUNDS; r++)); do
    for side in before after; do
      bin=$before
      [[ $side == after ]] && bin=$after
      "$bin" --nodes "$node_list" --workload "$workload" --duration "$DURATION" \
        --warmup 1s | tail -1 >>"$work/$workload-$side.jsonl"
    done
  done
  case $workload in
    latency) fields="acquire_ms.p50 release_ms.p50 acquire_ms.p99 allocations_per_cycle" ;;
    *) fields="cycles_per_s client_cpu_s_per_1000_cycles allocations_per_cycle" ;;
  esac
  for field in $fields; do
    b=$(median "$work/$workload-before.jsonl" "$field")
    a=$(median "$work/$workload-after.jsonl" "$field")
    ratio=$(awk -v a="$a" -v b="$b" 'BEGIN { printf (b > 0 ? "%.3f" : "-"), a / b }')
    printf '%-11s %-30s %12s %12s %8s  %s / %s\n' "$workload" "$field" "$b" "$a" "$ratio" \
      "$(spread "$work/$workload-before.jsonl" "$field")" \
      "$(spread "$work/$workload-after.jsonl" "$field")"
  done
done
