#!/usr/bin/env bash
# Runs coalesce's device checks on a machine with a GPU and writes what they print to a results
# directory. Exits non-zero on any test failure, sanitizer report, skipped launch or missed target.
#
#   scripts/device-check.sh [--build-dir DIR] [--results DIR] [--no-build] [step...]
#
# Steps (default: all three, in this order):
#   tests       the device tests, examples and codegen checks with the GPU and the hardware counters
#               required (COALESCE_REQUIRE_GPU=1): nothing may be skipped (device.big, label big,
#               needs 113 GiB free), then the containers' property tests in a long run. Output:
#               device-tests.txt, container-properties-long.txt
#   sanitizers  every device test executable under compute-sanitizer's memcheck, racecheck,
#               initcheck and synccheck (COALESCE_SANITIZER=1: each case launches its kernels, then
#               stops before timings and counters). A test executable that exits 77 there skipped a
#               case before its launches, which fails the step. Cases tagged [no-sanitizer] (a
#               deliberate out-of-memory, which memcheck reports as an API error, and no kernel) are
#               left out. Output: sanitizers.txt
#               The device tests include nccl.two_processes.one_gpu where NCCL was found: the
#               two-process NCCL cases with both processes on the one GPU (see
#               tests/nccl/two_processes.cu).
#   bench       coalesce_bench --check: every coalesce row against its targets. Output: bench.txt and
#               bench/ (table, CSV, JSON, targets, charts)
#   nccl_one_gpu_sanitizers  (not one of the default steps) nccl.two_processes with both
#               processes on one GPU (COALESCE_NCCL_SHARE_GPU=1) under the four sanitizers, with
#               the options and time of two_gpus_sanitizers. Output: sanitizers-nccl-one-gpu.txt
#   two_gpus    on a machine with two GPUs (not one of the default steps): the three steps below,
#               in this order. Each may also be run alone, e.g. one per call where a call's time is
#               bounded:
#   two_gpus_tests       the NCCL tests and the two-GPU example (label nccl) with the GPUs
#                        required. Output: two-gpus.txt
#   two_gpus_sanitizers  the NCCL test executables under the four sanitizers. The tools run with
#                        --report-api-errors no there: NCCL's initialization probes for kernels
#                        that are not built for the device (cudaErrorNoKernelImageForDevice), which
#                        is NCCL's own API error, not a memory error; and each executable may take
#                        SANITIZER_TIMEOUT seconds (1800 there, 600 elsewhere).
#                        Output: sanitizers-two-gpus.txt
#   two_gpus_bench       coalesce_bench_two_gpus --check. Output: bench-two-gpus.txt
# SANITIZER_TOOLS names the tools of the sanitizer steps (default: memcheck racecheck initcheck
# synccheck), e.g. some per call where a call's time is bounded.
# Defaults: --build-dir build/device, --results <build-dir>/results. --no-build runs the steps on
# the build directory as it is (configured and built elsewhere, e.g. on a machine without a GPU,
# with coalesce_bench and coalesce_bench_two_gpus built too) instead of configuring and building.
set -uo pipefail
cd "$(dirname "$0")/.."
build=build/device
results=
steps=()
build_here=1
while [ $# -gt 0 ]; do
  case "$1" in
    --build-dir) build=$2; shift 2 ;;
    --results) results=$2; shift 2 ;;
    --no-build) build_here=0; shift ;;
    tests|sanitizers|bench|nccl_one_gpu_sanitizers|two_gpus|two_gpus_tests|two_gpus_sanitizers|two_gpus_bench) steps+=("$1"); shift ;;
    *) echo "usage: $0 [--build-dir DIR] [--results DIR] [--no-build] [tests] [sanitizers] [bench]" \
         "[nccl_one_gpu_sanitizers] [two_gpus]" \
         "[two_gpus_tests] [two_gpus_sanitizers] [two_gpus_bench]" >&2; exit 2 ;;
  esac
