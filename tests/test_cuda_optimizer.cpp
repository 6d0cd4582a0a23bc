// The CUDA fused optimizer and gradient accumulation (cuda/fused_optimizer.hpp,
// cuda/fused_grad_accumulation.hpp) compiled for the host and run element by element, against
// the emulator's training::optimizer and training::grad_accumulator bit for bit: every stored
// code after every step, the buffer bits, the norm and the clip scale. Also the host API's
// argument errors, which must come before any device query. Where a CUDA device is present the
// API itself is compared too (bitwise, first mismatch reported); without one, its error must
// say so.
#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <string>
#include <vector>

#include "analysis/training/grad_accumulation.hpp"
#include "analysis/training/optimizer.hpp"
#include "analysis/training/stored_tensor.hpp"
#include "cuda/fused_grad_accumulation.hpp"
#include "cuda/fused_optimizer.hpp"
#include "fpemu/cuda.hpp"
#include "fpemu/random.hpp"
#include "fpemu/round_float.hpp"

using namespace fpemu;
using training::stored_tensor;

namespace {

bool have_device() { return cuda::current_device().has_value(); }

// A test value for a tensor stored in f: +-0, subnormals of f and of binary32, tiny and large
// normals of f, and (mostly) moderate values with a full binary32 fraction. `big` caps the
// large exponents below f's maximum so that updates stay finite.
float test_value(const format& f, std::uint64_t seed, std::uint32_t stream, std::uint64_t i, int big) {
  const std::uint64_t r = random_bits(seed, stream, i);
  const std::uint32_t sign = (r >> 63) != 0 ? 0x80000000u : 0;
  const auto frac = static_cast<std::uint32_t>(r >> 8) & 0x7fffffu;
  const auto pick = static_cast<int>((r >> 32) % 16);
  const auto with_exp = [&](int e) {
    return std::bit_cast<float>(sign | static_cast<std::uint32_t>(e + 127) << 23 | frac);
  };
  switch (pick) {
    case 0: return std::bit_cast<float>(sign);
    case 1:
    case 2: return code_to_float(f, (sign != 0 ? sign_mask(f) : 0) | ((frac >> 3) & frac_mask(f)));  // f subnormal
    case 3: return std::bit_cast<float>(sign | (frac >> static_cast<int>((r >> 48) % 20)));      // binary32 subnormal
    case 4: return with_exp(emin(f) + static_cast<int>((r >> 40) % 3));                          // tiny normal
    case 5: return with_exp(emax(f) - big - static_cast<int>((r >> 40) % 3));                     // large
    default: return with_exp(static_cast<int>((r >> 40) % 12) - 9);                              // 2^-9 .. 2^3
  }
}

// Counts elements compared; the first mismatch of a run is reported with both codes and values.
struct comparer {
  std::uint64_t compared = 0, mismatches = 0;
  std::string first;
  void operator()(const std::string& what, std::size_t i, std::uint32_t got, std::uint32_t want, const format& f) {
    ++compared;
    if (got == want) return;
    char buf[128];
    std::snprintf(buf, sizeof buf, "[%zu]: 0x%x (%.9g) vs the emulator's 0x%x (%.9g)", i, got,
                  static_cast<double>(code_to_float(f, got)), want, static_cast<double>(code_to_float(f, want)));
    if (mismatches++ == 0) first = what + buf;
  }
  void operator()(const std::string& what, double got, double want) {  // a double, bitwise
    ++compared;
    if (std::bit_cast<std::uint64_t>(got) == std::bit_cast<std::uint64_t>(want)) return;
    char buf[96];
    std::snprintf(buf, sizeof buf, ": %a vs the emulator's %a", got, want);
    if (mismatches++ == 0) first = what + buf;
  }
};

// ---- Optimizer -----------------------------------------------------------------------------

struct hyper_case {
  const char* name;
  cuda::optimizer kind;
  training::hyperparameters h;
};

// Designated initializers in training::hyperparameters' member order.
std::vector<hyper_case> hyper_cases() {
  using cuda::optimizer;
  return {{"sgd", optimizer::sgd, {.lr = 0.01}},
          {"sgd momentum", optimizer::sgd, {.lr = 0.01, .momentum = 0.9}},
          {"sgd momentum 1e-50 (0 in binary32: a buffer that never changes)", optimizer::sgd,
           {.lr = 0.01, .momentum = 1e-50}},
          {"sgd momentum dampening wd", optimizer::sgd,
           {.lr = 0.01, .momentum = 0.9, .dampening = 0.1, .weight_decay = 0.01}},
          {"sgd nesterov wd", optimizer::sgd, {.lr = 0.01, .momentum = 0.9, .nesterov = true, .weight_decay = 1e-3}},
          {"sgd wd", optimizer::sgd, {.lr = 0.05, .weight_decay = 0.1}},
          {"adamw", optimizer::adamw, {}},
          {"adamw wd", optimizer::adamw, {.lr = 0.01, .weight_decay = 0.1, .beta1 = 0.8, .beta2 = 0.99, .eps = 1e-6}}};
}

cuda::optimizer_config config_for(const hyper_case& hc, const training::precision_policy& p, std::uint64_t seed,
                                  std::uint32_t tensor) {
  cuda::optimizer_config c;
  c.kind = hc.kind, c.update = p.master ? cuda::weight_update::master
             : p.rule == training::update_rule::kahan      ? cuda::weight_update::kahan
             : p.rule == training::update_rule::stochastic ? cuda::weight_update::stochastic
                                                           : cuda::weight_update::nearest;
  c.weights = p.weights, c.states = p.states, c.grads = p.grads, c.sr_bits = p.sr_bits;
  const training::hyperparameters& h = hc.h;
  c.lr = h.lr, c.weight_decay = h.weight_decay, c.momentum = h.momentum, c.dampening = h.dampening;
  c.beta1 = h.beta1, c.beta2 = h.beta2, c.eps = h.eps, c.nesterov = h.nesterov;
  c.seed = seed, c.tensor = tensor;
  return c;
}

std::vector<std::uint32_t> codes_of(const stored_tensor* t) {
  std::vector<std::uint32_t> v;
  if (t != nullptr)
    for (std::size_t j = 0; j < t->size(); ++j) v.push_back(t->code(j));
  return v;
}

// The buffers the API would take, as the emulator holds them now.
cuda::optimizer_buffers buffers_of(const training::optimizer& o, std::size_t t) {
  cuda::optimizer_buffers b;
  b.weights = codes_of(&o.weights(t));
  if (o.policy().master) b.master = codes_of(&o.updated_weights(t));
  b.state0 = codes_of(o.state(t, 0));
  b.state1 = codes_of(o.state(t, 1));
  b.compensation = codes_of(o.compensation(t));
  return b;
}

void compare_buffers(comparer& cmp, const cuda::optimizer_buffers& got, const cuda::optimizer_buffers& want,
                     const training::precision_policy& p) {
  using codes = std::vector<std::uint32_t> cuda::optimizer_buffers::*;
  using b = cuda::optimizer_buffers;
  const struct { const char* what; codes m; format f; } members[]{{"weights", &b::weights, p.weights},
      {"master", &b::master, p.states}, {"state0", &b::state0, p.states}, {"state1", &b::state1, p.states},
      {"compensation", &b::compensation, p.weights}};
  for (const auto& [what, m, f] : members) {
    REQUIRE((got.*m).size() == (want.*m).size());
    for (std::size_t j = 0; j < (got.*m).size(); ++j) cmp(what, j, (got.*m)[j], (want.*m)[j], f);
  }
}

// One (hyper-parameters, policy, seed) run: 4 steps over two tensors; after each step the
// element steps' codes (and, with a device, the API's) must equal the emulator's.
void run_optimizer_case(const hyper_case& hc, const std::string& policy, std::uint64_t seed, comparer& cmp,
                        comparer& device_cmp, std::uint64_t& moved) {
  const auto p = training::parse_policy(policy);
  REQUIRE(p.has_value());
  const training::optimizer_kind kind =
      hc.kind == cuda::optimizer::sgd ? training::optimizer_kind::sgd : training::optimizer_kind::adamw;
  const std::vector<std::size_t> sizes{37, 700};  // 700: more than one of the emulator's 512-element chunks
  std::vector<std::vector<float>> init;
  for (std::size_t t = 0; t < sizes.size(); ++t) {
    init.emplace_back();
    for (std::size_t j = 0; j < sizes[t]; ++j) init[t].push_back(test_value(p->weights, seed, 10 + t, j, 2));
  }
  auto ref = training::optimizer::create(kind, hc.h, *p, init, seed);
  REQUIRE_MESSAGE(ref.has_value(), (ref.has_value() ? "" : ref.message()));
  std::vector<cuda::optimizer_buffers> sim, dev;
  for (std::size_t t = 0; t < sizes.size(); ++t) sim.push_back(buffers_of(*ref, t));
  dev = sim;
  const bool device = have_device();
  for (long step = 1; step <= 4; ++step) {
    std::vector<stored_tensor> grads;
    for (std::size_t t = 0; t < sizes.size(); ++t) {
      std::vector<float> g;
      for (std::size_t j = 0; j < sizes[t]; ++j)
        g.push_back(test_value(p->grads, seed, 20 + t, static_cast<std::uint64_t>(step) * 100000 + j, 6));
      grads.emplace_back(p->grads, sizes[t]);
      grads.back().store(0, g);
    }
    ref->step(grads);
    for (std::size_t t = 0; t < sizes.size(); ++t) {
      const std::vector<std::uint32_t> g = codes_of(&grads[t]);
      const auto c = config_for(hc, *p, seed, static_cast<std::uint32_t>(t));
      const auto params = cuda::detail::prepare_optimizer_step(c, step, g, sim[t]);
      REQUIRE_MESSAGE(params.has_value(), (params.has_value() ? "" : params.message()));
      cuda::optimizer_buffers& b = sim[t];
      const std::vector<std::uint32_t> before = b.weights;
      for (std::size_t j = 0; j < g.size(); ++j)  // the kernel's loop body, on the host
        cuda::detail::fused_optimizer_apply(*params, j, g.data(), b.weights.data(), b.master.data(), b.state0.data(),
                                            b.state1.data(), b.compensation.data());
      for (std::size_t j = 0; j < g.size(); ++j) moved += b.weights[j] != before[j];
      const auto want = buffers_of(*ref, t);
      compare_buffers(cmp, b, want, *p);
      if (device) {
        const auto ok = cuda::optimizer_step(c, step, g, dev[t]);
        REQUIRE_MESSAGE(ok.has_value(), (ok.has_value() ? "" : ok.message()));
        compare_buffers(device_cmp, dev[t], want, *p);
      }
    }
  }
}

}  // namespace

