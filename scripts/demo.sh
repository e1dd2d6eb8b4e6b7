#!/usr/bin/env bash
# Oversell demo: eight workers sell 200 units of stock kept in a separate redis
# "store", once guarded by Redlock over five independent lock nodes and once
# with no lock. Exits non-zero if the locked run fails (the program exits 1
# when it oversells while holding the lock).
#
# Usage: scripts/demo.sh [--use-running | --own-cluster] [--build-dir DIR]
#   --use-running  use the lock nodes already running on BASE+1..BASE+5 (the
#                  docker-compose.yml cluster, or scripts/cluster.sh start) and
#                  the store on the store port if one answers there; without
#                  either option this is chosen when all five nodes answer PING.
#   --own-cluster  always start a cluster of its own (scripts/cluster.sh).
#   --build-dir    where to build stock_demo (default: build). A build directory
#                  configured for this source tree is reused as it is (only the
#                  stock_demo target is built); a new one is configured without
#                  the tests, benchmarks and fuzzers.
# Env: REDLOCK_PORT_BASE (lock nodes on BASE+1..BASE+5, default 7000),
#      REDLOCK_STORE_PORT (store, default 7100).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
port_base=${REDLOCK_PORT_BASE:-7000}
store_port=${REDLOCK_STORE_PORT:-7100}
workers=8
stock=200
build_dir=build
cluster_mode=auto

usage() {
  sed -n 's/^# \{0,1\}//; 2,/^set -euo/{/^set -euo/d; /^Usage:/,$p}' "${BASH_SOURCE[0]}" >&2
  exit 2
}

while (($# > 0)); do
  case "$1" in
    --use-running) cluster_mode=running ;;
    --own-cluster) cluster_mode=own ;;
    --build-dir)
      (($# >= 2)) || usage
      build_dir=$2
      shift
      ;;
    --build-dir=*) build_dir=${1#*=} ;;
    -h | --help) usage ;;
    *)
      echo "demo.sh: unknown argument '$1'" >&2
      usage
      ;;
  esac
  shift
