// GEMM and dot products: the fast kernels against the reference loop bit for bit, thread-count
// independence, the fp32 accumulator against the host FPU, the tensor-core presets against the
// validated instruction model, block-scaling quantisation, and every error path.
#include <doctest/doctest.h>
#include <hwy/targets.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "analysis/reference/dot_analysis.hpp"
#include "analysis/reference/fixed_dot.hpp"
#include "analysis/reference/gemm.hpp"
#include "analysis/reference/gemm_kernels.hpp"
#include "fpemu/convert.hpp"
#include "fpemu/ops.hpp"
#include "fpemu/presets.hpp"
#include "fpemu/spec.hpp"

using namespace fpemu;
using namespace fpemu::analysis;

namespace {

// Random codes of f: mostly N(0, sigma) values rounded in, plus zeros, -0, subnormals, the
// largest finite values and exact negations of earlier entries (cancellation); never NaN.
scaled_matrix random_matrix(const format& f, int rows, int cols, std::mt19937_64& rng, double sigma = 1.0) {
  scaled_matrix m;
  m.rows = rows;
  m.cols = cols;
  m.fmt = f;
  std::normal_distribution<double> normal(0.0, sigma);
  std::uniform_int_distribution<int> pick(0, 99);
  for (int i = 0; i < rows * cols; ++i) {
    const int p = pick(rng);
    std::uint32_t code;
    if (p < 5) {
      code = 0;
    } else if (p < 8) {
      code = sign_mask(f);
    } else if (p < 12) {
      code = 1 + static_cast<std::uint32_t>(rng() % ((1u << f.frac_bits) - 1));  // subnormal
    } else if (p < 14) {
      code = max_finite_magnitude(f) | (rng() % 2 ? sign_mask(f) : 0);
    } else if (p < 20 && i > 0) {
      code = m.codes[rng() % m.codes.size()] ^ sign_mask(f);
    } else {
      code = from(f, normal(rng), rounding{round_mode::nearest_even, overflow_policy::saturate}).code;
    }
    if (decode(f, code).cls == value_class::nan) code = 0;  // -0 of a format without one (fnuz)
    m.codes.push_back(code);
  }
  return m;
}

// m without values above 2^60 in magnitude (ones in their place), so that no product leaves
// fp32's range: a model that turns such products into infinities takes no fast kernel otherwise.
scaled_matrix tame(scaled_matrix m) {
  for (std::uint32_t& c : m.codes)
    if (std::fabs(to_double(m.fmt, c)) > 0x1p60) c = from(m.fmt, 1.0).code;
  return m;
}

std::vector<std::uint32_t> run(const scaled_matrix& a, const scaled_matrix& b, gemm_options o) {
  const auto d = gemm(a, b, {}, o);
  REQUIRE_MESSAGE(d.has_value(), d.message());
  return *d;
}

// The number of outputs compared: all of them, or up to the first difference, which fails.
int same_outputs(const std::vector<std::uint32_t>& fast, const std::vector<std::uint32_t>& ref) {
  for (std::size_t i = 0; i < ref.size(); ++i)
    if (fast[i] != ref[i]) {
      FAIL_CHECK("output " << i << ": fast " << fast[i] << " reference " << ref[i]);
      return static_cast<int>(i);
    }
  return static_cast<int>(ref.size());
}

// A as one row and B as one column of format f, from exact values.
std::pair<scaled_matrix, scaled_matrix> dot_operands(const format& f, const std::vector<double>& av,
                                                     const std::vector<double>& bv) {
  scaled_matrix a, b;
  a.rows = b.cols = 1;
  a.cols = b.rows = static_cast<int>(av.size());
  a.fmt = b.fmt = f;
  for (double x : av) a.codes.push_back(from(f, x).code);
  for (double x : bv) b.codes.push_back(from(f, x).code);
  return {a, b};
}

// The accumulator codes of a x b through the model's own block steps, with block scales of
// model.block.scale_block along K (ceil(K / scale_block) per row of A and per column of B).
std::vector<std::uint32_t> scaled_reference(const accumulator_model& model, const scaled_matrix& a,
                                            const scaled_matrix& b, const block_scale_codes& scales) {
  const int M = a.rows, N = b.cols, K = a.cols, g = model.block.scale_block, per = (K + g - 1) / g;
  std::vector<std::uint32_t> codes;
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      dot_accumulator acc(model, a.fmt, b.fmt);
      acc.reset(formats::fp32, 0);
      for (int k = 0; k < K; ++k) {
        if (k % g == 0)
          acc.set_block_scales(scales.fmt, scales.a[static_cast<std::size_t>(i * per + k / g)],
                               scales.b[static_cast<std::size_t>(j * per + k / g)]);
        acc.add_product(a.codes[static_cast<std::size_t>(i * K + k)], b.codes[static_cast<std::size_t>(k * N + j)]);
      }
      codes.push_back(acc.result(model.block.acc).code);
    }
  return codes;
}

accumulator_model fp32_rne() { return accumulator_model{}; }

accumulator_model preset_model(const char* name) { return find_preset(name).value().model; }

}  // namespace

TEST_CASE("fast GEMM kernels == reference loop, bit for bit, on random and edge-case inputs") {
  std::mt19937_64 rng(7);
  struct config {
    const char* what;
    format fa, fb;
    accumulator_model acc;
  };
  block_fma_model fp16_e8m13 = find_preset("h100-e4m3").value().model.block;
  accumulator_model custom;
  custom.kind = accumulator_kind::block_fma;
  custom.block = fp16_e8m13;
  custom.block.block_size = 8;
  const config configs[] = {
      {"fp32 acc, bf16 in", formats::bf16, formats::bf16, fp32_rne()},
      {"fp32 acc, fp16 in", formats::fp16, formats::fp16, fp32_rne()},
      {"fp32 acc, e4m3fn x e5m2", formats::e4m3fn, formats::e5m2, fp32_rne()},
      {"fp32 acc, tf32 in", formats::tf32, formats::tf32, fp32_rne()},
      {"fp32 acc, fp32 in", formats::fp32, formats::fp32, fp32_rne()},
      {"h100-e4m3", formats::e4m3fn, formats::e4m3fn, preset_model("h100-e4m3")},
      {"h100-e5m2", formats::e5m2, formats::e5m2, preset_model("h100-e5m2")},
      {"h100-e4m3 mixed", formats::e4m3fn, formats::e5m2, preset_model("h100-e4m3")},
      {"ada-e4m3", formats::e4m3fn, formats::e4m3fn, preset_model("ada-e4m3")},
      {"e8m13 blocks of 8, fp16 in", formats::fp16, formats::fp16, custom},
      // The wide kernel: sums beyond 24 bits, bf16 and tf32 ranges (bf16's largest values
      // overflow the accumulator: the kernel hands those outputs to the model's own steps).
      {"t4-fp16", formats::fp16, formats::fp16, preset_model("t4-fp16")},
      {"h100-bf16", formats::bf16, formats::bf16, preset_model("h100-bf16")},
      {"a100-tf32", formats::tf32, formats::tf32, preset_model("a100-tf32")},
      {"b200-e4m3 x e2m1", formats::e4m3fn, formats::e2m1fn, preset_model("b200-e4m3")},
      {"rtx6000b-e5m2 x e3m2", formats::e5m2, formats::e3m2fn, preset_model("rtx6000b-e5m2")},
      {"b200-mxf8f6f4, scales of 1", formats::e4m3fn, formats::e2m3fn, preset_model("b200-mxf8f6f4")},
      // The pairwise kernel: flushed subnormals, overflow to infinity, inf - inf (model's steps).
      {"mi250-fp16", formats::fp16, formats::fp16, preset_model("mi250-fp16")},
      {"mi250-bf16", formats::bf16, formats::bf16, preset_model("mi250-bf16")},
      {"mi250-bf16-legacy", formats::bf16, formats::bf16, preset_model("mi250-bf16-legacy")},
      {"rtx6000b-mxf4, scales of 1 (groups)", formats::e2m1fn, formats::e2m1fn, preset_model("rtx6000b-mxf4")},
      // The exact kernel (CDNA1): products of every magnitude, so the double sum is often inexact.
      {"mi100-fp16", formats::fp16, formats::fp16, preset_model("mi100-fp16")},
      {"mi100-bf16", formats::bf16, formats::bf16, preset_model("mi100-bf16")},
      // The two-stage kernel (bf16 and xf32 tamed below: their huge products are infinities).
      {"mi300x-fp16", formats::fp16, formats::fp16, preset_model("mi300x-fp16")},
      {"mi300x-bf16", formats::bf16, formats::bf16, preset_model("mi300x-bf16")},
      {"mi300x-xf32", formats::tf32, formats::tf32, preset_model("mi300x-xf32")},
      {"mi300x-e4m3fnuz x e5m2fnuz", formats::e4m3fnuz, formats::e5m2fnuz, preset_model("mi300x-e4m3fnuz")},
      {"mi300x-e5m2fnuz", formats::e5m2fnuz, formats::e5m2fnuz, preset_model("mi300x-e5m2fnuz")},
  };
  int compared = 0;
  for (const config& c : configs) {
    CAPTURE(c.what);
    for (int trial = 0; trial < 6; ++trial) {
      const int M = 1 + static_cast<int>(rng() % 9), N = 1 + static_cast<int>(rng() % 140),
                K = 1 + static_cast<int>(rng() % 300);
      scaled_matrix a = random_matrix(c.fa, M, K, rng), b = random_matrix(c.fb, K, N, rng);
      if (c.acc.block.product_overflow && trial % 2 == 0) {
        a = tame(a);
        b = tame(b);
        REQUIRE(fast_accumulate(c.fa, a.codes, c.fb, b.codes, M, N, K, c.acc, 1).has_value());
      }
      gemm_options o;
      o.acc = c.acc;
      o.threads = 1;
      const auto fast = run(a, b, o);
      o.fast_kernels = false;
      const auto ref = run(a, b, o);
      compared += same_outputs(fast, ref);
    }
  }
  CHECK(compared > 10000);
}