TEST_CASE("fused optimizer element steps == training::optimizer, every code after every step") {
  int runs = 0;
  comparer cmp, device_cmp;
  std::uint64_t moved = 0;
  for (const auto& hc : hyper_cases())
    for (const std::string fmt : {"bf16", "fp16"})
      for (const std::string rule : {"", "-kahan", "-sr1", "-sr8", "-sr16", "-sr32", "mixed"})
        for (const std::uint64_t seed : {1u, 77u}) {
          const std::string policy = rule == "mixed" ? (fmt == "bf16" ? "mixed" : "mixed-fp16") : fmt + rule;
          INFO(std::string(hc.name) << ", policy " << policy << ", seed " << seed);
          run_optimizer_case(hc, policy, seed, cmp, device_cmp, moved);
          ++runs;
          REQUIRE_MESSAGE(cmp.mismatches == 0, cmp.first);
          REQUIRE_MESSAGE(device_cmp.mismatches == 0, ("device: " + device_cmp.first));
        }
  CHECK(runs == 8 * 2 * 7 * 2);
  // Per run: 4 steps x 737 elements x (weights, and master, states, compensation as used).
  CHECK(cmp.compared >= std::uint64_t{8 * 2 * 7 * 2} * 4 * 737);
  CHECK(moved > cmp.compared / 20);  // the updates do move the weights
  MESSAGE("optimizer parity: " << runs << " runs, " << cmp.compared << " codes compared, " << moved
                               << " weight codes moved; device codes compared: " << device_cmp.compared);
}

