#!/usr/bin/env bash
# Run N independent redis-server masters on 127.0.0.1 for Redlock work.
#
# Usage: scripts/cluster.sh start|stop|status [N] [--port-base P] [--aof everysec|always]
#   start   start N nodes (default 5) on ports P+1..P+N (P = --port-base,
#           else $REDLOCK_PORT_BASE, else 7000) in a fresh mktemp -d directory.
#           No persistence unless --aof is given (then AOF with that fsync policy).
#   stop    stop the recorded cluster (harmless if none is recorded or running).
#   status  print port, pid and PING state of each node; exit 0 iff all are up.
# The cluster's directory is recorded in $REDLOCK_CLUSTER_STATE
# (default /tmp/redlock-cluster.state), so stop/status need no other arguments:
# N and the ports are taken from the recorded cluster.
set -euo pipefail

prog=$(basename "$0")
state_file=${REDLOCK_CLUSTER_STATE:-/tmp/redlock-cluster.state}
port_base=${REDLOCK_PORT_BASE:-7000}
nodes=5
aof=""
cmd=""
# Marker placed in every cluster dir: stop only ever rm -rf's a dir carrying it,
# so a corrupted state file cannot point us at an unrelated directory.
marker=.redlock-cluster

usage() {
  echo "usage: $prog start|stop|status [N] [--port-base P] [--aof everysec|always]" >&2
  exit 2
}

die() {
  echo "$prog: $*" >&2
  exit 1
}

is_uint() { [[ "$1" =~ ^[0-9]+$ ]]; }

