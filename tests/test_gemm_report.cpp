// analyse_gemm's fast path (gemm_options::fast_kernels: gemm_elements_for_bound for the flags,
// the premise checked only in blocks with subnormal inputs that their leads cannot settle)
// against its slow path (the reference loop for every output, every block checked), report for
// report, bit for bit; and the double kernel of its exact products against exact_accumulator.
#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "analysis/reference/dot_analysis.hpp"
#include "analysis/reference/double_dot.hpp"
#include "analysis/reference/gemm.hpp"
#include "analysis/reference/measured_error.hpp"
#include "fpemu/convert.hpp"
#include "fpemu/exact_accumulator.hpp"
#include "fpemu/presets.hpp"
#include "fpemu/spec.hpp"

using namespace fpemu;
using namespace fpemu::analysis;

namespace {

bool same_bits(double x, double y) { return std::bit_cast<std::uint64_t>(x) == std::bit_cast<std::uint64_t>(y); }

void check_same(const gemm_report& fast, const gemm_report& slow) {
  REQUIRE(fast.relative.size() == slow.relative.size());
  for (std::size_t i = 0; i < slow.relative.size(); ++i) {
    CAPTURE(i);
    CHECK(same_bits(fast.relative[i], slow.relative[i]));
  }
  CHECK(same_bits(fast.normwise, slow.normwise));
  CHECK(same_bits(fast.error_norm, slow.error_norm));
  CHECK(same_bits(fast.exact_norm, slow.exact_norm));
  CHECK(fast.normwise_bound.valid == slow.normwise_bound.valid);
  CHECK(same_bits(fast.normwise_bound.coefficient, slow.normwise_bound.coefficient));
  CHECK(same_bits(fast.normwise_bound.absolute, slow.normwise_bound.absolute));
  CHECK(fast.normwise_bound.name == slow.normwise_bound.name);
  CHECK(fast.normwise_bound.condition == slow.normwise_bound.condition);
  CHECK(same_bits(fast.normwise_bound_relative, slow.normwise_bound_relative));
}

// Codes of m overwritten, each with probability `rate`, by a special: NaN, infinity (or the
// format's saturation of it; neither when finite_only), the largest finite value, a subnormal, or 2^-70 or 2^60 (products
// that underflow or overflow an accumulator).
void spoil(scaled_matrix& m, double rate, bool finite_only, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(0, 1);
  std::uniform_int_distribution<int> pick(finite_only ? 2 : 0, 5);
  const format f = m.fmt;
  for (std::uint32_t& c : m.codes) {
    if (u(rng) >= rate) continue;
    const std::uint32_t sign = rng() % 2 ? sign_mask(f) : 0;
    switch (pick(rng)) {
      case 0: c = from(f, std::numeric_limits<double>::quiet_NaN()).code; break;
      case 1: c = from(f, std::numeric_limits<double>::infinity()).code | sign; break;
      case 2: c = max_finite_magnitude(f) | sign; break;
      case 3: c = f.subnormals ? (1 + static_cast<std::uint32_t>(rng() % ((1u << f.frac_bits) - 1))) | sign : c; break;
      case 4: c = from(f, 0x1p-70).code | sign; break;
      default: c = from(f, 0x1p60, rounding{round_mode::nearest_even, overflow_policy::saturate}).code | sign;
    }
  }
}

struct setup {
  const char* acc;  // a preset, or a format accumulator over inputs `in`
  scaling s;
  const char* in = "bf16";
  const char* out = nullptr;  // D's format, when not the preset's or the accumulator's
  bool fp16_acc = false;      // the preset's fp16-accumulator variant
};

}  // namespace