// ---- Gradient accumulation -------------------------------------------------------------------

namespace {

using tensors = std::vector<std::vector<float>>;

// One cycle of the element functions in the device's order (zero, adds, chunked norm, clip),
// on the tensors laid end to end; the compensation is returned through `comp`.
cuda::accumulation_result simulate_cycle(const format& f, const std::vector<tensors>& mbs,
                                         const std::vector<std::size_t>& sizes, double clip_norm, bool kahan,
                                         std::vector<float>& comp) {
  std::size_t total = 0;
  for (const std::size_t n : sizes) total += n;
  std::vector<float> s(total, cuda::detail::zero_sum);
  comp.assign(kahan ? total : 0, cuda::detail::zero_compensation);
  const float n = static_cast<float>(mbs.size());
  for (const auto& mb : mbs) {
    std::vector<float> g;
    for (const auto& t : mb) g.insert(g.end(), t.begin(), t.end());
    for (std::size_t j = 0; j < total; ++j) {
      if (kahan)
        cuda::detail::accumulate_kahan(f, s[j], comp[j], g[j], n);
      else
        s[j] = cuda::detail::accumulate_plain(f, s[j], g[j], n);
    }
  }
  const auto chunks = cuda::detail::norm_chunks(sizes);
  std::vector<double> sums;
  for (const auto& c : chunks) sums.push_back(training::chunk_sum_squares(s.data() + c.first, c.count));
  cuda::accumulation_result r;
  r.norm = cuda::detail::norm_from_chunk_sums(sums.data(), sums.size());
  const auto clip = training::clip_for(clip_norm, r.norm);
  r.scale = clip.scale;
  if (clip.apply)
    for (float& v : s) v = cuda::detail::clip_element(f, v, clip.scale);
  for (std::size_t t = 0, offset = 0; t < sizes.size(); offset += sizes[t++]) {
    r.buffer.emplace_back(sizes[t]);
    for (std::size_t j = 0; j < sizes[t]; ++j) r.buffer[t][j] = std::bit_cast<std::uint32_t>(s[offset + j]);
  }
  return r;
}

void compare_result(comparer& cmp, const cuda::accumulation_result& got, const std::vector<stored_tensor>& buffer,
                    double norm, float scale) {
  REQUIRE(got.buffer.size() == buffer.size());
  for (std::size_t t = 0; t < buffer.size(); ++t) {
    REQUIRE(got.buffer[t].size() == buffer[t].size());
    for (std::size_t j = 0; j < buffer[t].size(); ++j)
      cmp("buffer " + std::to_string(t), j, got.buffer[t][j], std::bit_cast<std::uint32_t>(buffer[t].get(j)),
          formats::fp32);
  }
  cmp("norm", got.norm, norm);
  cmp("scale", 0, std::bit_cast<std::uint32_t>(got.scale), std::bit_cast<std::uint32_t>(scale), formats::fp32);
}

}  // namespace

