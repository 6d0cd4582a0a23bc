// Reference summation (analysis/reference/summation.hpp): the measured error of every method against its
// deterministic bound on random data (at least 10^4 cases per method), known values, the host
// FPU as an oracle for binary32, stochastic rounding, error paths, flags and result formats; the
// quantiles the error tables report.
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cfenv>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "analysis/reference/measured_error.hpp"
#include "analysis/reference/summation.hpp"
#include "fpemu/convert.hpp"
#include "fpemu/ops.hpp"
#include "fpemu/presets.hpp"
#include "fpemu/random.hpp"
#include "fpemu/spec.hpp"

using namespace fpemu;
using namespace fpemu::analysis;

namespace {

constexpr std::array<sum_method, 7> kMethods = {sum_method::recursive, sum_method::pairwise, sum_method::blocked,
                                                sum_method::kahan,     sum_method::neumaier, sum_method::promoted,
                                                sum_method::stochastic};

accumulator_model format_acc(const format& f, round_mode mode) {
  accumulator_model m;
  m.kind = accumulator_kind::format;
  m.acc = f;
  m.acc_rounding.mode = mode;
  return m;
}

// The data kinds: N(0,1), all-positive U(0,1), and N(0,1) times 2^k, k uniform in -8..6.
std::vector<std::uint32_t> make_data(std::mt19937_64& rng, const format& f, int n, int kind) {
  std::normal_distribution<double> normal;
  std::uniform_real_distribution<double> uniform;
  std::uniform_int_distribution<int> scale(-8, 6);
  std::vector<std::uint32_t> x(static_cast<std::size_t>(n));
  for (std::uint32_t& code : x) {
    double v = 0;
    switch (kind) {
      case 0: v = normal(rng); break;
      case 1: v = uniform(rng); break;
      default: v = std::ldexp(normal(rng), scale(rng)); break;
    }
    code = from(f, v).code;
  }
  return x;
}

std::uint32_t code_of(const format& f, double v) {
  const rounded r = from(f, v);
  REQUIRE(r.direction == 0);
  return r.code;
}

std::uint32_t as_code(float f) { return std::bit_cast<std::uint32_t>(f); }

sum_result run(std::span<const std::uint32_t> x, const sum_options& o) {
  const expected<sum_result> r = sum(x, o);
  REQUIRE_MESSAGE(r.has_value(), r.message());
  return r.value();
}

// One random configuration of a method: the options, and the input formats it draws from.
struct config {
  std::string name;
  sum_options options;
  std::vector<format> inputs;
};

std::vector<config> configs_for(sum_method m) {
  const std::vector<format> all_inputs = {formats::bf16, formats::fp16, formats::e4m3fn, formats::fp32};
  const std::array<format, 3> accs = {formats::bf16, formats::fp16, formats::fp32};
  const std::array<round_mode, 2> modes = {round_mode::nearest_even, round_mode::toward_zero};
  std::vector<config> out;
  auto add_format_accs = [&](const std::vector<round_mode>& which) {
    for (const format& a : accs)
      for (const round_mode mode : which) {
        config c;
        c.name = to_string(a) + " " + std::string(to_string(mode));
        c.options.method = m;
        c.options.acc = format_acc(a, mode);
        c.inputs = all_inputs;
        out.push_back(c);
      }
  };
  switch (m) {
    case sum_method::recursive: {
      add_format_accs({modes.begin(), modes.end()});
      const std::pair<const char*, format> presets[] = {{"h100-e4m3", formats::e4m3fn},
                                                        {"a100-bf16", formats::bf16},
                                                        {"h100-e4m3-deepseek", formats::e4m3fn}};
      for (const auto& [name, input] : presets) {
        config c;
        c.name = name;
        c.options.method = m;
        c.options.acc = find_preset(name).value().model;
        c.inputs = {input};
        // The block-FMA models get twice the share of the format accumulators.
        out.push_back(c);
        out.push_back(c);
      }
      config e;
      e.name = "exact into bf16 rne";
      e.options.method = m;
      e.options.acc = format_acc(formats::bf16, round_mode::nearest_even);
      e.options.acc.kind = accumulator_kind::exact;
      e.inputs = all_inputs;
      out.push_back(e);
      break;
    }
    case sum_method::pairwise:
    case sum_method::blocked:
    case sum_method::kahan: add_format_accs({modes.begin(), modes.end()}); break;
    case sum_method::neumaier:
      // Its bound holds for round to nearest only: one toward-zero accumulator exercises the rest.
      add_format_accs({round_mode::nearest_even});
      add_format_accs({round_mode::nearest_even});
      {
        config c;
        c.name = "bf16 rz";
        c.options.method = m;
        c.options.acc = format_acc(formats::bf16, round_mode::toward_zero);
        c.inputs = all_inputs;
        out.push_back(c);
      }
      break;
    case sum_method::promoted:
      for (const format& low : {formats::bf16, formats::fp16})
        for (const round_mode mode : modes) {
          config c;
          c.name = to_string(low) + " " + std::string(to_string(mode)) + " -> fp32";
          c.options.method = m;
          c.options.acc = format_acc(low, mode);
          c.options.high = formats::fp32;
          c.inputs = all_inputs;
          out.push_back(c);
        }
      {
        config c;  // DeepSeek-V3: block-FMA chunks promoted into fp32
        c.name = "h100-e4m3 -> fp32";
        c.options.method = m;
        c.options.acc = find_preset("h100-e4m3").value().model;
        c.inputs = {formats::e4m3fn};
        out.push_back(c);
      }
      break;
    case sum_method::stochastic:
      for (const format& a : accs)
        for (const int bits : {8, 16}) {
          config c;
          c.name = to_string(a) + " sr" + std::to_string(bits);
          c.options.method = m;
          c.options.acc = format_acc(a, round_mode::stochastic);
          c.options.acc.acc_rounding.sr_bits = bits;
          c.inputs = all_inputs;
          out.push_back(c);
        }
      break;
  }
  return out;
}

}  // namespace