done
[[ "$build_dir" = /* ]] || build_dir=$root/$build_dir
bin=$build_dir/bin/stock_demo

cluster_started=0
store_dir=""
log_dir=""

# shellcheck disable=SC2317 # invoked via trap
cleanup() {
  local pid i
  # Only stop a cluster we started: if start refused because someone else's
  # cluster is running, that one is not ours to stop.
  if ((cluster_started)); then
    "$root/scripts/cluster.sh" stop >/dev/null || true
  fi
  if [[ -n "$store_dir" ]]; then
    # Kill the store by its own pid (never by name); the comm check avoids
    # hitting a reused pid.
    if [[ -s "$store_dir/redis.pid" ]]; then
      pid=$(<"$store_dir/redis.pid")
      if [[ "$(cat "/proc/$pid/comm" 2>/dev/null)" == redis-server* ]]; then
        kill -TERM "$pid" 2>/dev/null || true
        for ((i = 0; i < 100; i++)); do
          kill -0 "$pid" 2>/dev/null || break
          sleep 0.1
        done
        kill -KILL "$pid" 2>/dev/null || true
      fi
    fi
    rm -rf -- "$store_dir"
  fi
  if [[ -n "$log_dir" ]]; then rm -rf -- "$log_dir"; fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# True if a redis answers PING on 127.0.0.1:$1 (bounded, so a wedged one can't hang us).
pings() {
  [[ "$(timeout 2 redis-cli -h 127.0.0.1 -p "$1" ping 2>/dev/null)" == PONG ]]
}

# True if something accepts TCP connections on 127.0.0.1:$1.
port_busy() {
  timeout 1 bash -c "exec 3<>/dev/tcp/127.0.0.1/$1" 2>/dev/null
}

# The CMAKE_HOME_DIRECTORY (source tree) a build directory was configured for.
configured_source() {
  sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$1/CMakeCache.txt" 2>/dev/null
}

# Builds stock_demo only: in a build directory already configured for this
# source tree as it is, else in a new one without tests, benchmarks, fuzzers.
build_demo() {
  local source
  if [[ -f "$build_dir/CMakeCache.txt" ]]; then
    source=$(configured_source "$build_dir")
    if [[ "$(cd "$source" 2>/dev/null && pwd -P)" != "$(cd "$root" && pwd -P)" ]]; then
      echo "demo.sh: $build_dir is configured for another source tree (${source:-unknown});" \
        "pass --build-dir with a new directory" >&2
      exit 1
    fi
    echo "demo.sh: reusing $build_dir"
    if grep -q '^REDLOCK_BUILD_EXAMPLES:BOOL=OFF' "$build_dir/CMakeCache.txt"; then
      cmake -S "$root" -B "$build_dir" -DREDLOCK_BUILD_EXAMPLES=ON >/dev/null
    fi
  else
    "$root/scripts/deps.sh" demo
    cmake -S "$root" -B "$build_dir" -DCMAKE_BUILD_TYPE="${BUILD_TYPE:-RelWithDebInfo}" \
      -DREDLOCK_BUILD_TESTS=OFF -DREDLOCK_BUILD_TORTURE=OFF -DREDLOCK_BUILD_BENCH=OFF \
      -DREDLOCK_BUILD_FUZZERS=OFF -DREDLOCK_BUILD_EXAMPLES=ON
  fi
  cmake --build "$build_dir" -j2 --target stock_demo
}

build_demo
[[ -x "$bin" ]] || { echo "demo.sh: $bin was not built" >&2; exit 1; }

node_ports=()
for ((i = 1; i <= 5; i++)); do
  node_ports+=($((port_base + i)))
done
running=0
for port in "${node_ports[@]}"; do
  pings "$port" && running=$((running + 1))
done

case "$cluster_mode" in
  running)
    if ((running < 5)); then
      echo "demo.sh: --use-running: only $running of the lock nodes on 127.0.0.1:${node_ports[0]}..${node_ports[-1]} answer PING" \
        "(start them with 'docker compose up -d' or scripts/cluster.sh start)" >&2
      exit 1
    fi
    ;;
  auto)
    if ((running == 5)); then
      cluster_mode=running
    elif ((running > 0)); then
      echo "demo.sh: $running of the lock nodes on 127.0.0.1:${node_ports[0]}..${node_ports[-1]} answer PING, not all five:" \
        "start the missing ones, or stop them and let the demo start its own" >&2
      exit 1
    fi
    ;;
esac

if [[ "$cluster_mode" == running ]]; then
  echo "demo.sh: using the lock nodes running on 127.0.0.1:${node_ports[0]}..${node_ports[-1]}"
else
  "$root/scripts/cluster.sh" start 5 --port-base "$port_base"
  cluster_started=1
fi
nodes=""
for port in "${node_ports[@]}"; do
  nodes+="${nodes:+,}127.0.0.1:$port"
done

# The application's data lives on its own server, apart from the lock nodes:
# the running one (docker-compose.yml has it) when using a running cluster.
own_store=1
if [[ "$cluster_mode" == running ]] && pings "$store_port"; then
  echo "demo.sh: using the store running on 127.0.0.1:$store_port"
  own_store=0
elif port_busy "$store_port"; then
  echo "demo.sh: store port $store_port is already in use (and no redis answers there)" >&2
  exit 1
fi
if ((own_store)); then
  store_dir=$(mktemp -d "${TMPDIR:-/tmp}/redlock-store.XXXXXX")
  redis-server --port "$store_port" --bind 127.0.0.1 --save '' --appendonly no \
    --daemonize yes --dir "$store_dir" \
    --pidfile "$store_dir/redis.pid" --logfile "$store_dir/redis.log"
  for ((i = 0; ; i++)); do
    [[ "$(timeout 2 redis-cli -p "$store_port" ping 2>/dev/null)" == PONG ]] && break
    if ((i >= 100)); then
      echo "demo.sh: store on port $store_port did not answer PING; log tail:" >&2
      tail -n 20 "$store_dir/redis.log" >&2 || true
      exit 1
    fi
    sleep 0.1
  done
fi
log_dir=$(mktemp -d "${TMPDIR:-/tmp}/redlock-demo.XXXXXX")

# run_demo LOGFILE [extra flags...]: runs stock_demo, shows its output live,
# keeps a copy, returns its exit status.
run_demo() {
  local log=$1 rc
  shift
  # Each run starts from an empty store (stock_demo also deletes its own
  # keys first; a store that is not ours is not flushed).
  if ((own_store)); then redis-cli -p "$store_port" flushall >/dev/null; fi
  set +e
  "$bin" --nodes "$nodes" --store "127.0.0.1:$store_port" \
    --workers "$workers" --stock "$stock" "$@" 2>&1 | tee "$log"
  rc=${PIPESTATUS[0]}
  set -e
  return "$rc"
}

# Last "sold=.. remaining=.. oversold=.." line of a run, or a placeholder.
result_of() {
  grep -Eo 'sold=-?[0-9]+ remaining=-?[0-9]+ oversold=-?[0-9]+' "$1" | tail -n 1 ||
    echo "(no result line)"
}

oversold_of() {
  result_of "$1" | sed -n 's/.*oversold=\(-\{0,1\}[0-9]*\).*/\1/p'
}

echo
echo "=== run 1: $workers workers, stock $stock, WITH Redlock over $nodes ==="
locked_rc=0
run_demo "$log_dir/locked.out" || locked_rc=$?

echo
echo "=== run 2: $workers workers, stock $stock, WITHOUT a lock (--no-lock) ==="
unlocked_rc=0
run_demo "$log_dir/unlocked.out" --no-lock || unlocked_rc=$?

locked=$(result_of "$log_dir/locked.out")
locked_over=$(oversold_of "$log_dir/locked.out")
unlocked=$(result_of "$log_dir/unlocked.out")
unlocked_over=$(oversold_of "$log_dir/unlocked.out")

echo
echo "=== comparison ==="
printf '  with Redlock:   %s (exit %d)\n' "$locked" "$locked_rc"
printf '  without a lock: %s (exit %d)\n' "$unlocked" "$unlocked_rc"
if [[ -n "$unlocked_over" ]] && ((unlocked_over > 0)); then
  echo "  Without the lock the workers' read-modify-write races oversold $unlocked_over unit(s)."
elif [[ -n "$unlocked_over" ]]; then
  echo "  The unlocked run happened not to oversell this time (the race is timing-dependent)."
fi

if ((locked_rc != 0)); then
  echo "demo.sh: FAIL: the run with the lock exited $locked_rc" >&2
  exit "$locked_rc"
fi
if [[ "$locked_over" != 0 ]]; then
  echo "demo.sh: FAIL: the run with the lock reported ${locked_over:-no result}" >&2
  exit 1
fi
if [[ -z "$unlocked_over" ]]; then
  echo "demo.sh: FAIL: the run without the lock printed no result" >&2
  exit 1
fi
echo "  With the lock: no overselling."