TEST_CASE("gradient accumulation element functions == training::grad_accumulator: buffer, norm, scale") {
  const std::vector<std::vector<std::size_t>> size_sets{{0, 7, 1024, 2500}, {1, 3000, 0, 1023}, {}, {2049}};
  int runs = 0, clipped = 0;
  std::uint64_t expected_compared = 0;
  comparer cmp, device_cmp;
  const bool device = have_device();
  for (const format& f : {formats::fp32, formats::bf16})
    for (std::size_t set = 0; set < size_sets.size(); ++set)
      for (const int n : {1, 3, 4})
        for (const bool kahan : {false, true})
          for (const double clip_norm : {0.0, 1e30, 0.5}) {
            const auto& sizes = size_sets[set];
            INFO("size set " << set << ", N " << n << ", kahan " << kahan << ", clip_norm " << clip_norm);
            const training::grad_accumulation_options o{
                .micro_batches = n, .clip_norm = clip_norm, .buffer = f, .kahan = kahan};
            auto ref = training::grad_accumulator::create(sizes, o);
            REQUIRE(ref.has_value());
            std::vector<tensors> mbs(static_cast<std::size_t>(n));
            for (int i = 0; i < n; ++i)
              for (std::size_t t = 0; t < sizes.size(); ++t) {
                mbs[i].emplace_back();
                for (std::size_t j = 0; j < sizes[t]; ++j)
                  mbs[i][t].push_back(test_value(formats::fp32, set, 30 + static_cast<std::uint32_t>(t),
                                                 static_cast<std::uint64_t>(i) * 100000 + j, 100));
              }
            for (const auto& mb : mbs) ref->add(mb, 0.0);
            const auto& buffer = ref->take();
            std::vector<float> comp;
            const auto got = simulate_cycle(f, mbs, sizes, clip_norm, kahan, comp);
            compare_result(cmp, got, buffer, ref->last_norm(), ref->last_clip_scale());
            for (std::size_t t = 0, offset = 0; kahan && t < sizes.size(); offset += sizes[t], ++t)
              for (std::size_t j = 0; j < sizes[t]; ++j)
                cmp("compensation", j, std::bit_cast<std::uint32_t>(comp[offset + j]),
                    std::bit_cast<std::uint32_t>(ref->compensation()[t].get(j)), formats::fp32);
            if (device && f == formats::fp32) {
              const auto d = cuda::accumulate_gradients(mbs, clip_norm, kahan);
              REQUIRE_MESSAGE(d.has_value(), (d.has_value() ? "" : d.message()));
              compare_result(device_cmp, *d, buffer, ref->last_norm(), ref->last_clip_scale());
            }
            REQUIRE_MESSAGE(cmp.mismatches == 0, cmp.first);
            REQUIRE_MESSAGE(device_cmp.mismatches == 0, ("device: " + device_cmp.first));
            clipped += ref->clip_events() > 0;
            ++runs;
            for (const std::size_t size : sizes) expected_compared += size * (kahan ? 2 : 1);
            expected_compared += 2;  // the norm and the scale
          }
  CHECK(runs == 2 * 4 * 3 * 2 * 3);
  CHECK(clipped >= 2 * 3 * 3 * 2);  // clip_norm 0.5 clips every non-empty set
  CHECK(cmp.compared == expected_compared);
  CHECK(expected_compared > 2 * 3 * 2 * 3 * std::uint64_t{2049});
  MESSAGE("accumulation parity: " << runs << " runs (" << clipped << " clipped), " << cmp.compared
                                  << " values compared; device values compared: " << device_cmp.compared);
}

