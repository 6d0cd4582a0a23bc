// Optimizers (SGD, Adam, AdamW, Lion) under precision policies.
//
// A policy fixes where every tensor lives (weights, optimizer states, gradients: fp32, bf16,
// fp16 or any format of binary32 values) and how the weight update is stored:
//
//   nearest        theta <- Q(theta + inc)                              one rounding
//   kahan          u <- k + inc;  theta' <- Q(theta + u);  k <- Q(u + (theta - theta'))
//                  (optimi's formulation; k is a compensation tensor in the weights' format)
//   kahan_zamirai  y <- inc - c;  s <- Q(theta + y);  c <- Q((s - theta) - y);  theta <- s
//                  (Zamirai et al.; c == -k, so the weights are the same bits as `kahan`)
//   stochastic     theta <- SR_k(theta + inc), random bits keyed by (seed, tensor, step * n + i)
//
// and how the element-wise math is done (update_math):
//   fused   binary32 math, then one rounding per stored tensor (what fused GPU kernels do);
//   per_op  every tensor operation rounded to the states' format, each computed in binary32
//           and then rounded, in PyTorch's single-tensor operation order (what plain
//           low-precision tensor code does).
// `mixed` keeps fp32 master weights and states and refreshes a low-precision model copy.
//
// Decoupled weight decay (AdamW, Lion) is folded into the update (decay_order::in_update):
// under Kahan and SR it goes through the compensated or stochastic add, so lr*wd*theta is not
// lost. The naive order (decay_order::separate) first stores theta*(1 - lr*wd) with nearest
// rounding, which returns theta unchanged in bf16 whenever lr*wd < 2^-9: the decay silently
// never happens. SGD and Adam take weight_decay as an L2 term added to the gradient (PyTorch).
//
// The update formulas follow torch.optim's single-tensor implementations operation by
// operation (binary32, no contraction), so the fp32 policy follows PyTorch's trajectories.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/training/stored_tensor.hpp"
#include "fpemu/expected.hpp"
#include "fpemu/format.hpp"

namespace fpemu::training {

enum class optimizer_kind : std::uint8_t { sgd, adam, adamw, lion };
expected<optimizer_kind> parse_optimizer(std::string_view name);
std::string_view to_string(optimizer_kind k);

struct hyperparameters {
  double lr = 1e-3;
  double momentum = 0;      // sgd
  double dampening = 0;     // sgd
  bool nesterov = false;    // sgd (needs momentum > 0 and dampening 0, as in PyTorch)
  double weight_decay = 0;  // sgd, adam: L2 on the gradient; adamw, lion: decoupled
  double beta1 = 0.9;       // adam, adamw, lion
  double beta2 = 0.999;     // adam, adamw; lion's default is 0.99
  double eps = 1e-8;        // adam, adamw
};
// nullopt, or a message naming the offending hyper-parameter and its valid range.
std::optional<std::string> check(optimizer_kind k, const hyperparameters& h);

enum class update_rule : std::uint8_t { nearest, kahan, kahan_zamirai, stochastic };
enum class update_math : std::uint8_t { fused, per_op };
enum class decay_order : std::uint8_t { in_update, separate };

struct precision_policy {
  std::string name = "fp32";
  format weights = formats::fp32;  // stored weights; under `master`, the model copy
  format states = formats::fp32;   // optimizer states (and the master weights)
  format grads = formats::fp32;    // gradients as the optimizer receives them
  bool master = false;             // mixed precision: fp32 master weights and states
  update_rule rule = update_rule::nearest;
  update_math math = update_math::fused;
  decay_order decay = decay_order::in_update;
  int sr_bits = 16;
};

// Names: fp32 | mixed | mixed-fp16 | FMT[-kahan|-zamirai|-sr[K]][-ops], FMT a format name or
// spec of binary32 values (bf16, fp16, ...); "-ops" selects update_math::per_op.
expected<precision_policy> parse_policy(std::string_view name);

// Bytes per parameter, as the table of Warner's optimi documentation, "Low Precision Training with
// Kahan Summation" (2023), counts them: required buffers give `min`,
// the optional ones (the low-precision model copy of mixed precision, a distributed-training
// gradient buffer) are added in `max`.
struct memory_component {
  std::string name;
  int bytes = 0;
  bool optional = false;
};
struct memory_account {
  std::vector<memory_component> components;
  int min = 0, max = 0;
};
memory_account bytes_per_parameter(optimizer_kind k, const hyperparameters& h, const precision_policy& p);

class optimizer {
 public:
  // Takes the initial parameters (binary32 values) and rounds them into the policy's storage
  // with nearest-even. Errors: bad hyper-parameters, a policy format that cannot hold tensors.
  static expected<optimizer> create(optimizer_kind k, const hyperparameters& h, const precision_policy& p,
                                    const std::vector<std::vector<float>>& initial, std::uint64_t seed = 0);

  // One step with one gradient per tensor (any storage format; sizes must match: asserted).
  void step(std::span<const stored_tensor> grads);

  std::size_t tensors() const { return weights_.size(); }
  // What the model computes with: the stored weights, or the low-precision copy under mixed.
  const stored_tensor& weights(std::size_t i) const { return weights_[i]; }
  // The weights the update acts on: the master copy under mixed, else weights(i).
  const stored_tensor& updated_weights(std::size_t i) const { return master_.empty() ? weights_[i] : master_[i]; }
  // The compensation tensor (k, or c under kahan_zamirai), or nullptr.
  const stored_tensor* compensation(std::size_t i) const { return comp_.empty() ? nullptr : &comp_[i]; }
  // State k of tensor i (sgd: 0 = momentum buffer; adam, adamw: 0 = exp_avg, 1 = exp_avg_sq;
  // lion: 0 = m), or nullptr when the optimizer keeps no such state.
  const stored_tensor* state(std::size_t i, int k) const {
    const auto& s = states_[i];
    return k >= 0 && static_cast<std::size_t>(k) < s.size() ? &s[static_cast<std::size_t>(k)] : nullptr;
  }
  long steps() const { return steps_; }
  const precision_policy& policy() const { return policy_; }
  optimizer_kind kind() const { return kind_; }
  const hyperparameters& hyper() const { return hyper_; }
  void set_lr(double lr) { hyper_.lr = lr; }
  // Bytes held by the optimizer's tensors (weights, master, states, compensation).
  std::size_t bytes() const;
  // Fused math without master weights and with the decay in the update runs the vector kernels
  // (kernels.hpp); true sends every step through the scalar reference instead. The results are
  // the same bits either way (tests/test_optimizer.cpp): for tests and benchmarks.
  void use_reference(bool on) { reference_ = on; }

 private:
  optimizer() = default;
  void step_tensor(std::size_t t, const stored_tensor& grad);
  template <bool PerOp>
  void step_tensor_with(std::size_t t, const stored_tensor& grad);
  void step_tensor_vector(std::size_t t, const stored_tensor& grad);

  optimizer_kind kind_ = optimizer_kind::sgd;
  hyperparameters hyper_;
  precision_policy policy_;
  std::uint64_t seed_ = 0;
  long steps_ = 0;
  bool reference_ = false;
  std::vector<stored_tensor> weights_, master_, comp_;
  std::vector<std::vector<stored_tensor>> states_;  // per tensor: momentum / (m, v) / lion's m
};

}  // namespace fpemu::training
