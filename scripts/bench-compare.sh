#!/usr/bin/env bash
# Benchmark of redlock (build/bin/redlock-bench) against the machine's floor
# (build/bin/redlock-floor-bench, a minimal raw-socket client sending the same
# commands) and against node-redlock (redlock@5.0.0-beta.2 with ioredis,
# driven by bench/node-redlock/harness.mjs), in one run on the same five local
# redis-server nodes. See docs/benchmarks.md.
#
# Usage: scripts/bench-compare.sh       (about 13 minutes with the defaults)
# Environment (all optional):
#   DURATION=20         measured seconds of each run
#   WARMUP=2            warm-up seconds before each run (not counted)
#   MEMORY_DURATION=60  measured seconds of the memory run (redlock-bench only)
#   DISTANT_DURATION=10 measured seconds of each distant-nodes run (an acquire
#                       takes about 80 ms there)
#   DISTANT_DELAYS_MS="5 20 40 80 120"
#                       the delay each way (request and reply) of the proxy in
#                       front of each of the five nodes in the distant runs
#   HELD_DURATION=60    seconds the held runs keep their locks
#   HELD_LOCKS="1000 10000 100000"  lock counts of the held runs (the targets
#                       apply to the largest)
#   LATENCY_PAIRS=5     alternated short latency runs of redlock and the
#                       floor (PAIR_DURATION=4 s each): the latency ratios to
#                       the floor are the median of the pairs' ratios
#   PROCESSES=8         processes contending for one resource in the
#                       across-processes run (one worker each)
#   TTL=10000           lock TTL in ms
#   SLOW_DELAY_MS=50    reply delay of the slow fifth node
#   PORT_BASE=7300      the nodes listen on 127.0.0.1:PORT_BASE+1..+5
#   BUILD_DIR=build     where scripts/build.sh builds (relative to the repository)
#   OUT_DIR=docs/bench  where the results, the table and the plots go
#   IOREDIS_VERSION=5.11.1  ioredis version installed beside node-redlock
#   NODE_REDLOCK_RETRY_DELAY_MS=10, NODE_REDLOCK_RETRY_JITTER_MS=10
#                       node-redlock's retry settings in the contention run
#   STRICT=1            exit 3 if any target is missed (default: report only)
#
# It builds the project, installs what it needs (node-redlock and ioredis with
# npm into a temporary directory; nodejs, npm and gnuplot-nox with apt-get if
# missing), starts the nodes and the delay proxies, and stops everything it
# started when it exits, by pid.
#
# The report leads with the ratios to the floor (client "floor"), then those
# to node-redlock, the distant nodes and the fenced acquires' cost.
#
# Outputs, in OUT_DIR: results-<UTC stamp>.jsonl and latest.jsonl (every JSON
# line, each with "client" and "scenario" added in front, and "process" in the
# across-processes run), latest-memory.tsv
# (RSS of the memory run, one sample a second), latest-table.md (targets with
# PASS/FAIL, and all figures), latest-machine.txt (machine and versions) and
# the PNG plots.
set -euo pipefail

prog=$(basename "$0")
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

DURATION=${DURATION:-20}
WARMUP=${WARMUP:-2}
MEMORY_DURATION=${MEMORY_DURATION:-60}
DISTANT_DURATION=${DISTANT_DURATION:-10}
DISTANT_DELAYS_MS=${DISTANT_DELAYS_MS:-5 20 40 80 120}
PROCESSES=${PROCESSES:-8}
LATENCY_PAIRS=${LATENCY_PAIRS:-5}
PAIR_DURATION=${PAIR_DURATION:-4}
HELD_DURATION=${HELD_DURATION:-60}
HELD_LOCKS=${HELD_LOCKS:-1000 10000 100000}
TTL=${TTL:-10000}
SLOW_DELAY_MS=${SLOW_DELAY_MS:-50}
PORT_BASE=${PORT_BASE:-7300}
BUILD_DIR=${BUILD_DIR:-build}
OUT_DIR=${OUT_DIR:-docs/bench}
NODE_REDLOCK_VERSION=5.0.0-beta.2
IOREDIS_VERSION=${IOREDIS_VERSION:-5.11.1}
export NODE_REDLOCK_RETRY_DELAY_MS=${NODE_REDLOCK_RETRY_DELAY_MS:-10}
export NODE_REDLOCK_RETRY_JITTER_MS=${NODE_REDLOCK_RETRY_JITTER_MS:-10}
STRICT=${STRICT:-0}

