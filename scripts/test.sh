#!/usr/bin/env bash
# The project's one test command (README and CI call it).
# Usage: scripts/test.sh [ctest args...]     e.g. scripts/test.sh -R unit
# Stages: default build (build/), then, unless REDLOCK_SANITIZERS=0,
# ASan+UBSan (build-asan/), then TSan built against Boost 1.81
# (build-tsan-boost181/): Debian's Boost 1.74 is what most users build with,
# 1.81 has Asio's per-operation cancellation slots, whose races TSan then
# watches. REDLOCK_BOOST181=0 builds that stage against the system Boost;
# with REDLOCK_SANITIZERS=0 the Boost 1.81 stage runs without TSan. Each
# stage builds and runs ctest; all stages run even if one fails, and the
# exit status is non-zero if any failed.
# REDLOCK_TEST_LOAD=1 runs every stage's ctest beside one busy loop per core
# (`nproc` of them, normal priority), as on a machine busy with other work;
# they stop when ctest ends and, whatever happens, on exit.
# Tests wait on servers and timers far more than they compute (the default
# stage's ctest uses about a seventh of 2 cores at -j2), so each stage runs
# several at once: -j6 by default, -j4 under ASan, -j3 under TSan, whose
# instrumentation costs CPU; REDLOCK_CTEST_JOBS=N sets every stage's. The
# fault-schedule runs still run alone (RUN_SERIAL).
# REDLOCK_DOCS=0 skips the API reference, REDLOCK_MODELS=0 the spin models
# of the fencing design (scripts/models.sh), REDLOCK_SEPARATE=0 the build of
# the library and the tool one file at a time. Only the default stage's
# ctest, e.g. the integration and CLI tests under load:
#   REDLOCK_TEST_LOAD=1 REDLOCK_SANITIZERS=0 REDLOCK_BOOST181=0 REDLOCK_FUZZ=0 \
#     REDLOCK_DOCS=0 REDLOCK_MODELS=0 REDLOCK_SEPARATE=0 scripts/test.sh -R '^(integration|cli):'
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
ctest_args=("$@")

"$root/scripts/deps.sh"

# Tests start their own redis-servers under this directory; we own its cleanup
# so that a crashing test cannot leave servers running.
REDLOCK_TEST_TMPDIR=$(mktemp -d "${TMPDIR:-/tmp}/redlock-test.XXXXXX")
export REDLOCK_TEST_TMPDIR

# Kill every process named by a *.pid file under the test dir. The check on
# comm/cmdline keeps a stale pidfile whose pid was reused from hitting an
# unrelated process (redis renames itself "redis-server host:port", so its
# comm is what identifies it).
reap() {
  local f pid comm cmdline i
  local -a pids=()
  [[ -d "$REDLOCK_TEST_TMPDIR" ]] || return 0
  while IFS= read -r -d '' f; do
    pid=$(tr -dc '0-9' <"$f" 2>/dev/null || true)
    [[ -n "$pid" ]] || continue
    comm=$(cat "/proc/$pid/comm" 2>/dev/null) || continue
    cmdline=$(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null || true)
    if [[ "$comm" == redis* || "$cmdline" == *"$REDLOCK_TEST_TMPDIR"* ]]; then
      echo "test.sh: killing leftover process $pid ($comm) from $f" >&2
      kill -TERM "$pid" 2>/dev/null || true
      pids+=("$pid")
    fi
  done < <(find "$REDLOCK_TEST_TMPDIR" -type f -name '*.pid' -print0 2>/dev/null)
  for pid in "${pids[@]+"${pids[@]}"}"; do
    for ((i = 0; i < 50; i++)); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.1
    done
    kill -KILL "$pid" 2>/dev/null || true
  done
}