TEST_CASE("gradient accumulation: an infinite gradient gives an infinite norm and NaN elements, as the emulator") {
  std::vector<tensors> mbs{{{1.0f, std::numeric_limits<float>::infinity(), -2.0f}}, {{0.5f, 1.0f, -0.0f}}};
  for (const bool kahan : {false, true}) {
    const training::grad_accumulation_options o{.micro_batches = 2, .clip_norm = 1.0, .kahan = kahan};
    auto ref = training::grad_accumulator::create({3}, o);
    REQUIRE(ref.has_value());
    for (const auto& mb : mbs) ref->add(mb, 0.0);
    const auto& buffer = ref->take();
    std::vector<float> comp;
    comparer cmp;
    compare_result(cmp, simulate_cycle(formats::fp32, mbs, {3}, 1.0, kahan, comp), buffer, ref->last_norm(),
                   ref->last_clip_scale());
    CHECK_MESSAGE(cmp.mismatches == 0, cmp.first);
    CHECK(cmp.compared == 5);  // three elements, the norm, the scale
    CHECK(!std::isfinite(ref->last_norm()));  // inf, or NaN once the compensation meets inf - inf
    CHECK(std::isnan(buffer[0].get(1)));
  }
}

// ---- The host API's argument checks ----------------------------------------------------------

namespace {

cuda::optimizer_config good_config() { return {}; }  // the defaults: adamw, kahan, bf16, lr 1e-3

cuda::optimizer_buffers good_buffers(std::size_t n) {  // weights 1.0 in bf16, zero states
  const std::vector<std::uint32_t> zeros(n, 0);
  return {.weights = std::vector<std::uint32_t>(n, 0x3f80), .master = {}, .state0 = zeros, .state1 = zeros,
          .compensation = zeros};
}

// The error of optimizer_step with config c, grads g and buffers b ("" when it succeeds).
std::string step_error(const cuda::optimizer_config& c, long step, const std::vector<std::uint32_t>& g,
                       cuda::optimizer_buffers b) {
  const auto ok = cuda::optimizer_step(c, step, g, b);
  return ok ? std::string() : ok.message();
}

bool no_device_error(const std::string& m) {
  return m.find("no CUDA device") != std::string::npos || m.find("built without CUDA") != std::string::npos;
}

}  // namespace

