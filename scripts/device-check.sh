#!/usr/bin/env bash
# Runs coalesce's device checks on a machine with a GPU and writes what they print to a results
# directory. Exits non-zero on any test failure, sanitizer report, skipped launch or missed target.
#
#   scripts/device-check.sh [--build-dir DIR] [--results DIR] [step...]
#
# Steps (default: all three, in this order):
#   tests       the device tests, examples and codegen checks with the GPU and the hardware counters
#               required (COALESCE_REQUIRE_GPU=1): nothing may be skipped. Output: device-tests.txt
#   sanitizers  every device test executable under compute-sanitizer's memcheck, racecheck,
#               initcheck and synccheck (COALESCE_SANITIZER=1: each case launches its kernels, then
#               stops before timings and counters). A test executable that exits 77 there skipped a
#               case before its launches, which fails the step. Cases tagged [no-sanitizer] (a
#               deliberate out-of-memory, which memcheck reports as an API error, and no kernel) are
#               left out. Output: sanitizers.txt
#   bench       coalesce_bench --check: every coalesce row against its targets. Output: bench.txt and
#               bench/ (table, CSV, JSON, targets, charts)
# Defaults: --build-dir build/device, --results <build-dir>/results.
set -uo pipefail
cd "$(dirname "$0")/.."
build=build/device
results=
steps=()
while [ $# -gt 0 ]; do
  case "$1" in
    --build-dir) build=$2; shift 2 ;;
    --results) results=$2; shift 2 ;;
    tests|sanitizers|bench) steps+=("$1"); shift ;;
    *) echo "usage: $0 [--build-dir DIR] [--results DIR] [tests] [sanitizers] [bench]" >&2; exit 2 ;;
  esac
done
[ ${#steps[@]} -eq 0 ] && steps=(tests sanitizers bench)
results=${results:-$build/results}
export PATH="/usr/local/cuda/bin:$PATH"

# The compiler-only checks (headers, compile-fail, package) run in CI, not here.
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
  -DCOALESCE_BUILD_COMPILE_CHECKS=OFF || exit 1
cmake --build "$build" || exit 1
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
}

run_sanitizers() {
  local sanitizer log rc
  sanitizer=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
  : >"$results/sanitizers.txt"
  for tool in memcheck racecheck initcheck synccheck; do
    echo "== compute-sanitizer --tool $tool" | tee -a "$results/sanitizers.txt"
    for exe in "$build"/tests/device.*; do
      [ -x "$exe" ] || continue
      log=$(mktemp)
      COALESCE_SANITIZER=1 "$sanitizer" --tool "$tool" --error-exitcode 99 --print-limit 20 "$exe" '~[no-sanitizer]' \
        >"$log" 2>&1
      rc=$?
      if [ $rc -eq 77 ]; then
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
      fi 2>&1 | relative | tee -a "$results/sanitizers.txt"
      rm -f "$log"
    done
  done
  grep -q "^FAILED" "$results/sanitizers.txt" && status=1
}

run_bench() {
  echo "== coalesce_bench --check"
  cmake --build "$build" --target coalesce_bench || { fail "building coalesce_bench"; return; }
  "$build/bench/coalesce_bench" --check "$results/bench" 2>&1 | relative | tee "$results/bench.txt"
  [ "${PIPESTATUS[0]}" -eq 0 ] || fail "coalesce_bench --check (see $results/bench.txt)"
}

for step in "${steps[@]}"; do "run_$step"; done
[ $status -eq 0 ] && echo "device-check: all clean ($results)" || echo "device-check: FAILED ($results)"
exit $status