# The CPU hogs of REDLOCK_TEST_LOAD=1: our own children, so their pids
# cannot have been reused before we wait for them. Each also ends by itself
# once this script is gone (even if it was killed with SIGKILL).
hogs=()
start_load() {
  local i n
  n=$(nproc)
  for ((i = 0; i < n; i++)); do
    (
      trap - EXIT INT TERM
      for ((spin = 1; ; spin++)); do
        ((spin % 100000)) || kill -0 "$$" 2>/dev/null || exit 0
      done
    ) &
    hogs+=("$!")
  done
  echo "test.sh: ${#hogs[@]} busy loops running beside the tests (REDLOCK_TEST_LOAD=1)"
}
stop_load() {
  local pid
  for pid in "${hogs[@]+"${hogs[@]}"}"; do
    kill -KILL "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  hogs=()
}

# shellcheck disable=SC2317 # invoked via trap
cleanup() {
  stop_load
  reap
  rm -rf -- "$REDLOCK_TEST_TMPDIR"
}
trap cleanup EXIT
# Turn INT/TERM into a normal exit so the EXIT trap runs and reports failure.
trap 'exit 130' INT
trap 'exit 143' TERM

# Sanitizer runtime options: our defaults first, the caller's appended so they win.
san_env=(
  "ASAN_OPTIONS=detect_leaks=1:halt_on_error=1${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
  "UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
  "TSAN_OPTIONS=halt_on_error=1${TSAN_OPTIONS:+:$TSAN_OPTIONS}"
)

# GCC 12's TSan cannot map its shadow memory when the kernel randomises mmap
# with more than 28 bits ("unexpected memory mapping"); run it without ASLR then.
tsan_prefix=()
rnd_bits=$(cat /proc/sys/vm/mmap_rnd_bits 2>/dev/null || echo 0)
if ((rnd_bits > 28)) && command -v setarch >/dev/null; then
  tsan_prefix=(setarch "$(uname -m)" -R)
fi

summary=()
failed=0

