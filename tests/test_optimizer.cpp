// Optimizers under precision policies (analysis/training/optimizer.hpp): the golden sums of the
// issue (1e-3 added 1000 times to 1.0), decoupled weight decay under Kahan and SR against the naive
// order, the Zamirai formulation against optimi's bit for bit, optimi's memory table (Warner 2023),
// mixed precision's model copy, trajectories against a binary64 implementation, error paths, and
// the vector step (kernels.hpp) and stored_tensor's fast stores against the scalar reference.
#include <doctest/doctest.h>
#include <hwy/targets.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "analysis/training/kernels.hpp"
#include "analysis/training/optimizer.hpp"
#include "fpemu/random.hpp"
#include "fpemu/round_float.hpp"
#include "fpemu/spec.hpp"

using namespace fpemu;
using namespace fpemu::training;

namespace {

precision_policy policy(const std::string& name) {
  auto p = parse_policy(name);
  REQUIRE_MESSAGE(p.has_value(), name);
  return *p;
}

optimizer make(optimizer_kind k, const hyperparameters& h, const precision_policy& p,
               const std::vector<std::vector<float>>& init, std::uint64_t seed = 1) {
  auto o = optimizer::create(k, h, p, init, seed);
  REQUIRE_MESSAGE(o.has_value(), (o.has_value() ? "" : o.message()));
  return std::move(o).value();
}

std::vector<stored_tensor> gradient(const format& f, const std::vector<float>& g) {
  std::vector<stored_tensor> out;
  out.emplace_back(f, g.size());
  out[0].store(0, g);
  return out;
}

// 1.0 plus 1e-3 a thousand times, as SGD with lr 1 and gradient -1e-3 in fp32, weights in the
// policy's format. `copies` independent elements (each with its own random bits).
std::vector<float> add_thousandths(const std::string& name, std::size_t copies) {
  precision_policy p = policy(name);
  p.grads = formats::fp32;
  hyperparameters h;
  h.lr = 1.0;
  optimizer o = make(optimizer_kind::sgd, h, p, {std::vector<float>(copies, 1.0f)}, 7);
  const auto g = gradient(formats::fp32, std::vector<float>(copies, -1e-3f));
  for (int i = 0; i < 1000; ++i) o.step(g);
  return o.weights(0).values();
}

// A least-squares gradient g = A^T (A w - b) / rows on fixed random data, in double, rounded
// to float: a deterministic problem whose gradient depends on the current weights.
struct least_squares {
  int rows = 32, cols = 24;
  std::vector<double> a, b;
  least_squares() {
    for (int i = 0; i < rows * cols; ++i) a.push_back(static_cast<double>(random_bits(3, 0, i) % 2001) / 1000.0 - 1);
    for (int i = 0; i < rows; ++i) b.push_back(static_cast<double>(random_bits(3, 1, i) % 2001) / 1000.0 - 1);
  }
  std::vector<float> grad(const std::vector<float>& w) const {
    std::vector<double> r(rows);
    for (int i = 0; i < rows; ++i) {
      double s = -b[i];
      for (int j = 0; j < cols; ++j) s += a[i * cols + j] * w[j];
      r[i] = s;
    }
    std::vector<float> g(cols);
    for (int j = 0; j < cols; ++j) {
      double s = 0;
      for (int i = 0; i < rows; ++i) s += a[i * cols + j] * r[i];
      g[j] = static_cast<float>(s / rows);
    }
    return g;
  }
};

}  // namespace