TEST_CASE("fast GEMM kernels == reference loop across tile edges, K chunks, thread counts and SIMD targets") {
  // The kernels run tiles of up to 8 rows x 2 vectors of columns (32 with AVX-512) over K in
  // chunks of 256 rounded to the block size. The shapes straddle every one of those edges: N
  // below one tile, partial tiles in both directions, K not a multiple of the block, several
  // chunks. Every compiled Highway target the CPU has runs, each with 1, 2 and 3 threads.
  std::mt19937_64 rng(17);
  struct config {
    const char* what;
    format fa, fb;
    accumulator_model acc;
  };
  accumulator_model blocks_of_8;
  blocks_of_8.kind = accumulator_kind::block_fma;
  blocks_of_8.block = find_preset("h100-e4m3").value().model.block;
  blocks_of_8.block.block_size = 8;
  accumulator_model blocks_of_6 = blocks_of_8;  // byte leads: a block ends inside a word
  blocks_of_6.block.block_size = 6;
  const config configs[] = {
      {"fp32 acc, bf16 in", formats::bf16, formats::bf16, fp32_rne()},
      {"fp32 acc, fp16 in", formats::fp16, formats::fp16, fp32_rne()},
      {"fp32 acc, tf32 x fp32 (subnormal floats)", formats::tf32, formats::fp32, fp32_rne()},
      {"h100-e4m3", formats::e4m3fn, formats::e4m3fn, preset_model("h100-e4m3")},
      {"h100-e4m3 model, e2m1 x e3m2", formats::e2m1fn, formats::e3m2fn, preset_model("h100-e4m3")},
      {"h100-e5m2 x e4m3", formats::e5m2, formats::e4m3fn, preset_model("h100-e5m2")},
      {"ada-e4m3 (blocks of 16)", formats::e4m3fn, formats::e4m3fn, preset_model("ada-e4m3")},
      {"e8m13 blocks of 8, fp16 in", formats::fp16, formats::fp16, blocks_of_8},
      {"e8m13 blocks of 6, e5m2 x e4m3", formats::e5m2, formats::e4m3fn, blocks_of_6},
      {"h100-fp16 (wide)", formats::fp16, formats::fp16, preset_model("h100-fp16")},
      {"b200-e4m3 x e5m2 (wide)", formats::e4m3fn, formats::e5m2, preset_model("b200-e4m3")},
      {"mi250-fp16 (pairwise)", formats::fp16, formats::fp16, preset_model("mi250-fp16")},
      {"mi250-bf16-legacy (pairwise, blocks of 2)", formats::bf16, formats::bf16, preset_model("mi250-bf16-legacy")},
      {"b200-mxf4nvf4, scales of 1 (groups)", formats::e2m1fn, formats::e2m1fn, preset_model("b200-mxf4nvf4")},
      {"mi100-fp16 (exact)", formats::fp16, formats::fp16, preset_model("mi100-fp16")},
      {"mi300x-fp16 (two-stage)", formats::fp16, formats::fp16, preset_model("mi300x-fp16")},
      {"mi300x-e4m3fnuz (two-stage, interleaved)", formats::e4m3fnuz, formats::e4m3fnuz, preset_model("mi300x-e4m3fnuz")},
  };
  struct shape {
    int M, N, K;
  };
  const shape shapes[] = {{1, 1, 1}, {9, 33, 257}, {5, 65, 600}, {13, 7, 97}, {4, 32, 513}, {17, 40, 33}};
  const std::vector<std::int64_t> targets = hwy::SupportedAndGeneratedTargets();
  int compared = 0;
  for (const config& c : configs) {
    CAPTURE(c.what);
    for (const shape& s : shapes) {
      CAPTURE(s.M);
      CAPTURE(s.N);
      CAPTURE(s.K);
      scaled_matrix a = random_matrix(c.fa, s.M, s.K, rng), b = random_matrix(c.fb, s.K, s.N, rng);
      // A zero row of A and a -0 column of B: outputs whose every block is all zero products.
      if (s.M > 2) std::fill_n(a.codes.begin() + static_cast<std::ptrdiff_t>(s.M - 1) * s.K, s.K, 0u);
      if (s.N > 2)
        for (int k = 0; k < s.K; ++k)
          b.codes[static_cast<std::size_t>(k) * s.N] = decode(c.fb, sign_mask(c.fb)).cls == value_class::nan ? 0 : sign_mask(c.fb);
      REQUIRE(fast_accumulate(c.fa, a.codes, c.fb, b.codes, s.M, s.N, s.K, c.acc, 1).has_value());
      gemm_options o;
      o.acc = c.acc;
      o.fast_kernels = false;
      const auto ref = run(a, b, o);
      o.fast_kernels = true;
      for (const std::int64_t target : targets) {
        CAPTURE(hwy::TargetName(target));
        hwy::SetSupportedTargetsForTest(target);
        for (int threads : {1, 2, 3}) {
          CAPTURE(threads);
          o.threads = threads;
          const auto fast = run(a, b, o);
          compared += same_outputs(fast, ref);
        }
      }
      hwy::SetSupportedTargetsForTest(0);
    }
  }
  std::string names;
  for (const std::int64_t target : targets) names += std::string(" ") + hwy::TargetName(target);
  MESSAGE("compared " << compared << " outputs on SIMD targets" << names);
  CHECK(compared > 20000);
}

TEST_CASE("a block sum past int32 in the float-lane wide kernel leaves that output to the reference loop") {
  // h100-fp16: blocks of 16, F = 25. The first block's 16 products of fp16's largest significand
  // (1.999 x 1.999) make C = 63.9 (lead 5); in the second, A's values are 32 times as large, so E
  // stays 5 and the terms (just below 2^27 each) with C's 2^26 take the block's sum S past 2^31.
  // Half the columns of B are negated (S below -2^31), and a column of ones keeps S inside int32.
  const int K = 32, N = 48;
  const format f = formats::fp16;
  scaled_matrix a, b;
  a.fmt = b.fmt = f;
  a.rows = 1, a.cols = b.rows = K, b.cols = N;
  for (int k = 0; k < K; ++k) a.codes.push_back(k < 16 ? 0x3fffu : 0x53ffu);  // 1.999, then 1.999 x 2^5
  b.codes.assign(static_cast<std::size_t>(K) * N, 0x3fffu);
  for (int k = 0; k < K; ++k)
    for (int j = 0; j < N; ++j) {
      std::uint32_t& code = b.codes[static_cast<std::size_t>(k) * N + j];
      if (j % 2 == 1) code |= sign_mask(f);
      if (j == N - 1) code = 0x3c00u;  // 1
    }
  gemm_options o;
  o.acc = preset_model("h100-fp16");
  o.fast_kernels = false;
  const auto ref = run(a, b, o);
  o.fast_kernels = true;
  for (const std::int64_t target : hwy::SupportedAndGeneratedTargets()) {
    CAPTURE(hwy::TargetName(target));
    hwy::SetSupportedTargetsForTest(target);
    CHECK(same_outputs(run(a, b, o), ref) == N);
  }
  hwy::SetSupportedTargetsForTest(0);
}

TEST_CASE("a sum that cancelled below the data's lowest product lead comes through blocks without products unchanged") {
  // a100-bf16: blocks of 8, F = 24. Every product of the data has lead 0 (1 x 1, 1.0078125 x 1),
  // so the float-lane wide kernel raises E to 0. Block 0 leaves C = 1.0078125 - 1 = 2^-7 (row r:
  // r + 1 units of 2^-7 with r < 4), blocks 1 and 2 hold no product (E = lead(C) < 0, where the
  // kernel's argument needs C on the grid of 2^(0 - F)), block 3 adds 1: D = 1 + (r + 1) 2^-7.
  const int M = 4, K = 32, N = 16;
  scaled_matrix a, b;
  a.fmt = b.fmt = formats::bf16;
  a.rows = M, a.cols = b.rows = K, b.cols = N;
  for (int r = 0; r < M; ++r)
    for (int k = 0; k < K; ++k)
      a.codes.push_back(k == 0    ? 0x3f80u + static_cast<std::uint32_t>(r + 1)
                        : k == 1  ? 0xbf80u
                        : k == 24 ? 0x3f80u
                                  : 0u);
  b.codes.assign(static_cast<std::size_t>(K) * N, 0x3f80u);
  const accumulator_model model = preset_model("a100-bf16");
  const auto fast = fast_accumulate(a.fmt, a.codes, b.fmt, b.codes, M, N, K, model, 1);
  REQUIRE(fast.has_value());
  if ((hwy::SupportedTargets() & HWY_AVX3) != 0) CHECK(fast->float_lanes);
  gemm_options o;
  o.acc = model;
  o.fast_kernels = false;
  const auto ref = run(a, b, o);
  for (int r = 0; r < M; ++r)
    CHECK(ref[static_cast<std::size_t>(r) * N] == from(formats::fp32, 1.0 + (r + 1) / 128.0).code);
  o.fast_kernels = true;
  for (const std::int64_t target : hwy::SupportedAndGeneratedTargets()) {
    const std::string target_name = hwy::TargetName(target);
    CAPTURE(target_name);
    hwy::SetSupportedTargetsForTest(target);
    CHECK(same_outputs(run(a, b, o), ref) == M * N);
  }
  hwy::SetSupportedTargetsForTest(0);
}

