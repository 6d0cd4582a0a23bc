// cuda::optimizer_step: argument checks and the binary32 coefficients, on the host, with or
// without CUDA. Every check runs before any device query, so a bad argument is reported the same
// way on a machine without a GPU; the kernel is in cuda/optimizer.cu.
#include <optional>
#include <string>

#include "analysis/training/optimizer.hpp"
#include "analysis/training/optimizer_coefficients.hpp"
#include "analysis/training/stored_tensor.hpp"
#include "device.hpp"
#include "fpemu/spec.hpp"
#include "fused_optimizer.hpp"

namespace fpemu::cuda {
namespace detail {
namespace {

const char* update_name(weight_update u) {
  switch (u) {
    case weight_update::nearest: return "nearest";
    case weight_update::kahan: return "kahan";
    case weight_update::stochastic: return "stochastic";
    case weight_update::master: return "master";
  }
  return "?";
}

error bad(const std::string& what) { return error{"optimizer_step: " + what}; }

// A storage format (training::storage_format) of at most 16 bits, or fp32 where allowed.
std::optional<std::string> check_format(const char* role, const format& f, bool narrow_ok, bool fp32_ok,
                                        const char* valid) {
  const auto ok = training::storage_format(f);
  if (!ok) return std::string(role) + " format: " + ok.message();
  if ((narrow_ok && width(f) <= 16) || (fp32_ok && f == formats::fp32)) return std::nullopt;
  return std::string(role) + " format '" + to_string(f) + "' must be " + valid;
}

// A buffer the configuration uses has one element per gradient; one it does not use is empty.
std::optional<std::string> check_buffer(const char* name, std::size_t size, std::size_t n, bool used,
                                        const std::string& user) {
  if (used && size != n)
    return std::string(name) + (size == 0 ? " is empty" : " has " + std::to_string(size) + " elements") +
           " but " + user + " needs one element per gradient (" + std::to_string(n) + ")";
  if (!used && size != 0)
    return std::string(name) + " has " + std::to_string(size) + " elements but " + user +
           " does not use it (leave it empty)";
  return std::nullopt;
}

}  // namespace

expected<fused_optimizer_params> prepare_optimizer_params(const optimizer_config& c, long step, std::size_t n) {
  if (c.kind != optimizer::sgd && c.kind != optimizer::adamw)
    return bad("optimizer " + std::to_string(static_cast<int>(c.kind)) + " is not sgd or adamw");
  const char* update = update_name(c.update);
  if (update[0] == '?') return bad("weight update " + std::to_string(static_cast<int>(c.update)) +
                                   " is not nearest, kahan, stochastic or master");
  if (step < 1) return bad("step = " + std::to_string(step) + " must be >= 1 (steps count from 1, as the emulator's)");
  if (c.sr_bits < 1 || c.sr_bits > 32)
    return bad("sr_bits = " + std::to_string(c.sr_bits) + " must lie in 1..32");
  const training::optimizer_kind kind =
      c.kind == optimizer::sgd ? training::optimizer_kind::sgd : training::optimizer_kind::adamw;
  training::hyperparameters h;
  h.lr = c.lr;
  h.momentum = c.momentum;
  h.dampening = c.dampening;
  h.nesterov = c.nesterov;
  h.weight_decay = c.weight_decay;
  h.beta1 = c.beta1;
  h.beta2 = c.beta2;
  h.eps = c.eps;
  if (auto why = training::check(kind, h)) return bad(*why);

  const bool master = c.update == weight_update::master;
  const char* narrow = "a storage format of at most 16 bits (bf16, fp16, ...)";
  if (auto why = check_format("weights", c.weights, true, false, narrow)) return bad(*why);
  if (master) {
    if (auto why = check_format("states", c.states, false, true,
                                "fp32 under update 'master' (fp32 master weights and states)"))
      return bad(*why);
  } else if (auto why = check_format("states", c.states, true, false,
                                     "a storage format of at most 16 bits (fp32 states need update 'master')")) {
    return bad(*why);
  }
  if (auto why = check_format("grads", c.grads, true, true, "fp32 or a storage format of at most 16 bits"))
    return bad(*why);

  fused_optimizer_params p;
  p.c = training::coefficients_for(kind, h, step);
  p.adamw = c.kind == optimizer::adamw;
  p.momentum_state = c.kind == optimizer::sgd && c.momentum != 0;
  p.update = c.update;
  p.weights = c.weights;
  p.states = c.states;
  p.grads = c.grads;
  p.sr_bits = c.sr_bits;
  p.seed = c.seed;
  p.tensor = c.tensor;
  p.first_index = static_cast<std::uint64_t>(step - 1) * n;
  return p;
}

static std::string buffer_user(const fused_optimizer_params& p) {
  return std::string(p.adamw ? "adamw" : "sgd") + " with update '" + update_name(p.update) + "'";
}
static std::string states_user(const fused_optimizer_params& p, const optimizer_config& c) {
  return p.adamw ? "adamw" : (c.momentum != 0 ? "sgd with momentum" : "sgd without momentum");
}

expected<fused_optimizer_params> prepare_optimizer_step(const optimizer_config& c, long step,
                                                        std::span<const std::uint32_t> grads,
                                                        const optimizer_buffers& b) {
  const std::size_t n = grads.size();
  const auto prepared = prepare_optimizer_params(c, step, n);
  if (!prepared) return prepared;
  const fused_optimizer_params& p = *prepared;
  const bool master = c.update == weight_update::master;
  const std::string user = buffer_user(p), states = states_user(p, c);
  if (auto why = check_buffer("weights", b.weights.size(), n, true, user)) return bad(*why);
  if (auto why = check_buffer("master", b.master.size(), n, master, user)) return bad(*why);
  if (auto why = check_buffer("state0", b.state0.size(), n, uses_state0(p), states)) return bad(*why);
  if (auto why = check_buffer("state1", b.state1.size(), n, uses_state1(p), states)) return bad(*why);
  if (auto why = check_buffer("compensation", b.compensation.size(), n, c.update == weight_update::kahan, user))
    return bad(*why);

  if (auto why = detail::check_codes("grads", grads, c.grads)) return bad(*why);
  if (!master)  // under master the model copy is written, never read
    if (auto why = detail::check_codes("weights", b.weights, c.weights)) return bad(*why);
  if (auto why = detail::check_codes("state0", b.state0, c.states)) return bad(*why);
  if (auto why = detail::check_codes("state1", b.state1, c.states)) return bad(*why);
  if (auto why = detail::check_codes("compensation", b.compensation, c.weights)) return bad(*why);
  return p;
}

// Device buffers: the ones the configuration uses given, the others null.
static expected<void> check_device_buffers(const fused_optimizer_params& p, const optimizer_config& c,
                                           const optimizer_device_buffers& b) {
  if (b.n == 0) return {};
  const std::string user = buffer_user(p), states = states_user(p, c);
  auto given = [](const char* name, const void* ptr, bool used, const std::string& who) -> std::optional<std::string> {
    if (used && ptr == nullptr) return std::string(name) + " is null but " + who + " needs it";
    if (!used && ptr != nullptr) return std::string(name) + " is given but " + who + " does not use it (pass null)";
    return std::nullopt;
  };
  for (const auto& why : {given("grads", b.grads, true, user), given("weights", b.weights, true, user),
                          given("master", b.master, p.update == weight_update::master, user),
                          given("state0", b.state0, uses_state0(p), states),
                          given("state1", b.state1, uses_state1(p), states),
                          given("compensation", b.compensation, p.update == weight_update::kahan, user)})
    if (why) return bad(*why);
  return {};
}

#ifndef FPEMU_HAVE_CUDA
expected<void> launch_optimizer_on_device(const fused_optimizer_params&, const optimizer_device_buffers&, void*) {
  return no_cuda();
}
expected<void> launch_optimizer_step(const fused_optimizer_params&, std::span<const std::uint32_t>,
                                     optimizer_buffers&) {
  return no_cuda();
}
#endif

}  // namespace detail

expected<void> optimizer_step(const optimizer_config& c, long step, std::span<const std::uint32_t> grads,
                              optimizer_buffers& b) {
  const auto p = detail::prepare_optimizer_step(c, step, grads, b);
  if (!p) return error{p.message()};
  return detail::launch_optimizer_step(*p, grads, b);
}

expected<void> optimizer_step_on_device(const optimizer_config& c, long step, const optimizer_device_buffers& b,
                                        void* stream) {
  const auto p = detail::prepare_optimizer_params(c, step, b.n);
  if (!p) return error{p.message()};
  if (auto ok = detail::check_device_buffers(*p, c, b); !ok) return ok;
  if (b.n == 0) return {};
  return detail::launch_optimizer_on_device(*p, b, stream);
}

}  // namespace fpemu::cuda
