#!/usr/bin/env bash
# Builds the libFuzzer targets with clang and runs each one.
# Usage: scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]   (default 60 s, all)
#   First every saved input (tests/fuzz/regressions/TARGET: crashes found
#   and fixed) must pass; then the target fuzzes for the time given, starting
#   from tests/fuzz/corpus/TARGET (seeds; new inputs go to a scratch copy).
#   A crash leaves its input in build-fuzz/crashes/TARGET and fails the run.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
seconds=${1:-60}
(($# > 0)) && shift
targets=("$@")
((${#targets[@]} > 0)) || targets=(replies node_list duration server_info)

"$root/scripts/deps.sh"
dir=$root/build-fuzz
cmake -S "$root" -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++-14 \
  -DREDLOCK_BUILD_FUZZERS=ON -DREDLOCK_BUILD_TESTS=OFF -DREDLOCK_BUILD_EXAMPLES=OFF \
  -DREDLOCK_BUILD_BENCH=OFF >/dev/null
cmake --build "$dir" -j2 --target "${targets[@]/#/fuzz_}"

export ASAN_OPTIONS=detect_leaks=1:halt_on_error=1
for target in "${targets[@]}"; do
  exe=$dir/bin/fuzz_$target
  regressions=$root/tests/fuzz/regressions/$target
  if [[ -d "$regressions" ]] && compgen -G "$regressions/*" >/dev/null; then
    echo "=== fuzz_$target: saved inputs"
    "$exe" -runs=0 "$regressions"/* >/dev/null 2>&1 || {
      echo "fuzz_$target fails on a saved input in $regressions" >&2
      exit 1
    }
  fi
  echo "=== fuzz_$target: ${seconds}s"
  scratch=$dir/corpus/$target
  crashes=$dir/crashes/$target
  mkdir -p "$scratch" "$crashes"
  cp -n "$root/tests/fuzz/corpus/$target"/* "$scratch"/ 2>/dev/null || true
  # -max_len 65536: room for nested arrays and long bulk strings.
  rc=0
  "$exe" -max_total_time="$seconds" -max_len=65536 -print_final_stats=1 \
    -artifact_prefix="$crashes/" "$scratch" >"$dir/$target.log" 2>&1 || rc=$?
  grep -E '^(stat::number_of_executed_units|Done)' "$dir/$target.log" || true
  if ((rc != 0)) || compgen -G "$crashes/*" >/dev/null; then
    tail -40 "$dir/$target.log" >&2
    echo "fuzz_$target failed (exit $rc); inputs: $(ls "$crashes")" >&2
    exit 1
  fi
done
echo "fuzz: no crash"
