#!/usr/bin/env bash
# Every GPU step of a session in one script, for a machine with an NVIDIA GPU: `fpemu gpu-check`
# on the device, recorded under bench/results/ (or $OUT) with the device, date and command.
#
#   scripts/gpu_session.sh [FPEMU]      FPEMU defaults to build/src/cli/fpemu (built by ./dev build
#                                       on a machine with nvcc)
set -uo pipefail
cd "$(dirname "$0")/.."
bin=${1:-build/src/cli/fpemu}
dest=${OUT:-bench/results}
mkdir -p "$dest"
device=$(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null | head -1)
report="$dest/gpu_check.md"
{
  echo "# fpemu gpu-check"
  echo
  echo "- date: $(date -u +%Y-%m-%d)"
  echo "- device: ${device:-unknown (nvidia-smi not found)}"
  echo "- command: \`$bin gpu-check\`"
  echo
  echo '```'
  "$bin" gpu-check 2>&1
  echo "exit status: $?"
  echo '```'
} | tee "$report.tmp"
mv "$report.tmp" "$report"
