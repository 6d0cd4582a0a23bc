#include "analysis/training/optimizer.hpp"

#include <algorithm>
#include <array>
#include <cassert>
#include <cmath>
#include <cstdio>
#include <string>

#include "analysis/training/kernels.hpp"
#include "analysis/training/optimizer_coefficients.hpp"
#include "fpemu/round_float.hpp"
#include "fpemu/spec.hpp"

namespace fpemu::training {
namespace {

constexpr std::size_t chunk = 512;  // elements decoded, updated and stored together (fits L1)

std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

int stored_bytes(const format& f) { return width(f) <= 16 ? 2 : 4; }

int state_count(optimizer_kind k, const hyperparameters& h) {
  switch (k) {
    case optimizer_kind::sgd: return h.momentum != 0 ? 1 : 0;
    case optimizer_kind::adam:
    case optimizer_kind::adamw: return 2;
    case optimizer_kind::lion: return 1;
  }
  return 0;
}

bool decoupled(optimizer_kind k) { return k == optimizer_kind::adamw || k == optimizer_kind::lion; }

// Rounding of an intermediate tensor: identity for fused math, the states' format per op.
template <bool PerOp>
struct op_rounding {
  static constexpr bool per_op = PerOp;
  format fmt = formats::fp32;
  float operator()(float x) const {
    if constexpr (PerOp) return code_to_float(fmt, round_float(fmt, x).code);
    return x;
  }
};

// Stage 1: the optimizer's increment `inc` (theta_target = decayed theta + inc) and its new
// states, element by element in PyTorch's operation order. s0/s1 are the states in and out.
template <class R>
void increments(optimizer_kind k, const coefficients& c, const R& r, std::size_t n, const float* theta,
                float* g, float* s0, float* s1, float* inc) {
  for (std::size_t i = 0; i < n; ++i) {
    if (c.l2 != 0) g[i] = r(g[i] + c.l2 * theta[i]);  // grad.add(param, alpha=wd)
  }
  switch (k) {
    case optimizer_kind::sgd:
      for (std::size_t i = 0; i < n; ++i) {
        float d = g[i];
        if (c.momentum != 0) {
          // buf = clone(d) on the first step, else buf.mul_(momentum).add_(d, alpha=1-dampening)
          s0[i] = c.first_step ? d : r(r(s0[i] * c.momentum) + c.one_minus_dampening * d);
          d = c.nesterov ? r(d + c.momentum * s0[i]) : s0[i];
        }
        inc[i] = c.lr_neg * d;  // param.add_(d, alpha=-lr)
      }
      break;
    case optimizer_kind::adam:
    case optimizer_kind::adamw:
      for (std::size_t i = 0; i < n; ++i) {
        s0[i] = r(r(s0[i] * c.beta1) + c.one_minus_beta1 * g[i]);        // exp_avg
        s1[i] = r(r(s1[i] * c.beta2) + c.one_minus_beta2 * g[i] * g[i]);  // exp_avg_sq (addcmul)
        const float denom = r(r(r(std::sqrt(s1[i])) / c.bias2_sqrt) + c.eps);
        inc[i] = c.step_neg * s0[i] / denom;  // param.addcdiv_(exp_avg, denom, value=-step): (value*t1)/t2
      }
      break;
    case optimizer_kind::lion:
      for (std::size_t i = 0; i < n; ++i) {
        const float update = r(r(s0[i] * c.beta1) + c.one_minus_beta1 * g[i]);
        const float sign = update > 0 ? 1.0f : (update < 0 ? -1.0f : 0.0f);
        inc[i] = c.lr_neg * sign;
        s0[i] = r(r(s0[i] * c.beta2) + c.one_minus_beta2 * g[i]);
      }
      break;
  }
}

}  // namespace

coefficients coefficients_for(optimizer_kind k, const hyperparameters& h, long t) {
  coefficients c;
  c.lr_neg = static_cast<float>(-h.lr);
  c.momentum = static_cast<float>(h.momentum);
  c.one_minus_dampening = static_cast<float>(1 - h.dampening);
  c.beta1 = static_cast<float>(h.beta1);
  c.one_minus_beta1 = static_cast<float>(1 - h.beta1);
  c.beta2 = static_cast<float>(h.beta2);
  c.one_minus_beta2 = static_cast<float>(1 - h.beta2);
  c.eps = static_cast<float>(h.eps);
  c.first_step = t == 1;
  c.nesterov = h.nesterov;
  if (decoupled(k)) {
    c.has_decay = h.weight_decay != 0;
    c.decay = static_cast<float>(1 - h.lr * h.weight_decay);
    c.lr_wd = static_cast<float>(h.lr * h.weight_decay);
  } else {
    c.l2 = static_cast<float>(h.weight_decay);
  }
  if (k == optimizer_kind::adam || k == optimizer_kind::adamw) {
    const double bias1 = 1 - std::pow(h.beta1, static_cast<double>(t));
    const double bias2 = 1 - std::pow(h.beta2, static_cast<double>(t));
    c.step_neg = static_cast<float>(-(h.lr / bias1));
    c.bias2_sqrt = static_cast<float>(std::sqrt(bias2));
  }
  return c;
}

expected<optimizer_kind> parse_optimizer(std::string_view name) {
  if (name == "sgd") return optimizer_kind::sgd;
  if (name == "adam") return optimizer_kind::adam;
  if (name == "adamw") return optimizer_kind::adamw;
  if (name == "lion") return optimizer_kind::lion;
  return error{"unknown optimizer '" + std::string(name) + "' (valid: sgd adam adamw lion)"};
}

std::string_view to_string(optimizer_kind k) {
  switch (k) {
    case optimizer_kind::sgd: return "sgd";
    case optimizer_kind::adam: return "adam";
    case optimizer_kind::adamw: return "adamw";
    case optimizer_kind::lion: return "lion";
  }
  return "?";
}

std::optional<std::string> check(optimizer_kind k, const hyperparameters& h) {
  const auto finite_nonneg = [](double v) { return std::isfinite(v) && v >= 0; };
  if (!(std::isfinite(h.lr) && h.lr > 0)) return "learning rate " + number(h.lr) + " must be finite and > 0";
  if (!finite_nonneg(h.weight_decay)) return "weight decay " + number(h.weight_decay) + " must be finite and >= 0";
  if (k == optimizer_kind::sgd) {
    if (!finite_nonneg(h.momentum)) return "momentum " + number(h.momentum) + " must be finite and >= 0";
    if (!(h.dampening >= 0 && h.dampening <= 1)) return "dampening " + number(h.dampening) + " must lie in [0, 1]";
    if (h.nesterov && (h.momentum <= 0 || h.dampening != 0))
      return std::string("nesterov momentum needs momentum > 0 and dampening 0");
    return std::nullopt;
  }
  if (!(h.beta1 >= 0 && h.beta1 < 1)) return "beta1 " + number(h.beta1) + " must lie in [0, 1)";
  if (!(h.beta2 >= 0 && h.beta2 < 1)) return "beta2 " + number(h.beta2) + " must lie in [0, 1)";
  if (k != optimizer_kind::lion && !(std::isfinite(h.eps) && h.eps > 0))
    return "eps " + number(h.eps) + " must be finite and > 0";
  return std::nullopt;
}

expected<precision_policy> parse_policy(std::string_view name) {
  precision_policy p;
  p.name = std::string(name);
  if (name == "fp32") return p;
  if (name == "mixed" || name == "mixed-fp16") {
    p.master = true;
    p.weights = name == "mixed" ? formats::bf16 : formats::fp16;
    return p;  // states, master and gradients fp32 (optimi's mixed-precision column, Warner 2023)
  }
  std::string_view rest = name;
  const auto strip = [&rest](std::string_view suffix) {
    if (rest.size() > suffix.size() && rest.substr(rest.size() - suffix.size()) == suffix) {
      rest.remove_suffix(suffix.size());
      return true;
    }
    return false;
  };
  if (strip("-ops")) p.math = update_math::per_op;
  if (strip("-kahan")) {
    p.rule = update_rule::kahan;
  } else if (strip("-zamirai")) {
    p.rule = update_rule::kahan_zamirai;
  } else if (const auto sr = rest.rfind("-sr"); sr != std::string_view::npos) {
    const std::string_view bits = rest.substr(sr + 3);
    int k = 16;
    if (!bits.empty()) {
      k = 0;
      for (char ch : bits) {
        if (ch < '0' || ch > '9' || k > 99) {
          k = -1;
          break;
        }
        k = k * 10 + (ch - '0');
      }
      if (k < 1 || k > 32)
        return error{"policy '" + p.name + "': stochastic rounding bits '" + std::string(bits) +
                     "' must be an integer in 1..32"};
    }
    p.rule = update_rule::stochastic;
    p.sr_bits = k;
    rest = rest.substr(0, sr);
  }
  const auto f = parse_format(rest);
  if (!f)
    return error{"unknown policy '" + p.name +
                 "' (valid: fp32, mixed, mixed-fp16, or FMT[-kahan|-zamirai|-sr[K]][-ops] with FMT such as bf16 or fp16; " +
                 f.message() + ")"};
  if (auto ok = storage_format(*f); !ok) return error{"policy '" + p.name + "': " + ok.message()};
  p.weights = p.states = p.grads = *f;
  return p;
}

memory_account bytes_per_parameter(optimizer_kind k, const hyperparameters& h, const precision_policy& p) {
  memory_account m;
  const int w = stored_bytes(p.weights), s = stored_bytes(p.states), g = stored_bytes(p.grads);
  if (p.master) {
    m.components.push_back({"model weights (" + to_string(p.weights) + " copy)", w, true});
    m.components.push_back({"master weights (" + to_string(p.states) + ")", s, false});
  } else {
    m.components.push_back({"model weights (" + to_string(p.weights) + ")", w, false});
  }
  m.components.push_back({"gradients (" + to_string(p.grads) + ")", g, false});
  m.components.push_back({"distributed gradient buffer", g, true});
  static constexpr std::array<const char*, 2> adam_states{"momentum", "variance"};
  for (int i = 0; i < state_count(k, h); ++i) {
    const std::string what = k == optimizer_kind::adam || k == optimizer_kind::adamw ? adam_states[i] : "momentum";
    m.components.push_back({what + " (" + to_string(p.states) + ")", s, false});
  }
  if (p.rule == update_rule::kahan || p.rule == update_rule::kahan_zamirai)
    m.components.push_back({"Kahan compensation (" + to_string(p.weights) + ")", w, false});
  for (const auto& c : m.components) {
    m.max += c.bytes;
    if (!c.optional) m.min += c.bytes;
  }
  return m;
}

expected<optimizer> optimizer::create(optimizer_kind k, const hyperparameters& h, const precision_policy& p,
                                      const std::vector<std::vector<float>>& initial, std::uint64_t seed) {
  if (auto bad = check(k, h)) return error{*bad};
  for (const format& f : {p.weights, p.states, p.grads})
    if (auto ok = storage_format(f); !ok) return error{"policy '" + p.name + "': " + ok.message()};
  if (p.master && p.rule != update_rule::nearest)
    return error{"policy '" + p.name + "': mixed precision updates fp32 master weights with nearest rounding"};
  if (p.sr_bits < 1 || p.sr_bits > 32)
    return error{"policy '" + p.name + "': stochastic rounding bits " + std::to_string(p.sr_bits) + " must lie in 1..32"};
  optimizer o;
  o.kind_ = k;
  o.hyper_ = h;
  o.policy_ = p;
  o.seed_ = seed;
  const bool kahan = p.rule == update_rule::kahan || p.rule == update_rule::kahan_zamirai;
  for (const auto& values : initial) {
    stored_tensor w(p.weights, values.size());
    w.store(0, values);
    o.weights_.push_back(std::move(w));
    if (p.master) {
      stored_tensor m(p.states, values.size());
      m.store(0, values);
      o.master_.push_back(std::move(m));
    }
    if (kahan) o.comp_.emplace_back(p.weights, values.size());
    std::vector<stored_tensor> states;
    for (int i = 0; i < state_count(k, h); ++i) states.emplace_back(p.states, values.size());
    o.states_.push_back(std::move(states));
  }
  return o;
}

std::size_t optimizer::bytes() const {
  std::size_t b = 0;
  for (const auto* group : {&weights_, &master_, &comp_})
    for (const auto& t : *group) b += t.bytes();
  for (const auto& s : states_)
    for (const auto& t : s) b += t.bytes();
  return b;
}

void optimizer::step(std::span<const stored_tensor> grads) {
  assert(grads.size() == weights_.size());
  ++steps_;
  for (std::size_t t = 0; t < weights_.size(); ++t) step_tensor(t, grads[t]);
}

void optimizer::step_tensor(std::size_t t, const stored_tensor& grad) {
  const bool naive_decay = decoupled(kind_) && hyper_.weight_decay != 0 && policy_.decay == decay_order::separate;
  if (policy_.math == update_math::per_op)
    step_tensor_with<true>(t, grad);
  else if (reference_ || !master_.empty() || naive_decay)
    step_tensor_with<false>(t, grad);
  else
    step_tensor_vector(t, grad);
}

// step_tensor_with<false> with the element-wise math in vectors (kernels::fused_step, the same
// binary32 operations in the same order) over larger chunks, and every rounding into storage
// done by stored_tensor::store as there, or (bf16 weights with compensation) by
// kernels::kahan_store_bf16, which gives the same codes. The weights that the compensation
// needs, which the reference gets from round_to_values, are the stored weights (loaded back, or
// in kahan_store_bf16 moved up from their codes): the same nearest-even values. No master copy,
// no separate decay (step_tensor sends those to the reference).
void optimizer::step_tensor_vector(std::size_t t, const stored_tensor& grad) {
  // Elements per chunk, a multiple of kernels::pad. The eight buffers below stay in L1 beside the
  // data streaming through: at 1024 elements (32 KiB of buffers) bf16-kahan AdamW ran at 0.51 of
  // memcpy's bandwidth on a Zen 5, at 256 at 0.66, at 128 at 0.59. Stochastic stores, which draw
  // the array keystream inside round_array, ran alike at 256, 1024 and 4096 (bf16-sr AdamW 0.31-0.33
  // on a Zen 4).
  constexpr std::size_t vchunk = 256;
  static_assert(vchunk % kernels::pad == 0);
  stored_tensor& theta_store = weights_[t];
  const std::size_t n = theta_store.size();
  assert(grad.size() == n);
  const coefficients c = coefficients_for(kind_, hyper_, steps_);
  const rounding nearest{};
  const rounding stochastic{round_mode::stochastic, overflow_policy::ieee, policy_.sr_bits};
  const sr_stream sr{seed_, static_cast<std::uint32_t>(t), static_cast<std::uint64_t>(steps_ - 1) * n};
  auto& states = states_[t];
  const bool compensated = !comp_.empty();

  // Eight buffers of a chunk each (n rounded up to whole vectors when shorter), zeroed once so
  // that the padding lanes compute on numbers; their results are never stored.
  const std::size_t cap = std::min(vchunk, (n + kernels::pad - 1) / kernels::pad * kernels::pad);
  std::vector<float> buffers(8 * cap);
  float* const theta = buffers.data();
  float* const g = theta + cap;
  float* const s0 = g + cap;
  float* const s1 = s0 + cap;
  float* const comp = s1 + cap;
  float* const inc = comp + cap;
  float* const out = inc + cap;
  float* const stored = out + cap;
  const kernels::step_arrays arrays{theta, g, s0, s1, comp, inc, out};
  for (std::size_t first = 0; first < n; first += vchunk) {
    const std::size_t m = std::min(vchunk, n - first);
    const auto part = [m](float* a) { return std::span<float>(a, m); };
    theta_store.load(first, part(theta));
    grad.load(first, part(g));
    if (!states.empty()) states[0].load(first, part(s0));
    if (states.size() > 1) states[1].load(first, part(s1));
    if (compensated) comp_[t].load(first, part(comp));

    // The next chunk's tensors are asked for one at a time between the passes over this one, so
    // that memory works while the vectors do (loads of cold data stall otherwise: the passes
    // run one after the other, and a burst of prefetches for all of them at once stalls too).
    const std::size_t next = first + vchunk;
    theta_store.prefetch(next, vchunk);
    kernels::fused_step(kind_, c, policy_.rule, m, arrays);
    grad.prefetch(next, vchunk);
    // bf16 weights with compensation (in the weights' format): both stores in one pass, where no
    // value is a NaN.
    const bool stored_both = compensated && theta_store.fmt() == formats::bf16 &&
                             kernels::kahan_store_bf16(policy_.rule, m, out, inc, theta, theta_store.codes(first),
                                                       comp_[t].codes(first));
    if (!stored_both) {
      if (policy_.rule == update_rule::stochastic) {
        theta_store.store(first, part(out), stochastic, sr);
      } else {
        theta_store.store(first, part(out), nearest);
      }
    }
    if (compensated) {
      comp_[t].prefetch(next, vchunk);
      if (!stored_both) {
        theta_store.load(first, part(stored));
        kernels::compensation(policy_.rule, m, inc, theta, stored, comp);
        comp_[t].store(first, part(comp), nearest);
      }
    }
    auto store_state = [&](stored_tensor& state, float* values) {  // bf16 ones in one pass where no NaN
      if (state.fmt() != formats::bf16 || !kernels::bf16_nearest(m, values, state.codes(first)))
        state.store(first, part(values), nearest);
    };
    if (!states.empty()) states[0].prefetch(next, vchunk);
    if (!states.empty()) store_state(states[0], s0);
    if (states.size() > 1) states[1].prefetch(next, vchunk);
    if (states.size() > 1) store_state(states[1], s1);
  }
}

template <bool PerOp>
void optimizer::step_tensor_with(std::size_t t, const stored_tensor& grad) {
  stored_tensor& theta_store = master_.empty() ? weights_[t] : master_[t];
  const std::size_t n = theta_store.size();
  assert(grad.size() == n);
  const coefficients c = coefficients_for(kind_, hyper_, steps_);
  const op_rounding<PerOp> r{policy_.states};
  constexpr bool per_op = PerOp;
  const rounding nearest{};
  const rounding stochastic{round_mode::stochastic, overflow_policy::ieee, policy_.sr_bits};
  const sr_stream sr{seed_, static_cast<std::uint32_t>(t), static_cast<std::uint64_t>(steps_ - 1) * n};
  const bool naive_decay = c.has_decay && policy_.decay == decay_order::separate;
  const bool decay_in_update = c.has_decay && !naive_decay;
  auto& states = states_[t];

  std::array<float, chunk> theta, g, s0, s1, inc, comp, out, stored;
  for (std::size_t first = 0; first < n; first += chunk) {
    const std::size_t m = std::min(chunk, n - first);
    const std::span<float> theta_m(theta.data(), m), out_m(out.data(), m), comp_m(comp.data(), m),
        stored_m(stored.data(), m);
    theta_store.load(first, theta_m);
    grad.load(first, {g.data(), m});
    if (!states.empty()) states[0].load(first, {s0.data(), m});
    if (states.size() > 1) states[1].load(first, {s1.data(), m});
    if (!comp_.empty()) comp_[t].load(first, comp_m);

    if (naive_decay) {  // the pitfall: theta*(1 - lr*wd) stored with nearest rounding first
      for (std::size_t i = 0; i < m; ++i) theta[i] = theta[i] * c.decay;
      theta_store.store(first, theta_m, nearest);
      theta_store.load(first, theta_m);
    }
    increments(kind_, c, r, m, theta.data(), g.data(), s0.data(), s1.data(), inc.data());

    switch (policy_.rule) {
      case update_rule::nearest:
        for (std::size_t i = 0; i < m; ++i) {
          const float decayed = decay_in_update ? r(theta[i] * c.decay) : theta[i];
          out[i] = decayed + inc[i];
        }
        theta_store.store(first, out_m, nearest);
        break;
      case update_rule::kahan:  // comp holds k; inc becomes u, out the new weights
        for (std::size_t i = 0; i < m; ++i) {
          if (per_op) {
            inc[i] = r(comp[i] + inc[i]);                                    // k.addcdiv_(...)
            if (decay_in_update) inc[i] = r(inc[i] + -c.lr_wd * theta[i]);  // k.add_(theta, alpha=-lr*wd)
          } else {
            inc[i] = comp[i] + (decay_in_update ? inc[i] - c.lr_wd * theta[i] : inc[i]);
          }
          out[i] = theta[i] + inc[i];
        }
        round_to_values(policy_.weights, out_m, stored_m);
        for (std::size_t i = 0; i < m; ++i) comp[i] = inc[i] + r(theta[i] - stored[i]);
        theta_store.store(first, out_m, nearest);
        comp_[t].store(first, comp_m, nearest);
        break;
      case update_rule::kahan_zamirai:  // comp holds c = -k; inc becomes y, out s
        for (std::size_t i = 0; i < m; ++i) {
          if (per_op) {
            inc[i] = r(inc[i] - comp[i]);
            if (decay_in_update) inc[i] = r(inc[i] - c.lr_wd * theta[i]);
          } else {
            inc[i] = (decay_in_update ? inc[i] - c.lr_wd * theta[i] : inc[i]) - comp[i];
          }
          out[i] = theta[i] + inc[i];
        }
        round_to_values(policy_.weights, out_m, stored_m);
        for (std::size_t i = 0; i < m; ++i) comp[i] = r(stored[i] - theta[i]) - inc[i];
        theta_store.store(first, out_m, nearest);
        comp_[t].store(first, comp_m, nearest);
        break;
      case update_rule::stochastic:
        for (std::size_t i = 0; i < m; ++i) {
          float delta = inc[i];
          if (decay_in_update) delta = per_op ? r(inc[i] + -c.lr_wd * theta[i]) : inc[i] - c.lr_wd * theta[i];
          out[i] = theta[i] + delta;
        }
        theta_store.store(first, out_m, stochastic, sr);
        break;
    }
    if (!states.empty()) states[0].store(first, {s0.data(), m}, nearest);
    if (states.size() > 1) states[1].store(first, {s1.data(), m}, nearest);
    if (!master_.empty()) {  // refresh the model copy from the master weights
      theta_store.load(first, out_m);
      weights_[t].store(first, out_m, nearest);
    }
  }
}

}  // namespace fpemu::training
