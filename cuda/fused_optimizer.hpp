// One element of a fused optimizer step (SGD, AdamW), written once for the host and the device.
//
// cuda/optimizer.cu's kernel runs fused_optimizer_apply() (load, fused_optimizer_step(), store)
// for each element; the host tests (tests/test_cuda_optimizer.cpp) run the same function in a
// loop and compare every stored code with training::optimizer (analysis/training/optimizer.cpp) bit for
// bit. The arithmetic is the
// emulator's update_math::fused path, operation by operation in binary32 (the kernels are
// compiled with --fmad=false, so a*b + c is two roundings there too; sqrt and division are IEEE
// on both sides), and every stored tensor is rounded by the core (round_float), stochastic
// rounding reading element (step - 1) * n + i of the array keystream of (seed, tensor),
// keystream_bits (random.hpp), exactly as the emulator's stored tensors read it.
//
// Formats: weights, states, gradients and the Kahan compensation in storage formats of at most 16
// bits (codes held as uint16 on the device); under `master`, the master weights and the states
// are fp32 (binary32 bit patterns) and so may the gradients be (the "mixed" policy).
//
// The host-side declarations at the end (argument checking, launch) are ordinary host functions:
// nvcc's device pass parses them and generates nothing, so this header compiles for both passes
// as it is. They are deliberately not hidden behind __CUDA_ARCH__: the launchers in
// cuda/optimizer.cu are where the kernel templates get instantiated, and the device pass must see
// those launch sites.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>

#include "analysis/training/optimizer_coefficients.hpp"
#include "convert.hpp"
#include "fpemu/config.hpp"
#include "fpemu/cuda.hpp"
#include "fpemu/expected.hpp"
#include "fpemu/format.hpp"
#include "fpemu/random.hpp"
#include "fpemu/round_float.hpp"
#include "fpemu/rounding.hpp"