TEST_CASE("golden: 1e-3 added 1000 times to 1.0") {
  // nearest: every increment is below half an ulp of 1 in bf16 (2^-8), so nothing moves.
  for (float v : add_thousandths("bf16", 4)) CHECK(v == 1.0f);
  for (float v : add_thousandths("bf16-ops", 4)) CHECK(v == 1.0f);
  // Kahan: the compensation keeps the lost increments until they add up.
  for (const char* name : {"bf16-kahan", "bf16-kahan-ops", "bf16-zamirai"})
    for (float v : add_thousandths(name, 4)) CHECK_MESSAGE(v == 2.0f, name);
  // fp32: binary32 rounding errors of the 1000 additions, 2.0000467 (the figure).
  for (float v : add_thousandths("fp32", 2)) CHECK(std::fabs(v - 2.0000467f) < 1e-7f);
  // SR with 16 random bits: unbiased, so the mean of many independent runs is 2 within 4 sigma.
  const auto sr = add_thousandths("bf16-sr16", 4000);
  double mean = 0, var = 0;
  for (float v : sr) mean += v;
  mean /= sr.size();
  for (float v : sr) var += (v - mean) * (v - mean);
  const double sigma = std::sqrt(var / (sr.size() - 1) / sr.size());
  MESSAGE("SR16 mean " << mean << " sigma of the mean " << sigma);
  CHECK(sigma > 0);
  CHECK(std::fabs(mean - 2.0) < 4 * sigma);
}

TEST_CASE("decoupled weight decay goes through the compensated and stochastic updates") {
  // lr*wd = 1e-4 < 2^-9 and zero gradients, 1000 steps: fp32 decays by (1 - 1e-4)^1000.
  hyperparameters h;
  h.lr = 1e-3;
  h.weight_decay = 0.1;
  const std::size_t n = 2000;
  std::vector<float> init(n);
  for (std::size_t i = 0; i < n; ++i)
    init[i] = to_float(formats::bf16, round_float(formats::bf16, 0.5f + static_cast<float>(i) / n).code);
  const auto run = [&](optimizer_kind k, precision_policy p) {
    optimizer o = make(k, h, p, {init}, 11);
    const auto g = gradient(p.grads, std::vector<float>(n, 0.0f));
    for (int s = 0; s < 1000; ++s) o.step(g);
    return o.weights(0).values();
  };
  const double expected = std::pow(1.0 - 1e-4, 1000);  // 0.9048
  for (optimizer_kind k : {optimizer_kind::adamw, optimizer_kind::lion}) {
    const auto fp32 = run(k, policy("fp32"));
    for (std::size_t i = 0; i < n; ++i) REQUIRE(std::fabs(fp32[i] / init[i] - expected) < 1e-4);
    for (const char* name : {"bf16-kahan", "bf16-kahan-ops", "bf16-zamirai"}) {
      const auto w = run(k, policy(name));
      double worst = 0;
      for (std::size_t i = 0; i < n; ++i) worst = std::max(worst, std::fabs(double(w[i]) / fp32[i] - 1));
      CHECK_MESSAGE(worst < 0.01, name << " worst relative difference " << worst);
    }
    const auto sr = run(k, policy("bf16-sr"));
    double ratio = 0;
    for (std::size_t i = 0; i < n; ++i) ratio += sr[i] / fp32[i];
    CHECK(std::fabs(ratio / n - 1) < 0.01);
    // The naive order: theta*(1 - lr*wd) rounds back to theta, so nothing decays at all.
    for (const char* name : {"bf16-kahan", "bf16-sr", "bf16"}) {
      precision_policy naive = policy(name);
      naive.decay = decay_order::separate;
      const auto w = run(k, naive);
      for (std::size_t i = 0; i < n; ++i) REQUIRE(w[i] == init[i]);
    }
    // Nearest rounding with the decay in the update loses it too (the Theorem 1 floor).
    const auto nearest = run(k, policy("bf16"));
    for (std::size_t i = 0; i < n; ++i) REQUIRE(nearest[i] == init[i]);
  }
}

