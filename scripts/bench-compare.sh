#!/usr/bin/env bash
# Side-by-side benchmark of redlock (build/bin/redlock-bench) and node-redlock
# (redlock@5.0.0-beta.2 with ioredis, driven by bench/node-redlock/harness.mjs)
# in one run on the same five local redis-server nodes. See docs/benchmarks.md.
#
# Usage: scripts/bench-compare.sh
# Environment (all optional):
#   DURATION=20         measured seconds of each run
#   WARMUP=2            warm-up seconds before each run (not counted)
#   MEMORY_DURATION=60  measured seconds of the memory run (redlock-bench only)
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
# missing), starts the nodes and the slow-node proxy, and stops everything it
# started when it exits, by pid.
#
# Outputs, in OUT_DIR: results-<UTC stamp>.jsonl and latest.jsonl (every JSON
# line, each with "client" and "scenario" added in front), latest-memory.tsv
# (RSS of the memory run, one sample a second), latest-table.md (targets with
# PASS/FAIL, and all figures), latest-machine.txt (machine and versions) and
# the PNG plots.
set -euo pipefail

prog=$(basename "$0")
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

DURATION=${DURATION:-20}
WARMUP=${WARMUP:-2}
MEMORY_DURATION=${MEMORY_DURATION:-60}
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

for v in DURATION WARMUP MEMORY_DURATION; do
  [[ "${!v}" =~ ^[0-9]+(\.[0-9]+)?$ ]] || die "$v must be a number of seconds, not '${!v}'"
done
for v in TTL SLOW_DELAY_MS PORT_BASE; do
  [[ "${!v}" =~ ^[0-9]+$ ]] || die "$v must be a whole number, not '${!v}'"
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
slow_proxy="$BUILD_DIR/bin/redlock-slow-proxy"
[[ -x "$bench" ]] || die "$bench was not built"
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

# nice 19: simulating the slow link should take as little CPU as it can from
# the client and the four fast nodes (a real slow link costs this machine none).
nice -n 19 "$slow_proxy" --upstream-port "$((PORT_BASE + 5))" --delay-ms "$SLOW_DELAY_MS" \
  >"$work/proxy.port" 2>"$work/proxy.err" &
bg_pids+=($!)
proxy_port=""
for ((i = 0; i < 100; i++)); do
  proxy_port=$(head -n1 "$work/proxy.port" 2>/dev/null || true)
  [[ -n "$proxy_port" ]] && break
  kill -0 "${bg_pids[-1]}" 2>/dev/null || break
  sleep 0.1
done
[[ "$proxy_port" =~ ^[0-9]+$ ]] || {
  cat "$work/proxy.err" >&2
  die "redlock-slow-proxy did not start"
}
[[ "$(timeout 5 redis-cli -p "$proxy_port" ping 2>/dev/null)" == PONG ]] ||
  die "node 5 does not answer through the proxy on port $proxy_port"
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

# The command of each client; both take the same flags.
client_cmd() {
  if [[ "$1" == redlock ]]; then
    cmd=("$bench")
  else
    cmd=(node "$harness")
  fi
}

# Same nodes, same run: for each workload, redlock then node-redlock.
cmd=()
for scenario in latency throughput contention latency-slow-node; do
  for client in redlock node-redlock; do
    client_cmd "$client"
    case "$scenario" in
      latency) args=(--nodes "$nodes" --workload latency --concurrency 1) ;;
      throughput) args=(--nodes "$nodes" --workload throughput --concurrency 64) ;;
      contention) args=(--nodes "$nodes" --workload contention --concurrency 8 --hold 1ms) ;;
      latency-slow-node) args=(--nodes "$slow_nodes" --workload latency --concurrency 1) ;;
    esac
    run "$client" "$scenario" "$DURATION" -- "${cmd[@]}" "${args[@]}"
  done
done
# Memory: redlock-bench alone, throughput C=64 for MEMORY_DURATION seconds.
run redlock memory "$MEMORY_DURATION" -- "$bench" --nodes "$nodes" --workload throughput --concurrency 64

echo "load at end:     $(cut -d' ' -f1-3 /proc/loadavg)" >>"$work/machine.txt"

# --- report: table, plots ---------------------------------------------------------

cat >"$work/report.mjs" <<'EOF'
// Reads the JSON lines and the memory samples; writes the markdown table and
// the data files that gnuplot draws.
import fs from "node:fs";

const [resultsPath, memoryPath, tablePath, datDir, stamp, duration, warmup, memDuration, slowMs, ttl] =
  process.argv.slice(2);
const rows = fs.readFileSync(resultsPath, "utf8").trim().split("\n").map((l) => JSON.parse(l));
const get = (client, scenario) => {
  const row = rows.find((r) => r.client === client && r.scenario === scenario);
  if (!row) throw new Error(`no result for ${client} ${scenario}`);
  return row;
};