namespace fpemu::cuda::detail {

// Everything one step of one tensor needs; passed to the kernel by value.
struct fused_optimizer_params {
  training::coefficients c;  // binary32 scalars, from training::coefficients_for on the host
  bool adamw = false;           // else sgd
  bool momentum_state = false;  // sgd keeps a momentum buffer: momentum != 0 in double, as the emulator
  weight_update update = weight_update::nearest;
  format weights = formats::bf16;  // stored weights; under master the model copy
  format states = formats::bf16;   // states, and under master the master weights (fp32)
  format grads = formats::bf16;
  int sr_bits = 16;
  std::uint64_t seed = 0;
  std::uint32_t tensor = 0;         // the stochastic-rounding stream
  std::uint64_t first_index = 0;    // (step - 1) * n: element i takes keystream_bits(.., first_index + i, ..)
  // Nearest-even roundings into the weights' and the states' formats may use these instructions
  // on the device, once check_hardware_conversion has proven them equal to the core (none: the core).
  hardware_cvt weights_rn = hardware_cvt::none, states_rn = hardware_cvt::none;
};

// x rounded to nearest-even into f (IEEE overflow): the core's round_float, or on the device the
// proven instruction h for every non-NaN x (the instructions return one canonical NaN).
FPEMU_HD inline std::uint32_t round_nearest(hardware_cvt h, const format& f, float x) {
#if defined(__CUDA_ARCH__)
  if (h != hardware_cvt::none && !std::isnan(x)) return hardware_convert(h, x, nullptr);
#else
  (void)h;
#endif
  return round_float(f, x).code;
}

// A momentum below binary32's range still has its (never changing) buffer, as in the emulator.
FPEMU_HD inline bool uses_state0(const fused_optimizer_params& p) { return p.adamw || p.momentum_state; }
FPEMU_HD inline bool uses_state1(const fused_optimizer_params& p) { return p.adamw; }

// One element's stored codes, read from the tensors the configuration uses and updated in place.
// Under master `weight` is written only (the model copy is refreshed, never read).
struct optimizer_element {
  std::uint32_t weight = 0;  // code of p.weights
  std::uint32_t master = 0;  // binary32 bits (master only)
  std::uint32_t state0 = 0, state1 = 0;  // codes of p.states (used ones only)
  std::uint32_t comp = 0;    // code of p.weights (kahan only)
};

// The step for element i with gradient code `grad`. Mirrors training::optimizer::step_tensor_with
// <false> with decay_order::in_update; comments name the PyTorch operation each line is.
FPEMU_HD inline void fused_optimizer_step(const fused_optimizer_params& p, std::uint32_t grad, std::uint64_t i,
                                          optimizer_element& e) {
  const training::coefficients& c = p.c;
  const bool master = p.update == weight_update::master;
  const float theta = master ? code_to_float(p.states, e.master) : code_to_float(p.weights, e.weight);
  float g = code_to_float(p.grads, grad);
  float s0 = uses_state0(p) ? code_to_float(p.states, e.state0) : 0.0f;
  float s1 = uses_state1(p) ? code_to_float(p.states, e.state1) : 0.0f;

  if (c.l2 != 0) g = g + c.l2 * theta;  // grad.add(param, alpha=wd): sgd's L2 term (0 for adamw)
  float inc;                            // theta_target = decayed theta + inc
  if (!p.adamw) {
    float d = g;
    if (c.momentum != 0) {
      // buf = clone(d) on the first step, else buf.mul_(momentum).add_(d, alpha=1-dampening)
      s0 = c.first_step ? d : s0 * c.momentum + c.one_minus_dampening * d;
      d = c.nesterov ? d + c.momentum * s0 : s0;
    }
    inc = c.lr_neg * d;  // param.add_(d, alpha=-lr)
  } else {
    s0 = s0 * c.beta1 + c.one_minus_beta1 * g;      // exp_avg.mul_(beta1).add_(grad, alpha=1-beta1)
    s1 = s1 * c.beta2 + c.one_minus_beta2 * g * g;  // exp_avg_sq.mul_(beta2).addcmul_(g, g, 1-beta2)
    const float denom = std::sqrt(s1) / c.bias2_sqrt + c.eps;
    inc = c.step_neg * s0 / denom;  // param.addcdiv_(exp_avg, denom, value=-step): (value*t1)/t2
  }

  switch (p.update) {
    case weight_update::nearest:
    case weight_update::master: {
      // Decoupled decay folded in as theta*(1 - lr*wd) + inc, rounded once.
      const float out = (c.has_decay ? theta * c.decay : theta) + inc;
      if (master) {
        e.master = round_nearest(p.states_rn, p.states, out);
        e.weight = round_nearest(p.weights_rn, p.weights, code_to_float(p.states, e.master));  // refresh the copy
      } else {
        e.weight = round_nearest(p.weights_rn, p.weights, out);
      }
      break;
    }
    case weight_update::kahan: {  // optimi: u = k + inc; theta' = Q(theta + u); k = Q(u + (theta - theta'))
      const float u = code_to_float(p.weights, e.comp) + (c.has_decay ? inc - c.lr_wd * theta : inc);
      e.weight = round_nearest(p.weights_rn, p.weights, theta + u);
      const float stored = code_to_float(p.weights, e.weight);
      e.comp = round_nearest(p.weights_rn, p.weights, u + (theta - stored));
      break;
    }
    case weight_update::stochastic: {
      const float out = theta + (c.has_decay ? inc - c.lr_wd * theta : inc);
      const rounding sr{round_mode::stochastic, overflow_policy::ieee, p.sr_bits};
      e.weight =
          round_float(p.weights, out, sr, keystream_bits(p.seed, p.tensor, p.first_index + i, array_random_width(sr)))
              .code;
      break;
    }
  }
  if (uses_state0(p)) e.state0 = round_nearest(p.states_rn, p.states, s0);
  if (uses_state1(p)) e.state1 = round_nearest(p.states_rn, p.states, s1);
}

// Element i: load the codes of the tensors the configuration uses, step, store them back. The
// kernel's loop body, and the host tests' (with uint32 arrays): W is the weights' and the
// compensation's element type, S the states', G the gradients'. Unused tensors may be null; each
// used element is read once and written once (under master the model copy only written).
template <class G, class W, class S>
FPEMU_HD inline void fused_optimizer_apply(const fused_optimizer_params& p, std::size_t i, const G* grads, W* weights,
                                           std::uint32_t* master, S* state0, S* state1, W* comp) {
  const bool is_master = p.update == weight_update::master, is_kahan = p.update == weight_update::kahan;
  const bool use0 = uses_state0(p), use1 = uses_state1(p);
  optimizer_element e;
  if (is_master)
    e.master = master[i];
  else
    e.weight = weights[i];
  if (use0) e.state0 = state0[i];
  if (use1) e.state1 = state1[i];
  if (is_kahan) e.comp = comp[i];
  fused_optimizer_step(p, grads[i], i, e);
  weights[i] = static_cast<W>(e.weight);
  if (is_master) master[i] = e.master;
  if (use0) state0[i] = static_cast<S>(e.state0);
  if (use1) state1[i] = static_cast<S>(e.state1);
  if (is_kahan) comp[i] = static_cast<W>(e.comp);
}

// ---- Host side ----------------------------------------------------------------------------

// Checks the configuration and step of cuda::optimizer_step (optimizer_api.cpp) for n elements
// and returns the kernel's parameters, coefficients cast by training::coefficients_for: the API
// and the tests build them the same way. Touches no device.
expected<fused_optimizer_params> prepare_optimizer_params(const optimizer_config& c, long step, std::size_t n);
// The same, and the host buffers: sizes, and codes that fit their formats.
expected<fused_optimizer_params> prepare_optimizer_step(const optimizer_config& c, long step,
                                                        std::span<const std::uint32_t> grads,
                                                        const optimizer_buffers& b);

// Queues the kernel on device buffers (cuda/optimizer.cu; without CUDA, optimizer_api.cpp
// returns no_cuda()). Arguments already checked.
expected<void> launch_optimizer_on_device(const fused_optimizer_params& p, const optimizer_device_buffers& b,
                                          void* stream);
// Uploads the buffers p uses, runs the kernel, downloads them into b.
expected<void> launch_optimizer_step(const fused_optimizer_params& p, std::span<const std::uint32_t> grads,
                                     optimizer_buffers& b);

}  // namespace fpemu::cuda::detail
