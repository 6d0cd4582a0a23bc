// GPU parity checks (parity.hpp): each kernel's output against the emulator's reference routine
// for the same inputs. This file: conversions (round_array/convert_array, the hardware proofs)
// and the training kernels (training::optimizer, training::grad_accumulator); the tensor-core
// checks are in parity_tensor_core.cpp.
#include <bit>
#include <cmath>

#include "analysis/training/grad_accumulation.hpp"
#include "analysis/training/optimizer.hpp"
#include "fpemu/array.hpp"
#include "fpemu/convert.hpp"
#include "parity_runner.hpp"

namespace fpemu::cuda {
namespace parity_detail {

static const std::vector<format>& conversion_targets() {
  static const std::vector<format> t = {formats::bf16,   formats::fp16,   formats::tf32,     formats::e8m13,
                                        formats::e4m3fn, formats::e5m2,   formats::e4m3fnuz, formats::e5m2fnuz,
                                        formats::e2m3fn, formats::e3m2fn, formats::e2m1fn,   formats::e8m0fnu,
                                        parse_format("e3m4").value()};
  return t;
}

static std::vector<rounding> conversion_roundings(const format& f) {
  std::vector<rounding> out;
  const rounding candidates[] = {
      {round_mode::nearest_even, overflow_policy::ieee},    {round_mode::nearest_even, overflow_policy::saturate},
      {round_mode::nearest_away, overflow_policy::ieee},    {round_mode::toward_zero, overflow_policy::ieee},
      {round_mode::toward_positive, overflow_policy::ieee}, {round_mode::toward_negative, overflow_policy::saturate},
      {round_mode::to_odd, overflow_policy::ieee},          {round_mode::stochastic, overflow_policy::ieee, 1},
      {round_mode::stochastic, overflow_policy::ieee, 8},   {round_mode::stochastic, overflow_policy::saturate, 16},
      {round_mode::stochastic, overflow_policy::ieee, 32},  {round_mode::stochastic_exact, overflow_policy::ieee}};
  for (const rounding& r : candidates)
    if (!check(f, r)) out.push_back(r);
  return out;
}

void conversions(runner& run) {
  // binary32 inputs: N(0, 1) scaled over many binades, random bit patterns and the specials.
  std::vector<float> x = {0.0f, -0.0f, 1.0f / 0.0f, -1.0f / 0.0f, std::bit_cast<float>(0x7fc00000u),
                          std::bit_cast<float>(0xff800001u), std::bit_cast<float>(1u), 3.4028235e38f};
  std::normal_distribution<float> normal(0.0f, 1.0f);
  while (x.size() < run.random_count() + 13) {  // + 13: a tile and an 8-element row left partly filled
    const auto pick = run.rng()() % 4;
    x.push_back(pick == 0 ? std::bit_cast<float>(static_cast<std::uint32_t>(run.rng()()))
                          : normal(run.rng()) * std::ldexp(1.0f, static_cast<int>(run.rng()() % 60) - 30));
  }
  std::vector<std::uint32_t> bits(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) bits[i] = std::bit_cast<std::uint32_t>(x[i]);
  std::vector<std::uint32_t> codes16(1u << 16);
  for (std::uint32_t c = 0; c < codes16.size(); ++c) codes16[c] = c;

  for (const format& to : conversion_targets())
    for (const rounding& r : conversion_roundings(to)) {
      // A keystream group boundary (the kernel shares Philox blocks) and an odd offset (it cannot).
      const sr_stream sr{0x5eed, 7, r.sr_bits == 8 ? 1000003u : 1u << 20};
      const std::string name = to_string(to) + " " + rounding_name(r);
      if (run.wanted("convert f32->" + name)) {
        std::vector<std::uint32_t> want(x.size());
        round_array(to, std::span<const float>(x), want, r, sr);
        run.add(compare("convert f32->" + name, to, convert_codes(source_type::f32, bits, {to, r, sr}), want));
      }
      if (r.overflow != overflow_policy::ieee || (r.mode != round_mode::nearest_even && r.mode != round_mode::stochastic))
        continue;
      for (auto [src, from_format, tag] : {std::tuple{source_type::bf16, formats::bf16, "bf16"},
                                           std::tuple{source_type::fp16, formats::fp16, "fp16"}}) {
        const std::string kernel = std::string("convert ") + tag + "->" + name + " (all 65536 codes)";
        if (!run.wanted(kernel)) continue;
        std::vector<std::uint32_t> want(codes16.size());
        convert_array(to, from_format, codes16, want, r, sr);
        run.add(compare(kernel, to, convert_codes(src, codes16, {to, r, sr}), want));
      }
    }

  // The round-in-place form, for formats whose values are binary32 values.
  for (const format& to : {formats::bf16, formats::fp16, formats::tf32, formats::e4m3fn, formats::e5m2}) {
    const std::string kernel = "round_values f32->" + to_string(to) + " nearest_even";
    if (!run.wanted(kernel)) continue;
    std::vector<std::uint32_t> codes(x.size()), want(x.size());
    round_array(to, std::span<const float>(x), codes, {});
    for (std::size_t i = 0; i < x.size(); ++i) want[i] = std::bit_cast<std::uint32_t>(to_float(to, codes[i]));
    auto got = round_values(x, {to});
    expected<std::vector<std::uint32_t>> got_bits = got ? expected<std::vector<std::uint32_t>>(std::vector<std::uint32_t>())
                                                        : expected<std::vector<std::uint32_t>>(error{got.message()});
    if (got)
      for (float v : *got) got_bits->push_back(std::bit_cast<std::uint32_t>(v));
    run.add(compare(kernel, formats::fp32, got_bits, want));
  }
}

void hardware_conversions(runner& run) {
  const rounding sat{round_mode::nearest_even, overflow_policy::saturate};
  for (auto [to, r] : {std::pair{formats::e4m3fn, sat}, std::pair{formats::e5m2, sat}, std::pair{formats::bf16, rounding{}},
                       std::pair{formats::bf16, rounding{round_mode::toward_zero}}, std::pair{formats::fp16, rounding{}},
                       std::pair{formats::fp16, rounding{round_mode::toward_zero}}}) {
    const std::string instruction = hardware_instruction(source_type::f32, {to, r}, run.device().major, run.device().minor);
    if (instruction.empty()) continue;  // not on this device
    const std::string kernel = "hardware " + instruction + " == core (every non-NaN binary32)";
    if (!run.wanted(kernel)) continue;
    parity_check c = named(kernel);
    if (auto rep = check_hardware_conversion(to, r); !rep) {
      c.error = rep.message();
    } else {
      c.cases = static_cast<long long>(rep->cases);
      c.mismatches = static_cast<long long>(rep->mismatches);
      if (c.mismatches != 0) {
        char buf[32];
        std::snprintf(buf, sizeof buf, "input 0x%08x", rep->first_input);
        c.first_mismatch = std::string(buf) + ": hardware " + show(to, rep->hardware_code) + " core " + show(to, rep->core_code);
      }
    }
    run.add(std::move(c));
  }
}

static std::vector<float> normal_values(std::mt19937_64& rng, std::size_t n, float sigma) {
  std::normal_distribution<float> normal(0.0f, sigma);
  std::vector<float> v(n);
  for (float& x : v) x = normal(rng);
  return v;
}

void optimizers(runner& run) {
  struct variant {
    const char* policy;
    optimizer kind;
    weight_update update;
  };
  const variant variants[] = {{"bf16", optimizer::adamw, weight_update::nearest},
                              {"bf16-kahan", optimizer::adamw, weight_update::kahan},
                              {"bf16-sr16", optimizer::adamw, weight_update::stochastic},
                              {"mixed", optimizer::adamw, weight_update::master},
                              {"fp16-kahan", optimizer::adamw, weight_update::kahan},
                              {"bf16-kahan", optimizer::sgd, weight_update::kahan},
                              {"bf16-sr8", optimizer::sgd, weight_update::stochastic},
                              {"mixed", optimizer::sgd, weight_update::master}};
  const std::size_t n = (run.quick() ? 4096 : 1u << 16) + 5;  // + 5: a partly filled row of 8
  const int steps = 5;
  for (const variant& v : variants) {
    const bool adamw = v.kind == optimizer::adamw;
    const std::string kernel = std::string("optimizer ") + (adamw ? "adamw " : "sgd ") + v.policy + " (" +
                               std::to_string(steps) + " steps)";
    if (!run.wanted(kernel)) continue;
    parity_check total = named(kernel);
    const auto policy = training::parse_policy(v.policy).value();
    training::hyperparameters h;
    h.lr = adamw ? 1e-3 : 1e-2;
    h.weight_decay = 0.01;
    h.momentum = adamw ? 0 : 0.9;
    const std::uint64_t seed = 42;
    auto reference = training::optimizer::create(adamw ? training::optimizer_kind::adamw : training::optimizer_kind::sgd,
                                                 h, policy, {normal_values(run.rng(), n, 0.5f)}, seed);
    if (!reference) {
      total.error = reference.message();
      run.add(std::move(total));
      continue;
    }
    optimizer_config c;
    c.kind = v.kind;
    c.update = v.update;
    c.weights = policy.weights;
    c.states = policy.states;
    c.grads = policy.grads;
    c.sr_bits = policy.sr_bits;
    c.lr = h.lr;
    c.weight_decay = h.weight_decay;
    c.momentum = h.momentum;
    c.seed = seed;
    auto codes = [n](const training::stored_tensor& t) {
      std::vector<std::uint32_t> out(n);
      for (std::size_t i = 0; i < n; ++i) out[i] = t.code(i);
      return out;
    };
    optimizer_buffers b;
    b.weights = codes(reference->weights(0));
    if (policy.master) b.master = codes(reference->updated_weights(0));
    if (reference->state(0, 0)) b.state0 = codes(*reference->state(0, 0));
    if (reference->state(0, 1)) b.state1 = codes(*reference->state(0, 1));
    if (reference->compensation(0)) b.compensation = codes(*reference->compensation(0));
    for (int step = 1; step <= steps; ++step) {
      training::stored_tensor g(policy.grads, n);
      g.store(0, normal_values(run.rng(), n, 1.0f));
      reference->step(std::span(&g, 1));
      if (auto ok = optimizer_step(c, step, codes(g), b); !ok) {
        total.error = ok.message();
        break;
      }
      merge(total, compare("weights", policy.weights, b.weights, codes(reference->weights(0))));
      if (policy.master) merge(total, compare("master", policy.states, b.master, codes(reference->updated_weights(0))));
      for (int k = 0; k < 2; ++k)
        if (const auto* s = reference->state(0, k))
          merge(total, compare("state", policy.states, k == 0 ? b.state0 : b.state1, codes(*s)));
      if (const auto* comp = reference->compensation(0))
        merge(total, compare("compensation", policy.weights, b.compensation, codes(*comp)));
    }
    run.add(std::move(total));
  }
}

void gradient_accumulation(runner& run) {
  for (int n_micro : {1, 3, 4})
    for (bool kahan : {false, true})
      for (double clip : {0.0, 0.5}) {
        const std::string kernel = "grad accumulation N=" + std::to_string(n_micro) + (kahan ? " kahan" : "") +
                                   (clip > 0 ? " clip" : "");
        if (!run.wanted(kernel)) continue;
        const std::vector<std::size_t> sizes = {run.quick() ? 3000u : 100000u, 0u, 1025u};
        auto reference =
            training::grad_accumulator::create(sizes, {.micro_batches = n_micro, .clip_norm = clip, .kahan = kahan});
        parity_check total = named(kernel);
        std::vector<std::vector<std::vector<float>>> micro;
        for (int i = 0; i < n_micro; ++i) {
          std::vector<std::vector<float>> g;
          for (std::size_t s : sizes) g.push_back(normal_values(run.rng(), s, 0.01f));
          reference->add(g, 0.0);
          micro.push_back(std::move(g));
        }
        const auto& want = reference->take();
        auto got = accumulate_gradients(micro, clip, kahan);
        if (!got) {
          total.error = got.message();
        } else {
          for (std::size_t t = 0; t < sizes.size(); ++t) {
            std::vector<std::uint32_t> w(sizes[t]);
            for (std::size_t i = 0; i < sizes[t]; ++i) w[i] = want[t].code(i);
            merge(total, compare("buffer", formats::fp32, got->buffer[t], w));
          }
          ++total.cases;
          if (std::bit_cast<std::uint64_t>(got->norm) != std::bit_cast<std::uint64_t>(reference->last_norm()) &&
              total.mismatches++ == 0)
            total.first_mismatch = "norm: gpu " + std::to_string(got->norm) + " emulator " + std::to_string(reference->last_norm());
        }
        run.add(std::move(total));
      }
}
}  // namespace parity_detail

std::vector<parity_check> run_gpu_checks(const gpu_check_options& o, const std::function<void(const parity_check&)>& done) {
  const auto device = current_device();
  if (!device) return {parity_check{"device", 0, 0, "", device.message()}};
  using namespace parity_detail;
  runner r(o, done, *device);
  hardware_conversions(r);
  conversions(r);
  optimizers(r);
  gradient_accumulation(r);
  tensor_core_gemms(r);
  promoted_fp8_gemms(r);
  published_vectors(r);
  directed_vectors(r);
  emulated_gemms(r);
  return r.results();
}

}  // namespace fpemu::cuda