TEST_CASE("analyse_gemm's fast path == its slow path on random shapes, models and special operands") {
  std::mt19937_64 rng(2024);
  const setup setups[] = {
      {"h100-e4m3", scaling::none},        {"h100-e4m3-deepseek", scaling::tile_1x128},
      {"h100-e4m3-fastaccum", scaling::per_tensor}, {"h100-fp16", scaling::none},
      {"b200-mxf8f6f4", scaling::mx32},    {"b200-mxf4", scaling::mx32},
      {"b200-mxf4nvf4", scaling::nvfp4},   {"b200-e5m2", scaling::none},
      {"mi300x-fp16", scaling::none},      {"mi300x-e4m3fnuz", scaling::none},
      {"mi250-bf16", scaling::none},       {"mi100-fp16", scaling::block_128},
      {"fp32", scaling::none, "bf16"},     {"fp16", scaling::none, "fp16"},
      {"exact", scaling::none, "e5m2"},    {"fp16", scaling::none, "fp16", "fp32"},
      {"mi300x-bf16", scaling::none},      {"h100-fp16", scaling::none, "", "fp16", true},
  };
  std::uniform_real_distribution<double> u(0, 1);
  int broken = 0, valid = 0;
  for (const setup& t : setups) {
    for (int trial = 0; trial < 12; ++trial) {
      CAPTURE(std::string(t.acc));
      CAPTURE(trial);
      const expected<accumulator_choice> acc = parse_accumulator(t.acc);
      REQUIRE(acc.has_value());
      const tensor_core_preset* preset = acc->preset ? &*acc->preset : nullptr;
      const format fa = preset ? preset->a : parse_format(t.in).value();
      const format fb = preset ? preset->b : fa;
      gemm_options o;
      o.acc = acc->model;
      if (preset) {
        o.out = preset->output;
        o.out_rounding = preset->output_rounding;
      } else if (acc->model.kind == accumulator_kind::format) {
        o.out = acc->model.acc;
      }
      if (t.out) o.out = parse_format(t.out).value();
      if (t.fp16_acc) o.acc.block = preset->fp16_accumulator.value();
      const int M = 1 + static_cast<int>(rng() % 5), N = 1 + static_cast<int>(rng() % 6);
      const int K = 32 * (1 + static_cast<int>(rng() % 8)) - (t.s == scaling::none ? static_cast<int>(rng() % 7) : 0);
      const bool plain = trial % 3 == 0;  // N(0, 1) data only; the others spoil some codes, finite
                                        // ones only in one trial of three
      const double sigma = plain ? 1.0 : std::ldexp(1.0, static_cast<int>(rng() % 91) - 70);
      std::normal_distribution<float> normal(0.0f, static_cast<float>(sigma));
      std::vector<float> xa(static_cast<std::size_t>(M) * K), xb(static_cast<std::size_t>(K) * N);
      for (float& x : xa) x = normal(rng);
      for (float& x : xb) x = normal(rng);
      auto a = quantise(xa, M, K, fa, t.s, true);
      auto b = quantise(xb, K, N, fb, t.s, false);
      REQUIRE(a.has_value());
      REQUIRE(b.has_value());
      if (!plain) {
        spoil(*a, 0.03, trial % 3 == 1, rng);
        spoil(*b, 0.03, trial % 3 == 1, rng);
      }
      std::vector<std::uint32_t> c;
      if (trial % 4 == 3) {
        o.alpha = 0.75;
        o.beta = -1.5;
        for (int i = 0; i < M * N; ++i) c.push_back(from(o.out, u(rng) < 0.05 ? 0x1p-140 : normal(rng)).code);
      }
      const auto d = gemm(*a, *b, c, o);
      REQUIRE_MESSAGE(d.has_value(), d.message());
      std::vector<std::uint32_t> dd = *d;
      if (trial == 5) dd[rng() % dd.size()] ^= 1;  // not gemm()'s: both paths must say so
      gemm_options slow = o;
      slow.fast_kernels = false;
      const gemm_report rf = analyse_gemm(*a, *b, c, o, dd), rs = analyse_gemm(*a, *b, c, slow, dd);
      INFO(rs.normwise_bound.condition);
      check_same(rf, rs);
      (rs.normwise_bound.valid ? valid : broken) += 1;

      // The elements themselves: gemm_elements' with the flags that break a model.
      const auto ef = gemm_elements_for_bound(*a, *b, c, o), es = gemm_elements(*a, *b, c, o);
      REQUIRE(ef.has_value());
      REQUIRE(es.has_value());
      for (std::size_t ij = 0; ij < es->size(); ++ij) {
        CAPTURE(ij);
        CHECK((*ef)[ij].code == (*es)[ij].code);
        CHECK((*ef)[ij].scale_flags == (*es)[ij].scale_flags);
        CHECK((*ef)[ij].flags == ((*es)[ij].flags & model_breaking_flags));
      }
    }
  }
  // Both outcomes were exercised.
  CHECK(valid > 20);
  CHECK(broken > 20);
}