while (($# > 0)); do
  case "$1" in
    start | stop | status)
      [[ -z "$cmd" ]] || usage
      cmd=$1
      ;;
    --port-base)
      (($# >= 2)) || usage
      port_base=$2
      shift
      ;;
    --port-base=*) port_base=${1#*=} ;;
    --aof)
      (($# >= 2)) || usage
      aof=$2
      shift
      ;;
    --aof=*) aof=${1#*=} ;;
    -h | --help) usage ;;
    *)
      is_uint "$1" || usage
      nodes=$1
      ;;
  esac
  shift
done

[[ -n "$cmd" ]] || usage
is_uint "$port_base" || die "port base must be a number: $port_base"
is_uint "$nodes" || die "N must be a positive number: $nodes"
# Force base 10 so "08" is not read as a bad octal number.
port_base=$((10#$port_base))
nodes=$((10#$nodes))
((nodes >= 1)) || die "N must be a positive number: $nodes"
((port_base + nodes <= 65535)) || die "ports $((port_base + 1))..$((port_base + nodes)) out of range"
case "$aof" in
  "" | everysec | always) ;;
  *) die "--aof takes everysec or always, not '$aof'" ;;
esac

# --- helpers -------------------------------------------------------------

# True if redis at $1 answers PING with PONG (bounded so a wedged server can't hang us).
pings() {
  local reply
  reply=$(timeout 2 redis-cli -h 127.0.0.1 -p "$1" ping 2>/dev/null) || return 1
  [[ "$reply" == PONG ]]
}

# True if something accepts TCP connections on 127.0.0.1:$1 (any program, not only redis).
port_busy() {
  timeout 1 bash -c "exec 3<>/dev/tcp/127.0.0.1/$1" 2>/dev/null
}

# Pid from a node's pidfile, only if that process is alive and is a redis-server:
# guards against the pid having been reused by an unrelated process.
node_pid() {
  local pidfile=$1/redis.pid pid comm
  [[ -s "$pidfile" ]] || return 1
  pid=$(<"$pidfile")
  is_uint "$pid" || return 1
  comm=$(cat "/proc/$pid/comm" 2>/dev/null) || return 1
  [[ "$comm" == redis-server* ]] || return 1
  echo "$pid"
}

# Recorded cluster directory (empty if none or if the record is not ours).
recorded_dir() {
  local dir
  [[ -f "$state_file" ]] || return 0
  dir=$(<"$state_file")
  if [[ -n "$dir" && -d "$dir" && -f "$dir/$marker" ]]; then
    echo "$dir"
  fi
}

# Ports of the recorded cluster, one per line, in start order.
recorded_ports() {
  cat "$1/ports" 2>/dev/null || true
}

any_alive() {
  local dir=$1 port
  for port in $(recorded_ports "$dir"); do
    node_pid "$dir/$port" >/dev/null && return 0
  done
  return 1
}

# Stop every node of cluster dir $1 by its own pid, then remove the dir and the record.
stop_cluster() {
  local dir=$1 port pid i
  local -a pids=()
  for port in $(recorded_ports "$dir"); do
    if pid=$(node_pid "$dir/$port"); then
      kill -TERM "$pid" 2>/dev/null || true
      pids+=("$pid")
    fi
  done
  # Wait for a clean shutdown (AOF fsync etc.); SIGKILL after ~10 s.
  for pid in "${pids[@]}"; do
    for ((i = 0; i < 100; i++)); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.1
    done
    if kill -0 "$pid" 2>/dev/null; then
      echo "$prog: pid $pid did not exit after SIGTERM; sending SIGKILL" >&2
      kill -KILL "$pid" 2>/dev/null || true
      while kill -0 "$pid" 2>/dev/null; do sleep 0.1; done
    fi
  done
  rm -rf -- "$dir"
  rm -f -- "$state_file"
}

# --- commands ------------------------------------------------------------

cmd_start() {
  local dir port i deadline pending
  local -a ports=() left=()

  dir=$(recorded_dir)
  if [[ -n "$dir" ]]; then
    if any_alive "$dir"; then
      die "a cluster is already running (recorded in $state_file, dir $dir); run '$prog stop' first"
    fi
    # Stale record from a cluster whose servers are gone: clean it up.
    stop_cluster "$dir"
  elif [[ -f "$state_file" ]]; then
    rm -f -- "$state_file"
  fi

  for ((i = 1; i <= nodes; i++)); do
    ports+=($((port_base + i)))
  done
  for port in "${ports[@]}"; do
    port_busy "$port" && die "port $port is already in use on 127.0.0.1"
  done

  dir=$(mktemp -d "${TMPDIR:-/tmp}/redlock-cluster.XXXXXX")
  touch "$dir/$marker"
  printf '%s\n' "${ports[@]}" >"$dir/ports"
  # Record before starting anything so a failed start can still be stopped.
  echo "$dir" >"$state_file"

  local -a persist=(--save '' --appendonly no)
  if [[ -n "$aof" ]]; then
    persist=(--save '' --appendonly yes --appendfsync "$aof")
  fi

  for port in "${ports[@]}"; do
    mkdir "$dir/$port"
    if ! redis-server --port "$port" --bind 127.0.0.1 "${persist[@]}" \
      --daemonize yes --dir "$dir/$port" \
      --pidfile "$dir/$port/redis.pid" --logfile "$dir/$port/redis.log"; then
      echo "$prog: redis-server on port $port failed to start" >&2
      stop_cluster "$dir"
      exit 1
    fi
  done

  # Every node must answer PING within ~10 s in total.
  deadline=$((SECONDS + 10))
  left=("${ports[@]}")
  while ((${#left[@]} > 0)); do
    pending=()
    for port in "${left[@]}"; do
      pings "$port" || pending+=("$port")
    done
    left=("${pending[@]+"${pending[@]}"}")
    ((${#left[@]} == 0)) && break
    if ((SECONDS >= deadline)); then
      for port in "${left[@]}"; do
        echo "$prog: node on port $port did not answer PING; log tail:" >&2
        tail -n 20 "$dir/$port/redis.log" >&2 2>/dev/null || echo "  (no log)" >&2
      done
      stop_cluster "$dir"
      exit 1
    fi
    sleep 0.1
  done

  local mode="no persistence"
  [[ -z "$aof" ]] || mode="appendonly, appendfsync $aof"
  echo "started $nodes redis nodes on 127.0.0.1:${ports[0]}..${ports[-1]} ($mode) in $dir"
}

cmd_stop() {
  local dir
  dir=$(recorded_dir)
  if [[ -z "$dir" ]]; then
    rm -f -- "$state_file"
    echo "no cluster recorded"
    return 0
  fi
  stop_cluster "$dir"
  echo "stopped cluster in $dir"
}

cmd_status() {
  local dir port pid up rc=0
  dir=$(recorded_dir)
  if [[ -z "$dir" ]]; then
    echo "no cluster recorded"
    return 1
  fi
  echo "cluster dir: $dir"
  printf '%-6s %-8s %s\n' PORT PID PING
  for port in $(recorded_ports "$dir"); do
    pid=$(node_pid "$dir/$port") || pid=-
    if pings "$port"; then up=up; else up=down; rc=1; fi
    printf '%-6s %-8s %s\n' "$port" "$pid" "$up"
  done
  return "$rc"
}

case "$cmd" in
  start) cmd_start ;;
  stop) cmd_stop ;;
  status) cmd_status ;;
esac
