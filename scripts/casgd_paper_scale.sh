#!/usr/bin/env bash
# Devarakonda et al. 2026's Table 5 and Figure 3 at the paper's local width n_loc = 256 and a
# horizon of 10^4 outer iterations (160 000 SGD steps), on a 2-core machine: logistic regression on
# synth:65536,1024 with P = 4 simulated ranks (n_loc = 1024 / 4 = 256; the paper: 65536 x 4096 on
# P = 16 GPUs for Table 5, 10^6 x 9984 for Figure 3), b = 32, s = 16, eta = 0.5, seed 42,
# Recipes A (fp32), C (Table 5's mixed recipe) and I (end-to-end bf16), the loss every 500 outer
# iterations. Writes bench/results/casgd_paper_scale.txt (the report, with each recipe's time) and
# bench/results/casgd_paper_scale.csv (the loss curves). About an hour on 2 cores.
#
#   scripts/casgd_paper_scale.sh [BUILD_DIR] [THREADS]
set -euo pipefail
cd "$(dirname "$0")/.."
fpemu=${1:-build}/src/cli/fpemu
cmd=("$fpemu" casgd --data synth:65536,1024 --loss logistic --recipe A,C,I --b 32 --s 16 --P 4 --eta 0.5
     --outer 10000 --eval-every 500 --seed 42 --threads "${2:-0}" --csv bench/results/casgd_paper_scale.csv)
{
  echo "# $(date -u +%Y-%m-%d), $(nproc) cores: ${cmd[*]:1}"
  "${cmd[@]}"
} | tee bench/results/casgd_paper_scale.txt