TEST_CASE("analyse_gemm's fast path finds a broken premise in a block of normal inputs") {
  // h100-fp16's fp16 accumulator clamps E at 2^-21: a first block of products +-2^-24, which
  // cancel exactly (no flag), has no term at E, and its inputs are all normal.
  const tensor_core_preset p = find_preset("h100-fp16").value();
  gemm_options o;
  o.acc = p.model;
  o.acc.block = p.fp16_accumulator.value();
  o.out = formats::fp16;
  scaled_matrix a, b;
  a.rows = 1;
  a.cols = b.rows = 32;
  b.cols = 2;
  a.fmt = b.fmt = formats::fp16;
  for (int k = 0; k < 32; ++k) {
    a.codes.push_back(from(formats::fp16, k < 16 ? (k % 2 ? -0x1p-12 : 0x1p-12) : 1.0 + k).code);
    for (int j = 0; j < 2; ++j) b.codes.push_back(from(formats::fp16, k < 16 ? 0x1p-12 : 0.5).code);
  }
  const auto d = gemm(a, b, {}, o);
  REQUIRE(d.has_value());
  gemm_options slow = o;
  slow.fast_kernels = false;
  const gemm_report rf = analyse_gemm(a, b, {}, o, *d), rs = analyse_gemm(a, b, {}, slow, *d);
  check_same(rf, rs);
  CHECK(!rs.normwise_bound.valid);
  CHECK(rs.normwise_bound.condition.find("belongs to no term") != std::string::npos);
}

TEST_CASE("double_gemm's sums equal exact_accumulator's where double_dot_exact holds, at the edge of 53 bits") {
  // Vectors of m 2^low, 1 <= m < 2^bits, one m odd and one at least 2^(bits-1), so that the span
  // of a pair is bits_a + bits_b + bit_length(K) exactly; delta puts it at 52, 53 or 54 bits.
  // Values mostly near the top and of one sign, so that the sums come close to 2^53 ulps.
  std::mt19937_64 rng(53);
  int exact_pairs = 0;
  for (int trial = 0; trial < 60; ++trial) {
    CAPTURE(trial);
    const int K = 1 + static_cast<int>(rng() % 300), n = 1 + static_cast<int>(rng() % 20);
    const int room = 53 - static_cast<int>(std::bit_width(static_cast<unsigned>(K)));
    const int delta = static_cast<int>(rng() % 3) - 1;
    const int bits_a = 1 + static_cast<int>(rng() % static_cast<unsigned>(room + delta - 1));
    const int bits_b = room + delta - bits_a;
    const int low_a = static_cast<int>(rng() % 200) - 100, low_b = static_cast<int>(rng() % 200) - 100;
    const auto make = [&](int bits, int low) {
      std::vector<double> v(static_cast<std::size_t>(n) * K);
      const std::uint64_t top = std::uint64_t{1} << bits;
      for (int j = 0; j < n; ++j) {
        const bool one_sign = rng() % 2;
        for (int k = 0; k < K; ++k) {
          std::uint64_t m = rng() % 4 ? top - 1 - rng() % (top / 8 + 1) : 1 + rng() % (top - 1);
          if (k == 0) m = top - 1;  // odd and at least 2^(bits-1)
          const double x = std::ldexp(static_cast<double>(m), low);
          v[static_cast<std::size_t>(j) * K + k] = one_sign || rng() % 2 ? x : -x;
        }
      }
      return double_vectors(std::move(v), std::vector<char>(static_cast<std::size_t>(n), 1), n, K);
    };
    const double_vectors a = make(bits_a, low_a), b = make(bits_b, low_b);
    const double_panels panels(b);
    std::vector<double> sum(static_cast<std::size_t>(n) * n), mag(sum.size());
    double_gemm(a, 0, n, panels, sum, mag);
    // B's vectors laid out k-major, as analyse_gemm passes B: the same panels, so the same sums.
    std::vector<double> t(static_cast<std::size_t>(n) * K);
    for (int j = 0; j < n; ++j)
      for (int k = 0; k < K; ++k) t[static_cast<std::size_t>(k) * n + j] = b.vector(j)[k];
    const double_vectors bk(std::move(t), std::vector<char>(static_cast<std::size_t>(n), 1), n, K, true);
    std::vector<double> sum_k(sum.size()), mag_k(sum.size());
    double_gemm(a, 0, n, double_panels(bk), sum_k, mag_k);
    CHECK(sum_k == sum);
    CHECK(mag_k == mag);
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j) {
        CAPTURE(i);
        CAPTURE(j);
        const bool exact = double_dot_exact(a, i, b, j);
        CHECK(exact == (delta <= 0));
        CHECK(double_dot_exact(a, i, bk, j) == exact);
        if (!exact) continue;
        ++exact_pairs;
        exact_accumulator x, s;
        for (int k = 0; k < K; ++k) {
          const double p = a.vector(i)[k], q = b.vector(j)[k];
          x.add_product(unpack(p), unpack(q));
          s.add_product(unpack(std::fabs(p)), unpack(std::fabs(q)));
        }
        const std::size_t ij = static_cast<std::size_t>(i) * n + j;
        x.subtract(unpack(sum[ij]));
        s.subtract(unpack(mag[ij]));
        CHECK(x.is_zero());
        CHECK(s.is_zero());
      }
  }
  CHECK(exact_pairs > 1000);
}

