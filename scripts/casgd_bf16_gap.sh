#!/usr/bin/env bash
# Why end-to-end bf16 mini-batch SGD misses Devarakonda et al. 2026's 0.5% (Section 7.2) in
# `fpemu casgd --recipe I --s 1`: Recipes I (every slot bf16) and H (fp16) against A (fp32) on
# synth:16384,256, P = 16, b = 32, 3200 SGD steps, seed 42, run as s = 1 (H = 3200 outer
# iterations: plain mini-batch SGD) and as s = 16 (H = 200, the paper's operating point), and
# Recipe I at s = 1 with fp32 weights (--slot u_x=fp32). Recipe H's fp16 Gram runs through the
# reference accumulator loop, too slow for s = 16 here. Then which slot: Recipe A with one slot
# at a time in bf16 (logistic, s = 1). Writes bench/results/casgd_bf16_gap.txt
# (columns: loss, s, recipe, final loss, relative gap to A). About 5 minutes on 2 cores.
#
#   scripts/casgd_bf16_gap.sh [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
fpemu=${1:-build}/src/cli/fpemu
out=bench/results/casgd_bf16_gap.txt
{
  echo "# fpemu casgd on synth:16384,256, P = 16, b = 32, 3200 SGD steps, seed 42; $(date -u +%Y-%m-%d), $(nproc) cores"
  for loss in logistic linear poisson; do
    eta=0.5; [ "$loss" = poisson ] && eta=0.05
    for s in 1 16; do
      outer=$((3200 / s))
      recipes=A,I,H; [ "$s" = 16 ] && recipes=A,I
      "$fpemu" casgd --data synth:16384,256 --loss "$loss" --eta "$eta" --recipe "$recipes" --s "$s" --P 16 \
        --outer "$outer" --eval-every "$outer" --csv - |
        awk -F, -v l="$loss" -v s="$s" '$3 != "outer" && $3 > 0 {print l, "s=" s, $1, $5, $6}'
      if [ "$s" = 1 ]; then
        "$fpemu" casgd --data synth:16384,256 --loss "$loss" --eta "$eta" --recipe A,I --slot u_x=fp32 --s 1 --P 16 \
          --outer 3200 --eval-every 3200 --csv - |
          awk -F, -v l="$loss" '$1 == "I" && $3 > 0 {print l, "s=1", "I+u_x=fp32", $5, $6}'
      fi
    done
  done
  for slot in u_A u_G u_r u_c u_sigma u_g u_AR_r u_AR_G u_x; do
    "$fpemu" casgd --data synth:16384,256 --recipe A --slot "$slot=bf16" --s 1 --P 16 --outer 3200 --eval-every 3200 \
      --csv - | awk -F, -v slot="$slot" '$3 != "outer" && $3 > 0 {print "logistic", "s=1", "A+" slot "=bf16", $5}'
  done
} | tee "$out"
