#!/usr/bin/env bash
# Oversell demo: eight workers sell 200 units of stock kept in a separate redis
# "store", once guarded by Redlock over five independent lock nodes and once
# with no lock. Exits non-zero if the locked run fails (the program exits 1
# when it oversells while holding the lock).
# Env: REDLOCK_PORT_BASE (lock nodes on BASE+1..BASE+5, default 7000),
#      REDLOCK_STORE_PORT (store, default 7100).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
port_base=${REDLOCK_PORT_BASE:-7000}
store_port=${REDLOCK_STORE_PORT:-7100}
workers=8
stock=200
bin=$root/build/bin/stock_demo

cluster_started=0
store_dir=""

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
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

"$root/scripts/build.sh" build
[[ -x "$bin" ]] || { echo "demo.sh: $bin was not built" >&2; exit 1; }

"$root/scripts/cluster.sh" start 5 --port-base "$port_base"
cluster_started=1
nodes=""
for ((i = 1; i <= 5; i++)); do
  nodes+="${nodes:+,}127.0.0.1:$((port_base + i))"
done

# The application's data lives on its own server, apart from the lock nodes.
if timeout 1 bash -c "exec 3<>/dev/tcp/127.0.0.1/$store_port" 2>/dev/null; then
  echo "demo.sh: store port $store_port is already in use" >&2
  exit 1
fi
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

# run_demo LOGFILE [extra flags...]: runs stock_demo, shows its output live,
# keeps a copy, returns its exit status.
run_demo() {
  local log=$1 rc
  shift
  # Each run starts from an empty store.
  redis-cli -p "$store_port" flushall >/dev/null
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
run_demo "$store_dir/locked.out" || locked_rc=$?

echo
echo "=== run 2: $workers workers, stock $stock, WITHOUT a lock (--no-lock) ==="
unlocked_rc=0
run_demo "$store_dir/unlocked.out" --no-lock || unlocked_rc=$?

locked=$(result_of "$store_dir/locked.out")
locked_over=$(oversold_of "$store_dir/locked.out")
unlocked=$(result_of "$store_dir/unlocked.out")
unlocked_over=$(oversold_of "$store_dir/unlocked.out")

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