TEST_CASE("optimizer_step: bad arguments are errors naming the value, before any device query") {
  const std::vector<std::uint32_t> g(4, 0x3f80);
  struct bad_case {
    std::string want;
    cuda::optimizer_config c;
    long step;
    std::vector<std::uint32_t> grads;
    cuda::optimizer_buffers b;
  };
  std::vector<bad_case> cases;
  const auto add = [&](std::string want, auto change) {
    bad_case k{std::move(want), good_config(), 1, g, good_buffers(4)};
    change(k);
    cases.push_back(std::move(k));
  };
  using k_ = bad_case&;
  constexpr auto sgd = cuda::optimizer::sgd;
  constexpr auto master = cuda::weight_update::master;
  const double inf = std::numeric_limits<double>::infinity();
  add("step = 0 must be >= 1", [](k_ k) { k.step = 0; });
  add("sr_bits = 0 must lie in 1..32", [](k_ k) { k.c.sr_bits = 0; });
  add("sr_bits = 33 must lie in 1..32", [](k_ k) { k.c.sr_bits = 33; });
  add("learning rate nan must be finite and > 0", [](k_ k) { k.c.lr = std::nan(""); });
  add("learning rate -1 must be finite and > 0", [](k_ k) { k.c.lr = -1; });
  add("weight decay inf must be finite and >= 0", [&](k_ k) { k.c.weight_decay = inf; });
  add("beta1 1 must lie in [0, 1)", [](k_ k) { k.c.beta1 = 1; });
  add("beta2 -0.5 must lie in [0, 1)", [](k_ k) { k.c.beta2 = -0.5; });
  add("eps 0 must be finite and > 0", [](k_ k) { k.c.eps = 0; });
  add("momentum -0.5 must be finite and >= 0", [](k_ k) { k.c.kind = sgd, k.c.momentum = -0.5; });
  add("nesterov momentum needs momentum > 0 and dampening 0", [](k_ k) { k.c.kind = sgd, k.c.nesterov = true; });
  add("optimizer 7 is not sgd or adamw", [](k_ k) { k.c.kind = static_cast<cuda::optimizer>(7); });
  add("weight update 9 is not nearest, kahan, stochastic or master",
      [](k_ k) { k.c.update = static_cast<cuda::weight_update>(9); });
  add("weights format 'fp32' must be a storage format of at most 16 bits", [](k_ k) { k.c.weights = formats::fp32; });
  add("weights format: storage format 'e8m0fnu'", [](k_ k) { k.c.weights = formats::e8m0fnu; });
  add("states format 'fp32' must be a storage format of at most 16 bits (fp32 states need update 'master')",
      [](k_ k) { k.c.states = formats::fp32; });
  add("states format 'bf16' must be fp32 under update 'master'",
      [](k_ k) { k.c.update = master, k.b.master.assign(4, 0x3f800000), k.b.compensation.clear(); });
  add("grads format 'tf32' must be fp32 or a storage format of at most 16 bits",
      [](k_ k) { k.c.grads = formats::tf32; });
  add("weights has 3 elements but adamw with update 'kahan' needs one element per gradient (4)",
      [](k_ k) { k.b.weights.resize(3); });
  add("compensation is empty but adamw with update 'kahan' needs one element per gradient (4)",
      [](k_ k) { k.b.compensation.clear(); });
  add("state1 is empty but adamw needs one element per gradient (4)", [](k_ k) { k.b.state1.clear(); });
  add("master is empty but adamw with update 'master' needs one element per gradient (4)",
      [](k_ k) { k.c.update = master, k.c.states = formats::fp32, k.b.compensation.clear(); });
  add("compensation has 4 elements but adamw with update 'nearest' does not use it (leave it empty)",
      [](k_ k) { k.c.update = cuda::weight_update::nearest; });
  add("state0 has 4 elements but sgd without momentum does not use it (leave it empty)",
      [](k_ k) { k.c.kind = sgd, k.b.state1.clear(); });
  add("grads[1] = 0x10000 is not a bf16 code (codes are 0..0xffff)", [](k_ k) { k.grads[1] = 0x10000; });
  add("weights[3] = 0xffffffff is not a bf16 code (codes are 0..0xffff)", [](k_ k) { k.b.weights[3] = ~0u; });
  int checked = 0;
  for (const auto& k : cases) {
    const std::string m = step_error(k.c, k.step, k.grads, k.b);
    CAPTURE(m);
    CHECK(m.rfind("optimizer_step: ", 0) == 0);
    CHECK_MESSAGE(m.find(k.want) != std::string::npos, k.want);
    ++checked;
  }
  CHECK(checked == 26);

  // Valid arguments reach the device: without one, the error says so.
  if (!have_device()) {
    CHECK(no_device_error(step_error(good_config(), 1, g, good_buffers(4))));
    bad_case mixed{"", good_config(), 3, std::vector<std::uint32_t>(4, 0x3f800000), good_buffers(4)};
    mixed.c.update = master, mixed.c.states = mixed.c.grads = formats::fp32;
    mixed.b.compensation.clear(), mixed.b.master.assign(4, 0x3f800000);
    CHECK(no_device_error(step_error(mixed.c, mixed.step, mixed.grads, mixed.b)));
  }
}

