// Training runs under precision policies, and the stagnation floor of Theorem 1 of Zamirai et al.,
// "Revisiting BFloat16 Training" (2020).
//
// train() runs mini-batch training of a model (model.hpp) on a dataset (datasets.hpp) with an
// optimizer and precision policy (optimizer.hpp) and the gradient-accumulation contract of seed
// 002 (grad_accumulation.hpp): per micro-batch, the model's binary32 gradient is rounded into
// the policy's gradient format and added, times 1/N, into the fp32 accumulation buffer; after
// N micro-batches the buffer is clipped by global norm (when asked) and the optimizer steps
// once. The model computes with the optimizer's weights (the low-precision copy under mixed
// precision) and with matmul inputs in the policy's weight format, accumulating in fp32.
// Every random choice (initialisation, shuffling, stochastic rounding) is keyed by the seed.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "analysis/training/datasets.hpp"
#include "analysis/training/gemm_recipe.hpp"
#include "analysis/training/model.hpp"
#include "analysis/training/optimizer.hpp"
#include "fpemu/expected.hpp"

namespace fpemu::training {

struct train_options {
  model_shape shape;
  optimizer_kind optimizer = optimizer_kind::sgd;
  hyperparameters hyper;
  precision_policy policy;
  int epochs = 1;
  int batch = 128;        // rows per micro-batch
  int grad_accum = 1;     // micro-batches per optimizer step
  double clip_norm = 0;   // 0: no clipping
  std::uint64_t seed = 1;
  int threads = 0;        // 0: all cores
  gemm_recipe gemm;       // how the model's matmuls compute (default: the policy's weight format, fp32)
  // Every probe_every-th optimizer step (the first included; 0: never), the error of each GEMM of
  // its first micro-batch is measured on the first probe_rows rows of its output (model.hpp).
  int probe_every = 0, probe_rows = 8;
};

struct gemm_error_record {
  long step = 0;  // the optimizer step (1-based) whose first micro-batch was measured
  gemm_error error;
};

struct epoch_record {
  int epoch = 0;
  double train_loss = 0;      // mean micro-batch loss over the epoch, as trained
  double test_loss = 0;       // on the held-out set after the epoch
  double test_accuracy = 0;
  long steps = 0;             // optimizer steps so far
  double seconds = 0;         // wall time of the epoch (training and evaluation)
};

struct train_result {
  std::vector<epoch_record> epochs;
  std::vector<double> step_losses;  // the mean loss of each optimizer step's micro-batches
  std::vector<gemm_error_record> gemm_errors;  // probe_every > 0: in step order, each step's GEMMs in order
  memory_account memory;
  std::size_t optimizer_bytes = 0;
};

// Checks shapes, labels against the model and the options; calls `progress` after every epoch.
expected<train_result> train(const dataset& train_set, const dataset& test_set, const train_options& options,
                             const std::function<void(const epoch_record&)>& progress = {});

// Theorem 1 of Zamirai et al. 2020 on f(w) = 1/2 sum_j lambda_j (w_j - w*_j)^2 with lambda_j in
// [L/2, L], L = 1, gradient descent from w0 = 0 with step size lr: nearest rounding in `fmt` stops
// where every update is below half an ulp, at a distance of at least
//   min(eps (1 - lr L) / (lr L + eps) * min_j |w*_j|, ||w0 - w*||),   eps = u of fmt,
// which grows as lr shrinks; Kahan and stochastic rounding keep converging. w* lies on fmt's
// grid so that every policy can reach it exactly.
struct floor_row {
  double lr = 0;
  double predicted = 0;  // the theorem's lower bound for nearest rounding
  double nearest = 0, kahan = 0, stochastic = 0, fp32 = 0;  // ||w - w*|| after `steps`
  long steps = 0;
};
std::vector<floor_row> theorem1_floor(const format& fmt, const std::vector<double>& lrs, int dim, std::uint64_t seed);

}  // namespace fpemu::training
