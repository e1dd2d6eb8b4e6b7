#!/usr/bin/env bash
# Model-checks the fencing design (docs/fencing.md) with spin: every variant
# of docs/models/fencing.pml, each against its expectation.
# Usage: scripts/models.sh [--long] [VARIANT...]
#   verified:       pan must report "errors: 0" after a complete search (not
#                   cut short by memory or depth);
#   counterexample: pan must report an assertion violation (errors >= 1).
# Prints one line per variant (states, time) and exits non-zero if any
# variant does not meet its expectation. --long runs bigger bounds (any node
# crashes, loss and restart together, more pumps, two acquires per client,
# N=5); the default set is the CI one (well under 3 minutes on 2 cores).
# REDLOCK_MODELS_EXPECT=name=result overrides one expectation (to check that
# the script fails when a result does not match).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
model=$root/docs/models/fencing.pml

long=0
only=()
for arg in "$@"; do
  case $arg in
    --long) long=1 ;;
    -h | --help) sed -n '2,14p' "$0"; exit 0 ;;
    *) only+=("$arg") ;;
  esac
done

if ! command -v spin >/dev/null; then
  sudo=()
  ((EUID == 0)) || sudo=(sudo)
  "${sudo[@]}" apt-get update -qq
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
    spin >/dev/null
fi
command -v gcc >/dev/null || { echo "models.sh: gcc is needed" >&2; exit 1; }

# name | expected | -D switches | what it is
variants=(
  "shipped|verified|-DLOSSES=0 -DPUMPS=2|the design, no crash, 2 pumps"
  "shipped-loss|verified|-DLOSSES=1 -DPUMPS=1|the design, a crash losing counters (quarantine, wait, re-seed)"
  "shipped-restart|verified|-DLOSSES=0 -DRESTARTS=1 -DPUMPS=1|the design, a restart keeping counters (run id changes)"
  "nowriteback|counterexample|-DWRITEBACK=0 -DLOSSES=0 -DPUMPS=2|no write-back, no crash"
  "noquarantine|counterexample|-DQUARANTINE=0 -DLOSSES=1 -DPUMPS=0|counter loss, node stays valid"
  "nowait|counterexample|-DWAIT=0 -DLOSSES=1 -DPUMPS=0|re-seed without the wait"
  "reseed-one|counterexample|-DOMAJ=1 -DLOSSES=1 -DPUMPS=0|re-seed from one valid other node"
)
memlim=1800   # MB for pan's states (-DMEMLIM); ulimit -v a little above
if ((long)); then
  variants+=(
  "long-boot|verified|-DBOOT=1 -DLOSSES=0 -DPUMPS=1|the design from no state at all (bootstrap rule, after the wait)"
  "long-boot-nowait|counterexample|-DBOOT=1 -DBOOTWAIT=0 -DLOSSES=1 -DPUMPS=0|bootstrap rule applied without the wait"
    "long-shipped|verified|-DLOSSES=0 -DPUMPS=3|the design, no crash, 3 pumps"
    "long-acqs|verified|-DLOSSES=0 -DPUMPS=1 -DACQS=2|two acquires per client"
    "long-loss|verified|-DLOSSES=1 -DPUMPS=2|a counter loss, 2 pumps"
    "long-crashes|verified|-DLOSSES=1 -DRESTARTS=1 -DPUMPS=1 -DSYMM=0|a loss and a restart, any nodes"
    "long-n5|verified|-DN=5 -DLOSSES=0 -DPUMPS=1|N=5, no crash"
    "long-n5-nowb|counterexample|-DN=5 -DWRITEBACK=0 -DLOSSES=0 -DPUMPS=3|N=5, no write-back"
  )
  memlim=${REDLOCK_MODELS_MEMLIM:-12000}
fi

scratch=$(mktemp -d "${TMPDIR:-/tmp}/redlock-models.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
cd "$scratch"

failed=0
total_start=$SECONDS
printf '%-16s %-15s %-15s %12s %9s  %s\n' variant expected result states time switches
for entry in "${variants[@]}"; do
  IFS='|' read -r name expect flags what <<<"$entry"
  if ((${#only[@]})) && [[ " ${only[*]} " != *" $name "* ]]; then continue; fi
  override=${REDLOCK_MODELS_EXPECT:-}
  [[ "$override" == "$name="* ]] && expect=${override#*=}
  dir=$scratch/$name
  mkdir -p "$dir"
  # shellcheck disable=SC2086 # flags are words
  if ! (cd "$dir" && spin $flags -a "$model" >spin.log 2>&1 &&
    gcc -O2 -DSAFETY -DCOLLAPSE -DMEMLIM=$memlim -o pan pan.c >gcc.log 2>&1); then
    echo "FAIL $name: spin -a or gcc failed:" >&2
    cat "$dir/spin.log" "$dir/gcc.log" >&2
    failed=1
    continue
  fi
  start=$(date +%s.%N)
  rc=0
  (cd "$dir" && ulimit -v $(((memlim + 700) * 1024)) && ./pan -m1000000 -w25 >pan.out 2>&1) || rc=$?
  secs=$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { printf "%.1f", e - s }')
  out=$dir/pan.out
  errors=$(sed -n 's/.*errors: \([0-9]*\).*/\1/p' "$out" | head -1)
  states=$(awk '/states, stored/ { print $1; exit }' "$out")
  incomplete=0
  if grep -qiE 'max search depth too small|out of memory|MEMLIM|search not completed|aborted' "$out" ||
    [[ -z "$errors" || -z "$states" ]]; then
    incomplete=1
  fi
  if [[ -z "$errors" ]]; then
    result="no result"
  elif ((errors > 0)); then
    if grep -q 'assertion violated' "$out"; then result=counterexample; else result="error($errors)"; fi
  elif ((incomplete)); then
    result=incomplete
  elif ((rc != 0)); then
    result="pan rc=$rc"
  else
    result=verified
  fi
  status=PASS
  if [[ "$result" != "$expect" ]]; then
    status=FAIL
    failed=1
  fi
  printf '%-16s %-15s %-15s %12s %8ss  %s   %s\n' "$name" "$expect" "$result" "${states:-?}" "$secs" \
    "$flags" "$status"
  if [[ $status == FAIL ]]; then
    echo "--- $name: pan output" >&2
    tail -30 "$out" >&2
  fi
done
echo "models.sh: $((SECONDS - total_start)) s in all; $([[ $failed == 0 ]] && echo "every result as expected" || echo "SOME RESULTS NOT AS EXPECTED")"
exit "$failed"