TEST_CASE("Zamirai et al.'s Kahan update gives optimi's bits") {
  const least_squares problem;
  hyperparameters h;
  h.weight_decay = 0.01;
  h.momentum = 0.9;
  std::vector<float> init(problem.cols);
  for (int j = 0; j < problem.cols; ++j) init[j] = static_cast<float>(random_bits(5, 0, j) % 1000) / 500.0f - 1;
  for (optimizer_kind k : {optimizer_kind::sgd, optimizer_kind::adam, optimizer_kind::adamw, optimizer_kind::lion}) {
    h.lr = k == optimizer_kind::sgd ? 0.01 : 1e-3;
    for (const char* math : {"", "-ops"}) {
      for (const char* fmt : {"bf16", "fp16"}) {
        const std::string f = fmt;
        optimizer optimi = make(k, h, policy(f + "-kahan" + math), {init});
        optimizer zamirai = make(k, h, policy(f + "-zamirai" + math), {init});
        int identical = 0, moved = 0;
        for (int s = 0; s < 300; ++s) {
          const auto g = gradient(optimi.policy().grads, problem.grad(optimi.weights(0).values()));
          optimi.step(g);
          zamirai.step(g);
          for (int j = 0; j < problem.cols; ++j) {
            identical += optimi.weights(0).code(j) == zamirai.weights(0).code(j);
            REQUIRE(optimi.compensation(0)->get(j) == -zamirai.compensation(0)->get(j));
          }
        }
        for (int j = 0; j < problem.cols; ++j) moved += optimi.weights(0).get(j) != init[j];
        CHECK_MESSAGE(identical == 300 * problem.cols, to_string(k) << " " << f << math);
        CHECK(moved > problem.cols / 2);
      }
    }
  }
}

TEST_CASE("fused and per-operation math differ, and both follow binary64 Adam closely") {
  const least_squares problem;
  hyperparameters h;
  h.lr = 1e-2;
  std::vector<float> init(problem.cols, 0.25f);
  // binary64 Adam, written from the paper's formulas.
  std::vector<double> w(init.begin(), init.end()), m(problem.cols), v(problem.cols);
  optimizer fp32 = make(optimizer_kind::adam, h, policy("fp32"), {init});
  optimizer fused = make(optimizer_kind::adam, h, policy("bf16-kahan"), {init});
  optimizer per_op = make(optimizer_kind::adam, h, policy("bf16-kahan-ops"), {init});
  for (int t = 1; t <= 100; ++t) {
    std::vector<float> wf(w.begin(), w.end());
    const auto g = problem.grad(wf);
    for (int j = 0; j < problem.cols; ++j) {
      m[j] = 0.9 * m[j] + 0.1 * g[j];
      v[j] = 0.999 * v[j] + 0.001 * double(g[j]) * g[j];
      const double mh = m[j] / (1 - std::pow(0.9, t)), vh = v[j] / (1 - std::pow(0.999, t));
      w[j] -= 1e-2 * mh / (std::sqrt(vh) + 1e-8);
    }
    // every optimizer sees the gradient of the binary64 trajectory, so only the update differs
    const auto g32 = gradient(formats::fp32, g);
    fp32.step(g32);
    fused.step(gradient(formats::bf16, g));
    per_op.step(gradient(formats::bf16, g));
  }
  int differ = 0;
  for (int j = 0; j < problem.cols; ++j) {
    CHECK(std::fabs(fp32.weights(0).get(j) - w[j]) <= 1e-5 * std::fabs(w[j]) + 1e-6);
    CHECK(std::fabs(fused.weights(0).get(j) - w[j]) <= 0.02 * std::fabs(w[j]) + 0.02);
    differ += fused.weights(0).code(j) != per_op.weights(0).code(j);
  }
  CHECK(differ > 0);
}

TEST_CASE("mixed precision: fp32 master weights, the model copy is their bf16 rounding") {
  const least_squares problem;
  hyperparameters h;
  h.lr = 1e-2;
  for (const char* name : {"mixed", "mixed-fp16"}) {
    const precision_policy p = policy(name);
    optimizer o = make(optimizer_kind::adamw, h, p, {std::vector<float>(problem.cols, 0.3f)});
    for (int s = 0; s < 50; ++s) {
      o.step(gradient(p.grads, problem.grad(o.weights(0).values())));
      for (int j = 0; j < problem.cols; ++j)
        REQUIRE(o.weights(0).code(j) == round_float(p.weights, o.updated_weights(0).get(j)).code);
    }
    CHECK(o.updated_weights(0).fmt() == formats::fp32);
  }
}