TEST_CASE("measured error <= deterministic bound on 10^4 random cases per method") {
  const auto start = std::chrono::steady_clock::now();
  std::mt19937_64 rng(20240611);
  std::uniform_int_distribution<int> length(1, 200);
  std::uniform_int_distribution<int> data_kind(0, 2);
  const int block_sizes[] = {1, 2, 3, 8, 16, 32, 64};
  const int chunk_sizes[] = {1, 2, 7, 32, 128, 256};
  for (const sum_method m : kMethods) {
    const std::vector<config> configs = configs_for(m);
    const int iterations = m == sum_method::neumaier ? 24000 : 18000;
    int checked = 0, violations = 0;
    std::vector<int> per_config(configs.size(), 0);
    std::vector<double> worst(configs.size(), 0.0);
    double worst_ratio = 0;
    for (int i = 0; i < iterations; ++i) {
      const config& c = configs[static_cast<std::size_t>(i) % configs.size()];
      sum_options o = c.options;
      const format input = c.inputs[std::uniform_int_distribution<std::size_t>(0, c.inputs.size() - 1)(rng)];
      o.input = input;
      if (m == sum_method::blocked) o.block = block_sizes[rng() % std::size(block_sizes)];
      if (m == sum_method::promoted) o.block = o.acc.kind == accumulator_kind::block_fma ? 128 : chunk_sizes[rng() % std::size(chunk_sizes)];
      o.sr.seed = rng();
      o.sr.stream = static_cast<std::uint32_t>(i);
      const int n = length(rng);
      const int kind = data_kind(rng);
      const std::vector<std::uint32_t> x = make_data(rng, input, n, kind);
      const sum_result r = run(x, o);
      REQUIRE(!r.bounds.empty());
      const bound_line& b = r.bounds.front();
      CHECK(b.probability == 1.0);
      if (!b.valid) continue;
      ++checked;
      ++per_config[static_cast<std::size_t>(i) % configs.size()];
      const bool ok = std::fabs(r.error) <= b.absolute;
      CHECK(ok);
      if (b.absolute > 0) {
        const double ratio = std::fabs(r.error) / b.absolute;
        worst_ratio = std::max(worst_ratio, ratio);
        double& w = worst[static_cast<std::size_t>(i) % configs.size()];
        w = std::max(w, ratio);
      }
      if (!ok && ++violations <= 5) {
        MESSAGE(to_string(m) << " " << c.name << " input " << to_string(input) << " n=" << n << " data kind "
                             << kind << " block " << o.block << ": error " << r.error << " > bound " << b.absolute
                             << " (" << b.name << " = " << b.coefficient << ", S = " << r.abs_sum << ")");
      }
    }
    struct tally {
      std::string name;
      int count = 0;
      double worst = 0;
    };
    std::vector<tally> by_name;
    for (std::size_t k = 0; k < configs.size(); ++k) {
      auto it = std::find_if(by_name.begin(), by_name.end(), [&](const tally& t) { return t.name == configs[k].name; });
      if (it == by_name.end()) {
        by_name.push_back({configs[k].name, per_config[k], worst[k]});
      } else {
        it->count += per_config[k];
        it->worst = std::max(it->worst, worst[k]);
      }
    }
    std::string split;
    for (const tally& t : by_name) {
      char ratio[32];
      std::snprintf(ratio, sizeof ratio, "%.3f", t.worst);
      split += (split.empty() ? "" : ", ") + t.name + ": " + std::to_string(t.count) + " (worst " + ratio + ")";
    }
    MESSAGE(to_string(m) << ": " << checked << " cases checked against the deterministic bound, worst |error|/bound "
                         << worst_ratio << " (" << split << ")");
    CHECK(violations == 0);
    CHECK(checked >= 10000);
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  MESSAGE("bound test: " << seconds << " s");
}

TEST_CASE("known values: swamping in bf16, compensated, pairwise, blocked and promoted sums") {
  const format bf16 = formats::bf16;
  const std::uint32_t one = code_of(bf16, 1.0), tiny = code_of(bf16, 0x1p-9);
  std::vector<std::uint32_t> x = {one};
  x.insert(x.end(), 1000, tiny);
  const double exact = 1 + 1000 * 0x1p-9;  // 2.953125, a bf16 value (189 * 2^-6)
  REQUIRE(exact == 2.953125);

  sum_options o;
  o.input = bf16;
  o.acc = format_acc(bf16, round_mode::nearest_even);
  auto with = [&](sum_method m, int block = 32) {
    sum_options p = o;
    p.method = m;
    p.block = block;
    return run(x, p);
  };

  const sum_result rec = with(sum_method::recursive);
  CHECK(rec.exact == exact);
  CHECK(rec.abs_sum == exact);
  CHECK(rec.value == 1.0);  // 1 + 2^-9 rounds back to 1 every time
  CHECK(rec.error == 1.0 - exact);
  CHECK(rec.relative_error == doctest::Approx((exact - 1) / exact));
  CHECK(rec.result_format == bf16);
  CHECK((rec.flags & flag::inexact) != 0);
  // gamma_{n-1}(u) needs (n-1) u < 1: 1000 * 2^-8 is not, so there is no deterministic bound.
  CHECK_FALSE(rec.bounds.front().valid);
  CHECK(rec.bounds.front().condition.find(">= 1") != std::string::npos);

  const sum_result kahan = with(sum_method::kahan);
  CHECK(kahan.value == exact);  // the rounded exact sum (exact is a bf16 value)
  CHECK(kahan.error == 0);

  // Neumaier's correction is itself summed in bf16: it grows by 2^-9 exactly up to 0.5, where
  // 0.5 + 2^-9 is a tie that goes back to 0.5; the result is round(1 + 0.5).
  const sum_result neumaier = with(sum_method::neumaier);
  CHECK(neumaier.value == 1.5);

  const sum_result pair = with(sum_method::pairwise);
  CHECK(std::fabs(pair.error) < std::fabs(rec.error));
  CHECK(std::fabs(pair.error) <= pair.bounds.front().absolute);

  // Blocks of 32: the first is stuck at 1, the next 30 are 1/16 each (exact), the last 9 * 2^-9;
  // 1 + 30/16 = 2.875 exactly, then 2.875 + 9 * 2^-9 rounds to 2.875 + 2^-6.
  const sum_result blocked = with(sum_method::blocked, 32);
  CHECK(blocked.value == 2.890625);
  CHECK(std::fabs(blocked.error) <= blocked.bounds.front().absolute);

  // Promotion every 128 into fp32: the first chunk holds 1 and 127 swamped terms; every other
  // chunk sums exactly.
  const sum_result promoted = with(sum_method::promoted, 128);
  CHECK(promoted.result_format == formats::fp32);
  CHECK(promoted.value == 1 + 873 * 0x1p-9);
  CHECK(std::fabs(promoted.error) < std::fabs(rec.error));
  CHECK(std::fabs(promoted.error) <= promoted.bounds.front().absolute);

  // The 1 last: recursive summation stops at 0.5 (0.5 + 2^-9 is a tie to even), promotion is exact.
  std::vector<std::uint32_t> y(1000, tiny);
  y.push_back(one);
  sum_options p = o;
  p.method = sum_method::recursive;
  CHECK(run(y, p).value == 1.5);
  p.method = sum_method::promoted;
  p.block = 128;
  const sum_result py = run(y, p);
  CHECK(py.value == exact);
  CHECK(py.error == 0);
  CHECK(py.exact == exact);

  // The exact accumulator rounds once.
  p.method = sum_method::recursive;
  p.acc.kind = accumulator_kind::exact;
  CHECK(run(x, p).value == exact);
  CHECK(run(x, p).flags == 0);
}

namespace {

// The host's binary32 arithmetic (round to nearest even, or the current rounding mode), every
// operation forced through memory so that nothing is folded, contracted or kept wider.
float host_add(float a, float b) {
  volatile float va = a, vb = b;
  volatile float s = va + vb;
  return s;
}
float host_sub(float a, float b) {
  volatile float va = a, vb = b;
  volatile float s = va - vb;
  return s;
}
float host_pairwise(const std::vector<float>& x, std::size_t lo, std::size_t n) {
  if (n == 1) return x[lo];
  return host_add(host_pairwise(x, lo, n / 2), host_pairwise(x, lo + n / 2, n - n / 2));
}

}  // namespace

TEST_CASE("binary32 sums equal the host FPU's, operation for operation") {
  std::mt19937_64 rng(7);
  std::normal_distribution<double> normal;
  std::uniform_int_distribution<int> scale(-20, 20);
  std::uniform_int_distribution<int> length(1, 300);
  int cases = 0;
  for (const auto& [mode, fe] : {std::pair{round_mode::nearest_even, FE_TONEAREST}, std::pair{round_mode::toward_zero, FE_TOWARDZERO}}) {
    for (int trial = 0; trial < 300; ++trial) {
      const int n = length(rng);
      std::vector<float> xf(static_cast<std::size_t>(n));
      std::vector<std::uint32_t> x(xf.size());
      for (std::size_t i = 0; i < xf.size(); ++i) {
        xf[i] = static_cast<float>(std::ldexp(normal(rng), trial % 3 == 0 ? scale(rng) : 0));
        x[i] = as_code(xf[i]);
      }
      sum_options o;
      o.input = formats::fp32;
      o.acc = format_acc(formats::fp32, mode);
      o.block = 1 + static_cast<int>(rng() % 40);

      REQUIRE(std::fesetround(fe) == 0);
      float rec = xf[0];
      for (std::size_t i = 1; i < xf.size(); ++i) rec = host_add(rec, xf[i]);
      const float pair = host_pairwise(xf, 0, xf.size());
      float blocked = 0;
      for (std::size_t lo = 0; lo < xf.size(); lo += static_cast<std::size_t>(o.block)) {
        float s = xf[lo];
        for (std::size_t i = lo + 1; i < std::min(xf.size(), lo + static_cast<std::size_t>(o.block)); ++i)
          s = host_add(s, xf[i]);
        blocked = lo == 0 ? s : host_add(blocked, s);
      }
      float ks = 0, kc = 0;
      for (const float v : xf) {
        const float y = host_sub(v, kc);
        const float t = host_add(ks, y);
        kc = host_sub(host_sub(t, ks), y);
        ks = t;
      }
      float ns = 0, nc = 0;
      for (const float v : xf) {
        const float t = host_add(ns, v);
        const float d = std::fabs(ns) >= std::fabs(v) ? host_add(host_sub(ns, t), v) : host_add(host_sub(v, t), ns);
        nc = host_add(nc, d);
        ns = t;
      }
      const float neumaier = host_add(ns, nc);
      REQUIRE(std::fesetround(FE_TONEAREST) == 0);

      auto code = [&](sum_method m) {
        sum_options p = o;
        p.method = m;
        return run(x, p).code;
      };
      CHECK(code(sum_method::recursive) == as_code(rec));
      CHECK(code(sum_method::pairwise) == as_code(pair));
      CHECK(code(sum_method::blocked) == as_code(blocked));
      CHECK(code(sum_method::kahan) == as_code(ks));
      CHECK(code(sum_method::neumaier) == as_code(neumaier));
      ++cases;
    }
  }
  CHECK(cases == 600);
}

TEST_CASE("stochastic rounding: reproducible bits, seeds, and an unbiased mean") {
  const format bf16 = formats::bf16;
  std::vector<std::uint32_t> x = {code_of(bf16, 1.0)};
  x.insert(x.end(), 100, code_of(bf16, 0x1p-9));
  const double exact = 1 + 100 * 0x1p-9;

  sum_options o;
  o.method = sum_method::stochastic;
  o.input = bf16;
  o.acc = format_acc(bf16, round_mode::nearest_even);  // the method forces stochastic rounding
  o.acc.acc_rounding.sr_bits = 16;
  o.sr = {42, 3, 0};

  const sum_result a = run(x, o), b = run(x, o);
  CHECK(a.code == b.code);
  CHECK(a.result_format == bf16);
  CHECK(a.exact == exact);

  // The k-th rounding takes random_bits(seed, stream, first_index + k).
  for (const std::uint64_t first : {std::uint64_t{0}, std::uint64_t{1000}}) {
    o.sr.first_index = first;
    const rounding sr{round_mode::stochastic, overflow_policy::ieee, 16};
    std::uint32_t s = x[0];
    for (std::size_t k = 1; k < x.size(); ++k)
      s = add(bf16, s, x[k], sr, random_bits(o.sr.seed, o.sr.stream, first + k - 1)).code;
    CHECK(run(x, o).code == s);
  }
  o.sr.first_index = 0;

  std::set<std::uint32_t> distinct;
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    o.sr.seed = seed;
    distinct.insert(run(x, o).code);
  }
  CHECK(distinct.size() >= 2);

  // The mean of 1000 sums is within 4 standard errors of the exact sum.
  double mean = 0, m2 = 0;
  const int trials = 1000;
  for (int t = 0; t < trials; ++t) {
    o.sr.seed = 1000 + static_cast<std::uint64_t>(t);
    const sum_result r = run(x, o);
    CHECK(std::fabs(r.error) <= r.bounds.front().absolute);
    const double d = r.value - mean;
    mean += d / (t + 1);
    m2 += d * (r.value - mean);
  }
  const double sd = std::sqrt(m2 / (trials - 1));
  const double se = sd / std::sqrt(static_cast<double>(trials));
  MESSAGE("SR mean " << mean << " exact " << exact << " standard error " << se);
  CHECK(sd > 0);
  CHECK(std::fabs(mean - exact) <= 4 * se);

  // Round to nearest would stay at 1: stochastic rounding is not swamped on average.
  sum_options rn = o;
  rn.method = sum_method::recursive;
  CHECK(run(x, rn).value == 1.0);

  // The probabilistic bound comes second, with its probability; for 101 terms in bf16 it needs
  // 2n * 2u < 1, which fails, for 20 terms it holds.
  sum_result r = run(x, o);
  REQUIRE(r.bounds.size() == 2);
  CHECK_FALSE(r.bounds[1].valid);
  x.resize(20);
  r = run(x, o);
  REQUIRE(r.bounds.size() == 2);
  CHECK(r.bounds[0].valid);
  CHECK(r.bounds[0].probability == 1.0);
  CHECK(r.bounds[1].valid);
  CHECK(r.bounds[1].probability < 1.0);
  CHECK(r.bounds[1].probability > 0.97);  // 1 - 2 exp(-9/2) for lambda = 3
  CHECK(std::fabs(r.error) <= r.bounds[1].absolute);
}

