// GPU parity checks (parity.hpp): each kernel's output against the emulator's reference routine
// for the same inputs: round_array/convert_array, training::optimizer, training::grad_accumulator,
// analysis::gemm with the device's tensor-core preset, the published hardware vectors, and
// analysis::gemm with a block-FMA accumulator.
#include "parity.hpp"

#include <bit>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <random>
#include <sstream>

#include "fpemu/convert.hpp"
#include "fpemu/cuda.hpp"
#include "fpemu/presets.hpp"
#include "fpemu/spec.hpp"
#include "fpemu/text.hpp"
#include "gemm.hpp"
#include "grad_accumulation.hpp"
#include "optimizer.hpp"

namespace fpemu::cuda {
namespace {

parity_check named(std::string kernel) {
  parity_check c;
  c.kernel = std::move(kernel);
  return c;
}

std::string show(const format& f, std::uint32_t code) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%x (", code);
  return buf + to_decimal(f, code) + ")";
}

// Compares element by element; `f` formats the values of both sides in the message.
parity_check compare(std::string kernel, const format& f, const expected<std::vector<std::uint32_t>>& gpu,
                     const std::vector<std::uint32_t>& emulator) {
  parity_check c = named(std::move(kernel));
  if (!gpu) {
    c.error = gpu.message();
    return c;
  }
  if (gpu->size() != emulator.size()) {
    c.error = "the GPU returned " + std::to_string(gpu->size()) + " values, the emulator " + std::to_string(emulator.size());
    return c;
  }
  c.cases = static_cast<long long>(emulator.size());
  for (std::size_t i = 0; i < emulator.size(); ++i)
    if ((*gpu)[i] != emulator[i] && c.mismatches++ == 0)
      c.first_mismatch = "index " + std::to_string(i) + ": gpu " + show(f, (*gpu)[i]) + " emulator " + show(f, emulator[i]);
  return c;
}

void merge(parity_check& total, const parity_check& part) {
  if (!part.error.empty() && total.error.empty()) total.error = part.error;
  if (part.mismatches != 0 && total.mismatches == 0) total.first_mismatch = part.first_mismatch;
  total.cases += part.cases;
  total.mismatches += part.mismatches;
}

std::string rounding_name(const rounding& r) {
  std::string s(to_string(r.mode));
  if (r.mode == round_mode::stochastic) s += std::to_string(r.sr_bits);
  return s + "/" + std::string(to_string(r.overflow));
}

class runner {
 public:
  runner(const gpu_check_options& o, const std::function<void(const parity_check&)>& done, const device_info& d)
      : o_(o), done_(done), device_(d), rng_(20261121) {}

  void add(parity_check c) {
    if (!o_.only.empty() && c.kernel.find(o_.only) == std::string::npos) return;
    done_(c);
    results_.push_back(std::move(c));
  }
  bool wanted(const std::string& kernel) const { return o_.only.empty() || kernel.find(o_.only) != std::string::npos; }
  std::vector<parity_check> results() { return std::move(results_); }

  void conversions();
  void hardware_conversions();
  void optimizers();
  void gradient_accumulation();
  void tensor_core_gemms();
  void published_vectors();
  void emulated_gemms();

 private:
  std::size_t random_count() const { return o_.quick ? 4096 : 1u << 16; }