TEST_CASE("memory per parameter reproduces optimi's Adam table (Warner 2023)") {
  hyperparameters h;
  const auto adam = [&](const char* name) { return bytes_per_parameter(optimizer_kind::adam, h, policy(name)); };
  CHECK(adam("mixed").min == 16);
  CHECK(adam("mixed").max == 22);
  CHECK(adam("bf16-kahan").min == 10);
  CHECK(adam("bf16-kahan").max == 12);
  CHECK(adam("bf16").min == 8);
  CHECK(adam("bf16").max == 10);
  CHECK(adam("bf16-sr").min == 8);  // stochastic rounding needs no buffer
  CHECK(bytes_per_parameter(optimizer_kind::sgd, h, policy("fp32")).min == 8);
  h.momentum = 0.9;
  CHECK(bytes_per_parameter(optimizer_kind::sgd, h, policy("bf16-kahan")).min == 8);
  CHECK(bytes_per_parameter(optimizer_kind::lion, h, policy("fp32")).min == 12);
  // The optimizer's own tensors agree with the account (weights, master, states, compensation).
  optimizer o = make(optimizer_kind::adam, hyperparameters{}, policy("bf16-kahan"), {std::vector<float>(100, 1.0f)});
  CHECK(o.bytes() == 100 * (2 + 2 + 2 + 2));
}

TEST_CASE("bad hyper-parameters and policies are errors naming the value") {
  const auto message = [](optimizer_kind k, hyperparameters h) {
    auto o = optimizer::create(k, h, precision_policy{}, {});
    REQUIRE_FALSE(o.has_value());
    return o.message();
  };
  hyperparameters h;
  h.lr = std::nan("");
  CHECK(message(optimizer_kind::adam, h).find("learning rate nan") != std::string::npos);
  h = {};
  h.lr = -1;
  CHECK(message(optimizer_kind::sgd, h).find("learning rate -1") != std::string::npos);
  h = {};
  h.beta1 = 1;
  CHECK(message(optimizer_kind::adamw, h).find("beta1 1 must lie in [0, 1)") != std::string::npos);
  h = {};
  h.eps = 0;
  CHECK(message(optimizer_kind::adam, h).find("eps 0") != std::string::npos);
  h = {};
  h.weight_decay = -0.1;
  CHECK(message(optimizer_kind::lion, h).find("weight decay -0.1") != std::string::npos);
  h = {};
  h.nesterov = true;
  CHECK(message(optimizer_kind::sgd, h).find("nesterov") != std::string::npos);
  for (const char* bad : {"bf17", "bf16-sr0", "bf16-sr33", "e11m4", "e8m0fnu", "fp64", ""}) {
    const auto p = parse_policy(bad);
    CHECK_MESSAGE(!p.has_value(), bad);
    if (!p.has_value()) CHECK(p.message().find(std::string("'") + bad) != std::string::npos);
  }
  CHECK(parse_policy("e5m10-sr8-ops")->sr_bits == 8);
  CHECK(parse_policy("fp16-kahan")->rule == update_rule::kahan);
  CHECK(!parse_optimizer("adagrad").has_value());
}