TEST_CASE("a non-finite input anywhere sends every fast kernel to the reference loop, on every SIMD target") {
  // The operands' decoding checks values in vectors and a zero-padded tail: the non-finite value
  // sits at A's or B's last element (the tail: 5 x 97 and 97 x 40 are not multiples of a vector).
  std::mt19937_64 rng(29);
  const std::pair<const char*, format> presets[] = {{"h100-bf16", formats::bf16},  {"a100-tf32", formats::tf32},
                                                    {"b200-e4m3", formats::e4m3fn}, {"mi100-fp16", formats::fp16},
                                                    {"mi300x-e4m3fnuz", formats::e4m3fnuz}};
  const int M = 5, N = 40, K = 97;
  for (const auto& [name, f] : presets) {
    CAPTURE(name);
    // NaN where the all-ones magnitude is one (IEEE and fn formats), else the fnuz NaN, -0's code.
    const std::uint32_t bad = decode(f, magnitude_mask(f)).cls == value_class::nan ? magnitude_mask(f) : sign_mask(f);
    REQUIRE(decode(f, bad).cls == value_class::nan);
    for (const bool in_a : {true, false}) {
      CAPTURE(in_a);
      scaled_matrix a = random_matrix(f, M, K, rng), b = random_matrix(f, K, N, rng);
      REQUIRE(fast_accumulate(f, a.codes, f, b.codes, M, N, K, preset_model(name), 1).has_value());
      (in_a ? a : b).codes.back() = bad;
      for (const std::int64_t target : hwy::SupportedAndGeneratedTargets()) {
        CAPTURE(hwy::TargetName(target));
        hwy::SetSupportedTargetsForTest(target);
        CHECK_FALSE(fast_accumulate(f, a.codes, f, b.codes, M, N, K, preset_model(name), 1).has_value());
      }
      hwy::SetSupportedTargetsForTest(0);
      gemm_options o;
      o.acc = preset_model(name);
      o.fast_kernels = false;
      const auto ref = run(a, b, o);
      o.fast_kernels = true;
      CHECK(same_outputs(run(a, b, o), ref) == M * N);
    }
  }
}

TEST_CASE("the wide kernel's float lanes == reference loop where sums overflow fp32 and cancel to zero") {
  // bf16 data within [2^-50, 2^63): products are normal floats, so the wide kernel runs them in
  // float lanes, but a block's sum can pass 2^128 (row 0 of A and column 0 of B hold the largest
  // values, positive), and every third row of A pairs each product with its negation.
  std::mt19937_64 rng(29);
  auto bf16_in_range = [&](int rows, int cols, bool big_first_row, bool big_first_col) {
    scaled_matrix m;
    m.rows = rows;
    m.cols = cols;
    m.fmt = formats::bf16;
    for (int r = 0; r < rows; ++r)
      for (int c = 0; c < cols; ++c) {
        const bool big = (big_first_row && r == 0) || (big_first_col && c == 0);
        const std::uint32_t exp_field = big ? 188 + static_cast<std::uint32_t>(rng() % 2) : 77 + static_cast<std::uint32_t>(rng() % 113);
        const std::uint32_t sign = big ? 0 : static_cast<std::uint32_t>(rng() % 2);
        std::uint32_t code = sign << 15 | exp_field << 7 | static_cast<std::uint32_t>(rng() % 128);
        if (rng() % 10 == 0) code = 0;
        if (big_first_row && r % 3 == 2 && c % 2 == 1) code = m.codes.back() ^ 0x8000u;  // A: a_k = -a_(k-1)
        if (big_first_col && r % 2 == 1) code = m.codes[static_cast<std::size_t>(r - 1) * cols + c];  // B: b_k = b_(k-1)
        m.codes.push_back(code);
      }
    return m;
  };
  int compared = 0;
  for (const char* name : {"h100-bf16", "b200-bf16", "a100-bf16", "rtx6000b-fp16"}) {
    CAPTURE(name);
    for (const auto& [M, N, K] : {std::array{7, 33, 257}, std::array{3, 17, 40}, std::array{12, 70, 600}}) {
      const scaled_matrix a = bf16_in_range(M, K, true, false), b = bf16_in_range(K, N, false, true);
      const accumulator_model model = preset_model(name);
      REQUIRE(fast_accumulate(a.fmt, a.codes, b.fmt, b.codes, M, N, K, model, 1).has_value());
      gemm_options o;
      o.acc = model;
      o.fast_kernels = false;
      const auto ref = run(a, b, o);
      // Some outputs overflow (the fast path must hand them on), most do not.
      int infinite = 0;
      for (std::uint32_t c : ref) infinite += (c & 0x7fffffffu) == 0x7f800000u || (c & 0x7fffffffu) == 0x7f7fffffu;
      CHECK(infinite > 0);
      o.fast_kernels = true;
      for (int threads : {1, 2}) {
        o.threads = threads;
        compared += same_outputs(run(a, b, o), ref);
      }
    }
  }
  CHECK(compared > 5000);
}

TEST_CASE("promoted GEMMs (plain promotion and group scales folded by fma) == reference loop, bit for bit") {
  // Each group's partial comes from the fast kernels and is folded by the host's fma; overflowing
  // folds (scales near fp32's top) and NaN partials (bf16 products beyond e8m13) take the core's.
  std::mt19937_64 rng(29);
  accumulator_model fp32_every_64 = fp32_rne();
  fp32_every_64.promote_every = 64;
  accumulator_model fp32_every_128 = fp32_every_64;
  fp32_every_128.promote_every = 128;
  accumulator_model h100_every_32 = preset_model("h100-e4m3");
  h100_every_32.promote_every = 32;
  struct config {
    const char* what;
    format f;
    accumulator_model acc;
    scaling a_scaling, b_scaling;
    double sigma;
  };
  const config configs[] = {
      {"h100-e4m3-deepseek, tile128 x block128", formats::e4m3fn, preset_model("h100-e4m3-deepseek"),
       scaling::tile_1x128, scaling::tile_1x128, 1.0},
      {"h100-e4m3-deepseek, tile128, tiny data", formats::e4m3fn, preset_model("h100-e4m3-deepseek"),
       scaling::tile_1x128, scaling::tile_1x128, 1e-30},
      {"h100-e4m3-deepseek, tile128, huge data (folds overflow)", formats::e4m3fn, preset_model("h100-e4m3-deepseek"),
       scaling::tile_1x128, scaling::tile_1x128, 1e18},
      {"h100-e4m3-deepseek, unscaled", formats::e4m3fn, preset_model("h100-e4m3-deepseek"), scaling::none,
       scaling::none, 100.0},
      {"h100-e4m3-deepseek, per tensor", formats::e4m3fn, preset_model("h100-e4m3-deepseek"), scaling::per_tensor,
       scaling::per_tensor, 1e-3},
      {"h100-e4m3, A tile128 only", formats::e4m3fn, preset_model("h100-e4m3"), scaling::tile_1x128, scaling::none, 1.0},
      {"h100-e4m3, mx32 groups", formats::e4m3fn, preset_model("h100-e4m3"), scaling::mx32, scaling::mx32, 1.0},
      {"h100-e4m3 promoted every 32, e5m2", formats::e5m2, h100_every_32, scaling::none, scaling::none, 1e4},
      {"fp32 promoted every 128, bf16 tile128", formats::bf16, fp32_every_128, scaling::tile_1x128, scaling::tile_1x128,
       1e30},
      {"fp32 promoted every 64, fp16", formats::fp16, fp32_every_64, scaling::none, scaling::none, 1e3},
  };
  struct shape {
    int M, N, K;
  };
  const shape shapes[] = {{1, 1, 1}, {3, 5, 127}, {4, 17, 128}, {2, 33, 129}, {9, 40, 300}, {5, 3, 513}};
  int compared = 0;
  for (const config& c : configs) {
    const std::string what = c.what;
    CAPTURE(what);
    for (const shape& s : shapes) {
      CAPTURE(s.K);
      scaled_matrix a, b;
      if (c.a_scaling == scaling::none && c.b_scaling == scaling::none) {
        a = random_matrix(c.f, s.M, s.K, rng, c.sigma);
        b = random_matrix(c.f, s.K, s.N, rng, c.sigma);
      } else {
        std::normal_distribution<double> normal(0.0, c.sigma);
        std::vector<float> xa(static_cast<std::size_t>(s.M) * s.K), xb(static_cast<std::size_t>(s.K) * s.N);
        for (float& v : xa) v = static_cast<float>(normal(rng));
        for (float& v : xb) v = static_cast<float>(normal(rng));
        a = quantise(xa, s.M, s.K, c.f, c.a_scaling, true).value();
        b = quantise(xb, s.K, s.N, c.f, c.b_scaling, false).value();
      }
      gemm_options o;
      o.acc = c.acc;
      o.fast_kernels = false;
      const auto ref = run(a, b, o);
      o.fast_kernels = true;
      for (int threads : {1, 3}) {
        o.threads = threads;
        compared += same_outputs(run(a, b, o), ref);
      }
    }
  }
  CHECK(compared > 5000);
}