TEST_CASE("error paths name the offending value") {
  const std::vector<std::uint32_t> x = {0x3f800000, 0x40000000};
  const accumulator_model tc = find_preset("h100-e4m3").value().model;
  auto message = [&](const sum_options& o) {
    const expected<sum_result> r = sum(x, o);
    REQUIRE_FALSE(r.has_value());
    return r.message();
  };
  sum_options o;
  o.method = sum_method::kahan;
  o.acc = tc;
  const std::string kahan = message(o);
  CHECK(kahan == "method kahan needs a format accumulator (got the block-FMA model)");
  for (const sum_method m : {sum_method::pairwise, sum_method::blocked, sum_method::neumaier}) {
    o.method = m;
    CHECK(message(o).find(std::string(to_string(m))) != std::string::npos);
  }
  o.method = sum_method::stochastic;
  const std::string sr = message(o);
  CHECK(sr.find("stochastic") != std::string::npos);
  CHECK(sr.find("block-FMA") != std::string::npos);
  o.acc.kind = accumulator_kind::exact;
  CHECK(message(o).find("exact accumulator") != std::string::npos);

  o = sum_options{};
  o.method = sum_method::blocked;
  o.block = 0;
  CHECK(message(o).find("block = 0") != std::string::npos);
  o.method = sum_method::promoted;
  o.block = -3;
  CHECK(message(o).find("block = -3") != std::string::npos);

  o = sum_options{};
  o.method = sum_method::stochastic;
  for (const int bits : {0, 33}) {
    o.acc.acc_rounding.sr_bits = bits;
    const std::string msg = message(o);
    CHECK(msg.find(std::to_string(bits)) != std::string::npos);
    CHECK(msg.find("1..32") != std::string::npos);
  }

  o = sum_options{};
  o.input = format{9, 23, 127};  // 33 bits
  CHECK(message(o).find("frac_bits 23") != std::string::npos);
  o = sum_options{};
  o.method = sum_method::kahan;
  o.acc.promote_every = 64;
  CHECK(message(o).find("promote_every = 64") != std::string::npos);

  CHECK(parse_sum_method("stochastic").value() == sum_method::stochastic);
  for (const sum_method m : kMethods) CHECK(parse_sum_method(to_string(m)).value() == m);
  const expected<sum_method> bad = parse_sum_method("kahn");
  REQUIRE_FALSE(bad.has_value());
  CHECK(bad.message().find("'kahn'") != std::string::npos);
  CHECK(bad.message().find("neumaier") != std::string::npos);
}