namespace {

// Runs fn() with the vector kernels (the training room's and the array functions') dispatched to
// each Highway target the CPU has in turn.
template <class Fn>
void for_each_target(Fn fn) {
  hwy::SetSupportedTargetsForTest(0);
  const std::vector<std::int64_t> targets = hwy::SupportedAndGeneratedTargets();
  for (const std::int64_t t : targets) {
    hwy::SetSupportedTargetsForTest(t);
    REQUIRE(std::string(kernels::target_name()) == hwy::TargetName(t));
    fn(hwy::TargetName(t));
  }
  hwy::SetSupportedTargetsForTest(0);
}

// Values that exercise every path of the roundings: ordinary numbers over many binades, signed
// zeros, binary32 and bf16/fp16 subnormals, values near and beyond the 16-bit formats' overflow
// thresholds, and, where `specials`, infinities and NaNs of both signs.
std::vector<float> awkward(std::size_t n, std::uint32_t stream, bool specials) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint64_t r = random_bits(21, stream, i);
    const float sign = (r >> 63) != 0 ? -1.0f : 1.0f;
    const float unit = static_cast<float>(r & 0xffffff) * 0x1p-24f + 0.5f;
    switch ((r >> 32) % 16) {
      case 0: v[i] = sign * 0.0f; break;
      case 1: v[i] = std::bit_cast<float>(static_cast<std::uint32_t>(r) & 0x807fffffu); break;  // binary32 subnormal
      case 2: v[i] = sign * unit * 0x1p-130f; break;     // bf16 subnormal range
      case 3: v[i] = sign * unit * 0x1p-20f; break;      // fp16 subnormal range
      case 4: v[i] = sign * unit * 0x1p127f; break;      // bf16's top binade and its overflow
      case 5: v[i] = sign * unit * 65536.0f; break;      // fp16's overflow threshold
      case 6:
        if (specials) {
          v[i] = (r >> 40) % 2 != 0 ? sign * std::numeric_limits<float>::infinity() : sign * std::nanf("");
          break;
        }
        [[fallthrough]];
      default: v[i] = sign * unit * std::ldexp(1.0f, static_cast<int>((r >> 40) % 24) - 16); break;
    }
  }
  return v;
}

// What element i of s holds: its code, or for wide formats the binary32 bits it keeps (code()
// would round them again and hide a NaN's payload).
std::uint32_t held_bits(const stored_tensor& s, std::size_t i) {
  return width(s.fmt()) > 16 ? std::bit_cast<std::uint32_t>(s.get(i)) : s.code(i);
}

// What every tensor the optimizer holds holds, in one list, and whether each is a NaN.
struct held {
  std::vector<std::uint32_t> bits;
  std::vector<bool> nan;
};
held all_held(const optimizer& o) {
  held h;
  for (std::size_t t = 0; t < o.tensors(); ++t) {
    const auto add = [&](const stored_tensor* s) {
      if (s == nullptr) return;
      for (std::size_t i = 0; i < s->size(); ++i) {
        h.bits.push_back(held_bits(*s, i));
        h.nan.push_back(std::isnan(s->get(i)));
      }
    };
    add(&o.weights(t));
    add(&o.updated_weights(t));
    add(o.compensation(t));
    for (int k = 0; k < 2; ++k) add(o.state(t, k));
  }
  return h;
}

}  // namespace

TEST_CASE("stored_tensor::store rounds as the core does on every path") {
  for_each_target([](const std::string& target) {
    for (const format& f : {formats::bf16, formats::fp16, formats::fp32}) {
      for (const std::size_t n : {std::size_t{1}, std::size_t{63}, std::size_t{64}, std::size_t{1000}, std::size_t{70001}}) {
        const std::vector<float> in = awkward(n, 3, true);
        for (const rounding r : {rounding{}, rounding{round_mode::stochastic, overflow_policy::ieee, 16},
                                 rounding{round_mode::stochastic, overflow_policy::ieee, 5},
                                 rounding{round_mode::stochastic, overflow_policy::ieee, 32}}) {
          const sr_stream sr{9, 4, (std::uint64_t{1} << 32) - 100};  // crosses a carry of the block counter
          stored_tensor s(f, n + 3);
          const std::uint8_t flags = s.store(3, in, r, sr);
          std::uint8_t expected_flags = 0;
          for (std::size_t i = 0; i < n; ++i) {
            const std::uint64_t random =
                is_stochastic(r.mode) ? keystream_bits(sr.seed, sr.stream, sr.first_index + 3 + i, array_random_width(r)) : 0;
            const rounded want = round_float(f, in[i], r, random);
            expected_flags |= want.flags;
            REQUIRE_MESSAGE(held_bits(s, 3 + i) == want.code,
                            target << " " << fpemu::to_string(f) << " n " << n << " i " << i << " x " << in[i]);
          }
          CHECK(flags == expected_flags);
        }
      }
    }
  });
}