TEST_CASE("fast GEMM kernels == reference loop on block-scaled presets, over the whole range of their scales") {
  // Every E8M0 code but NaN, and UE4M3 codes with zero, subnormal, largest and sign-bit-set
  // scales (the sign is ignored); inputs with their edge cases. A NaN scale leaves the fast path.
  // mxf8f6f4 runs the wide kernel, mxf4 and mxf4nvf4 (groups of 16 summed exactly) the group one.
  std::mt19937_64 rng(23);
  struct config {
    const char* preset;
    scaling s;
    format fa, fb;
  };
  int compared = 0;
  for (const config& c : {config{"b200-mxf8f6f4", scaling::mx32, formats::e4m3fn, formats::e5m2},
                          config{"rtx6000b-mxf8f6f4", scaling::mx32, formats::e2m1fn, formats::e3m2fn},
                          config{"b200-mxf4", scaling::mx32, formats::e2m1fn, formats::e2m1fn},
                          config{"rtx6000b-mxf4nvf4", scaling::nvfp4, formats::e2m1fn, formats::e2m1fn}}) {
    CAPTURE(c.preset);
    const tensor_core_preset p = find_preset(c.preset).value();
    for (int trial = 0; trial < 10; ++trial) {
      const int M = 1 + static_cast<int>(rng() % 7), N = 1 + static_cast<int>(rng() % 40),
                K = 32 * (1 + static_cast<int>(rng() % 6)) - (trial % 2 == 0 ? 0 : 7);
      scaled_matrix a = random_matrix(c.fa, M, K, rng), b = random_matrix(c.fb, K, N, rng);
      const format sf = scale_format_of(c.s);
      for (scaled_matrix* m : {&a, &b}) {
        m->scale_kind = c.s;
        m->scale_format = sf;
        const bool is_a = m == &a;
        m->scales.resize(scale_count(c.s, m->rows, m->cols, is_a));
        for (std::uint32_t& x : m->scales) {
          const std::uint32_t pick = static_cast<std::uint32_t>(rng() % 8);
          x = static_cast<std::uint32_t>(pick == 0 ? 0 : pick == 1 ? 254 : pick < 4 ? from(sf, 1.0).code : rng() % 255);
          if ((x & magnitude_mask(sf)) == magnitude_mask(sf)) x = 1;  // not NaN (E8M0 0xff, UE4M3 0x7f)
        }
      }
      REQUIRE(fast_accumulate(c.fa, a.codes, c.fb, b.codes, M, N, K, p.model, 1, {sf, a.scales, b.scales}));
      gemm_options o;
      o.acc = p.model;
      o.threads = 1;
      const auto fast = run(a, b, o);
      o.fast_kernels = false;
      const auto ref = run(a, b, o);
      compared += same_outputs(fast, ref);
    }
  }
  // The kernel itself takes the scales, E8M0 and UE4M3 (its sign bit set on some).
  for (const char* name : {"b200-mxf8f6f4", "b200-mxf4nvf4"}) {
    CAPTURE(name);
    const tensor_core_preset p = find_preset(name).value();
    const int M = 5, N = 19, K = 96, g = p.model.block.scale_block, per = K / g;
    const scaled_matrix a = random_matrix(formats::e4m3fn, M, K, rng), b = random_matrix(formats::e5m2, K, N, rng);
    std::vector<std::uint32_t> sa(static_cast<std::size_t>(M * per)), sb(static_cast<std::size_t>(N * per));
    const std::uint32_t nan = magnitude_mask(*p.scale);  // 0xff for E8M0, 0x7f for UE4M3
    for (std::vector<std::uint32_t>* v : {&sa, &sb})
      for (std::uint32_t& x : *v) {
        x = static_cast<std::uint32_t>(rng() % 256);
        if ((x & nan) == nan) x = 1;
      }
    if (*p.scale == formats::e4m3fn) sa[0] = sb[0] = 0x7f;  // NaN, sign or not: no fast result
    block_fma_model m = p.model.block;
    m.scale_group = 0;  // the per-product form of the same scales (the wide kernel's)
    accumulator_model model = p.model;
    model.block = m;
    const block_scale_codes scales{*p.scale, sa, sb};
    const auto fast = fast_accumulate(formats::e4m3fn, a.codes, formats::e5m2, b.codes, M, N, K, model, 1, scales);
    if (*p.scale == formats::e4m3fn) {
      CHECK(!fast.has_value());
      sa[0] = sb[0] = 0x80 | 0x38;  // -1 read as 1
    }
    const auto again = fast_accumulate(formats::e4m3fn, a.codes, formats::e5m2, b.codes, M, N, K, model, 1, scales);
    REQUIRE(again.has_value());
    compared += same_outputs(again->codes, scaled_reference(model, a, b, scales));
  }
  CHECK(compared > 2000);
}

TEST_CASE("the wide kernel reads scaled values a float cannot hold (11 bits below 2^-140) as doubles") {
  // tf32 values near 2^-100 times E8M0 scales of 2^-40 need bits below float's last subnormal
  // bit 2^-149: rounded to floats they would be other values, so the operands are built again in
  // double (the products are exact there, and the float-lane products are not taken).
  std::mt19937_64 rng(29);
  accumulator_model model = preset_model("h100-tf32");
  model.block.scale_block = model.block.block_size;  // a scale pair per block of 8
  const int M = 6, N = 21, K = 96, per = K / model.block.scale_block;
  const format& t = formats::tf32;
  scaled_matrix a, b;
  a.rows = M, a.cols = b.rows = K, b.cols = N;
  a.fmt = b.fmt = t;
  std::uniform_real_distribution<double> mantissa(1.0, 2.0);
  for (int i = 0; i < M * K; ++i) a.codes.push_back(from(t, std::ldexp(mantissa(rng), -100 - static_cast<int>(rng() % 8)) * (rng() % 2 ? 1 : -1)).code);
  for (int i = 0; i < K * N; ++i) b.codes.push_back(from(t, mantissa(rng) * (rng() % 2 ? 1 : -1)).code);
  const std::vector<std::uint32_t> sa(static_cast<std::size_t>(M * per), 127 - 40), sb(static_cast<std::size_t>(N * per), 127);
  const block_scale_codes scales{formats::e8m0fnu, sa, sb};
  const auto fast = fast_accumulate(t, a.codes, t, b.codes, M, N, K, model, 1, scales);
  REQUIRE(fast.has_value());
  CHECK(same_outputs(fast->codes, scaled_reference(model, a, b, scales)) == M * N);
}

TEST_CASE("every tensor-core preset's GEMM == its reference loop, and the fast kernels cover the named ones") {
  std::mt19937_64 rng(29);
  int compared = 0;
  for (const tensor_core_preset& p : tensor_core_presets()) {
    CAPTURE(p.name);
    const int M = 3, N = 21, K = 2 * std::max(p.instruction_k, p.model.block.block_size) + 5;
    const scaled_matrix a = random_matrix(p.a, M, K, rng), b = random_matrix(p.b, K, N, rng);
    gemm_options o;
    o.acc = p.model;
    o.threads = 1;
    const auto fast = run(a, b, o);
    o.fast_kernels = false;
    const auto ref = run(a, b, o);
    compared += same_outputs(fast, ref);
    // Promotion (DeepSeek) is the one thing no fast kernel serves yet.
    const bool served = p.model.promote_every == 0;
    const auto k = fast_accumulate(p.a, std::vector<std::uint32_t>(static_cast<std::size_t>(M * K), 0), p.b,
                                   std::vector<std::uint32_t>(static_cast<std::size_t>(K * N), 0), M, N, K, p.model, 1);
    CHECK(k.has_value() == served);
  }
  CHECK(compared > 2000);
}

TEST_CASE("the exact-sum kernel hands a sum it cannot round from double to the model's own steps") {
  // C = 2^10 after the first block; then 2^-14 (half an fp32 ulp of 1024: a tie) and 2^-48. The
  // exact sum is just above the tie and rounds up to 1024 + 2^-13, but the double sum is the tie
  // itself (2^-48 is 58 bits below 1024): rounding it would give 1024. The kernel's bounds see
  // the tie and leave the output to the model.
  const format h = formats::fp16;
  const std::vector<double> v = {32.0, 0.0, 0.0, 0.0, 0x1p-7, 0x1p-24, 0.0, 0.0};
  const auto [a, b] = dot_operands(h, v, v);
  gemm_options o;
  o.acc = preset_model("mi100-fp16");
  REQUIRE(fast_accumulate(h, a.codes, h, b.codes, 1, 1, 8, o.acc, 1).has_value());
  const std::uint32_t want = from(formats::fp32, 1024.0 + 0x1p-13).code;
  CHECK(fast_accumulate(h, a.codes, h, b.codes, 1, 1, 8, o.acc, 1)->codes[0] == want);
  CHECK(run(a, b, o)[0] == want);
  o.fast_kernels = false;
  CHECK(run(a, b, o)[0] == want);
}

TEST_CASE("the exact-sum kernel keeps an underflow's -0, and an exactly zero block sum after it is +0") {
  // MI100 bf16, blocks of 2: the first block's one product -2^-160 is below half of fp32's
  // smallest subnormal and rounds to -0, which keeps its sign (K = 2). A second block of zero
  // products (-0 among them) sums exactly to zero with it, which the model makes +0 (K = 4). Every
  // value is tiny, so the kernel's bounds certify its plain double sums: a -0 there must become +0
  // after each block whose exact sum is zero, and only then.
  const format h = formats::bf16;
  const accumulator_model m = preset_model("mi100-bf16");
  for (int K : {2, 4}) {
    CAPTURE(K);
    std::vector<double> av(K, 0.0), bv(K, 0.0);
    av[0] = -0x1p-80;
    bv[0] = 0x1p-80;
    if (K == 4) av[2] = av[3] = -0x1p-80;  // times b's +0: -0 products, a plain sum stays -0
    const auto [a, b] = dot_operands(h, av, bv);
    const auto fast = fast_accumulate(h, a.codes, h, b.codes, 1, 1, K, m, 1);
    REQUIRE(fast.has_value());
    const std::uint32_t want = K == 2 ? 0x80000000u : 0u;
    CHECK(fast->codes[0] == want);
    gemm_options o;
    o.acc = m;
    o.fast_kernels = false;
    CHECK(run(a, b, o)[0] == want);
  }
}

