#!/usr/bin/env bash
# Every GPU step of a session in one script, for a machine with an NVIDIA GPU: `fpemu gpu-check`
# (every kernel against the emulator, bit for bit) and bench/bench_cuda (the kernels against the
# device's limits), recorded with the device, driver, CUDA version, date and commands in
# gpu-<device>-<date>.md under bench/results/ (or $OUT), the raw benchmark JSON beside it.
#
#   scripts/gpu_session.sh [BUILD]      BUILD (default build) holds src/cli/fpemu and
#                                       bench/bench_cuda, built by ./dev build on a machine with
#                                       nvcc (bench_cuda: meson configure BUILD -Dbenchmarks=true)
#   GPU_CHECK_ARGS="--quick" ...        options for gpu-check; BENCH_ARGS for bench_cuda
#
# Exit status: gpu-check's (0 all matched, 1 a mismatch, 77 no GPU), or 1 when the benchmark failed.
set -uo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
# The records name an absolute build folder (an unpacked bundle) DIR: no path of the machine
# that ran them goes into the repository.
shown=$build
case $build in /*) shown=DIR ;; esac
dest=${OUT:-bench/results}
mkdir -p "$dest"
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)
driver=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>/dev/null | head -1)
date=$(date -u +%Y-%m-%d)
tag=$(echo "${gpu:-unknown}" | tr 'A-Z' 'a-z' | sed 's/nvidia //; s/[^a-z0-9]\+/-/g; s/-$//')
report="$dest/gpu-$tag-$date.md"
json="$dest/gpu-$tag-$date-bench.json"

check_out="$report.check.tmp"  # kept while running, so that a run cut short leaves its lines
"$build/src/cli/fpemu" gpu-check ${GPU_CHECK_ARGS:-} 2>&1 | tee "$check_out"
check_status=${PIPESTATUS[0]}
bench_status=0
if [ "$check_status" -ne 77 ]; then
  "$build/bench/bench_cuda" --benchmark_format=json --benchmark_out="$json" --benchmark_out_format=json \
    --benchmark_format=console ${BENCH_ARGS:-} || bench_status=1
  [ -f "$json" ] && sed -i "s#\"$build/#\"$shown/#g" "$json"
fi
{
  echo "# fpemu on ${gpu:-no GPU}, $date"
  echo
  echo "- date: $date"
  echo "- device: ${gpu:-none found}, driver ${driver:-?}"
  echo "- command: \`scripts/gpu_session.sh $shown\` (\`$shown/src/cli/fpemu gpu-check ${GPU_CHECK_ARGS:-}\`, then"
  echo "  \`$shown/bench/bench_cuda ${BENCH_ARGS:-}\`), fpemu $(git describe --always --dirty 2>/dev/null || echo '?')"
  echo
  echo "## gpu-check: every kernel against the emulator, bit for bit"
  echo
  echo "One line per check: cases run, mismatches, the first mismatch."
  echo
  echo '```'
  cat "$check_out"
  echo "exit status: $check_status"
  echo '```'
  if [ -s "$json" ]; then
    echo
    echo "## bench_cuda: the kernels against the device's limits, in the same run"
    echo
    python3 scripts/gpu_bench_report.py "$json"
  fi
} > "$report.tmp"
mv "$report.tmp" "$report"
rm -f "$check_out"
echo "gpu_session: wrote $report"
[ "$check_status" -ne 0 ] && exit "$check_status"
exit "$bench_status"
