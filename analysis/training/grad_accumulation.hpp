// Gradient accumulation over N micro-batches (contract gradient-accumulation-kernel-v1):
//
//   G_accum = (1/N) * sum_{i=1..N} g_i        total loss = (1/N) * sum_i L_i (the mean, not the sum)
//
// used between the model's backward pass and the optimizer step. One cycle is N calls of add();
// the N-th returns true, and the caller then calls take() once and steps the optimizer once
// with what it returns (the contract's step-frequency invariant). The phases of a cycle:
//
//   zero        the first add() of a cycle zeroes the buffer (and the Kahan compensation), so
//               nothing of an earlier cycle can leak into this one
//   accumulate  element j of tensor t:  u = g[t][j] / N  (binary32 division, correctly rounded:
//               exact for N = 1 and, barring subnormal results, for N a power of two), then
//                 plain   s = store(s + u)                 binary32 addition
//                 kahan   y = u - c;  s' = store(s + y);  c = store((s' - s) - y)
//               every arithmetic operation in binary32 and `store` the one rounding into the
//               buffer format (round to nearest even; exact for an fp32 buffer), the way a
//               kernel that loads a bf16 buffer, adds in fp32 and writes bf16 back behaves. The
//               zeroed buffer acts as the additive identity -0 (0 + u is u, with u's sign), so
//               for N = 1 with an fp32 buffer G is g_1 bit for bit, -0 included.
//   clip        take(): the global l2 norm over all tensors, in double, in a fixed two-level
//               order that a GPU reproduces exactly (norm_chunk, chunk_sum_squares below): each
//               tensor is cut into chunks of norm_chunk consecutive elements (the last one
//               shorter), each chunk's squares are summed in element order (the squares are
//               exact in double), then the chunk sums are summed in (tensor, chunk) order, then
//               sqrt; a chunk never spans two tensors. PyTorch's clip_grad_norm_ rule
//               (clip_for): coef = clip_norm / (norm + 1e-6), and when coef < 1 every element
//               becomes store(s * float(coef)) (one binary32 multiply). Once per cycle, on the
//               accumulated gradient, never per micro-batch.
//
// Non-finite gradient values propagate into the buffer and into last_norm() (an infinite norm
// gives coef 0 and NaN elements, as in PyTorch); a caller that skips steps on overflow checks
// last_norm(). Buffers other than fp32 (bf16, fp16, ...) are an experiment, not the contract's
// buffer: with `kahan` the compensation tensor has the buffer's format too.
//
// Programming errors (add() with the wrong number of tensors or a tensor of the wrong size,
// add() while a completed cycle has not been taken, take() before a cycle completes or twice)
// are checked in every build type: the message goes to stderr and the program aborts. Bad
// options are not programming errors: create() returns an error naming the value.
#pragma once

#include <cstddef>
#include <limits>
#include <span>
#include <vector>

#include "analysis/training/stored_tensor.hpp"
#include "fpemu/config.hpp"
#include "fpemu/expected.hpp"
#include "fpemu/format.hpp"

namespace fpemu::training {

// The norm's summation order, shared by take() and the CUDA kernels (cuda/grad_accumulation.cu:
// one thread per chunk, then one thread over the chunk sums). A purely sequential double sum
// over every element cannot be parallelised without changing its rounding; this order can, and
// it stays deterministic. 1024 elements per chunk keep a thread's serial loop short while the
// chunk sums (one double per 1024 floats) stay a small second pass.
inline constexpr std::size_t norm_chunk = 1024;

// One chunk: the squares of v[0..n) summed in element order in double (each square is exact).
FPEMU_HD inline double chunk_sum_squares(const float* v, std::size_t n) {
  double s = 0;
  for (std::size_t i = 0; i < n; ++i) s += static_cast<double>(v[i]) * static_cast<double>(v[i]);
  return s;
}

// The clipping decision of PyTorch's clip_grad_norm_ for a norm: coef = clip_norm / (norm +
// 1e-6), applied when clip_norm > 0 and coef < 1 (a NaN norm gives a NaN coef: not applied; the
// NaN is in the gradient already); scale is float(coef), or 1 when not applied.
struct clip_decision {
  bool apply = false;
  float scale = 1.0f;
};
inline clip_decision clip_for(double clip_norm, double norm) {
  if (!(clip_norm > 0)) return {};
  const double coef = clip_norm / (norm + 1e-6);
  if (!(coef < 1.0)) return {};
  return {true, static_cast<float>(coef)};
}

struct grad_accumulation_options {
  int micro_batches = 1;          // N, 1..2^24 (so that float(N) is exact)
  double clip_norm = 0;           // global-norm clipping of the accumulated gradient; 0 = off; finite, >= 0
  format buffer = formats::fp32;  // the contract's buffer is fp32; a narrower one is an experiment
  bool kahan = false;             // Kahan-compensated buffer (compensation in the buffer format)
};

class grad_accumulator {
 public:
  grad_accumulator() = default;  // no tensors, N = 1; use create()