TEST_CASE("the exact-sum kernel trusts a plain double sum only while its bits fit 53") {
  // One block of products 2^L, 2^(L-24) (half an fp32 ulp of 2^L: a tie) and 2^-48 (the finest
  // fp16 product quantum). For L = 4 the exact sum spans 53 bits: the kernel's bounds certify
  // the double sum, which is exact and rounds up. For L = 5 it spans 54: the double sum is the tie
  // and would round down, so the bounds must not certify it (an off-by-one there fails here).
  const format h = formats::fp16;
  for (int L : {4, 5}) {
    CAPTURE(L);
    const auto [a, b] = dot_operands(h, {4.0, 0x1p-10, 0x1p-24, 0.0}, {std::ldexp(1.0, L - 2), std::ldexp(1.0, L - 14), 0x1p-24, 0.0});
    const accumulator_model m = preset_model("mi100-fp16");
    const auto fast = fast_accumulate(h, a.codes, h, b.codes, 1, 1, 4, m, 1);
    REQUIRE(fast.has_value());
    CHECK(fast->codes[0] == from(formats::fp32, std::ldexp(1.0, L) + std::ldexp(1.0, L - 23)).code);
  }
}

TEST_CASE("the exact-sum kernel's bounds see a fine quantum in any run of 16 products, row and column") {
  // The case above, in output (2, 37) of a 3 x 40 GEMM with K = 276: its block is k = 272..275,
  // in the second (short) run of 16 products of the second chunk (from 256), and every other row
  // of A and column of B is zero. Bounds taken from another run, row or panel of columns miss
  // 2^-48's quantum and certify the tie for L = 5.
  const format h = formats::fp16;
  const int M = 3, N = 40, K = 276, i = 2, j = 37, k0 = 272;
  const accumulator_model m = preset_model("mi100-fp16");
  for (int L : {4, 5}) {
    CAPTURE(L);
    const auto [av, bv] = dot_operands(h, {4.0, 0x1p-10, 0x1p-24}, {std::ldexp(1.0, L - 2), std::ldexp(1.0, L - 14), 0x1p-24});
    std::vector<std::uint32_t> a(static_cast<std::size_t>(M) * K, 0u), b(static_cast<std::size_t>(K) * N, 0u);
    for (int k = 0; k < 3; ++k) {
      a[static_cast<std::size_t>(i) * K + k0 + k] = av.codes[k];
      b[static_cast<std::size_t>(k0 + k) * N + j] = bv.codes[k];
    }
    for (const std::int64_t target : hwy::SupportedAndGeneratedTargets()) {
      CAPTURE(hwy::TargetName(target));
      hwy::SetSupportedTargetsForTest(target);
      const auto fast = fast_accumulate(h, a, h, b, M, N, K, m, 1);
      REQUIRE(fast.has_value());
      for (int r = 0; r < M; ++r)
        for (int c = 0; c < N; ++c) {
          CAPTURE(r);
          CAPTURE(c);
          const double want = r == i && c == j ? std::ldexp(1.0, L) + std::ldexp(1.0, L - 23) : 0.0;
          CHECK(fast->codes[static_cast<std::size_t>(r) * N + c] == from(formats::fp32, want).code);
        }
    }
    hwy::SetSupportedTargetsForTest(0);
  }
}

TEST_CASE("the two-stage kernel floors a sum below 2^-126 to the fixed quantum 2^(-126-F2)") {
  // MI300X bf16, two blocks of 8. The first leaves C = 2^-127 (an fp32 subnormal); the second adds
  // 2^-150 + 2^-158, so x = C + 2^-150 + 2^-158. Below 2^-126 the model floors x to 2^-157, which
  // leaves C + 2^-150, a tie between fp32 subnormals that rounds to even: C. Flooring at x's own
  // exponent would keep 2^-158 and round up.
  const format h = formats::bf16;
  const auto [a, b] = dot_operands(h, {0x1p-64, 0, 0, 0, 0, 0, 0, 0, 0x1p-75, 0x1p-79, 0, 0, 0, 0, 0, 0},
                                   {0x1p-63, 0, 0, 0, 0, 0, 0, 0, 0x1p-75, 0x1p-79, 0, 0, 0, 0, 0, 0});
  gemm_options o;
  o.acc = preset_model("mi300x-bf16");
  const auto fast = fast_accumulate(h, a.codes, h, b.codes, 1, 1, 16, o.acc, 1);
  REQUIRE(fast.has_value());
  const std::uint32_t want = from(formats::fp32, 0x1p-127).code;
  CHECK(fast->codes[0] == want);
  o.fast_kernels = false;
  CHECK(run(a, b, o)[0] == want);
}

TEST_CASE("the two-stage kernel's float lanes == reference loop: spread exponents, overflow, near-cancellation, "
          "lowest products, a C some 200 binades below the next block") {
  // Every MI300X preset on data whose products are normal floats, so that AVX-512 runs them in
  // float lanes: exponents spread over most of the format (a block's lead far above or below C's),
  // rows of A whose even and odd products nearly cancel (a_k = -a_(k-1) or one unit up, b_k =
  // b_(k-1)), and for the 8-bit exponents a first row of A and column of B of large values whose
  // sums pass 2^128, or values near 2^-48 whose products reach down to the lowest the float lanes
  // take, or (step) values near 2^-50 in the first 16 columns of A and rows of B and near 2^55
  // after them, so that a C of either sign lies some 200 binades below the next block's lead,
  // where C scaled to that lead's units leaves binary32's normal range. Every compiled target runs
  // and must match the reference loop.
  std::mt19937_64 rng(41);
  enum class range { spread, low, step };
  const auto matrix = [&](const format& f, int rows, int cols, bool is_a, range where) {
    scaled_matrix m;
    m.rows = rows;
    m.cols = cols;
    m.fmt = f;
    const int top = (1 << f.exp_bits) - 1, bias = (1 << (f.exp_bits - 1)) - 1;
    const bool wide = f.exp_bits == 8;
    // Exponent fields: for 8-bit exponents 2^-50 .. 2^62 (products below 2^128), or 2^-51 .. 2^-46
    // (products from 2^-102, the lowest lead with 2^(F-E) a float); otherwise every finite field.
    const int lo_all = wide ? (where == range::low ? bias - 51 : bias - 50) : 0;
    const int hi_all =
        wide ? (where == range::low ? bias - 46 : bias + 61) : top - (f.encoding == nonfinite::ieee ? 1 : 0);
    for (int r = 0; r < rows; ++r)
      for (int c = 0; c < cols; ++c) {
        const int k = is_a ? c : r;
        const int step_lo = k < 16 ? bias - 50 : bias + 53;  // where == range::step
        const int lo = where == range::step ? step_lo : lo_all, hi = where == range::step ? step_lo + 4 : hi_all;
        const bool big = wide && where == range::spread && (is_a ? r == 0 : c == 0);
        const std::uint32_t field =
            static_cast<std::uint32_t>(big ? bias + 61 : lo + static_cast<int>(rng() % (hi - lo + 1)));
        std::uint32_t code = (big ? 0 : static_cast<std::uint32_t>(rng() % 2) << (width(f) - 1)) |
                             field << f.frac_bits | static_cast<std::uint32_t>(rng() % (1u << f.frac_bits));
        if (rng() % 10 == 0) code = 0;
        if (k % 2 == 1 && (is_a ? r % 3 == 2 : true)) {
          const std::uint32_t prev = m.codes[m.codes.size() - (is_a ? 1 : static_cast<std::size_t>(cols))];
          const std::uint32_t mag = prev & magnitude_mask(f);  // A: -a_(k-1), or one unit up
          const bool up = mag != 0 && mag < max_finite_magnitude(f) && rng() % 2 == 1;
          code = is_a ? (~prev & sign_mask(f)) | (mag + (up ? 1u : 0u)) : prev;
        }
        if (decode(f, code).cls != value_class::finite && decode(f, code).cls != value_class::zero) code = 0;
        m.codes.push_back(code);
      }
    return m;
  };
  const bool avx3 = (hwy::SupportedTargets() & HWY_AVX3) != 0;
  const std::vector<std::int64_t> targets = hwy::SupportedAndGeneratedTargets();
  REQUIRE(!targets.empty());
  int compared = 0, expected = 0, float_lanes = 0, gemms = 0;
  const std::pair<const char*, format> presets[] = {{"mi300x-bf16", formats::bf16},
                                                    {"mi300x-xf32", formats::tf32},
                                                    {"mi300x-fp16", formats::fp16},
                                                    {"mi300x-e4m3fnuz", formats::e4m3fnuz},
                                                    {"mi300x-e5m2fnuz", formats::e5m2fnuz}};
  for (const auto& [name, f] : presets) {
    const std::string preset = name;
    CAPTURE(preset);
    for (const range where : {range::spread, range::low, range::step}) {
      if (where != range::spread && f.exp_bits != 8) continue;
      CAPTURE(static_cast<int>(where));
      for (const auto& [M, N, K] : {std::array{7, 33, 257}, std::array{3, 17, 40}, std::array{11, 40, 600}}) {
        const scaled_matrix a = matrix(f, M, K, true, where), b = matrix(f, K, N, false, where);
        const accumulator_model model = preset_model(name);
        const auto fast = fast_accumulate(f, a.codes, f, b.codes, M, N, K, model, 1);
        REQUIRE(fast.has_value());
        ++gemms;
        float_lanes += fast->float_lanes;
        if (avx3) CHECK(fast->float_lanes);
        gemm_options o;
        o.acc = model;
        o.fast_kernels = false;
        const auto ref = run(a, b, o);
        if (f.exp_bits == 8 && where == range::spread)  // the large row and column overflow
          CHECK(std::count(ref.begin(), ref.end(), from(formats::fp32, INFINITY).code) > 0);
        o.fast_kernels = true;
        for (const std::int64_t target : targets) {
          const std::string target_name = hwy::TargetName(target);
          CAPTURE(target_name);
          hwy::SetSupportedTargetsForTest(target);
          compared += same_outputs(run(a, b, o), ref);
          expected += M * N;
        }
        hwy::SetSupportedTargetsForTest(0);
      }
    }
  }
  MESSAGE("compared " << compared << " outputs on " << targets.size() << " targets; float lanes in " << float_lanes
                       << " of " << gemms << " GEMMs");
  CHECK(compared == expected);
}