  gpu_check_options o_;
  std::function<void(const parity_check&)> done_;
  device_info device_;
  std::mt19937_64 rng_;
  std::vector<parity_check> results_;
};

const std::vector<format>& conversion_targets() {
  static const std::vector<format> t = {formats::bf16,   formats::fp16,   formats::tf32,     formats::e8m13,
                                        formats::e4m3fn, formats::e5m2,   formats::e4m3fnuz, formats::e5m2fnuz,
                                        formats::e2m3fn, formats::e3m2fn, formats::e2m1fn,   formats::e8m0fnu,
                                        parse_format("e3m4").value()};
  return t;
}

std::vector<rounding> conversion_roundings(const format& f) {
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

void runner::conversions() {
  // binary32 inputs: N(0, 1) scaled over many binades, random bit patterns and the specials.
  std::vector<float> x = {0.0f, -0.0f, 1.0f / 0.0f, -1.0f / 0.0f, std::bit_cast<float>(0x7fc00000u),
                          std::bit_cast<float>(0xff800001u), std::bit_cast<float>(1u), 3.4028235e38f};
  std::normal_distribution<float> normal(0.0f, 1.0f);
  while (x.size() < random_count()) {
    const auto pick = rng_() % 4;
    x.push_back(pick == 0 ? std::bit_cast<float>(static_cast<std::uint32_t>(rng_()))
                          : normal(rng_) * std::ldexp(1.0f, static_cast<int>(rng_() % 60) - 30));
  }
  std::vector<std::uint32_t> bits(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) bits[i] = std::bit_cast<std::uint32_t>(x[i]);
  std::vector<std::uint32_t> codes16(1u << 16);
  for (std::uint32_t c = 0; c < codes16.size(); ++c) codes16[c] = c;

  for (const format& to : conversion_targets())
    for (const rounding& r : conversion_roundings(to)) {
      const sr_stream sr{0x5eed, 7, 1u << 20};
      const std::string name = to_string(to) + " " + rounding_name(r);
      if (wanted("convert f32->" + name)) {
        std::vector<std::uint32_t> want(x.size());
        round_array(to, std::span<const float>(x), want, r, sr);
        add(compare("convert f32->" + name, to, convert_codes(source_type::f32, bits, {to, r, sr}), want));
      }
      if (r.overflow != overflow_policy::ieee || (r.mode != round_mode::nearest_even && r.mode != round_mode::stochastic))
        continue;
      for (auto [src, from_format, tag] : {std::tuple{source_type::bf16, formats::bf16, "bf16"},
                                           std::tuple{source_type::fp16, formats::fp16, "fp16"}}) {
        const std::string kernel = std::string("convert ") + tag + "->" + name + " (all 65536 codes)";
        if (!wanted(kernel)) continue;
        std::vector<std::uint32_t> want(codes16.size());
        convert_array(to, from_format, codes16, want, r, sr);
        add(compare(kernel, to, convert_codes(src, codes16, {to, r, sr}), want));
      }
    }

  // The round-in-place form, for formats whose values are binary32 values.
  for (const format& to : {formats::bf16, formats::fp16, formats::tf32, formats::e4m3fn, formats::e5m2}) {
    const std::string kernel = "round_values f32->" + to_string(to) + " nearest_even";
    if (!wanted(kernel)) continue;
    std::vector<std::uint32_t> codes(x.size()), want(x.size());
    round_array(to, std::span<const float>(x), codes, {});
    for (std::size_t i = 0; i < x.size(); ++i) want[i] = std::bit_cast<std::uint32_t>(to_float(to, codes[i]));
    auto got = round_values(x, {to});
    expected<std::vector<std::uint32_t>> got_bits = got ? expected<std::vector<std::uint32_t>>(std::vector<std::uint32_t>())
                                                        : expected<std::vector<std::uint32_t>>(error{got.message()});
    if (got)
      for (float v : *got) got_bits->push_back(std::bit_cast<std::uint32_t>(v));
    add(compare(kernel, formats::fp32, got_bits, want));
  }
}

void runner::hardware_conversions() {
  const rounding sat{round_mode::nearest_even, overflow_policy::saturate};
  for (auto [to, r] : {std::pair{formats::e4m3fn, sat}, std::pair{formats::e5m2, sat}, std::pair{formats::bf16, rounding{}},
                       std::pair{formats::bf16, rounding{round_mode::toward_zero}}, std::pair{formats::fp16, rounding{}},
                       std::pair{formats::fp16, rounding{round_mode::toward_zero}}}) {
    const std::string instruction = hardware_instruction(source_type::f32, {to, r}, device_.major, device_.minor);
    if (instruction.empty()) continue;  // not on this device
    const std::string kernel = "hardware " + instruction + " == core (every non-NaN binary32)";
    if (!wanted(kernel)) continue;
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
    add(std::move(c));
  }
}

std::vector<float> normal_values(std::mt19937_64& rng, std::size_t n, float sigma) {
  std::normal_distribution<float> normal(0.0f, sigma);
  std::vector<float> v(n);
  for (float& x : v) x = normal(rng);
  return v;
}

void runner::optimizers() {
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
  const std::size_t n = o_.quick ? 4096 : 1u << 16;
  const int steps = 5;
  for (const variant& v : variants) {
    const bool adamw = v.kind == optimizer::adamw;
    const std::string kernel = std::string("optimizer ") + (adamw ? "adamw " : "sgd ") + v.policy + " (" +
                               std::to_string(steps) + " steps)";
    if (!wanted(kernel)) continue;
    parity_check total = named(kernel);
    const auto policy = training::parse_policy(v.policy).value();
    training::hyperparameters h;
    h.lr = adamw ? 1e-3 : 1e-2;
    h.weight_decay = 0.01;
    h.momentum = adamw ? 0 : 0.9;
    const std::uint64_t seed = 42;
    auto reference = training::optimizer::create(adamw ? training::optimizer_kind::adamw : training::optimizer_kind::sgd,
                                                 h, policy, {normal_values(rng_, n, 0.5f)}, seed);
    if (!reference) {
      total.error = reference.message();
      add(std::move(total));
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
      g.store(0, normal_values(rng_, n, 1.0f));
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
    add(std::move(total));
  }
}

void runner::gradient_accumulation() {
  for (int n_micro : {1, 3, 4})
    for (bool kahan : {false, true})
      for (double clip : {0.0, 0.5}) {
        const std::string kernel = "grad accumulation N=" + std::to_string(n_micro) + (kahan ? " kahan" : "") +
                                   (clip > 0 ? " clip" : "");
        if (!wanted(kernel)) continue;
        const std::vector<std::size_t> sizes = {o_.quick ? 3000u : 100000u, 0u, 1025u};
        auto reference =
            training::grad_accumulator::create(sizes, {.micro_batches = n_micro, .clip_norm = clip, .kahan = kahan});
        parity_check total = named(kernel);
        std::vector<std::vector<std::vector<float>>> micro;
        for (int i = 0; i < n_micro; ++i) {
          std::vector<std::vector<float>> g;
          for (std::size_t s : sizes) g.push_back(normal_values(rng_, s, 0.01f));
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
        add(std::move(total));
      }
}

// The emulator's preset for this GPU and input format, e.g. h100-e4m3 on compute capability 9.0.
expected<tensor_core_preset> device_preset(const device_info& d, const format& a, const format& b) {
  const std::string gpu = d.major >= 9 ? "h100" : (d.major == 8 && d.minor >= 9 ? "ada" : "a100");
  std::string input = a == formats::fp16 ? "fp16" : a == formats::bf16 ? "bf16" : a == formats::tf32 ? "tf32"
                      : a == formats::e4m3fn ? "e4m3" : "e5m2";
  auto p = find_preset(gpu + "-" + input);
  if (!p || a == b) return p;
  return with_inputs(*p, a, b);
}

analysis::scaled_matrix random_matrix(const format& f, int rows, int cols, std::mt19937_64& rng) {
  analysis::scaled_matrix m;
  m.rows = rows;
  m.cols = cols;
  m.fmt = f;
  std::normal_distribution<double> normal(0.0, 1.0);
  for (int i = 0; i < rows * cols; ++i) {
    const double v = normal(rng) * std::ldexp(1.0, static_cast<int>(rng() % 8) - 4);
    m.codes.push_back(from(f, v, rounding{round_mode::nearest_even, overflow_policy::saturate}).code);
  }
  return m;
}

void runner::tensor_core_gemms() {
  struct shape {
    tensor_core_instruction ins;
    const char* name;
    format a, b;
    int min_major;
  };
  const shape shapes[] = {
      {tensor_core_instruction::mma_sync, "mma.sync", formats::fp16, formats::fp16, 8},
      {tensor_core_instruction::mma_sync, "mma.sync", formats::bf16, formats::bf16, 8},
      {tensor_core_instruction::mma_sync, "mma.sync", formats::tf32, formats::tf32, 8},
      {tensor_core_instruction::wgmma, "wgmma", formats::fp16, formats::fp16, 9},
      {tensor_core_instruction::wgmma, "wgmma", formats::bf16, formats::bf16, 9},
      {tensor_core_instruction::wgmma, "wgmma", formats::e4m3fn, formats::e4m3fn, 9},
      {tensor_core_instruction::wgmma, "wgmma", formats::e5m2, formats::e5m2, 9},
      {tensor_core_instruction::wgmma, "wgmma", formats::e4m3fn, formats::e5m2, 9}};
  const int m = 128, n = 128, k = o_.quick ? 256 : 1024;
  for (const shape& s : shapes) {
    if (device_.major < s.min_major) continue;
    for (int promote : {0, 128}) {
      const std::string kernel = std::string("gemm ") + s.name + " " + to_string(s.a) + "x" + to_string(s.b) +
                                 (promote ? " promote 128 with tile scales" : "") + " " + std::to_string(m) + "x" +
                                 std::to_string(n) + "x" + std::to_string(k);
      if (!wanted(kernel)) continue;
      parity_check c = named(kernel);
      auto preset = device_preset(device_, s.a, s.b);
      if (!preset) {
        c.error = preset.message();
        add(std::move(c));
        continue;
      }
      analysis::scaled_matrix a = random_matrix(s.a, m, k, rng_), b = random_matrix(s.b, k, n, rng_);
      analysis::gemm_options go;
      go.acc = preset->model;
      go.acc.promote_every = promote;
      tensor_core_gemm_args g{s.ins, s.a, s.b, m, n, k, a.codes, b.codes, promote, {}, {}};
      if (promote) {
        // DeepSeek-V3 tile scales: A per row per 128 of K, B per 128x128 block (analysis::gemm's
        // layout: block (j / 128, g) at (j / 128) * groups + g), repeated per column for the GPU.
        const int groups = k / promote;
        a.scale_kind = b.scale_kind = analysis::scaling::tile_1x128;
        for (int i = 0; i < m * groups; ++i) a.scales.push_back(std::bit_cast<std::uint32_t>(std::ldexp(1.0f, static_cast<int>(rng_() % 5) - 2)));
        for (int i = 0; i < groups * (n / 128); ++i) b.scales.push_back(std::bit_cast<std::uint32_t>(1.5f + static_cast<float>(rng_() % 4)));
        for (int i = 0; i < m * groups; ++i) g.a_scale.push_back(std::bit_cast<float>(a.scales[static_cast<std::size_t>(i)]));
        for (int gi = 0; gi < groups; ++gi)
          for (int j = 0; j < n; ++j)
            g.b_scale.push_back(std::bit_cast<float>(b.scales[static_cast<std::size_t>((j / 128) * groups + gi)]));
      }
      auto want = analysis::gemm(a, b, {}, go);
      if (!want) {
        c.error = "emulator: " + want.message();
        add(std::move(c));
        continue;
      }
      add(compare(kernel, formats::fp32, tensor_core_gemm(g), *want));
    }
  }
}

std::vector<std::vector<std::uint32_t>> read_rows(const std::string& path, int base) {
  std::ifstream in(path);
  std::vector<std::vector<std::uint32_t>> rows;
  std::string line, word;
  while (std::getline(in, line)) {
    std::istringstream words(line);
    std::vector<std::uint32_t> row;
    while (words >> word) row.push_back(static_cast<std::uint32_t>(std::stoul(word, nullptr, base)));
    if (!row.empty()) rows.push_back(row);
  }
  return rows;
}

void runner::published_vectors() {
  const std::string gpu = device_.major >= 9 ? "H100" : (device_.major == 8 && device_.minor >= 9 ? "Ada" : "A100");
  struct set {
    const char* input;
    format f;
    tensor_core_instruction ins;
    int ins_k;
  };
  const set sets[] = {{"fp16", formats::fp16, tensor_core_instruction::mma_sync, 16},
                      {"bf16", formats::bf16, tensor_core_instruction::mma_sync, 16},
                      {"tf32", formats::tf32, tensor_core_instruction::mma_sync, 8},
                      {"fp16", formats::fp16, tensor_core_instruction::wgmma, 16},
                      {"bf16", formats::bf16, tensor_core_instruction::wgmma, 16},
                      {"E4M3", formats::e4m3fn, tensor_core_instruction::wgmma, 32},
                      {"E5M2", formats::e5m2, tensor_core_instruction::wgmma, 32}};
  for (const set& s : sets) {
    const bool wg = s.ins == tensor_core_instruction::wgmma;
    if (wg && device_.major != 9) continue;
    const std::string dir = o_.vectors_dir + "/" + gpu + "/" + s.input + "/";
    const std::string tag = gpu + "_" + s.input;
    const std::string kernel = std::string("single ") + (wg ? "wgmma " : "mma.sync ") + s.input + " vs " + gpu +
                               " hardware vectors";
    if (!wanted(kernel)) continue;
    const auto a = read_rows(dir + "a_" + tag + ".txt", 16), b = read_rows(dir + "b_" + tag + ".txt", 16);
    const auto cw = read_rows(dir + "c_" + gpu + "_fp32.txt", 2), d = read_rows(dir + "d_" + gpu + "_fp32.txt", 2);
    if (d.empty() || a.size() != d.size() || b.size() != d.size() || cw.size() != d.size()) continue;  // no such set
    const bool fp8 = s.f == formats::e4m3fn || s.f == formats::e5m2;
    const std::size_t cases = o_.quick ? 200 : d.size();
    std::vector<std::uint32_t> got, want;
    parity_check c = named(kernel);
    for (std::size_t i = 0; i < cases && i < d.size(); ++i) {
      // Exact codes of the input format, zero-padded to the instruction's K (zero terms drop out).
      std::vector<std::uint32_t> ac(static_cast<std::size_t>(s.ins_k), 0), bc(static_cast<std::size_t>(s.ins_k), 0);
      for (std::size_t j = 0; j < a[i].size() && j < ac.size(); ++j) {
        ac[j] = from(s.f, std::bit_cast<float>(a[i][j] & (s.f == formats::tf32 ? 0xffffe000u : ~0u))).code;
        bc[j] = from(s.f, std::bit_cast<float>(b[i][j] & (s.f == formats::tf32 ? 0xffffe000u : ~0u))).code;
      }
      auto r = single_instruction(s.ins, s.f, s.f, ac, bc, fp8 ? 0 : cw[i][0]);
      if (!r) {
        c.error = r.message();
        break;
      }
      got.push_back(*r);
      want.push_back(d[i][0]);
    }
    if (c.error.empty()) c = compare(kernel, formats::fp32, got, want);
    add(std::move(c));
  }
}

void runner::emulated_gemms() {
  const block_fma_model model = find_preset("h100-e4m3").value().model.block;
  for (const format& f : {formats::e2m1fn, formats::e3m2fn, formats::e2m3fn, parse_format("e3m4").value()}) {
    const std::string kernel = "emulated gemm (h100-e4m3 block model) " + to_string(f) + " 64x64x" + std::to_string(o_.quick ? 128 : 1000);
    if (!wanted(kernel)) continue;
    const int m = 64, n = 64, k = o_.quick ? 128 : 1000;
    const analysis::scaled_matrix a = random_matrix(f, m, k, rng_), b = random_matrix(f, k, n, rng_);
    analysis::gemm_options go;
    go.acc.kind = accumulator_kind::block_fma;
    go.acc.block = model;
    go.out = model.acc;
    auto want = analysis::gemm(a, b, {}, go);
    add(compare(kernel, model.acc, emulated_gemm(model, f, f, m, n, k, a.codes, b.codes), want.value()));
  }
}

}  // namespace

std::vector<parity_check> run_gpu_checks(const gpu_check_options& o, const std::function<void(const parity_check&)>& done) {
  const auto device = current_device();
  if (!device) return {parity_check{"device", 0, 0, "", device.message()}};
  runner r(o, done, *device);
  r.hardware_conversions();
  r.conversions();
  r.optimizers();
  r.gradient_accumulation();
  r.tensor_core_gemms();
  r.published_vectors();
  r.emulated_gemms();
  return r.results();
}

}  // namespace fpemu::cuda