  // One buffer tensor per entry of `sizes` (a size may be 0). Errors: N outside 1..2^24,
  // clip_norm NaN, negative or infinite, a buffer format that storage_format() rejects.
  static expected<grad_accumulator> create(std::vector<std::size_t> sizes, const grad_accumulation_options& options);

  // One micro-batch: g[t] is the gradient of tensor t for the micro-batch's mean loss (not
  // divided by N), `loss` that mean loss. Returns true when this micro-batch completes a cycle:
  // the caller then calls take() and steps the optimizer once.
  bool add(std::span<const std::span<const float>> g, double loss);
  bool add(const std::vector<std::vector<float>>& g, double loss);  // the same, for vectors

  // After a completed cycle: clips (when clip_norm > 0), marks the cycle taken and returns the
  // accumulated gradient, one tensor per size, in the buffer format. The reference stays valid
  // until the next add().
  const std::vector<stored_tensor>& take();

  // The mean of the losses of the current cycle's micro-batches: sum in double, divided by the
  // number added so far (N once the cycle is complete; it stays until the next cycle starts).
  // NaN before the first add().
  double mean_loss() const;
  // The global norm, before clipping, of the last taken cycle; NaN before the first take().
  double last_norm() const { return last_norm_; }
  // The scale the last take() applied: clip_norm / (norm + 1e-6) rounded to float, or 1.
  float last_clip_scale() const { return last_scale_; }

  // Counters for the contract's invariants.
  long micro_batches_seen() const { return seen_; }
  long cycles_completed() const { return cycles_; }  // cycles whose N-th micro-batch was added
  long clip_events() const { return clips_; }        // takes that scaled the gradient

  // Micro-batches added to the open cycle, 0..N (N: complete, take() is due; 0 after take()).
  int cycle_position() const { return pos_; }
  bool cycle_ready() const { return pos_ == options_.micro_batches; }
  const grad_accumulation_options& options() const { return options_; }
  std::size_t tensors() const { return buffer_.size(); }
  std::size_t size(std::size_t t) const { return buffer_[t].size(); }

  // The buffer as it is now (during a cycle: the partial sum) and, with kahan, the
  // compensation c of the last add() (the buffer's error is about +c, so s - c is closer to the
  // exact sum; clipping leaves c alone). Empty without kahan. For inspection and experiments.
  const std::vector<stored_tensor>& buffer() const { return buffer_; }
  const std::vector<stored_tensor>& compensation() const { return comp_; }

 private:
  grad_accumulation_options options_{};
  std::vector<stored_tensor> buffer_;
  std::vector<stored_tensor> comp_;
  std::vector<float> s_, c_, t_;  // scratch, one tensor's worth
  int pos_ = 0;                   // micro-batches added in the open cycle
  int loss_count_ = 0;            // losses in loss_sum_: the open or the last cycle's
  double loss_sum_ = 0;
  double last_norm_ = std::numeric_limits<double>::quiet_NaN();
  float last_scale_ = 1.0f;
  long seen_ = 0, cycles_ = 0, clips_ = 0;
};

}  // namespace fpemu::training