# run_stage NAME BUILD_DIR "ENV..." -- [cmake args...]
#   ENV entries are VAR=value words (or a command prefix) put before ctest.
#   stage_ctest_args are added to ctest's; stage_jobs is ctest's -j;
#   stage_check, if set, names a function run with the build dir between
#   build and ctest.
run_stage() {
  local name=$1 dir=$2 start rc=0 result failed_tests=
  shift 2
  local -a prefix=()
  while (($# > 0)) && [[ "$1" != -- ]]; do
    prefix+=("$1")
    shift
  done
  (($# > 0)) && shift # drop the --

  start=$SECONDS
  echo "=== stage $name: build $dir ==="
  if ! "$root/scripts/build.sh" "$dir" "$@"; then
    result="FAIL  $name: build failed"
    failed=1
  elif [[ -n "$stage_check" ]] && ! "$stage_check" "$root/$dir"; then
    result="FAIL  $name: $stage_check"
    failed=1
  else
    echo "=== stage $name: ctest $dir ==="
    [[ "${REDLOCK_TEST_LOAD:-0}" != 0 ]] && start_load
    env "${prefix[@]+"${prefix[@]}"}" \
      ctest --test-dir "$root/$dir" --output-on-failure -j"${REDLOCK_CTEST_JOBS:-$stage_jobs}" \
      "${stage_ctest_args[@]+"${stage_ctest_args[@]}"}" \
      "${ctest_args[@]+"${ctest_args[@]}"}" || rc=$?
    stop_load
    if ((rc == 0)); then
      result="PASS  $name"
    else
      result="FAIL  $name: ctest exit $rc"
      # The failed tests' names again here: the summary is what a CI log
      # cut to its tail still shows.
      local list=$root/$dir/Testing/Temporary/LastTestsFailed.log
      if [[ -s "$list" ]]; then
        failed_tests=$(sed -E 's/^[0-9]+:/      failed: /' "$list")
      fi
      failed=1
    fi
  fi
  # Servers leaked by one stage must not hold ports in the next.
  reap
  result+=" ($((SECONDS - start)) s)"
  [[ "${REDLOCK_TEST_LOAD:-0}" != 0 ]] && result+=" under load"
  [[ -n "$failed_tests" ]] && result+=$'\n'"$failed_tests"
  echo "--- $result"
  summary+=("$result")
}

# The fault-schedule runs, plans and negative controls, and the package
# builds (tests/package): the default stage runs them, the others skip them.
torture_runs=(-E "^(torture: (short schedule|detects|safe|negative control)|package: )")

# Unity builds (each target's sources compiled a few at a time as one file)
# halve the build time that dominates every stage: Asio's templates are
# parsed and instantiated once per batch instead of once per file.
unity=(-DCMAKE_UNITY_BUILD=ON)

# -g1 (line tables and function names: enough for a backtrace) instead of
# -g: full debug info of Asio-heavy code costs a third of the compile time
# (an integration-test batch: 115 s -> 74 s).
stage_ctest_args=()
stage_check=
stage_jobs=6
run_stage default build -- "${unity[@]}" "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O2 -g1 -DNDEBUG"

# run_script NAME COMMAND...: a stage that is one script, not a build.
run_script() {
  local name=$1 start=$SECONDS
  shift
  echo "=== stage $name ==="
  if "$@"; then
    summary+=("PASS  $name ($((SECONDS - start)) s)")
  else
    summary+=("FAIL  $name: $(basename "$1") ($((SECONDS - start)) s)")
    failed=1
  fi
}

# libFuzzer (clang): the saved crash inputs, then each target briefly
# (scripts/fuzz.sh SECONDS runs them longer).
if [[ "${REDLOCK_FUZZ:-1}" != 0 ]]; then
  run_script fuzz "$root/scripts/fuzz.sh" "${REDLOCK_FUZZ_SECONDS:-10}"
else
  summary+=("SKIP  fuzz (REDLOCK_FUZZ=0)")
fi

# The API reference: Doxygen must find every public entity documented.
if [[ "${REDLOCK_DOCS:-1}" != 0 ]]; then
  run_script docs "$root/scripts/docs.sh" "$root/build-docs"
else
  summary+=("SKIP  docs (REDLOCK_DOCS=0)")
fi

# Every other stage builds in unity batches, where a file may use what
# another file of its batch included. A user's plain build compiles one file
# at a time: the library and the tool must build that way too (-O0 and no
# debug info: about a minute).
separate_build() {
  "$root/scripts/deps.sh" &&
    cmake -S "$root" -B "$root/build-separate" -DCMAKE_BUILD_TYPE=Debug \
      -DCMAKE_CXX_FLAGS_DEBUG="-O0 -g0" -DCMAKE_UNITY_BUILD=OFF -DREDLOCK_BUILD_TESTS=OFF \
      -DREDLOCK_BUILD_EXAMPLES=OFF -DREDLOCK_BUILD_BENCH=OFF -DREDLOCK_BUILD_SHARED=OFF \
      -DREDLOCK_WARNINGS_AS_ERRORS=ON >/dev/null &&
    cmake --build "$root/build-separate" -j2 --target redlock redlock_cli
}
if [[ "${REDLOCK_SEPARATE:-1}" != 0 ]]; then
  run_script separate-compilation separate_build
else
  summary+=("SKIP  separate-compilation (REDLOCK_SEPARATE=0)")
fi

# The fencing design model-checked with spin (docs/models/): the shipped
# design must verify, each broken variant must give a counterexample.
if [[ "${REDLOCK_MODELS:-1}" != 0 ]]; then
  run_script models "$root/scripts/models.sh"
else
  summary+=("SKIP  models (REDLOCK_MODELS=0)")
fi

# Under sanitizers and Boost 1.81: every unit and integration test and the
# checker's tests, but not the long fault-schedule runs (they ran in the
# default stage), and no examples, benchmark, shared library or header check
# to build (the package checks ran there too). -O1 -g1 keeps
# function names in reports and compiles much faster than -O2 -g.
stage_ctest_args=("${torture_runs[@]}")
common_args=("${unity[@]}" -DREDLOCK_BUILD_EXAMPLES=OFF -DREDLOCK_BUILD_BENCH=OFF
  -DREDLOCK_HEADER_CHECK=OFF -DREDLOCK_BUILD_SHARED=OFF
  "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1")

if [[ "${REDLOCK_SANITIZERS:-1}" != 0 ]]; then
  # Batches of 16 instead of 8: GCC's UBSan instrumentation makes each
  # batch slow to compile, and fewer batches parse Asio fewer times
  # (measured: this stage's build 646 s -> 562 s on 2 cores). UBSan's
  # alignment, null and object-size checks instrument nearly every memory
  # access and cost a third of this build (one batch: 101 s -> 67 s); ASan
  # reports a null dereference and an access outside an object itself, and
  # x86 forgives misalignment. Overflow, shift, bounds, enum, bool, vptr,
  # float-cast and the rest stay.
  stage_jobs=4
  run_stage asan+ubsan build-asan "${san_env[@]}" \
    -- -DREDLOCK_SANITIZE=address,undefined -DREDLOCK_NO_SANITIZE=alignment,null,object-size \
    "${common_args[@]}" -DCMAKE_UNITY_BUILD_BATCH_SIZE=16
else
  summary+=("SKIP  sanitizers (REDLOCK_SANITIZERS=0)")
fi

# Proof that the boost-1.81 build compiled against the prefix's headers: the
# compiler's dependency lists name its boost/version.hpp (every Asio header
# includes it) and nothing under /usr/include/boost (1.74), which would win
# if the prefix's include dir ever came after /usr/include.
# shellcheck disable=SC2317 # invoked via stage_check
boost181_headers() {
  local dir=$1 deps inc
  inc=$(cd "$boost181_prefix" && pwd -P)/usr/include/boost/ # Boost's config resolves symlinks
  if [[ -f "$dir/build.ninja" ]]; then
    deps=$(ninja -C "$dir" -t deps)
  else
    deps=$(find "$dir" -name '*.o.d' -exec cat {} +)
  fi
  if grep -Eq '(^|[[:space:]])/usr/include/boost/' <<<"$deps"; then
    echo "test.sh: $dir includes Boost headers from /usr/include/boost" >&2
    return 1
  fi
  if ! grep -Fq "${inc}version.hpp" <<<"$deps"; then
    echo "test.sh: $dir never includes ${inc}version.hpp" >&2
    return 1
  fi
}

# The TSan stage leaves out the fault-injection program: its checker's tests
# are pure logic, run in the other two stages.
tsan_args=(-DREDLOCK_SANITIZE=thread -DREDLOCK_BUILD_TORTURE=OFF)
tsan_run=("${san_env[@]}" "${tsan_prefix[@]+"${tsan_prefix[@]}"}")
stage_jobs=3
if [[ "${REDLOCK_BOOST181:-1}" != 0 ]]; then
  # The Asio of Boost 1.81, unpacked into a private prefix as Debian cannot
  # install it beside 1.74.
  boost181_prefix=$root/.deps/boost-1.81
  if out=$("$root/scripts/boost181.sh" "$boost181_prefix"); then
    mapfile -t boost181_args <<<"$out"
    stage_check=boost181_headers
    if [[ "${REDLOCK_SANITIZERS:-1}" != 0 ]]; then
      run_stage tsan+boost-1.81 build-tsan-boost181 "${tsan_run[@]}" \
        -- "${boost181_args[@]}" "${tsan_args[@]}" "${common_args[@]}"
    else
      run_stage boost-1.81 build-boost181 -- "${boost181_args[@]}" "${common_args[@]}"
    fi
    stage_check=
  else
    summary+=("FAIL  boost-1.81: scripts/boost181.sh could not unpack Boost 1.81")
    failed=1
  fi
else
  summary+=("SKIP  boost-1.81 (REDLOCK_BOOST181=0)")
  if [[ "${REDLOCK_SANITIZERS:-1}" != 0 ]]; then
    run_stage tsan build-tsan "${tsan_run[@]}" -- "${tsan_args[@]}" "${common_args[@]}"
  fi
fi

echo "=== summary ==="
printf '%s\n' "${summary[@]}"
exit "$failed"