const fmt = (x, digits = 2) =>
  Number.isFinite(x) ? x.toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits }) : "n/a";
const ratio = (a, b) => (b > 0 && Number.isFinite(a) ? a / b : NaN);
const mib = (kb) => kb / 1024;

const checks = [];
let failures = 0;
function check(what, ours, node, r, goal, pass) {
  if (!pass) ++failures;
  checks.push(`| ${what} | ${ours} | ${node} | ${r} | ${goal} | ${pass ? "PASS" : "**FAIL**"} |`);
}

const lat = { ours: get("redlock", "latency"), node: get("node-redlock", "latency") };
const thr = { ours: get("redlock", "throughput"), node: get("node-redlock", "throughput") };
const con = { ours: get("redlock", "contention"), node: get("node-redlock", "contention") };
const slow = { ours: get("redlock", "latency-slow-node"), node: get("node-redlock", "latency-slow-node") };
const mem = get("redlock", "memory");

let x = ratio(thr.ours.cycles_per_s, thr.node.cycles_per_s);
check("throughput, C=64: cycles/s", fmt(thr.ours.cycles_per_s, 0), fmt(thr.node.cycles_per_s, 0),
  `${fmt(x)}×`, "≥ 6× node-redlock", x >= 6);
x = ratio(thr.ours.client_cpu_s_per_1000_cycles, thr.node.client_cpu_s_per_1000_cycles);
check("throughput, C=64: client CPU s per 1,000 cycles", fmt(thr.ours.client_cpu_s_per_1000_cycles, 4),
  fmt(thr.node.client_cpu_s_per_1000_cycles, 4), `${fmt(x)}×`, "≤ 0.2× node-redlock", x <= 0.2);
x = ratio(lat.ours.acquire_ms.p50, lat.node.acquire_ms.p50);
check("latency, C=1: acquire p50 (ms)", fmt(lat.ours.acquire_ms.p50, 3), fmt(lat.node.acquire_ms.p50, 3),
  `${fmt(x)}×`, "≤ 0.6× node-redlock", x <= 0.6);
x = ratio(lat.ours.release_ms.p50, lat.node.release_ms.p50);
check("latency, C=1: release p50 (ms)", fmt(lat.ours.release_ms.p50, 3), fmt(lat.node.release_ms.p50, 3),
  `${fmt(x)}×`, "≤ 0.6× node-redlock", x <= 0.6);
x = ratio(slow.ours.acquire_ms.p50, lat.ours.acquire_ms.p50);
check(`node 5 +${slowMs} ms, C=1: acquire p50 (ms)`, fmt(slow.ours.acquire_ms.p50, 3),
  fmt(slow.node.acquire_ms.p50, 3), `${fmt(x)}× our own`,
  `≤ 1.2× our p50 without the slow node (${fmt(lat.ours.acquire_ms.p50, 3)})`, x <= 1.2);
x = ratio(con.ours.acquisitions_per_s, con.node.acquisitions_per_s);
check("contention, C=8, hold 1 ms: acquisitions/s", fmt(con.ours.acquisitions_per_s, 0),
  fmt(con.node.acquisitions_per_s, 0), `${fmt(x)}×`, "≥ 1.3× node-redlock", x >= 1.3);
x = ratio(con.ours.wait_ms.p99, con.node.wait_ms.p99);
check("contention, C=8, hold 1 ms: wait p99 (ms)", fmt(con.ours.wait_ms.p99, 2), fmt(con.node.wait_ms.p99, 2),
  `${fmt(x)}×`, "≤ 0.2× node-redlock", x <= 0.2);
check("contention: overlap violations (two holders at once)", String(con.ours.overlap_violations),
  String(con.node.overlap_violations), "—", "0", con.ours.overlap_violations === 0);
check("memory: max RSS, throughput C=64 (MiB)", fmt(mib(thr.ours.max_rss_kb), 1), fmt(mib(thr.node.max_rss_kb), 1),
  "—", "< 32 MiB", thr.ours.max_rss_kb < 32768);
check(`memory: max RSS, ${memDuration} s throughput run, C=64 (MiB)`, fmt(mib(mem.max_rss_kb), 1), "—", "—",
  "< 32 MiB", mem.max_rss_kb < 32768);
// redlock-bench keeps its latency samples in a fixed histogram, so any
// growth after warm-up is the client's.
const growth = mem.rss_kb_end - mem.rss_kb_after_warmup;
check(`memory: RSS growth after warm-up over ${memDuration} s (KiB)`,
  `${growth >= 0 ? "+" : ""}${fmt(growth, 0)}`, "—", "—", "flat: ≤ 1,024 KiB", growth <= 1024);