[[ "$BUILD_DIR" = /* ]] || BUILD_DIR="$root/$BUILD_DIR"
[[ "$OUT_DIR" = /* ]] || OUT_DIR="$root/$OUT_DIR"

die() {
  echo "$prog: $*" >&2
  exit 1
}
say() { echo "$prog: $*" >&2; }

for n in $HELD_LOCKS; do
  [[ "$n" =~ ^[0-9]+$ && "$n" -gt 0 ]] || die "HELD_LOCKS must be positive whole numbers, not '$n'"
done
for v in DURATION WARMUP MEMORY_DURATION DISTANT_DURATION HELD_DURATION PAIR_DURATION; do
  [[ "${!v}" =~ ^[0-9]+(\.[0-9]+)?$ ]] || die "$v must be a number of seconds, not '${!v}'"
done
for v in TTL SLOW_DELAY_MS PORT_BASE PROCESSES LATENCY_PAIRS; do
  [[ "${!v}" =~ ^[0-9]+$ ]] || die "$v must be a whole number, not '${!v}'"
done
((PROCESSES >= 2)) || die "PROCESSES must be at least 2, not '$PROCESSES'"
read -r -a distant_delays <<<"$DISTANT_DELAYS_MS"
((${#distant_delays[@]} == 5)) || die "DISTANT_DELAYS_MS needs five delays, not '$DISTANT_DELAYS_MS'"
for d in "${distant_delays[@]}"; do
  [[ "$d" =~ ^[0-9]+$ ]] || die "DISTANT_DELAYS_MS must be whole numbers of ms, not '$DISTANT_DELAYS_MS'"
done

# --- cleanup: everything this script starts is stopped by its pid -----------

work=$(mktemp -d "${TMPDIR:-/tmp}/redlock-bench-compare.XXXXXX")
cluster_state="$work/cluster.state"
started_cluster=0
bg_pids=()

cleanup() {
  local rc=$? pid i
  trap - EXIT INT TERM
  for pid in "${bg_pids[@]+"${bg_pids[@]}"}"; do
    if kill -0 "$pid" 2>/dev/null; then
      kill -TERM "$pid" 2>/dev/null || true
      for ((i = 0; i < 50; i++)); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
      done
      if kill -0 "$pid" 2>/dev/null; then kill -KILL "$pid" 2>/dev/null || true; fi
    fi
    wait "$pid" 2>/dev/null || true
  done
  if ((started_cluster)); then
    REDLOCK_CLUSTER_STATE="$cluster_state" "$root/scripts/cluster.sh" stop >/dev/null || true
  fi
  rm -rf -- "$work"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# Forget a background pid once it has been waited for.
forget_pid() {
  local keep=() p
  for p in "${bg_pids[@]+"${bg_pids[@]}"}"; do
    [[ "$p" == "$1" ]] || keep+=("$p")
  done
  bg_pids=("${keep[@]+"${keep[@]}"}")
}

# --- dependencies ---------------------------------------------------------------

sudo=()
((EUID == 0)) || sudo=(sudo)
apt_updated=0
apt_install() {
  if ((!apt_updated)); then
    "${sudo[@]}" apt-get update -qq
    apt_updated=1
  fi
  say "installing $*"
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive \
    apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}

missing=()
command -v node >/dev/null || missing+=(nodejs)
command -v npm >/dev/null || missing+=(npm)
command -v gnuplot >/dev/null || missing+=(gnuplot-nox)
((${#missing[@]} == 0)) || apt_install "${missing[@]}"

say "building into $BUILD_DIR"
"$root/scripts/build.sh" "$BUILD_DIR" -DREDLOCK_BUILD_BENCH=ON -DREDLOCK_BUILD_TESTS=ON >"$work/build.log" 2>&1 ||
  {
    tail -n 40 "$work/build.log" >&2
    die "build failed"
  }
bench="$BUILD_DIR/bin/redlock-bench"
floor_bench="$BUILD_DIR/bin/redlock-floor-bench"
slow_proxy="$BUILD_DIR/bin/redlock-slow-proxy"
[[ -x "$bench" ]] || die "$bench was not built"
[[ -x "$floor_bench" ]] || die "$floor_bench was not built"
[[ -x "$slow_proxy" ]] || die "$slow_proxy was not built (it needs the tests' support library)"

say "installing redlock@$NODE_REDLOCK_VERSION and ioredis@$IOREDIS_VERSION with npm"
node_dir="$work/node"
mkdir -p "$node_dir"
echo '{"name":"redlock-bench-compare","private":true}' >"$node_dir/package.json"
(cd "$node_dir" && npm install --no-audit --no-fund --loglevel=error \
  "redlock@$NODE_REDLOCK_VERSION" "ioredis@$IOREDIS_VERSION") >"$work/npm.log" 2>&1 ||
  {
    cat "$work/npm.log" >&2
    die "npm install failed"
  }
export NODE_REDLOCK_DIR="$node_dir"
harness="$root/bench/node-redlock/harness.mjs"
pkg_version() { node -p "require('$node_dir/node_modules/$1/package.json').version.replace(/^v/, '')"; }

# --- machine and versions --------------------------------------------------------

mkdir -p "$OUT_DIR"
stamp=$(date -u +%Y%m%d-%H%M%SZ)
{
  echo "date (UTC):      $(date -u '+%Y-%m-%d %H:%M:%S')"
  echo "commit:          $(git -C "$root" rev-parse HEAD 2>/dev/null || echo unknown)$(
    [[ -n "$(git -C "$root" status --porcelain --untracked-files=no 2>/dev/null)" ]] && echo ' (with local changes)'
  )"
  echo "nproc:           $(nproc)"
  echo "CPU:             $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //')"
  echo "memory:          $(awk '/MemTotal/ {printf "%.1f GiB", $2 / 1048576}' /proc/meminfo)"
  echo "kernel:          $(uname -srm)"
  # shellcheck source=/dev/null
  echo "OS:              $(. /etc/os-release 2>/dev/null && echo "$PRETTY_NAME")"
  echo "redis-server:    $(redis-server --version)"
  echo "g++:             $(g++ --version | head -n1)"
  echo "cmake build:     ${BUILD_TYPE:-RelWithDebInfo}"
  echo "node:            $(node --version)"
  echo "npm:             $(npm --version 2>/dev/null)"
  echo "node-redlock:    redlock@$(pkg_version redlock)"
  echo "ioredis:         ioredis@$(pkg_version ioredis)"
  echo "gnuplot:         $(gnuplot --version)"
  echo "load at start:   $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "settings:        DURATION=$DURATION WARMUP=$WARMUP MEMORY_DURATION=$MEMORY_DURATION TTL=$TTL SLOW_DELAY_MS=$SLOW_DELAY_MS"
  echo "                 DISTANT_DURATION=$DISTANT_DURATION DISTANT_DELAYS_MS=\"$DISTANT_DELAYS_MS\" PROCESSES=$PROCESSES"
  echo "node-redlock contention retry: retryDelay ${NODE_REDLOCK_RETRY_DELAY_MS} ms, retryJitter ${NODE_REDLOCK_RETRY_JITTER_MS} ms"
} >"$work/machine.txt"

# --- nodes and the slow-node proxy ------------------------------------------------

say "starting five redis-server nodes on 127.0.0.1:$((PORT_BASE + 1))..$((PORT_BASE + 5))"
started_cluster=1
REDLOCK_CLUSTER_STATE="$cluster_state" "$root/scripts/cluster.sh" start 5 --port-base "$PORT_BASE" >/dev/null
nodes=""
for i in 1 2 3 4 5; do
  nodes+="${nodes:+,}127.0.0.1:$((PORT_BASE + i))"
done

# start_proxy NAME UPSTREAM_PORT REPLY_DELAY_MS REQUEST_DELAY_MS: starts a
# redlock-slow-proxy in front of a node; sets proxy_port and proxy_pid.
# nice 19: simulating a slow link should take as little CPU as it can from
# the client and the nodes (a real slow link costs this machine none).
proxy_port=""
proxy_pid=""
start_proxy() {
  local name=$1 i
  nice -n 19 "$slow_proxy" --upstream-port "$2" --delay-ms "$3" --request-delay-ms "$4" \
    >"$work/proxy-$name.port" 2>"$work/proxy-$name.err" &
  proxy_pid=$!
  bg_pids+=("$proxy_pid")
  proxy_port=""
  for ((i = 0; i < 100; i++)); do
    proxy_port=$(head -n1 "$work/proxy-$name.port" 2>/dev/null || true)
    [[ -n "$proxy_port" ]] && break
    kill -0 "$proxy_pid" 2>/dev/null || break
    sleep 0.1
  done
  [[ "$proxy_port" =~ ^[0-9]+$ ]] || {
    cat "$work/proxy-$name.err" >&2
    die "redlock-slow-proxy ($name) did not start"
  }
  [[ "$(timeout 5 redis-cli -p "$proxy_port" ping 2>/dev/null)" == PONG ]] ||
    die "port $2 does not answer through the proxy on port $proxy_port"
}

# stop_pid PID: stops one background process this script started.
stop_pid() {
  kill -TERM "$1" 2>/dev/null || true
  wait "$1" 2>/dev/null || true
  forget_pid "$1"
}

start_proxy slow "$((PORT_BASE + 5))" "$SLOW_DELAY_MS" 0
slow_nodes="${nodes%,*},127.0.0.1:$proxy_port"
say "node 5 behind a ${SLOW_DELAY_MS} ms reply-delay proxy on 127.0.0.1:$proxy_port"

# --- the runs --------------------------------------------------------------------

results="$work/results.jsonl"
: >"$results"
memory_tsv="$work/memory.tsv"

# run CLIENT SCENARIO DURATION -- command...   (appends the JSON line to $results)
# For the memory scenario, also samples the process's RSS once a second.
run() {
  local client=$1 scenario=$2 seconds=$3 pid line t0 now elapsed rss limit rc=0
  shift 4
  local out="$work/$client-$scenario.out" err="$work/$client-$scenario.err"
  say "$client: $scenario (${seconds} s + ${WARMUP} s warm-up)"
  # A generous bound, so that a wedged client cannot hang the script.
  limit=$(awk -v d="$seconds" -v w="$WARMUP" 'BEGIN { printf "%d", d + w + 120 }')
  if [[ "$scenario" == memory ]]; then
    # Run the bench itself (not under timeout) so that its RSS can be read.
    "$@" --duration "${seconds}s" --warmup "${WARMUP}s" --ttl "${TTL}ms" >"$out" 2>"$err" &
    pid=$!
    bg_pids+=("$pid")
    printf 't_s\trss_kb\n' >"$memory_tsv"
    t0=$(date +%s.%N)
    while kill -0 "$pid" 2>/dev/null; do
      now=$(date +%s.%N)
      elapsed=$(awk -v a="$t0" -v b="$now" 'BEGIN { printf "%.2f", b - a }')
      rss=$(awk '/^VmRSS:/ {print $2}' "/proc/$pid/status" 2>/dev/null || true)
      [[ -n "$rss" ]] && printf '%s\t%s\n' "$elapsed" "$rss" >>"$memory_tsv"
      if awk -v e="$elapsed" -v l="$limit" 'BEGIN { exit !(e > l) }'; then
        kill -TERM "$pid" 2>/dev/null || true
      fi
      sleep 1
    done
  else
    timeout --kill-after=10 "$limit" \
      "$@" --duration "${seconds}s" --warmup "${WARMUP}s" --ttl "${TTL}ms" >"$out" 2>"$err" &
    pid=$!
    bg_pids+=("$pid")
  fi
  wait "$pid" || rc=$?
  forget_pid "$pid"
  line=$(tail -n1 "$out")
  if ((rc != 0)) || [[ "$line" != '{"workload":'* ]]; then
    cat "$err" >&2
    die "$client $scenario failed (exit $rc)"
  fi
  [[ -s "$err" ]] && sed "s/^/  $client $scenario: /" "$err" >&2
  printf '{"client":"%s","scenario":"%s",%s\n' "$client" "$scenario" "${line#\{}" >>"$results"
}

# run_processes CLIENT SCENARIO COUNT -- command...: COUNT copies of the
# command at once, on one resource (one --key-prefix for all), each writing
# its holds to $work/holds-CLIENT-I.log; appends every JSON line to $results
# with "process" added.
run_processes() {
  local client=$1 scenario=$2 count=$3 i rc line limit out err
  shift 4
  local prefix="bench-compare:$stamp:$client:" pids=()
  say "$client: $scenario, $count processes at once (${DURATION} s + ${WARMUP} s warm-up)"
  limit=$(awk -v d="$DURATION" -v w="$WARMUP" 'BEGIN { printf "%d", d + w + 120 }')
  for ((i = 1; i <= count; i++)); do
    timeout --kill-after=10 "$limit" "$@" --key-prefix "$prefix" \
      --hold-log "$work/holds-$client-$i.log" \
      --duration "${DURATION}s" --warmup "${WARMUP}s" --ttl "${TTL}ms" \
      >"$work/$client-$scenario-$i.out" 2>"$work/$client-$scenario-$i.err" &
    pids+=($!)
    bg_pids+=($!)
  done
  for ((i = 1; i <= count; i++)); do
    out="$work/$client-$scenario-$i.out"
    err="$work/$client-$scenario-$i.err"
    rc=0
    wait "${pids[i - 1]}" || rc=$?
    forget_pid "${pids[i - 1]}"
    line=$(tail -n1 "$out" 2>/dev/null || true)
    # Exit 1 with figures: nothing but errors, a process that never got the
    # lock (starved); that is a result, counted in the report.
    if ((rc > 1)) || [[ "$line" != '{"workload":'* ]]; then
      cat "$err" >&2
      die "$client $scenario process $i failed (exit $rc)"
    fi
    [[ -s "$err" ]] && sed "s/^/  $client $scenario $i: /" "$err" >&2
    printf '{"client":"%s","scenario":"%s","process":%d,%s\n' "$client" "$scenario" "$i" \
      "${line#\{}" >>"$results"
  done
}

# The command of each client; all take the same flags.
client_cmd() {
  case "$1" in
    redlock) cmd=("$bench") ;;
    node-redlock) cmd=(node "$harness") ;;
    floor) cmd=("$floor_bench") ;;
  esac
}

# Same nodes, same run: for each workload, redlock, node-redlock, then the
# floor where it has the workload (one cycle at a time, and 64 cycles per
# write for throughput; also one per write, for the record).
cmd=()
for scenario in latency throughput throughput-batch1 contention latency-slow-node; do
  for client in redlock node-redlock floor; do
    case "$client:$scenario" in
      floor:contention | floor:latency-slow-node | redlock:throughput-batch1 | node-redlock:throughput-batch1)
        continue
        ;;
    esac
    client_cmd "$client"
    case "$scenario" in
      latency) args=(--nodes "$nodes" --workload latency --concurrency 1) ;;
      throughput) args=(--nodes "$nodes" --workload throughput --concurrency 64) ;;
      throughput-batch1) args=(--nodes "$nodes" --workload throughput --batch 1) ;;
      contention) args=(--nodes "$nodes" --workload contention --concurrency 8 --hold 1ms) ;;
      latency-slow-node) args=(--nodes "$slow_nodes" --workload latency --concurrency 1) ;;
    esac
    run "$client" "$scenario" "$DURATION" -- "${cmd[@]}" "${args[@]}"
  done
done

# Latency against the floor, alternated: short runs of redlock then the
# floor, LATENCY_PAIRS times. On a shared virtual machine a p50 drifts by
# 10-20% over a few minutes; alternating puts that drift on both clients,
# and the report takes the median of the pairs' ratios.
for ((pair = 1; pair <= LATENCY_PAIRS; pair++)); do
  for client in redlock floor; do
    client_cmd "$client"
    run "$client" "latency-pair-$pair" "$PAIR_DURATION" -- "${cmd[@]}" \
      --nodes "$nodes" --workload latency --concurrency 1
  done
done

# Waiting across processes: PROCESSES processes, one worker each, after one
# resource; the release must reach the waiters of other processes.
for client in redlock node-redlock; do
  client_cmd "$client"
  run_processes "$client" contention-processes "$PROCESSES" -- "${cmd[@]}" \
    --nodes "$nodes" --workload contention --concurrency 1 --hold 1ms
done

# Distant nodes: each node behind its own proxy delaying requests and replies
# by DISTANT_DELAYS_MS (5, 20, 40, 80, 120 ms each way by default). The floor
# runs first: its per-node reply times are the round trips the report compares
# with. The proxies stop afterwards.
distant_nodes=""
distant_pids=()
for i in 1 2 3 4 5; do
  d=${distant_delays[i - 1]}
  start_proxy "distant-$i" "$((PORT_BASE + i))" "$d" "$d"
  distant_pids+=("$proxy_pid")
  distant_nodes+="${distant_nodes:+,}127.0.0.1:$proxy_port"
done
say "distant nodes: ${DISTANT_DELAYS_MS// / ms, } ms each way, through $distant_nodes"
for client in floor redlock node-redlock; do
  client_cmd "$client"
  run "$client" latency-distant "$DISTANT_DURATION" -- "${cmd[@]}" \
    --nodes "$distant_nodes" --workload latency --concurrency 1
done
for pid in "${distant_pids[@]}"; do stop_pid "$pid"; done

# Fenced acquires: redlock-bench alone, one at a time, with the nodes'
# counters agreeing, then with every node's counter apart (each acquire then
# takes the write-back). The first fenced run seeds the nodes' fencing state
# (about TTL) before its warm-up.
run redlock latency-fenced "$DURATION" -- "$bench" --nodes "$nodes" --workload latency --fenced
run redlock latency-fence-disagree "$DURATION" -- "$bench" --nodes "$nodes" --workload latency \
  --fence-disagree all

# Memory: redlock-bench alone, throughput C=64 for MEMORY_DURATION seconds.
run redlock memory "$MEMORY_DURATION" -- "$bench" --nodes "$nodes" --workload throughput --concurrency 64

# Many held locks: redlock-bench alone keeps N locks (TTL as above) extended
# for HELD_DURATION seconds, for each N of HELD_LOCKS.
for n in $HELD_LOCKS; do
  run redlock "held-$n" "$HELD_DURATION" -- "$bench" --nodes "$nodes" --workload held --locks "$n"
done

echo "load at end:     $(cut -d' ' -f1-3 /proc/loadavg)" >>"$work/machine.txt"

# --- report: table, plots ---------------------------------------------------------

cat >"$work/report.mjs" <<'EOF'
// Reads the JSON lines, the hold logs of the across-processes run and the
// memory samples; writes the markdown table and the data files that gnuplot
// draws. Prints the number of missed targets.
import fs from "node:fs";

const [resultsPath, memoryPath, tablePath, datDir, stamp, duration, warmup, memDuration, slowMs, ttl,
  distantDuration, distantDelays, processes] = process.argv.slice(2);
const rows = fs.readFileSync(resultsPath, "utf8").trim().split("\n").map((l) => JSON.parse(l));
const find = (client, scenario) => rows.find((r) => r.client === client && r.scenario === scenario);
const get = (client, scenario) => {
  const row = find(client, scenario);
  if (!row) throw new Error(`no result for ${client} ${scenario}`);
  return row;
};

const fmt = (x, digits = 2) =>
  x === Infinity ? "∞" :
  Number.isFinite(x) ? x.toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits }) : "n/a";
// a / b; a positive figure over 0 (a client that got nothing) is ∞.
const ratio = (a, b) => (!Number.isFinite(a) ? NaN : b > 0 ? a / b : b === 0 && a > 0 ? Infinity : NaN);
const mib = (kb) => kb / 1024;
const sum = (xs) => xs.reduce((a, b) => a + b, 0);
// Nearest-rank percentile of sorted values, as bench/stats.hpp takes it.
const percentile = (sorted, p) =>
  sorted.length === 0 ? NaN : sorted[Math.min(Math.max(Math.floor(p * sorted.length + 0.999999), 1), sorted.length) - 1];

let failures = 0;
// One table of targets per reference (the floor, node-redlock, ...).
function checks(reference) {
  const lines = [];
  return {
    lines,
    add(what, ours, theirs, r, goal, pass) {
      if (!pass) ++failures;
      lines.push(`| ${what} | ${ours} | ${theirs} | ${r} | ${goal} | ${pass ? "PASS" : "**FAIL**"} |`);
    },
    table() {
      return [`| target | redlock | ${reference} | ratio | goal | result |`, "|---|---:|---:|---:|---|---|", ...lines];
    },
  };
}

// The across-processes run of one client: its JSON lines and its hold logs
// (the measured window, then "wait start, acquired, release start" per hold,
// in ns of one system-wide clock). The rate and the wait percentiles are
// taken over the window every process was measuring in; overlaps over every
// hold, warm-up included.
const gaveUpMs = 10000; // both harnesses' wait timeout in the contention runs
function acrossProcesses(client) {
  const lines = rows.filter((r) => r.client === client && r.scenario === "contention-processes");
  if (lines.length === 0) throw new Error(`no result for ${client} contention-processes`);
  const logs = fs.readdirSync(datDir).filter((f) => f.startsWith(`holds-${client}-`) && f.endsWith(".log"));
  let from = null;
  let to = null;
  const holds = [];
  for (const name of logs) {
    const text = fs.readFileSync(`${datDir}/${name}`, "utf8").trim().split("\n");
    const [word, a, b] = text[0].split(" ");
    if (word !== "window") throw new Error(`${name}: no window line`);
    if (from === null || BigInt(a) > from) from = BigInt(a);
    if (to === null || BigInt(b) < to) to = BigInt(b);
    for (const line of text.slice(1)) {
      const [t0, t1, t2] = line.split(" ").map(BigInt);
      holds.push({ t0, t1, t2 });
    }
  }
  // Two holders at once: a hold that began before an earlier one ended.
  holds.sort((x, y) => (x.t1 < y.t1 ? -1 : x.t1 > y.t1 ? 1 : 0));
  let overlaps = 0;
  let end = null;
  for (const h of holds) {
    if (end !== null && h.t1 < end) ++overlaps;
    if (end === null || h.t2 > end) end = h.t2;
  }
  const windowS = from !== null && to > from ? Number(to - from) / 1e9 : 0;
  const inWindow = (t) => t >= from && t < to;
  const acquired = holds.filter((h) => inWindow(h.t1)).length;
  const waits = holds.filter((h) => inWindow(h.t0)).map((h) => Number(h.t1 - h.t0) / 1e6);
  // A wait that gave up lasted the whole wait timeout (10 s): it counts as
  // that long, so that a client starving in the window cannot show a short
  // p99 made of the few waits that did end.
  const gaveUp = sum(lines.map((r) => r.errors));
  for (let i = 0; i < gaveUp; ++i) waits.push(gaveUpMs);
  waits.sort((x, y) => x - y);
  // No wait ended in the window: they all outlasted it (a starved client).
  const waitPercentile = (p) => (waits.length > 0 ? percentile(waits, p) : windowS > 0 ? Infinity : NaN);
  const cycles = sum(lines.map((r) => r.cycles));
  const cpu = sum(lines.map((r) => r.client_cpu_s.user + r.client_cpu_s.system));
  return {
    processes: lines.length,
    logs: logs.length,
    windowS,
    rate: windowS > 0 ? acquired / windowS : NaN,
    sumRate: sum(lines.map((r) => r.acquisitions_per_s)),
    waitP50: waitPercentile(0.5),
    waitP99: waitPercentile(0.99),
    maxP99: Math.max(...lines.map((r) => r.wait_ms.p99)),
    releaseP50: Math.max(...lines.map((r) => r.release_ms.p50)),
    releaseP99: Math.max(...lines.map((r) => r.release_ms.p99)),
    cpuPer1000: cycles > 0 ? (cpu * 1000) / cycles : NaN,
    maxRssKb: Math.max(...lines.map((r) => r.max_rss_kb)),
    errors: sum(lines.map((r) => r.errors)),
    holds: holds.length,
    overlaps,
  };
}

const lat = { ours: get("redlock", "latency"), node: get("node-redlock", "latency"), floor: get("floor", "latency") };
const thr = { ours: get("redlock", "throughput"), node: get("node-redlock", "throughput"), floor: get("floor", "throughput") };
const con = { ours: get("redlock", "contention"), node: get("node-redlock", "contention") };
const procs = { ours: acrossProcesses("redlock"), node: acrossProcesses("node-redlock") };
const slow = { ours: get("redlock", "latency-slow-node"), node: get("node-redlock", "latency-slow-node") };
const far = {
  ours: get("redlock", "latency-distant"),
  node: get("node-redlock", "latency-distant"),
  floor: get("floor", "latency-distant"),
};
const fenced = { plain: lat.ours, fast: get("redlock", "latency-fenced"), apart: get("redlock", "latency-fence-disagree") };
const mem = get("redlock", "memory");
const held = rows.filter((r) => r.workload === "held").sort((a, b) => a.locks - b.locks);

// The alternated latency runs: pairs of (redlock, floor), in order.
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const n = s.length;
  return n === 0 ? NaN : n % 2 ? s[(n - 1) / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
};
const pairs = [];
for (let i = 1; ; ++i) {
  const o = find("redlock", `latency-pair-${i}`);
  const f = find("floor", `latency-pair-${i}`);
  if (!o || !f) break;
  pairs.push({ o, f });
}
const pairFigures = (key) => ({
  ours: median(pairs.map((p) => p.o[key].p50)),
  floor: median(pairs.map((p) => p.f[key].p50)),
  ratio: median(pairs.map((p) => ratio(p.o[key].p50, p.f[key].p50))),
  each: pairs.map((p) => fmt(ratio(p.o[key].p50, p.f[key].p50))).join(", "),
});

// --- against the floor ---
const floorChecks = checks("floor");
let x;
for (const [key, what] of [["acquire_ms", "acquire"], ["release_ms", "release"]]) {
  if (pairs.length > 0) {
    const p = pairFigures(key);
    floorChecks.add(`latency, C=1: ${what} p50 (ms), ${pairs.length} alternated runs (ratios ${p.each})`,
      fmt(p.ours, 3), fmt(p.floor, 3), `${fmt(p.ratio)}×`, "≤ 1.05× the floor", p.ratio <= 1.05);
  } else {
    x = ratio(lat.ours[key].p50, lat.floor[key].p50);
    floorChecks.add(`latency, C=1: ${what} p50 (ms)`, fmt(lat.ours[key].p50, 3), fmt(lat.floor[key].p50, 3),
      `${fmt(x)}×`, "≤ 1.05× the floor", x <= 1.05);
  }
}
x = ratio(thr.ours.cycles_per_s, thr.floor.cycles_per_s);
floorChecks.add(`throughput, C=64: cycles/s (floor: ${thr.floor.batch} per write)`, fmt(thr.ours.cycles_per_s, 0),
  fmt(thr.floor.cycles_per_s, 0), `${fmt(x)}×`, "≥ 0.85× the floor", x >= 0.85);

// --- against node-redlock ---
const nodeChecks = checks("node-redlock");
x = ratio(thr.ours.client_cpu_s_per_1000_cycles, thr.node.client_cpu_s_per_1000_cycles);
nodeChecks.add("throughput, C=64: client CPU s per 1,000 cycles", fmt(thr.ours.client_cpu_s_per_1000_cycles, 4),
  fmt(thr.node.client_cpu_s_per_1000_cycles, 4), `${fmt(x)}×`, "≤ 0.1× node-redlock", x <= 0.1);
x = ratio(procs.ours.rate, procs.node.rate);
nodeChecks.add(`contention, ${processes} processes × 1, hold 1 ms: acquisitions/s`, fmt(procs.ours.rate, 0),
  fmt(procs.node.rate, 0), `${fmt(x)}×`, "≥ 1.5× node-redlock", x >= 1.5);
x = ratio(procs.ours.waitP99, procs.node.waitP99);
nodeChecks.add(`contention, ${processes} processes × 1, hold 1 ms: wait p99, all processes (ms)`,
  fmt(procs.ours.waitP99, 2), fmt(procs.node.waitP99, 2), `${fmt(x)}×`, "≤ 0.2× node-redlock", x <= 0.2);
nodeChecks.add(`contention, ${processes} processes: overlapping holds (of ${fmt(procs.ours.holds, 0)} / ` +
  `${fmt(procs.node.holds, 0)})`, String(procs.ours.overlaps), String(procs.node.overlaps), "—", "0",
  procs.ours.overlaps === 0 && procs.ours.logs === procs.ours.processes);
x = ratio(con.ours.acquisitions_per_s, con.node.acquisitions_per_s);
nodeChecks.add("contention, 1 process × 8, hold 1 ms: acquisitions/s", fmt(con.ours.acquisitions_per_s, 0),
  fmt(con.node.acquisitions_per_s, 0), `${fmt(x)}×`, "≥ 1.5× node-redlock", x >= 1.5);
x = ratio(con.ours.wait_ms.p99, con.node.wait_ms.p99);
nodeChecks.add("contention, 1 process × 8, hold 1 ms: wait p99 (ms)", fmt(con.ours.wait_ms.p99, 2),
  fmt(con.node.wait_ms.p99, 2), `${fmt(x)}×`, "≤ 0.2× node-redlock", x <= 0.2);
nodeChecks.add("contention, 1 process × 8: overlap violations (two holders at once)",
  String(con.ours.overlap_violations), String(con.node.overlap_violations), "—", "0",
  con.ours.overlap_violations === 0);
x = ratio(thr.ours.cycles_per_s, thr.node.cycles_per_s);
nodeChecks.add("throughput, C=64: cycles/s", fmt(thr.ours.cycles_per_s, 0), fmt(thr.node.cycles_per_s, 0),
  `${fmt(x)}×`, "≥ 6× node-redlock (issue 4)", x >= 6);
x = ratio(lat.ours.acquire_ms.p50, lat.node.acquire_ms.p50);
nodeChecks.add("latency, C=1: acquire p50 (ms)", fmt(lat.ours.acquire_ms.p50, 3), fmt(lat.node.acquire_ms.p50, 3),
  `${fmt(x)}×`, "≤ 0.6× node-redlock (issue 4)", x <= 0.6);
x = ratio(lat.ours.release_ms.p50, lat.node.release_ms.p50);
nodeChecks.add("latency, C=1: release p50 (ms)", fmt(lat.ours.release_ms.p50, 3), fmt(lat.node.release_ms.p50, 3),
  `${fmt(x)}×`, "≤ 0.6× node-redlock (issue 4)", x <= 0.6);
x = ratio(slow.ours.acquire_ms.p50, lat.ours.acquire_ms.p50);
nodeChecks.add(`node 5 +${slowMs} ms, C=1: acquire p50 (ms)`, fmt(slow.ours.acquire_ms.p50, 3),
  fmt(slow.node.acquire_ms.p50, 3), `${fmt(x)}× our own`,
  `≤ 1.2× our p50 without the slow node (${fmt(lat.ours.acquire_ms.p50, 3)})`, x <= 1.2);
nodeChecks.add("memory: max RSS, throughput C=64 (MiB)", fmt(mib(thr.ours.max_rss_kb), 1),
  fmt(mib(thr.node.max_rss_kb), 1), "—", "< 32 MiB", thr.ours.max_rss_kb < 32768);
nodeChecks.add(`memory: max RSS, ${memDuration} s throughput run, C=64 (MiB)`, fmt(mib(mem.max_rss_kb), 1), "—", "—",
  "< 32 MiB", mem.max_rss_kb < 32768);
// redlock-bench keeps its latency samples in a fixed histogram, so any
// growth after warm-up is the client's.
const growth = mem.rss_kb_end - mem.rss_kb_after_warmup;
nodeChecks.add(`memory: RSS growth after warm-up over ${memDuration} s (KiB)`,
  `${growth >= 0 ? "+" : ""}${fmt(growth, 0)}`, "—", "—", "flat: ≤ 1,024 KiB", growth <= 1024);

// --- many held locks: the largest run ---
const heldChecks = checks("goal");
const most = held[held.length - 1];
if (most) {
  const n = fmt(most.locks, 0);
  const requestTimeoutMs = Math.min(Math.max(most.ttl_ms / 20, 1), 500);
  heldChecks.add(`held, ${n} locks for ${fmt(most.duration_s, 0)} s: lapses`, String(most.lapses), "0", "—", "0",
    most.lapses === 0 && most.kept === most.locks);
  heldChecks.add(`held, ${n} locks: client CPU, share of a core`, `${fmt(100 * most.client_cpu_core_fraction, 1)}%`,
    "10%", "—", "≤ 10% of a core", most.client_cpu_core_fraction <= 0.1);
  heldChecks.add(`held, ${n} locks: memory per held lock above the empty client (bytes, RSS)`,
    fmt(most.bytes_per_lock, 0), "1,024", "—", "≤ 1 KB", most.bytes_per_lock <= 1024);
  heldChecks.add(`held, ${n} locks: slowest extension (ms)`, fmt(most.extend_ms.max, 1),
    fmt(requestTimeoutMs, 0), "—", "< the request timeout (no burst outlasts it)",
    most.extend_ms.max < requestTimeoutMs);
}
const heldRow = (r) =>
  `| ${fmt(r.locks, 0)} | ${r.lapses} | ${fmt(r.extensions, 0)} (${fmt(r.extensions_failed, 0)}) | ` +
  `${fmt(r.extend_ms.p50, 1)} / ${fmt(r.extend_ms.p99, 1)} / ${fmt(r.extend_ms.max, 1)} | ` +
  `${fmt(100 * r.client_cpu_core_fraction, 2)}% | ${fmt(r.allocations_per_extension, 1)} | ` +
  `${fmt(r.bytes_per_lock, 0)} (${fmt(r.heap_bytes_per_lock, 0)}) | ${fmt(r.acquire_s, 2)} / ${fmt(r.release_s, 2)} |`;

// --- distant nodes: the round trips, as the floor measured them ---
const trips = far.floor.node_acquire_ms.map((s) => s.p50);
const quorumTrip = [...trips].sort((a, b) => a - b)[Math.floor(trips.length / 2)];
const farChecks = checks("quorum-th fastest round trip");
x = ratio(far.ours.acquire_ms.p50, quorumTrip);
farChecks.add(`distant nodes (${distantDelays.split(" ").join("/")} ms each way), C=1: acquire p50 (ms)`,
  fmt(far.ours.acquire_ms.p50, 3), fmt(quorumTrip, 3), `${fmt(x)}×`, "≤ 1.1× the round trip", x <= 1.1);

// --- fenced acquires: the cost, no target ---
const fencedRow = (label, r) => {
  const p50 = r.acquire_ms.p50;
  const backs = r.write_back_fraction ?? null;
  return `| ${label} | ${fmt(p50, 3)} | ${fmt(r.acquire_ms.p99, 3)} | ${fmt(ratio(p50, fenced.plain.acquire_ms.p50))}× | ` +
    `${backs === null ? "—" : fmt(backs, 2)} | ${fmt(r.client_cpu_s_per_1000_cycles, 4)} |`;
};

// --- every figure ---
const scenarioLabel = (client, scenario) => {
  const labels = {
    latency: "latency C=1",
    throughput: client === "floor" ? `throughput, ${thr.floor.batch} per write` : "throughput C=64",
    "throughput-batch1": "throughput, 1 per write",
    contention: "contention, 1 process × 8",
    "latency-slow-node": `latency C=1, node 5 +${slowMs} ms`,
    "latency-distant": `latency C=1, distant nodes (${distantDuration} s)`,
    "latency-fenced": "latency C=1, fenced",
    "latency-fence-disagree": "latency C=1, fenced, counters apart",
    memory: `memory run ${memDuration} s, C=64`,
  };
  return labels[scenario] ?? scenario;
};
const figureRow = (client, label, cps, acq, rel, wait, cpu, rssKb, errors) =>
  `| ${client} | ${label} | ${fmt(cps, 0)} | ${acq} | ${rel} | ${wait} | ${fmt(cpu, 4)} | ${fmt(mib(rssKb), 1)} | ${errors} |`;
const pair = (s) => `${fmt(s.p50, 3)} / ${fmt(s.p99, 3)}`;
const figures = rows.filter((r) => r.scenario !== "contention-processes" && r.workload !== "held" &&
  !r.scenario.startsWith("latency-pair-")).map((r) =>
  figureRow(r.client, scenarioLabel(r.client, r.scenario), r.cycles_per_s, pair(r.acquire_ms), pair(r.release_ms),
    r.wait_ms ? fmt(r.wait_ms.p99, 2) : "—", r.client_cpu_s_per_1000_cycles, r.max_rss_kb, r.errors));
for (const [client, p] of [["redlock", procs.ours], ["node-redlock", procs.node]]) {
  figures.push(figureRow(client, `contention, ${p.processes} processes × 1 (all processes)`, p.rate,
    `${fmt(p.waitP50, 3)} / ${fmt(p.waitP99, 3)}`, `${fmt(p.releaseP50, 3)} / ${fmt(p.releaseP99, 3)} (max)`,
    `${fmt(p.waitP99, 2)} (max of each: ${fmt(p.maxP99, 2)})`, p.cpuPer1000, p.maxRssKb, p.errors));
}

const table = [
  `Run ${stamp}: every run ${duration} s measured after ${warmup} s of warm-up (distant nodes ${distantDuration} s), ` +
    `TTL ${ttl} ms, the same five local redis-server nodes for every client; machine and versions in ` +
    "`docs/bench/latest-machine.txt`, every figure in `docs/bench/latest.jsonl`. " +
    "The floor is `redlock-floor-bench`: blocking sockets, the same commands, no library.",
  "",
  "Against the machine's floor:",
  "",
  ...floorChecks.table(),
  "",
  "Against node-redlock (goals of issue 24 unless marked):",
  "",
  ...nodeChecks.table(),
  "",
  `Across processes: ${processes} processes, one worker each, on one resource; rate and wait percentiles over the ` +
    `${fmt(procs.ours.windowS, 1)} s (redlock) and ${fmt(procs.node.windowS, 1)} s (node-redlock) in which every ` +
    "process was measuring, from the hold logs (sum of each process's own rate: " +
    `${fmt(procs.ours.sumRate, 0)} and ${fmt(procs.node.sumRate, 0)}/s); a wait that gave up (10 s) is an error, ` +
    `and counts as 10 s in the percentiles (${procs.ours.errors} and ${procs.node.errors}); ∞: no wait ended in ` +
    "the window; " +
    "overlaps over every hold, warm-up included.",
  "",
  "Distant nodes:",
  "",
  ...farChecks.table(),
  "",
  `Many held locks (one client, TTL ${ttl} ms, kept for ${held.length ? fmt(held[0].duration_s, 0) : "?"} s; ` +
    "memory above the connected client with nothing held):",
  "",
  ...heldChecks.table(),
  "",
  "| kept locks | lapses | extensions (failed) | extension p50 / p99 / max (ms) | client CPU, share of a core | " +
    "allocations per extension | bytes per lock, RSS (heap) | acquire all / release all (s) |",
  "|---:|---:|---:|---:|---:|---:|---:|---:|",
  ...held.map(heldRow),
  "",
  `Round trips through the proxies, p50 per node as the floor measured them: ${trips.map((t) => fmt(t, 1)).join(", ")} ms; ` +
    `the floor's own acquire p50 (quorum-th reply) ${fmt(far.floor.acquire_ms.p50, 3)} ms; node-redlock's acquire p50 ` +
    `${fmt(far.node.acquire_ms.p50, 3)} ms (${fmt(ratio(far.node.acquire_ms.p50, quorumTrip))}× the round trip).`,
  "",
  `${failures === 0 ? "Every target met." : `${failures} target(s) missed.`}`,
  "",
  "Fenced acquires, C=1 (no target; the fast path is the `--fenced` row when its write-backs per acquire are 0):",
  "",
  "| acquire | p50 (ms) | p99 (ms) | p50 vs plain | write-backs per acquire | CPU s / 1,000 cycles |",
  "|---|---:|---:|---:|---:|---:|",
  fencedRow("plain", fenced.plain),
  fencedRow("fenced (`--fenced`)", fenced.fast),
  fencedRow("fenced, every node's counter apart (`--fence-disagree all`)", fenced.apart),
  "",
  "| client | workload | cycles/s | acquire p50 / p99 (ms) | release p50 / p99 (ms) | wait p99 (ms) | CPU s / 1,000 cycles | max RSS (MiB) | errors |",
  "|---|---|---:|---:|---:|---:|---:|---:|---:|",
  ...figures,
  "",
].join("\n");
fs.writeFileSync(tablePath, table);

// Data for gnuplot: one line per workload, every client (NaN: not run).
const order = ["latency", "throughput", "contention", "latency-slow-node"];
const plotLabel = {
  latency: "latency C=1",
  throughput: "throughput C=64",
  contention: "contention C=8",
  "latency-slow-node": `slow node C=1`,
};
const atLeast = (v) => Math.max(v, 0.001);
const lines = ["# workload ours_cps node_cps ours_acq_p50 ours_acq_p99 node_acq_p50 node_acq_p99 " +
  "ours_rel_p50 ours_rel_p99 node_rel_p50 node_rel_p99 ours_cpu node_cpu " +
  "floor_cps floor_acq_p50 floor_acq_p99 floor_rel_p50 floor_rel_p99 floor_cpu"];
for (const s of order) {
  const o = get("redlock", s);
  const n = get("node-redlock", s);
  const f = find("floor", s);
  const floorCols = f
    ? [f.cycles_per_s, atLeast(f.acquire_ms.p50), atLeast(f.acquire_ms.p99), atLeast(f.release_ms.p50),
      atLeast(f.release_ms.p99), f.client_cpu_s_per_1000_cycles]
    : Array(6).fill("NaN");
  lines.push([`"${plotLabel[s]}"`, o.cycles_per_s, n.cycles_per_s,
    atLeast(o.acquire_ms.p50), atLeast(o.acquire_ms.p99), atLeast(n.acquire_ms.p50), atLeast(n.acquire_ms.p99),
    atLeast(o.release_ms.p50), atLeast(o.release_ms.p99), atLeast(n.release_ms.p50), atLeast(n.release_ms.p99),
    o.client_cpu_s_per_1000_cycles, n.client_cpu_s_per_1000_cycles, ...floorCols].join(" "));
}
fs.writeFileSync(`${datDir}/workloads.dat`, lines.join("\n") + "\n");

// Memory samples in MiB.
const mem_lines = fs.readFileSync(memoryPath, "utf8").trim().split("\n").slice(1)
  .map((l) => l.split("\t").map(Number))
  .map(([t, kb]) => `${t} ${(kb / 1024).toFixed(3)}`);
fs.writeFileSync(`${datDir}/memory.dat`, mem_lines.join("\n") + "\n");
process.stdout.write(`${failures}\n`);
EOF

failures=$(node "$work/report.mjs" "$results" "$memory_tsv" "$work/table.md" "$work" "$stamp" \
  "$DURATION" "$WARMUP" "$MEMORY_DURATION" "$SLOW_DELAY_MS" "$TTL" "$DISTANT_DURATION" \
  "${distant_delays[*]}" "$PROCESSES")

if gnuplot -e 'set terminal' 2>&1 | grep -qw pngcairo; then
  terminal="pngcairo enhanced font 'sans,10'"
else
  terminal="png"
fi
cat >"$work/plots.gp" <<EOF
set terminal $terminal size 900,500
set datafile separator whitespace
set datafile missing 'NaN'
set style data histogram
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set grid ytics
set key top left
set xtics nomirror
set border 3

set output '$work/cycles-per-s.png'
set title 'Lock cycles per second (acquire + release; contention: acquisitions)'
set ylabel 'cycles/s'
set yrange [0:*]
plot '$work/workloads.dat' using 2:xtic(1) title 'redlock' lc rgb '#1f77b4', \
     '' using 3 title 'node-redlock' lc rgb '#ff7f0e', \
     '' using 14 title 'floor' lc rgb '#2ca02c', \
     '' using (\$0 - 0.25):2:(sprintf('%.0f', \$2)) with labels offset 0,0.7 font ',8' notitle, \
     '' using (\$0):3:(sprintf('%.0f', \$3)) with labels offset 0,0.7 font ',8' notitle, \
     '' using (\$0 + 0.25):14:(sprintf('%.0f', \$14)) with labels offset 0,0.7 font ',8' notitle

set output '$work/cpu-per-1000-cycles.png'
set title 'Client CPU seconds per 1,000 cycles (lower is better)'
set ylabel 'CPU s / 1,000 cycles'
plot '$work/workloads.dat' using 12:xtic(1) title 'redlock' lc rgb '#1f77b4', \
     '' using 13 title 'node-redlock' lc rgb '#ff7f0e', \
     '' using 19 title 'floor' lc rgb '#2ca02c', \
     '' using (\$0 - 0.25):12:(sprintf('%.3f', \$12)) with labels offset 0,0.7 font ',8' notitle, \
     '' using (\$0):13:(sprintf('%.3f', \$13)) with labels offset 0,0.7 font ',8' notitle, \
     '' using (\$0 + 0.25):19:(sprintf('%.3f', \$19)) with labels offset 0,0.7 font ',8' notitle

set terminal $terminal size 900,900
set output '$work/latency-p50-p99.png'
set multiplot layout 2,1
set logscale y
set yrange [*:*]
set ylabel 'ms (log scale)'
set key top left font ',8'
set title 'Acquire latency, p50 and p99 (contention: wait)'
plot '$work/workloads.dat' using 4:xtic(1) title 'redlock p50' lc rgb '#1f77b4', \
     '' using 5 title 'redlock p99' lc rgb '#aec7e8', \
     '' using 6 title 'node-redlock p50' lc rgb '#ff7f0e', \
     '' using 7 title 'node-redlock p99' lc rgb '#ffbb78', \
     '' using 15 title 'floor p50' lc rgb '#2ca02c', \
     '' using 16 title 'floor p99' lc rgb '#98df8a'
set title 'Release latency, p50 and p99'
plot '$work/workloads.dat' using 8:xtic(1) title 'redlock p50' lc rgb '#1f77b4', \
     '' using 9 title 'redlock p99' lc rgb '#aec7e8', \
     '' using 10 title 'node-redlock p50' lc rgb '#ff7f0e', \
     '' using 11 title 'node-redlock p99' lc rgb '#ffbb78', \
     '' using 17 title 'floor p50' lc rgb '#2ca02c', \
     '' using 18 title 'floor p99' lc rgb '#98df8a'
unset multiplot
unset logscale y

set terminal $terminal size 900,450
set output '$work/memory-rss.png'
set style data lines
set title 'redlock-bench RSS, throughput C=64, ${MEMORY_DURATION} s after ${WARMUP} s warm-up'
set xlabel 'seconds since start'
set ylabel 'RSS (MiB)'
set yrange [0:*]
set key bottom right
set arrow 1 from $WARMUP, graph 0 to $WARMUP, graph 1 nohead dt 2 lc rgb '#888888'
set label 1 'end of warm-up' at $WARMUP, graph 0.95 offset 0.5,0 font ',8'
plot '$work/memory.dat' using 1:2 with linespoints pt 7 ps 0.5 lw 2 lc rgb '#1f77b4' title 'RSS', \
     32 with lines dt 2 lw 1 lc rgb '#d62728' title '32 MiB limit'
EOF
gnuplot "$work/plots.gp" 2>"$work/gnuplot.err" || {
  cat "$work/gnuplot.err" >&2
  die "gnuplot failed"
}

# --- publish ----------------------------------------------------------------------

cp "$results" "$OUT_DIR/results-$stamp.jsonl"
cp "$results" "$OUT_DIR/latest.jsonl"
cp "$memory_tsv" "$OUT_DIR/latest-memory.tsv"
cp "$work/table.md" "$OUT_DIR/latest-table.md"
cp "$work/machine.txt" "$OUT_DIR/latest-machine.txt"
for png in cycles-per-s cpu-per-1000-cycles latency-p50-p99 memory-rss; do
  cp "$work/$png.png" "$OUT_DIR/$png.png"
done

echo
cat "$OUT_DIR/latest-table.md"
echo
say "wrote $OUT_DIR/{results-$stamp.jsonl,latest.jsonl,latest-memory.tsv,latest-table.md,latest-machine.txt} and the plots"
say "$( ((failures == 0)) && echo 'every target met' || echo "$failures target(s) missed")"
if ((failures > 0)) && [[ "$STRICT" == 1 ]]; then
  exit 3
fi