done
[ ${#steps[@]} -eq 0 ] && steps=(tests sanitizers bench)
results=${results:-$build/results}
export PATH="/usr/local/cuda/bin:$PATH"

# The full test scope (full-size problems, measurements, one device test at a time); the
# compiler-only checks (headers, compile-fail, package) run in CI, not here.
if [ $build_here -eq 1 ]; then
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
    -DCOALESCE_BUILD_TESTS=ON -DCOALESCE_TEST_SCOPE=full -DCOALESCE_BUILD_COMPILE_CHECKS=OFF || exit 1
  cmake --build "$build" || exit 1
fi
build_target() { [ $build_here -eq 0 ] || cmake --build "$build" --target "$1"; }
mkdir -p "$results"

status=0
fail() { echo "FAILED: $*"; status=1; }
# What goes into the results names files relative to the repository, and tools by name, not by
# where this machine keeps them.
cmake_dir=$(dirname "$(readlink -f "$(command -v cmake)")")
relative() { sed -e "s#$PWD/##g" -e "s#$cmake_dir/##g"; }

run_tests() {
  echo "== device tests, examples and codegen checks (GPU and counters required)"
  COALESCE_REQUIRE_GPU=1 ctest --test-dir "$build" -L 'device|example|codegen' -V 2>&1 | relative | tee "$results/device-tests.txt"
  grep -q "100% tests passed" "$results/device-tests.txt" || fail "device tests (see $results/device-tests.txt)"
  # The containers' property tests again, longer than ctest's default run of 120 steps a seed.
  echo "== device.container_properties, 2000 steps a seed"
  COALESCE_REQUIRE_GPU=1 COALESCE_TEST_FULL=1 COALESCE_PROPERTY_ITERATIONS=2000 "$build/tests/device.container_properties" 2>&1 | relative |
    tee "$results/container-properties-long.txt"
  [ "${PIPESTATUS[0]}" -eq 0 ] || fail "device.container_properties, long run (see $results/container-properties-long.txt)"
}

# sanitize OUTPUT PREFIX [options for every tool]: every test executable $build/tests/PREFIX*
# under the four tools.
sanitize() {
  local output=$1 prefix=$2 sanitizer log rc options
  shift 2
  sanitizer=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
  : >"$results/$output"
  for tool in ${SANITIZER_TOOLS:-memcheck racecheck initcheck synccheck}; do
    echo "== compute-sanitizer --tool $tool" | tee -a "$results/$output"
    options=("$@")
    # When two ranks are joined by NCCL's network transport (seen with NCCL 2.28.3 and two
    # processes on one GPU), racecheck reports shared-memory hazards and synccheck barriers
    # reached by divergent threads inside NCCL's own kernel, ncclDevKernel_SendRecv. They are in
    # NCCL's code, which nothing of coalesce's reaches, so for the NCCL executables those two
    # tools leave NCCL's kernels out; coalesce's kernels stay checked, and memcheck and initcheck
    # check NCCL's kernels too.
    case $tool in racecheck|synccheck) [[ $prefix == nccl.* ]] && options+=(--kernel-name-exclude kns=ncclDevKernel) ;; esac
    for exe in "$build"/tests/"$prefix"*; do
      [ -x "$exe" ] || continue
      log=$(mktemp)
      # A run that hangs (NCCL waiting on a peer that died under the tool) is stopped and fails.
      COALESCE_SANITIZER=1 timeout "${SANITIZER_TIMEOUT:-600}" "$sanitizer" --tool "$tool" "${options[@]}" --error-exitcode 99 \
        --print-limit 20 "$exe" '~[no-sanitizer]' >"$log" 2>&1
      rc=$?
      if [ $rc -eq 124 ]; then
        fail "$tool on $(basename "$exe") ran past ${SANITIZER_TIMEOUT:-600} s (SANITIZER_TIMEOUT)"
        tail -20 "$log"
      elif [ $rc -eq 77 ]; then
        fail "$tool on $(basename "$exe") exited 77: a test case was skipped before launching its kernels"
        grep -A4 "SKIPPED" "$log"
      elif [ $rc -ne 0 ]; then
        fail "$tool on $(basename "$exe") (exit $rc)"
        grep -A6 "^========= [A-Z]" "$log" | head -40
        tail -40 "$log"
      elif grep -q "ERROR SUMMARY: [1-9]" "$log"; then
        fail "$tool reported errors on $(basename "$exe")"
        grep -A3 "=========" "$log" | head -40
      else
        echo "clean: $tool on $(basename "$exe"): $(grep -o 'ERROR SUMMARY: [0-9]* errors\|RACECHECK SUMMARY: [0-9]* hazards displayed' "$log" | head -1); $(grep -o 'test cases: [0-9]* | [0-9]* passed\|All tests passed ([0-9]* assertions\? in [0-9]* test cases\?)' "$log" | head -1); $(grep -o 'NOT MEASURED: [0-9]* test case(s)' "$log" || echo 'every case measured')"
      fi 2>&1 | relative | tee -a "$results/$output"
      rm -f "$log"
    done
  done
  grep -q "^FAILED" "$results/$output" && status=1
}

run_sanitizers() {
  sanitize sanitizers.txt device.
  # nccl.nvtx needs one GPU; NCCL's initialization probes for kernels, API errors of its own.
  if [ -x "$build/tests/nccl.nvtx" ]; then sanitize sanitizers-nccl-nvtx.txt nccl.nvtx --report-api-errors no; fi
}

run_bench() {
  echo "== coalesce_bench --check"
  build_target coalesce_bench || { fail "building coalesce_bench"; return; }
  "$build/bench/coalesce_bench" --check "$results/bench" 2>&1 | relative | tee "$results/bench.txt"
  [ "${PIPESTATUS[0]}" -eq 0 ] || fail "coalesce_bench --check (see $results/bench.txt)"
}

run_two_gpus_tests() {
  echo "== NCCL tests and the two-GPU example (two GPUs required)"
  COALESCE_REQUIRE_GPU=1 ctest --test-dir "$build" -L nccl -V 2>&1 | relative | tee "$results/two-gpus.txt"
  grep -q "100% tests passed" "$results/two-gpus.txt" || fail "NCCL tests (see $results/two-gpus.txt)"
  grep -q "SKIPPED" "$results/two-gpus.txt" && fail "an NCCL test or the example skipped (see $results/two-gpus.txt)"
}

run_two_gpus_sanitizers() {
  # nccl.two_processes starts two processes per case, each initializing NCCL under the tool.
  SANITIZER_TIMEOUT=${SANITIZER_TIMEOUT:-1800} sanitize sanitizers-two-gpus.txt nccl. --report-api-errors no
}

run_two_gpus_bench() {
  build_target coalesce_bench_two_gpus || { fail "building coalesce_bench_two_gpus"; return; }
  "$build/bench/coalesce_bench_two_gpus" --check "$results/bench-two-gpus.txt" 2>&1 | relative
  [ "${PIPESTATUS[0]}" -eq 0 ] || fail "coalesce_bench_two_gpus --check (see $results/bench-two-gpus.txt)"
}

run_nccl_one_gpu_sanitizers() {
  [ -x "$build/tests/nccl.two_processes" ] || { fail "no $build/tests/nccl.two_processes (built without NCCL?)"; return; }
  COALESCE_NCCL_SHARE_GPU=1 SANITIZER_TIMEOUT=${SANITIZER_TIMEOUT:-1800} \
    sanitize sanitizers-nccl-one-gpu.txt nccl.two_processes --report-api-errors no
}

run_two_gpus() { run_two_gpus_tests; run_two_gpus_sanitizers; run_two_gpus_bench; }

for step in "${steps[@]}"; do "run_$step"; done
[ $status -eq 0 ] && echo "device-check: all clean ($results)" || echo "device-check: FAILED ($results)"
exit $status