const scenarioLabel = {
  latency: "latency C=1",
  throughput: "throughput C=64",
  contention: "contention C=8",
  "latency-slow-node": `latency C=1, node 5 +${slowMs} ms`,
  memory: `memory run ${memDuration} s, C=64`,
};
const figures = rows.map((r) =>
  `| ${r.client} | ${scenarioLabel[r.scenario] ?? r.scenario} | ${fmt(r.cycles_per_s, 0)} | ` +
  `${fmt(r.acquire_ms.p50, 3)} / ${fmt(r.acquire_ms.p99, 3)} | ${fmt(r.release_ms.p50, 3)} / ${fmt(r.release_ms.p99, 3)} | ` +
  `${r.wait_ms ? fmt(r.wait_ms.p99, 2) : "—"} | ${fmt(r.client_cpu_s_per_1000_cycles, 4)} | ` +
  `${fmt(mib(r.max_rss_kb), 1)} | ${r.errors} |`);

const table = [
  `Run ${stamp}: every run ${duration} s measured after ${warmup} s of warm-up, TTL ${ttl} ms, ` +
    `the same five local redis-server nodes for both clients; machine and versions in ` +
    "`docs/bench/latest-machine.txt`, every figure in `docs/bench/latest.jsonl`.",
  "",
  "| target | redlock | node-redlock | ratio | goal | result |",
  "|---|---:|---:|---:|---|---|",
  ...checks,
  "",
  `${failures === 0 ? "Every target met." : `${failures} target(s) missed.`}`,
  "",
  "| client | workload | cycles/s | acquire p50 / p99 (ms) | release p50 / p99 (ms) | wait p99 (ms) | CPU s / 1,000 cycles | max RSS (MiB) | errors |",
  "|---|---|---:|---:|---:|---:|---:|---:|---:|",
  ...figures,
  "",
].join("\n");
fs.writeFileSync(tablePath, table);

// Data for gnuplot: one line per workload, both clients.
const order = ["latency", "throughput", "contention", "latency-slow-node"];
const plotLabel = {
  latency: "latency C=1",
  throughput: "throughput C=64",
  contention: "contention C=8",
  "latency-slow-node": `slow node C=1`,
};
const floor = (v) => Math.max(v, 0.001);
const lines = ["# workload ours_cps node_cps ours_acq_p50 ours_acq_p99 node_acq_p50 node_acq_p99 " +
  "ours_rel_p50 ours_rel_p99 node_rel_p50 node_rel_p99 ours_cpu node_cpu"];
for (const s of order) {
  const o = get("redlock", s);
  const n = get("node-redlock", s);
  lines.push([`"${plotLabel[s]}"`, o.cycles_per_s, n.cycles_per_s,
    floor(o.acquire_ms.p50), floor(o.acquire_ms.p99), floor(n.acquire_ms.p50), floor(n.acquire_ms.p99),
    floor(o.release_ms.p50), floor(o.release_ms.p99), floor(n.release_ms.p50), floor(n.release_ms.p99),
    o.client_cpu_s_per_1000_cycles, n.client_cpu_s_per_1000_cycles].join(" "));
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
  "$DURATION" "$WARMUP" "$MEMORY_DURATION" "$SLOW_DELAY_MS" "$TTL")

if gnuplot -e 'set terminal' 2>&1 | grep -qw pngcairo; then
  terminal="pngcairo enhanced font 'sans,10'"
else
  terminal="png"
fi
cat >"$work/plots.gp" <<EOF
set terminal $terminal size 900,500
set datafile separator whitespace
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
     '' using (\$0 - 1.0/6):2:(sprintf('%.0f', \$2)) with labels offset 0,0.7 notitle, \
     '' using (\$0 + 1.0/6):3:(sprintf('%.0f', \$3)) with labels offset 0,0.7 notitle

set output '$work/cpu-per-1000-cycles.png'
set title 'Client CPU seconds per 1,000 cycles (lower is better)'
set ylabel 'CPU s / 1,000 cycles'
plot '$work/workloads.dat' using 12:xtic(1) title 'redlock' lc rgb '#1f77b4', \
     '' using 13 title 'node-redlock' lc rgb '#ff7f0e', \
     '' using (\$0 - 1.0/6):12:(sprintf('%.3f', \$12)) with labels offset 0,0.7 notitle, \
     '' using (\$0 + 1.0/6):13:(sprintf('%.3f', \$13)) with labels offset 0,0.7 notitle

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
     '' using 7 title 'node-redlock p99' lc rgb '#ffbb78'
set title 'Release latency, p50 and p99'
plot '$work/workloads.dat' using 8:xtic(1) title 'redlock p50' lc rgb '#1f77b4', \
     '' using 9 title 'redlock p99' lc rgb '#aec7e8', \
     '' using 10 title 'node-redlock p50' lc rgb '#ff7f0e', \
     '' using 11 title 'node-redlock p99' lc rgb '#ffbb78'
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