TEST_CASE("GEMM is bit-identical for 1, 2 and 3 threads (stochastic rounding included)") {
  std::mt19937_64 rng(11);
  const scaled_matrix a = random_matrix(formats::bf16, 9, 70, rng), b = random_matrix(formats::bf16, 70, 13, rng);
  for (bool fast : {true, false}) {
    for (round_mode mode : {round_mode::nearest_even, round_mode::stochastic}) {
      gemm_options o;
      o.acc.kind = accumulator_kind::format;
      o.acc.acc = formats::bf16;
      o.acc.acc_rounding.mode = mode;
      o.sr.seed = 99;
      o.fast_kernels = fast;
      o.threads = 1;
      const auto one = run(a, b, o);
      o.threads = 2;
      CHECK(run(a, b, o) == one);
      o.threads = 3;
      CHECK(run(a, b, o) == one);
      if (mode == round_mode::stochastic) {
        o.sr.seed = 100;
        CHECK(run(a, b, o) != one);
      }
    }
  }
}

TEST_CASE("fp32 round-to-nearest accumulation == the host FPU's fused multiply-add chain") {
  std::mt19937_64 rng(3);
  const int M = 5, N = 33, K = 257;
  const scaled_matrix a = random_matrix(formats::fp32, M, K, rng), b = random_matrix(formats::fp32, K, N, rng);
  gemm_options o;
  o.fast_kernels = false;
  const auto d = run(a, b, o);
  int checked = 0;
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      float s = 0.0f;
      for (int k = 0; k < K; ++k)
        s = std::fma(std::bit_cast<float>(a.codes[i * K + k]), std::bit_cast<float>(b.codes[k * N + j]), s);
      const std::uint32_t want = std::isnan(s) ? d[i * N + j] : std::bit_cast<std::uint32_t>(s);
      CHECK(d[i * N + j] == want);
      ++checked;
    }
  CHECK(checked == M * N);
}

TEST_CASE("a preset GEMM equals the validated instruction model output by output") {
  std::mt19937_64 rng(5);
  for (const char* name : {"h100-e4m3", "a100-bf16", "h100-fp16", "v100-fp16"}) {
    CAPTURE(name);
    const tensor_core_preset p = find_preset(name).value();
    const int M = 3, N = 4, K = 96;
    const scaled_matrix a = random_matrix(p.a, M, K, rng), b = random_matrix(p.b, K, N, rng);
    gemm_options o;
    o.acc = p.model;
    const auto d = run(a, b, o);
    for (int i = 0; i < M; ++i)
      for (int j = 0; j < N; ++j) {
        std::vector<std::uint32_t> a32, b32;
        for (int k = 0; k < K; ++k) {
          a32.push_back(convert(formats::fp32, p.a, a.codes[i * K + k]).code);
          b32.push_back(convert(formats::fp32, p.b, b.codes[k * N + j]).code);
        }
        const auto want = tensor_core_dot(p, false, a32, b32, 0);
        REQUIRE(want.has_value());
        CHECK(d[i * N + j] == *want);
      }
  }
}

// N(0, sigma) floats, the "original" data of a quantised GEMM.
std::vector<float> normal_floats(std::size_t n, std::mt19937_64& rng, float sigma = 1.0f) {
  std::normal_distribution<float> normal(0.0f, sigma);
  std::vector<float> x(n);
  for (float& v : x) v = normal(rng);
  return x;
}

TEST_CASE("gemm_elements: gemm's codes, with the flags of every output, for every model and scaling") {
  std::mt19937_64 rng(21);
  struct setup {
    const char* preset;
    scaling s;
    double alpha, beta;
  };
  for (const setup& t : {setup{"h100-e4m3", scaling::none, 1, 0}, setup{"h100-e4m3-deepseek", scaling::tile_1x128, 1, 0},
                         setup{"a100-bf16", scaling::none, 0.5, 0}, setup{"h100-fp16", scaling::block_128, 1, 0},
                         setup{"v100-fp16", scaling::none, 2, -1}}) {
    CAPTURE(std::string(t.preset));
    const tensor_core_preset p = find_preset(t.preset).value();
    const int M = 3, N = 5, K = 300;
    const scaled_matrix a = quantise(normal_floats(M * K, rng), M, K, p.a, t.s, true).value();
    const scaled_matrix b = quantise(normal_floats(K * N, rng), K, N, p.b, t.s, false).value();
    std::vector<std::uint32_t> c(static_cast<std::size_t>(M) * N);
    for (std::uint32_t& code : c) code = from(formats::fp32, normal_floats(1, rng)[0]).code;
    gemm_options o;
    o.acc = p.model;
    o.alpha = t.alpha;
    o.beta = t.beta;
    o.sr = sr_stream{7, 1, 0};
    const auto d = gemm(a, b, t.beta != 0 ? std::span<const std::uint32_t>(c) : std::span<const std::uint32_t>(), o);
    const auto e = gemm_elements(a, b, t.beta != 0 ? std::span<const std::uint32_t>(c) : std::span<const std::uint32_t>(), o);
    REQUIRE(d.has_value());
    REQUIRE(e.has_value());
    for (std::size_t ij = 0; ij < d->size(); ++ij) {
      CHECK((*e)[ij].code == (*d)[ij]);
      CHECK(((*e)[ij].flags & (flag::overflow | flag::invalid)) == 0);
    }
  }
  // An fp16 accumulator overflows on the largest fp16 inputs: the element says so.
  scaled_matrix a, b;
  a.rows = 1, a.cols = b.rows = 4, b.cols = 1;
  a.fmt = b.fmt = formats::fp16;
  a.codes.assign(4, max_finite_magnitude(formats::fp16));
  b.codes.assign(4, 0x3c00);  // 1.0
  gemm_options o;
  o.acc.acc = formats::fp16;
  o.out = formats::fp16;
  const auto e = gemm_elements(a, b, {}, o);
  REQUIRE(e.has_value());
  CHECK(((*e)[0].flags & flag::overflow) != 0);
}

TEST_CASE("quantisation_loss_of counts the non-zero inputs quantise underflowed to 0 or clipped at the top") {
  // e4m3fn unscaled: 1e-4 is below half its smallest subnormal 2^-9, 1000 beyond its largest 448.
  const std::vector<float> x = {0.0f, 1e-4f, 1000.0f, 1.0f, -1e-4f, -500.0f, 448.0f, 0.002f};
  const scaled_matrix q = quantise(x, 1, 8, formats::e4m3fn, scaling::none, true).value();
  const quantisation_loss loss = quantisation_loss_of(x, q, true);
  CHECK(loss.nonzero == 7);
  CHECK(loss.underflowed == 2);
  CHECK(loss.saturated == 2);
  // Scaled per tensor (1000 -> 448), nothing saturates, but the range 1e-4..1000 is wider than
  // e4m3fn's: 1e-4, -1e-4 and 0.002 (0.0009 scaled, below 2^-10) still underflow. Under nvfp4 a
  // block of 16 whose e4m3fn scale rounds to 0, beside one of ones, underflows whole.
  const quantisation_loss tensor =
      quantisation_loss_of(x, quantise(x, 1, 8, formats::e4m3fn, scaling::per_tensor, true).value(), true);
  CHECK(tensor.saturated == 0);
  CHECK(tensor.underflowed == 3);
  std::vector<float> y(32, 1.0f);
  for (int k = 16; k < 32; ++k) y[k] = 1e-30f;
  const quantisation_loss nv = quantisation_loss_of(y, quantise(y, 1, 32, formats::e2m1fn, scaling::nvfp4, true).value(), true);
  CHECK(nv.nonzero == 32);
  CHECK(nv.underflowed == 16);
  CHECK(nv.saturated == 0);
}

TEST_CASE("compare_with_original: the analyse_gemm errors where quantise changed nothing, the data's loss where it did") {
  std::mt19937_64 rng(23);
  const int M = 3, N = 5, K = 200;
  const std::vector<float> xa = normal_floats(M * K, rng), xb = normal_floats(K * N, rng);
  gemm_options o;
  o.alpha = 0.5;
  {
    const scaled_matrix a = quantise(xa, M, K, formats::fp32, scaling::none, true).value();
    const scaled_matrix b = quantise(xb, K, N, formats::fp32, scaling::none, false).value();
    const auto d = gemm(a, b, {}, o).value();
    const gemm_report q = analyse_gemm(a, b, {}, o, d), orig = compare_with_original(xa, xb, M, N, K, {}, o, d);
    CHECK(orig.relative == q.relative);
    CHECK(orig.normwise == q.normwise);
    CHECK_FALSE(orig.normwise_bound.valid);
  }
  // bf16 inputs: against the data the error takes in the inputs' rounding, about 2^-9 per input.
  const scaled_matrix a = quantise(xa, M, K, formats::bf16, scaling::none, true).value();
  const scaled_matrix b = quantise(xb, K, N, formats::bf16, scaling::none, false).value();
  const auto d = gemm(a, b, {}, o).value();
  const gemm_report q = analyse_gemm(a, b, {}, o, d), orig = compare_with_original(xa, xb, M, N, K, {}, o, d);
  CHECK(q.normwise < 1e-6);
  CHECK(orig.normwise > 1e-4);
  CHECK(orig.normwise < 0x1p-6);
}