TEST_CASE("optimizer_step_on_device: the buffers a configuration uses, and only those, before any device query") {
  std::uint16_t words[4] = {};
  cuda::optimizer_device_buffers b;  // adamw with kahan: grads, weights, both states, compensation
  b.n = 4;
  b.grads = b.weights = b.state0 = b.state1 = b.compensation = words;
  auto message = [&](const cuda::optimizer_config& c, const cuda::optimizer_device_buffers& d) {
    const auto r = cuda::optimizer_step_on_device(c, 1, d);
    return r ? std::string() : r.message();
  };
  auto no_grads = b;
  no_grads.grads = nullptr;
  CHECK(message(good_config(), no_grads) == "optimizer_step: grads is null but adamw with update 'kahan' needs it");
  auto with_master = b;
  with_master.master = words;
  CHECK(message(good_config(), with_master) ==
        "optimizer_step: master is given but adamw with update 'kahan' does not use it (pass null)");
  auto nearest = good_config();
  nearest.update = cuda::weight_update::nearest;
  CHECK(message(nearest, b) ==
        "optimizer_step: compensation is given but adamw with update 'nearest' does not use it (pass null)");
  auto no_state = b;
  no_state.state1 = nullptr;
  CHECK(message(good_config(), no_state) == "optimizer_step: state1 is null but adamw needs it");
  CHECK(message(good_config(), b).find("optimizer_step") == std::string::npos);  // valid: only the device is missing
  auto bad_step = good_config();
  CHECK(cuda::optimizer_step_on_device(bad_step, 0, b).message().find("step = 0 must be >= 1") != std::string::npos);
  if (!cuda::current_device()) CHECK(no_device_error(message(good_config(), b)));
}

TEST_CASE("accumulate_gradients: bad arguments are errors naming the value, before any device query") {
  const std::vector<tensors> good{{{1, 2}, {3}}, {{4, 5}, {6}}};
  const auto message = [](const std::vector<tensors>& mbs, double clip) {
    const auto r = cuda::accumulate_gradients(mbs, clip, false);
    return r ? std::string() : r.message();
  };
  const std::vector<std::pair<std::string, std::string>> cases{
      {message({}, 0), "micro_batches is empty"},
      {message(good, std::nan("")), "clip_norm = nan must be finite and >= 0 (0 turns clipping off)"},
      {message(good, -1), "clip_norm = -1 must be finite and >= 0"},
      {message(good, std::numeric_limits<double>::infinity()), "clip_norm = inf must be finite and >= 0"},
      {message({{{1, 2}, {3}}, {{4, 5}}}, 0), "micro-batch 1 has 1 tensors, micro-batch 0 has 2"},
      {message({{{1, 2}, {3}}, {{4, 5}, {6}}, {{4, 5}, {6, 7}}}, 0),
       "tensor 1 of micro-batch 2 has 2 elements, in micro-batch 0 it has 1"},
  };
  int checked = 0;
  for (const auto& [m, want] : cases) {
    CAPTURE(m);
    CHECK(m.rfind("accumulate_gradients: ", 0) == 0);
    CHECK_MESSAGE(m.find(want) != std::string::npos, want);
    ++checked;
  }
  CHECK(checked == 6);
  if (!have_device()) {
    CHECK(no_device_error(message(good, 1.0)));
    CHECK(no_device_error(message(std::vector<tensors>(1), 0)));  // no tensors at all still needs the device
  }
}