TEST_CASE("stored_tensor::load gives to_float of every element's code, on every target") {
  for_each_target([](const std::string& target) {
    for (const format& f : {formats::bf16, formats::fp16}) {
      // Every value of f (its NaNs as the store makes them), then loads of every length below
      // two vectors of the widest target from a few starts, and of the whole tensor.
      std::vector<float> values;
      for (std::uint32_t c = 0; c < 65536; ++c) values.push_back(to_float(f, c));
      stored_tensor s(f, values.size());
      s.store(0, values);
      std::uint64_t checked = 0;
      auto check = [&](std::size_t first, std::size_t n) {
        std::vector<float> out(n);
        s.load(first, out);
        for (std::size_t i = 0; i < n; ++i) {
          REQUIRE_MESSAGE(std::bit_cast<std::uint32_t>(out[i]) == std::bit_cast<std::uint32_t>(to_float(f, s.code(first + i))),
                          target << " " << fpemu::to_string(f) << " element " << first + i);
        }
        checked += n;
      };
      for (const std::size_t first : {std::size_t{0}, std::size_t{1}, std::size_t{17}, std::size_t{65536 - 40}})
        for (std::size_t n = 0; n <= 32 && first + n <= values.size(); ++n) check(first, n);
      check(0, values.size());
      CHECK(checked > 65536);
    }
  });
}

TEST_CASE("kahan_store_bf16 and bf16_nearest == the core's nearest-even bf16 codes (of the weights and of the "
          "compensation) at every bf16 tie and beside it, both rules, every target; a NaN returns false") {
  // Every binary32 pattern that is a bf16 code's, one above it, and one below, at and one above
  // the tie with the next code: every rounding decision of every binade, subnormals and the
  // overflow to infinity included. theta = out and inc = 0 make the compensation the rounding
  // error (kahan) or its negation (kahan_zamirai), which rounds in turn; values that round to an
  // infinity give an infinite compensation.
  std::vector<float> out;
  for (std::uint32_t code = 0; code < 65536; ++code)
    for (const std::uint32_t low : {0u, 1u, 0x7fffu, 0x8000u, 0x8001u, 0xffffu}) {
      const float x = std::bit_cast<float>(code << 16 | low);
      if (std::isfinite(x)) out.push_back(x);
    }
  const std::size_t n = out.size();
  const std::size_t padded = (n + kernels::pad - 1) / kernels::pad * kernels::pad;
  out.resize(padded);
  const std::vector<float> theta = out, inc(padded, 0.0f);
  for_each_target([&](const std::string& target) {
    for (const update_rule rule : {update_rule::kahan, update_rule::kahan_zamirai}) {
      for (const std::size_t length : {n, std::size_t{17}}) {
        std::vector<std::uint16_t> weights(length), comp(length);
        REQUIRE(kernels::kahan_store_bf16(rule, length, out.data(), inc.data(), theta.data(), weights.data(),
                                          comp.data()));
        for (std::size_t i = 0; i < length; ++i) {
          const rounded w = round_float(formats::bf16, out[i]);
          const float stored = to_float(formats::bf16, w.code);
          const float c = rule == update_rule::kahan ? inc[i] + (theta[i] - stored) : (stored - theta[i]) - inc[i];
          const rounded k = round_float(formats::bf16, c);
          REQUIRE_MESSAGE(weights[i] == w.code, target << " weights, element " << i << " = " << out[i]);
          REQUIRE_MESSAGE(comp[i] == k.code, target << " compensation, element " << i << " = " << c);
        }
      }
      std::vector<float> with_nan = out;
      with_nan[1000] = std::numeric_limits<float>::quiet_NaN();
      std::vector<std::uint16_t> weights(n), comp(n);
      CHECK_FALSE(kernels::kahan_store_bf16(rule, n, with_nan.data(), inc.data(), theta.data(), weights.data(),
                                            comp.data()));
      CHECK_FALSE(kernels::bf16_nearest(n, with_nan.data(), weights.data()));
    }
    for (const std::size_t length : {n, std::size_t{17}}) {
      std::vector<std::uint16_t> codes(length);
      REQUIRE(kernels::bf16_nearest(length, out.data(), codes.data()));
      for (std::size_t i = 0; i < length; ++i)
        REQUIRE_MESSAGE(codes[i] == round_float(formats::bf16, out[i]).code,
                        target << " element " << i << " = " << out[i]);
    }
  });
}

