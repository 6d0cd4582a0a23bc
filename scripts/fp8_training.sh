#!/usr/bin/env bash
# FP8 training through the tensor-core model (issue: the DeepSeek-V3 accumulation chapter's
# claim that FP8 GEMMs drift without promotion and match BF16 with promotion every 128 products).
# An MLP 784 -> 4096 -> 10 on Fashion-MNIST (Debian's dataset-fashion-mnist), AdamW lr 1e-3,
# batch 128, fp32 master weights and states, 2 epochs (938 steps), seed 1, under six GEMM recipes
# (fpemu train --help: --gemm): fp32, bf16 operands, and e4m3fn with fast accumulation, with
# DeepSeek-V3's promotion and fine-grained scaling, with promotion but one scale per tensor, and
# with promotion but no scaling. Every 50 steps each GEMM's normwise error is measured on the
# first 8 rows of its output against the exact product. Writes bench/results/fp8_training.txt
# (the command's report) and bench/results/fp8_training.csv (loss per step, per epoch, and the
# GEMM errors; notebooks/08_fp8_training.ipynb draws them). About 55 minutes on 2 cores.
#
#   scripts/fp8_training.sh [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
fpemu=${1:-build}/src/cli/fpemu
{
  echo "# $(date -u +%Y-%m-%d), $(nproc) cores"
  echo "# fpemu train --data fashion-mnist --hidden 4096 --optimizer adamw --epochs 2 --gemm weights,bf16,fp8-fastaccum,fp8-deepseek,fp8-tensor,fp8-unscaled --gemm-error-every 50 --csv bench/results/fp8_training.csv"
  "$fpemu" train --data fashion-mnist --hidden 4096 --optimizer adamw --epochs 2 \
    --gemm weights,bf16,fp8-fastaccum,fp8-deepseek,fp8-tensor,fp8-unscaled --gemm-error-every 50 \
    --csv bench/results/fp8_training.csv
} | tee bench/results/fp8_training.txt