TEST_CASE("flags, result formats, empty sums and invalid bounds") {
  const format fp32 = formats::fp32, fp16 = formats::fp16;
  // Small integers: every addition exact, no flag.
  const std::vector<std::uint32_t> ints = {as_code(1.0f), as_code(2.0f), as_code(-7.0f), as_code(100.0f)};
  for (const sum_method m : kMethods) {
    sum_options o;
    o.method = m;
    o.block = 2;
    const sum_result r = run(ints, o);
    CHECK(r.value == 96.0);
    CHECK(r.error == 0);
    CHECK(r.flags == 0);
    CHECK(r.result_format == fp32);
    CHECK(r.abs_sum == 110.0);
  }

  // Overflow in fp16: flagged, the sum is infinite and no bound holds.
  const std::vector<std::uint32_t> big = {code_of(fp16, 60000), code_of(fp16, 60000)};
  for (const sum_method m : {sum_method::recursive, sum_method::pairwise, sum_method::kahan}) {
    sum_options o;
    o.method = m;
    o.input = fp16;
    o.acc = format_acc(fp16, round_mode::nearest_even);
    const sum_result r = run(big, o);
    CHECK((r.flags & flag::overflow) != 0);
    CHECK(std::isinf(r.value));
    CHECK(r.exact == 120000.0);
    for (const bound_line& b : r.bounds) {
      CHECK_FALSE(b.valid);
      CHECK(std::isinf(b.absolute));
    }
    CHECK(r.bounds.front().condition.find("overflow") != std::string::npos);
  }

  // A NaN input voids the bounds.
  {
    sum_options o;
    const std::vector<std::uint32_t> nan = {as_code(1.0f), 0x7fc00000};
    const sum_result r = run(nan, o);
    CHECK(std::isnan(r.value));
    CHECK_FALSE(r.bounds.front().valid);
  }

  // Result formats: the accumulator's, the block-FMA register's, the promoted register's.
  std::vector<std::uint32_t> x;
  for (int i = 0; i < 50; ++i) x.push_back(from(formats::e4m3fn, 0.1 * i - 2.3).code);
  sum_options o;
  o.input = formats::e4m3fn;
  o.acc = find_preset("h100-e4m3").value().model;
  sum_result r = run(x, o);
  CHECK(r.result_format == formats::e8m13);
  CHECK(r.bounds.front().valid);
  CHECK(std::fabs(r.error) <= r.bounds.front().absolute);
  o.acc = find_preset("a100-bf16").value().model;
  CHECK(run(x, o).result_format == fp32);
  o.acc = format_acc(fp16, round_mode::toward_zero);
  o.acc.kind = accumulator_kind::exact;
  r = run(x, o);
  CHECK(r.result_format == fp16);
  CHECK(r.code == convert(fp16, fp32, from(fp32, r.exact).code, rounding{round_mode::toward_zero}).code);
  CHECK(r.bounds.front().coefficient == 2 * unit_roundoff(fp16));
  o.method = sum_method::promoted;
  o.acc = format_acc(formats::bf16, round_mode::nearest_even);
  o.high = formats::tf32;
  o.block = 16;
  CHECK(run(x, o).result_format == formats::tf32);
  o.method = sum_method::stochastic;
  CHECK(run(x, o).result_format == formats::bf16);

  // The empty sum is +0 with error 0 and zero bounds.
  for (const sum_method m : kMethods) {
    sum_options e;
    e.method = m;
    e.acc = format_acc(formats::bf16, round_mode::nearest_even);
    const sum_result z = run(std::span<const std::uint32_t>{}, e);
    CHECK(z.code == 0u);
    CHECK(z.value == 0);
    CHECK_FALSE(std::signbit(z.value));
    CHECK(z.error == 0);
    CHECK(z.exact == 0);
    CHECK(z.relative_error == 0);
    CHECK(z.bounds.front().valid);
    CHECK(z.bounds.front().absolute == 0);
  }

  // One fp32 term in a bf16 accumulator: one rounding, covered by the bound.
  {
    sum_options one;
    one.acc = format_acc(formats::bf16, round_mode::nearest_even);
    const std::vector<std::uint32_t> t = {as_code(1.0f + 0x1p-20f)};
    for (const sum_method m : kMethods) {
      one.method = m;
      const sum_result s = run(t, one);
      if (m == sum_method::stochastic) {
        CHECK((s.error == -0x1p-20 || s.error == 0x1p-7 - 0x1p-20));
      } else {
        CHECK(s.error == -0x1p-20);
      }
      if (m == sum_method::neumaier) {  // its error-free transformations need inputs that fit
        CHECK_FALSE(s.bounds.front().valid);
        CHECK(s.bounds.front().condition.find("fit") != std::string::npos);
        continue;
      }
      CHECK(s.bounds.front().valid);
      CHECK(s.bounds.front().coefficient > 0);
      CHECK(std::fabs(s.error) <= s.bounds.front().absolute);
    }
  }

  CHECK(effective_unit_roundoff(fp32, round_mode::nearest_even) == 0x1p-24);
  CHECK(effective_unit_roundoff(fp32, round_mode::nearest_away) == 0x1p-24);
  CHECK(effective_unit_roundoff(fp32, round_mode::toward_zero) == 0x1p-23);
  CHECK(effective_unit_roundoff(formats::bf16, round_mode::stochastic) == 0x1p-7);
  CHECK(effective_unit_roundoff(formats::bf16, round_mode::to_odd) == 0x1p-7);
}

TEST_CASE("quantile: the nearest-rank quantile, NaN ranking above every number") {
  CHECK(quantile({}, 0.5) == 0);
  CHECK(quantile({3, 1, 2}, 0.5) == 2);        // ceil(1.5) = 2nd smallest
  CHECK(quantile({4, 1, 3, 2}, 0.5) == 2);     // ceil(2) = 2nd
  CHECK(quantile({4, 1, 3, 2}, 0.95) == 4);    // ceil(3.8) = 4th
  CHECK(quantile({5, 9}, 0.01) == 5);          // rank 1 at least
  const double nan = std::numeric_limits<double>::quiet_NaN();
  CHECK(quantile({nan, 2, nan, 1, 3}, 0.5) == 3);  // 1 2 3 NaN NaN
  CHECK(std::isnan(quantile({nan, 2, nan, 1, 3}, 0.8)));
  CHECK(std::isnan(quantile({nan, nan}, 0.5)));
}