TEST_CASE("the vector step gives the reference's bits") {
  struct setting {
    optimizer_kind kind;
    hyperparameters h;
  };
  std::vector<setting> settings;
  hyperparameters h;
  h.lr = 0.05;
  settings.push_back({optimizer_kind::sgd, h});  // no momentum, no state
  h.momentum = 0.9;
  h.weight_decay = 0.01;
  settings.push_back({optimizer_kind::sgd, h});  // momentum and L2
  h.nesterov = true;
  settings.push_back({optimizer_kind::sgd, h});
  h.nesterov = false;
  h.dampening = 0.25;
  settings.push_back({optimizer_kind::sgd, h});
  h = {};
  h.weight_decay = 0.01;
  settings.push_back({optimizer_kind::adam, h});  // L2
  settings.push_back({optimizer_kind::adamw, h});  // decoupled decay
  h.weight_decay = 0;
  settings.push_back({optimizer_kind::adamw, h});
  h = {};
  h.beta2 = 0.99;
  h.lr = 1e-4;
  h.weight_decay = 0.1;
  settings.push_back({optimizer_kind::lion, h});
  h.weight_decay = 0;
  settings.push_back({optimizer_kind::lion, h});

  const char* policies[] = {"bf16-kahan", "bf16-zamirai", "bf16", "bf16-sr", "bf16-sr7", "bf16-sr32", "fp32",
                            "fp16-kahan", "fp16-sr"};
  // Lengths around whole vectors and the step's chunks; two tensors so the SR streams differ.
  const std::vector<std::size_t> sizes{1, 17, 4099};
  for_each_target([&](const std::string& target) {
    for (const char* name : policies) {
      const precision_policy p = policy(name);
      for (const setting& s : settings) {
        std::vector<std::vector<float>> init;
        for (std::size_t t = 0; t < sizes.size(); ++t) init.push_back(awkward(sizes[t], 10 + static_cast<std::uint32_t>(t), false));
        optimizer fast = make(s.kind, s.h, p, init, 5);
        optimizer reference = make(s.kind, s.h, p, init, 5);
        reference.use_reference(true);
        for (int step = 0; step < 4; ++step) {
          std::vector<stored_tensor> grads;
          for (std::size_t t = 0; t < sizes.size(); ++t) {
            grads.emplace_back(p.grads, sizes[t]);
            // NaN and infinite gradients on one step only, so that most elements stay finite
            grads.back().store(0, awkward(sizes[t], 100 + 10 * static_cast<std::uint32_t>(step) + static_cast<std::uint32_t>(t), step == 2));
          }
          fast.step(grads);
          reference.step(grads);
          // Identical bits, except that where two NaNs meet in one operation (an infinity minus an
          // infinity, then a NaN gradient) IEEE 754 leaves open which one the result carries, and
          // the scalar reference gets whichever operand the compiler put first: there a NaN is
          // matched by a NaN of either sign. NaN is absorbing in each element of every tensor, so
          // that sign never reaches a number.
          const held a = all_held(fast), b = all_held(reference);
          REQUIRE(a.bits.size() == b.bits.size());
          std::size_t differ = 0, first = 0;
          for (std::size_t i = 0; i < a.bits.size(); ++i) {
            if (a.bits[i] != b.bits[i] && !(a.nan[i] && b.nan[i]) && differ++ == 0) first = i;
          }
          REQUIRE_MESSAGE(differ == 0, target << " " << std::string(name) << " " << to_string(s.kind) << " step "
                                              << step + 1 << ": " << differ << " codes differ, first at " << first
                                              << " (" << (differ ? a.bits[first] : 0) << " vs "
                                              << (differ ? b.bits[first] : 0) << ")");
        }
      }
    }
  });
}