TEST_CASE("analyse_gemm: the normwise error, computed exactly, stays within its bound; broken models void it") {
  std::mt19937_64 rng(22);
  struct setup {
    const char* acc;  // a preset, or a format
    scaling s;
    double alpha, beta;
  };
  for (const setup& t : {setup{"h100-e4m3", scaling::none, 1, 0}, setup{"h100-e4m3-deepseek", scaling::tile_1x128, 1, 0},
                         setup{"ada-e5m2", scaling::mx32, 1, 0}, setup{"h100-e5m2", scaling::per_tensor, 0.5, 0},
                         setup{"a100-bf16", scaling::none, 0.5, 0}, setup{"fp32", scaling::none, 1, 0},
                         setup{"fp16", scaling::none, 2, -1}}) {
    CAPTURE(std::string(t.acc));
    const auto preset = find_preset(t.acc);
    const format in = preset ? preset->a : formats::bf16;
    gemm_options o;
    if (preset) {
      o.acc = preset->model;
      o.out = preset->output;
      o.out_rounding = preset->output_rounding;
    } else {
      o.acc.acc = parse_format(t.acc).value();
      o.out = o.acc.acc;
    }
    o.alpha = t.alpha;
    o.beta = t.beta;
    const int M = 4, N = 6, K = 512;
    const scaled_matrix a = quantise(normal_floats(M * K, rng), M, K, in, t.s, true).value();
    const scaled_matrix b = quantise(normal_floats(K * N, rng), K, N, preset ? preset->b : in, t.s, false).value();
    std::vector<std::uint32_t> c(static_cast<std::size_t>(M) * N);
    for (std::uint32_t& code : c) code = from(o.out, normal_floats(1, rng)[0]).code;
    const std::span<const std::uint32_t> cs = t.beta != 0 ? std::span<const std::uint32_t>(c) : std::span<const std::uint32_t>();
    const auto d = gemm(a, b, cs, o);
    REQUIRE(d.has_value());
    const gemm_report r = analyse_gemm(a, b, cs, o, *d);
    INFO(r.normwise_bound.condition);
    CHECK(r.normwise_bound.valid);
    CHECK(r.normwise > 0);
    CHECK(r.normwise <= r.normwise_bound_relative);
    CHECK(r.error_norm <= r.normwise_bound.absolute);
  }
  // A 1 x K by K x 1 GEMM has the bound of the same dot product.
  {
    const tensor_core_preset p = find_preset("h100-e4m3-deepseek").value();
    const int K = 300;
    const std::vector<float> xa = normal_floats(K, rng), xb = normal_floats(K, rng);
    const scaled_matrix a = quantise(xa, 1, K, p.a, scaling::tile_1x128, true).value();
    const scaled_matrix b = quantise(xb, K, 1, p.b, scaling::tile_1x128, false).value();
    gemm_options o;
    o.acc = p.model;
    o.out = p.output;
    o.out_rounding = p.output_rounding;
    const std::uint32_t code = dot(a, b, o).value();
    dot_problem q;
    q.a_format = p.a;
    q.b_format = p.b;
    q.k = K;
    q.scale_kind = scaling::tile_1x128;
    q.model = p.model;
    q.out = p.output;
    q.out_rounding = p.output_rounding;
    const dot_report dr = analyse_dot(q, xa, xb, a, b, code, o.sr);
    const gemm_report gr = analyse_gemm(a, b, {}, o, std::vector<std::uint32_t>{code});
    CHECK(dr.bound.valid);
    CHECK(dr.bound.coefficient == gr.normwise_bound.coefficient);
    CHECK(std::fabs(dr.error) <= dr.bound.absolute);
    CHECK(std::fabs(dr.error_original) <= dr.bound_original.absolute);
    CHECK(std::fabs(dr.error) == gr.error_norm);
  }
  // Overflow in the accumulator voids the bound, with the reason.
  {
    scaled_matrix a, b;
    a.rows = 1, a.cols = b.rows = 4, b.cols = 1;
    a.fmt = b.fmt = formats::fp16;
    a.codes.assign(4, max_finite_magnitude(formats::fp16));
    b.codes.assign(4, 0x3c00);
    gemm_options o;
    o.acc.acc = formats::fp16;
    o.out = formats::fp16;
    const auto d = gemm(a, b, {}, o).value();
    const gemm_report r = analyse_gemm(a, b, {}, o, d);
    CHECK_FALSE(r.normwise_bound.valid);
    CHECK(r.normwise_bound.condition.find("overflowed") != std::string::npos);
  }
}

TEST_CASE("a block-scaled preset GEMM applies the quantiser's MX / NVFP4 scales inside each block") {
  // Each output equals the instruction model fed the row's and column's scale codes; NVFP4's two
  // fp32 tensor scales multiply in the epilogue (one rounding of the fp32 result).
  std::mt19937_64 rng(11);
  struct row {
    const char* preset;
    scaling s;
  };
  int checked = 0;
  for (const row& t : {row{"b200-mxf8f6f4", scaling::mx32}, row{"b200-mxf4", scaling::mx32},
                       row{"b200-mxf4nvf4", scaling::nvfp4}, row{"rtx6000b-mxf4nvf4", scaling::nvfp4}}) {
    CAPTURE(t.preset);
    const tensor_core_preset p = find_preset(t.preset).value();
    const int M = 3, N = 2, K = 256;
    const scaled_matrix a = quantise(normal_floats(M * K, rng, 3.0f), M, K, p.a, t.s, true).value();
    const scaled_matrix b = quantise(normal_floats(K * N, rng, 0.01f), K, N, p.b, t.s, false).value();
    gemm_options o;
    o.acc = p.model;
    const auto d = gemm(a, b, {}, o);
    REQUIRE(d);
    const double tensor = to_double(formats::fp32, a.tensor_scale) * to_double(formats::fp32, b.tensor_scale);
    for (int i = 0; i < M; ++i)
      for (int j = 0; j < N; ++j) {
        std::vector<std::uint32_t> ak, bk, sa, sb;
        for (int k = 0; k < K; ++k) {
          ak.push_back(a.codes[static_cast<std::size_t>(i) * K + k]);
          bk.push_back(b.codes[static_cast<std::size_t>(k) * N + j]);
          if (k % p.model.block.scale_block == 0) {
            sa.push_back(a.scales[scale_index(a, i, k, true)]);
            sb.push_back(b.scales[scale_index(b, k, j, false)]);
          }
        }
        const auto want = tensor_core_dot_codes(p, false, ak, bk, 0, sa, sb);
        REQUIRE(want);
        // tensor: a product of two 24-bit significands, exact in double; times D rounded once.
        const std::uint32_t scaled =
            round_exact(formats::fp32, exact_mul(unpack(tensor), decode(formats::fp32, *want)), rounding{}).code;
        CHECK((*d)[static_cast<std::size_t>(i) * N + j] == (tensor == 1.0 ? *want : scaled));
        ++checked;
      }
  }
  CHECK(checked == 4 * 6);
  // Another scaling than the preset's own is refused, naming it.
  const tensor_core_preset mx = find_preset("b200-mxf8f6f4").value();
  const scaled_matrix a = quantise(normal_floats(64, rng), 1, 64, mx.a, scaling::tile_1x128, true).value();
  const scaled_matrix b = quantise(normal_floats(64, rng), 64, 1, mx.b, scaling::tile_1x128, false).value();
  gemm_options o;
  o.acc = mx.model;
  const auto refused = gemm(a, b, {}, o);
  REQUIRE(!refused);
  CHECK(refused.message().find("mx32") != std::string::npos);
}

TEST_CASE("DeepSeek-V3 promotion: each 128-group scaled by sa*sb and folded with one fp32 fma") {
  std::mt19937_64 rng(13);
  const int M = 2, N = 3, K = 300;
  std::normal_distribution<float> normal(0.0f, 4.0f);
  std::vector<float> xa(M * K), xb(K * N);
  for (float& v : xa) v = normal(rng);
  for (float& v : xb) v = normal(rng);
  const auto a = quantise(xa, M, K, formats::e4m3fn, scaling::tile_1x128, true);
  const auto b = quantise(xb, K, N, formats::e4m3fn, scaling::block_128, false);
  REQUIRE(a.has_value());
  REQUIRE(b.has_value());
  CHECK(a->scales.size() == static_cast<std::size_t>(M * 3));
  CHECK(b->scales.size() == 3u);
  const tensor_core_preset p = find_preset("h100-e4m3-deepseek").value();
  gemm_options o;
  o.acc = p.model;
  const auto d = run(*a, *b, o);
  // By hand: the plain h100-e4m3 chain per group from zero, then R = fma(partial, s, R) in fp32.
  const tensor_core_preset plain = find_preset("h100-e4m3").value();
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      std::uint32_t r = 0;
      for (int g = 0; g * 128 < K; ++g) {
        std::vector<std::uint32_t> a32, b32;
        for (int k = g * 128; k < std::min(K, g * 128 + 128); ++k) {
          a32.push_back(convert(formats::fp32, formats::e4m3fn, a->codes[i * K + k]).code);
          b32.push_back(convert(formats::fp32, formats::e4m3fn, b->codes[k * N + j]).code);
        }
        const std::uint32_t partial = *tensor_core_dot(plain, false, a32, b32, 0);
        const double s = to_double(formats::fp32, a->scales[i * 3 + g]) * to_double(formats::fp32, b->scales[g]);
        r = fma(formats::fp32, partial, from(formats::fp32, s).code, r, rounding{}).code;
      }
      CHECK(d[i * N + j] == r);
    }
}