TEST_CASE("double_vectors reads k-major vectors (in vector lanes) as it reads vector-major ones: zeros, subnormals, "
          "normals of every exponent, infinities and NaNs, lengths that leave tails") {
  std::mt19937_64 rng(77);
  // Probes of K values 2^s: double_dot_exact against them reads a vector's lowest and highest bits
  // through the span, last-bit and overflow conditions.
  std::vector<double> scales;
  for (int s = -1074; s <= 1023; s += 7) scales.push_back(std::ldexp(1.0, s));
  const int probes = static_cast<int>(scales.size());
  const auto probes_of = [&](int K) {
    std::vector<double> values;
    for (const double x : scales) values.insert(values.end(), static_cast<std::size_t>(K), x);
    return double_vectors(std::move(values), std::vector<char>(scales.size(), 1), probes, K);
  };
  const double_vectors p1 = probes_of(1), p3 = probes_of(3);
  int checked = 0, exact = 0;
  for (int trial = 0; trial < 40; ++trial) {
    CAPTURE(trial);
    const int n = 1 + static_cast<int>(rng() % 37);
    std::vector<double> v(static_cast<std::size_t>(n));  // K = 1: one value per vector
    for (double& x : v) {
      const std::uint64_t kind = rng() % 16;
      const double sign = rng() % 2 ? -1.0 : 1.0;
      if (kind == 0) x = 0.0;
      else if (kind == 1) x = sign * std::numeric_limits<double>::infinity();
      else if (kind == 2) x = std::numeric_limits<double>::quiet_NaN();
      else if (kind < 6) x = sign * std::bit_cast<double>(rng() % (std::uint64_t{1} << 52));  // subnormal or 0
      else x = sign * std::ldexp(1.0 + static_cast<double>(rng() % 1024) / 1024, static_cast<int>(rng() % 2046) - 1022);
    }
    for (const int K : {1, 3}) {
      // Each value, then (K = 3) a finite non-zero one, so that a vector with an infinity or a NaN
      // has finite bits too, and the value halved; vector-major and k-major.
      std::vector<double> vm, km(static_cast<std::size_t>(n) * K);
      for (int j = 0; j < n; ++j)
        for (int k = 0; k < K; ++k) {
          const double x = v[static_cast<std::size_t>(j)];
          vm.push_back(k == 0 ? x : k == 1 ? std::ldexp(1.0 + j, j - 20) : x * 0.5);
          km[static_cast<std::size_t>(k) * n + j] = vm.back();
        }
      const double_vectors a(vm, std::vector<char>(static_cast<std::size_t>(n), 1), n, K);
      const double_vectors b(km, std::vector<char>(static_cast<std::size_t>(n), 1), n, K, true);
      const double_vectors& q = K == 1 ? p1 : p3;
      for (int j = 0; j < n; ++j) {
        for (int k = 0; k < K; ++k) CHECK(same_bits(a.vector(j)[k], b.at_k(k, 0)[j]));  // non-finite ones 0
        for (int i = 0; i < probes; ++i) {
          CAPTURE(j);
          CAPTURE(i);
          const bool e = double_dot_exact(q, i, a, j);
          CHECK(double_dot_exact(q, i, b, j) == e);
          exact += e;
          ++checked;
        }
      }
    }
  }
  CHECK(checked > 10000);
  CHECK(exact > checked / 10);  // both answers are exercised
  CHECK(exact < checked);
}
