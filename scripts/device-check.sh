#!/usr/bin/env bash
# Runs coalesce's device suite on a machine with a GPU, then reruns it under compute-sanitizer's
# four tools (memcheck, racecheck, initcheck, synccheck). Exits non-zero on any test failure or
# sanitizer report. Usage: scripts/device-check.sh [build-dir]   (default: build/device)
#
# The plain run requires the GPU and the hardware counters (COALESCE_REQUIRE_GPU=1): nothing may
# be skipped. Under the sanitizers, counters and timings are meaningless, so tests skip those
# assertions (COALESCE_SANITIZER=1) but still run every kernel.
set -uo pipefail
cd "$(dirname "$0")/.."
build=${1:-build/device}
export PATH="/usr/local/cuda/bin:$PATH"

cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 || exit 1
cmake --build "$build" || exit 1

status=0
echo "== device tests (GPU and counters required)"
COALESCE_REQUIRE_GPU=1 ctest --test-dir "$build" -L 'device|example' --output-on-failure || status=1

sanitizer=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
for tool in memcheck racecheck initcheck synccheck; do
  echo "== compute-sanitizer --tool $tool"
  for exe in "$build"/tests/device.*; do
    [ -x "$exe" ] || continue
    log=$(mktemp)
    COALESCE_SANITIZER=1 "$sanitizer" --tool "$tool" --error-exitcode 99 --print-limit 20 "$exe" >"$log" 2>&1
    rc=$?
    # 0: clean; 77: some assertions skipped (timings, counters) - the kernels still ran.
    if [ $rc -ne 0 ] && [ $rc -ne 77 ]; then
      echo "FAILED: $tool on $(basename "$exe") (exit $rc)"; grep -A6 "^========= [A-Z]" "$log" | head -40; tail -40 "$log"; status=1
    elif grep -q "ERROR SUMMARY: [1-9]" "$log"; then
      echo "FAILED: $tool reported errors on $(basename "$exe")"; grep -A3 "=========" "$log" | head -40; status=1
    else
      echo "clean: $tool on $(basename "$exe") ($(grep -o 'ERROR SUMMARY: [0-9]* errors\|RACECHECK SUMMARY: [0-9]* hazards displayed' "$log" | head -1))"
    fi
    rm -f "$log"
  done
done
[ $status -eq 0 ] && echo "device-check: all clean" || echo "device-check: FAILED"
exit $status