TEST_CASE("quantise: amax maps to the top of the format; MX scales are e8m0 powers of two") {
  std::vector<float> x(64);
  for (int i = 0; i < 64; ++i) x[i] = static_cast<float>((i - 20) * 0.37);
  const auto t = quantise(x, 1, 64, formats::e4m3fn, scaling::per_tensor, true);
  REQUIRE(t.has_value());
  REQUIRE(t->scales.size() == 1u);
  const double s = to_double(formats::fp32, t->scales[0]);
  CHECK(s >= 43 * 0.37 / 448.0);
  double top = 0;
  for (std::uint32_t c : t->codes) top = std::max(top, std::fabs(to_double(formats::e4m3fn, c)));
  CHECK(top <= 448.0);
  CHECK(top >= 400.0);
  const auto mx = quantise(x, 1, 64, formats::e2m1fn, scaling::mx32, true);
  REQUIRE(mx.has_value());
  REQUIRE(mx->scales.size() == 2u);
  CHECK(mx->scale_format == formats::e8m0fnu);
  // Block 0 holds |x| up to 20 * 0.37 = 7.4: 2^(floor(log2 7.4) - emax(e2m1) = 2 - 2) = 1.
  CHECK(to_double(formats::e8m0fnu, mx->scales[0]) == 1.0);
  // Block 1 holds up to 43 * 0.37 = 15.91: 2^(3 - 2) = 2.
  CHECK(to_double(formats::e8m0fnu, mx->scales[1]) == 2.0);
}

TEST_CASE("quantise nvfp4: an fp32 tensor scale rounded up, e4m3fn scales per 16, each a single rounding") {
  // Block 0: amax 2688 = 448 * 6 makes the tensor scale 1 and the block scale 448; block 1:
  // amax 3 gives 3/6 = 0.5 and 1.25 / 0.5 = 2.5, a tie of e2m1fn that goes to even (2); block 2:
  // amax 2^-12 gives 2^-12 / 6, below half e4m3fn's smallest subnormal 2^-9: zeros, signs kept.
  std::vector<float> x(48, 0.0f);
  x[0] = 2688.0f;
  x[1] = -448.0f;
  x[16] = 3.0f;
  x[17] = 1.25f;
  x[32] = std::ldexp(1.0f, -12);
  x[33] = -std::ldexp(1.0f, -13);
  const auto q = quantise(x, 1, 48, formats::e2m1fn, scaling::nvfp4, true);
  REQUIRE(q.has_value());
  CHECK(q->scale_format == formats::e4m3fn);
  CHECK(to_double(formats::fp32, q->tensor_scale) == 1.0);
  REQUIRE(q->scales.size() == 3u);
  CHECK(to_double(formats::e4m3fn, q->scales[0]) == 448.0);
  CHECK(to_double(formats::e4m3fn, q->scales[1]) == 0.5);
  CHECK(to_double(formats::e4m3fn, q->scales[2]) == 0.0);
  CHECK(to_double(formats::e2m1fn, q->codes[0]) == 6.0);
  CHECK(to_double(formats::e2m1fn, q->codes[1]) == -1.0);
  CHECK(to_double(formats::e2m1fn, q->codes[16]) == 6.0);
  CHECK(to_double(formats::e2m1fn, q->codes[17]) == 2.0);
  CHECK(q->codes[32] == 0u);
  CHECK(q->codes[33] == 0x8u);  // -0
  const auto v = dequantise(*q, true);
  REQUIRE(v.has_value());
  CHECK((*v)[0] == 2688.0);
  CHECK((*v)[17] == 1.0);
  // amax 1: 1 / 2688 is no fp32 value, so the tensor scale is the next fp32 above it.
  const auto one = quantise(std::vector<float>(16, 1.0f), 1, 16, formats::e2m1fn, scaling::nvfp4, true);
  REQUIRE(one.has_value());
  const float st = std::bit_cast<float>(one->tensor_scale);
  CHECK(static_cast<double>(st) * 2688 > 1.0);
  CHECK(static_cast<double>(std::nextafter(st, 0.0f)) * 2688 < 1.0);
  CHECK(gemm(*q, *quantise(x, 48, 1, formats::e2m1fn, scaling::nvfp4, false), {}, {}).message()
            .find("nvfp4 scaling is applied inside a block-scaled MMA") != std::string::npos);
  CHECK(quantise(x, 1, 48, formats::fp16, scaling::nvfp4, true).message().find("at most 9 significant bits") !=
        std::string::npos);
}

TEST_CASE("gemm and quantise reject bad shapes, orders and parameters with a clear message") {
  std::mt19937_64 rng(1);
  const scaled_matrix a = random_matrix(formats::bf16, 2, 3, rng), b = random_matrix(formats::bf16, 4, 2, rng);
  CHECK(gemm(a, b, {}, {}).message().find("A is 2x3 and B is 4x2") != std::string::npos);
  const scaled_matrix b3 = random_matrix(formats::bf16, 3, 2, rng);
  gemm_options o;
  o.k_order = {0, 0, 1};
  CHECK(gemm(a, b3, {}, o).message().find("permutation of 0..2") != std::string::npos);
  o.k_order = {};
  o.beta = 1.0;
  CHECK(gemm(a, b3, {}, o).message().find("needs a C matrix") != std::string::npos);
  o.beta = 0.0;
  o.alpha = std::nan("");
  CHECK(gemm(a, b3, {}, o).message().find("must be finite") != std::string::npos);
  const std::vector<std::uint32_t> c(5);
  CHECK(gemm(a, b3, c, {}).message().find("C has 5 values, expected 4") != std::string::npos);
  std::vector<float> x(256, 1.0f);
  const auto qa = quantise(x, 1, 256, formats::e4m3fn, scaling::tile_1x128, true);
  const auto qb = quantise(x, 256, 1, formats::e4m3fn, scaling::block_128, false);
  gemm_options p;
  p.acc = find_preset("h100-e4m3").value().model;
  p.acc.promote_every = 64;
  CHECK(gemm(*qa, *qb, {}, p).message().find("groups K by 128 but the promotion interval is 64") != std::string::npos);
  x[3] = std::nanf("");
  CHECK(quantise(x, 1, 256, formats::e4m3fn, scaling::per_tensor, true).message().find("(0, 3) is NaN") !=
        std::string::npos);
  CHECK(quantise(x, 2, 256, formats::e4m3fn, scaling::none, true).message().find("needs 512 values, got 256") !=
        std::string::npos);
  CHECK(parse_scaling("mx64").message().find("valid are none, tensor, tile128, block128, mx32, nvfp4") != std::string::npos);
}

TEST_CASE("fixed_dot: exact dot products in 128-bit fixed point == exact_accumulator, up to the window's edge") {
  std::mt19937_64 rng(31);
  // Values m 2^e, |m| < 2^31, e over a span chosen per case: narrow spans take the fixed point,
  // wide ones must be refused (never a wrong sum).
  int fixed = 0, refused = 0, widest = 0;  // widest: bits of the largest sum of magnitudes taken
  for (int trial = 0; trial < 3000; ++trial) {
    const int K = 1 + static_cast<int>(rng() % 300);
    const int bits = 1 + static_cast<int>(rng() % 31), spread = static_cast<int>(rng() % 80);
    const int base = static_cast<int>(rng() % 400) - 200;
    std::vector<unpacked> a(static_cast<std::size_t>(K)), b(static_cast<std::size_t>(K));
    for (int k = 0; k < K; ++k)
      for (std::vector<unpacked>* v : {&a, &b}) {
        const std::uint64_t m = rng() % 7 == 0 ? 0 : rng() >> (64 - bits);
        (*v)[static_cast<std::size_t>(k)] =
            make_finite(rng() % 2 == 1, m, base + static_cast<int>(rng() % static_cast<std::uint64_t>(spread + 1)));
      }
    if (trial % 5 == 0) b[static_cast<std::size_t>(K / 2)] = make_finite(false, detail::u128{1} << 40, 0);  // too wide
    const fixed_vectors fa(a, 1, K), fb(b, 1, K);
    exact_accumulator want, want_magnitude;
    for (int k = 0; k < K; ++k) {
      want.add_product(a[static_cast<std::size_t>(k)], b[static_cast<std::size_t>(k)]);
      unpacked pa = a[static_cast<std::size_t>(k)], pb = b[static_cast<std::size_t>(k)];
      pa.negative = pb.negative = false;
      want_magnitude.add_product(pa, pb);
    }
    const auto got = fixed_dot(fa, 0, fb, 0);
    if (!got) {
      ++refused;
      continue;
    }
    ++fixed;
    widest = std::max(widest, detail::msb128(got->magnitude.sig) + 1);
    exact_accumulator diff = want, diff_magnitude = want_magnitude;
    diff.subtract(got->sum);
    diff_magnitude.subtract(got->magnitude);
    CAPTURE(trial);
    REQUIRE(diff.is_zero());
    REQUIRE(diff_magnitude.is_zero());
  }
  MESSAGE("fixed point " << fixed << ", refused " << refused << ", widest sum " << widest << " bits");
  CHECK(fixed > 1000);
  CHECK(refused > 300);
  CHECK(widest > 110);  // sums near the 126-bit limit were taken, and were exact
}
