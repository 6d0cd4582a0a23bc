#!/usr/bin/env bash
# Devarakonda et al. 2026's accuracy experiments scaled to a 2-core machine, with the fpemu command:
#   Table 5   relative final-loss gap |L_C - L_A| / |L_A| of Recipe C to Recipe A, for logistic,
#             linear and Poisson regression at s in {16, 64}, b = 32, H = 200, seeds 42-44, on
#             synth:16384,256 with P = 16 ranks and on heart_scale (Debian's liblinear-tools) with P = 4
#             (logistic and linear: its labels are +-1);
#   Figure 3  the long-horizon relative loss gap to Recipe A of recipes A-I (CSV);
#   Figure 2  C(P) of each AllReduce algorithm and datatype for P = 4..256 (CSV).
# Writes bench/results/casgd_*.{txt,csv}. About 75 minutes on 2 cores.
#
#   scripts/casgd_experiments.sh [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
fpemu=${1:-build}/src/cli/fpemu
out=bench/results
mkdir -p "$out"

{
  echo "# Table 5 (scaled): fpemu casgd, $(date -u +%Y-%m-%d), $(nproc) cores"
  for data in synth:16384,256 heart_scale; do
    P=16; [ "$data" = heart_scale ] && P=4
    losses="logistic linear poisson"
    [ "$data" = heart_scale ] && losses="logistic linear"  # its labels are +-1, not counts
    for loss in $losses; do
      eta=0.5; [ "$loss" = poisson ] && eta=0.05
      for s in 16 64; do
        cmd="$fpemu casgd --loss $loss --data $data --recipe A,C --b 32 --s $s --P $P --eta $eta --outer 200 --seed 42,43,44"
        echo "## $cmd"
        $cmd
      done
    done
  done
} | tee "$out/casgd_table5.txt"

{
  cmd="$fpemu casgd --loss logistic --data synth:8192,64 --recipe A,B,C,D,E,F,G,H,I --b 32 --s 16 --P 4 --eta 0.1 --outer ${FIG3_OUTER:-500} --eval-every 25 --csv $out/casgd_figure3.csv"
  echo "## $cmd"
  $cmd
} | tee "$out/casgd_figure3.txt"

$fpemu allreduce --csv "$out/casgd_cp.csv" | tee "$out/casgd_cp.txt"
