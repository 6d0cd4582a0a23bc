// The tensor-core presets against real GPU outputs (tests/data/tensor-core-vectors, 5000 cases
// per set, bit for bit), the directed feature vectors of Fasi, Higham, Mikaitis and Pranesh
// (PeerJ CS 2021) with expected values derived from each preset's parameters, and every named
// choice of the block-FMA model.
#include <doctest/doctest.h>

#include <cmath>
#include <random>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "analysis/reference/dot_analysis.hpp"
#include "fpemu/accumulator.hpp"
#include "fpemu/exact_accumulator.hpp"
#include "fpemu/convert.hpp"
#include "fpemu/presets.hpp"
#include "fpemu/spec.hpp"
#include "fpemu/text.hpp"

using namespace fpemu;

namespace {

std::string data_dir() { return std::string(FPEMU_TEST_DATA) + "/tensor-core-vectors/"; }

std::vector<std::vector<std::uint32_t>> read_hex_rows(const std::string& path) {
  std::ifstream in(path);
  REQUIRE_MESSAGE(in.good(), "cannot open " << path);
  std::vector<std::vector<std::uint32_t>> rows;
  std::string line, word;
  while (std::getline(in, line)) {
    std::istringstream words(line);
    std::vector<std::uint32_t> row;
    while (words >> word) row.push_back(static_cast<std::uint32_t>(std::stoul(word, nullptr, 16)));
    if (!row.empty()) rows.push_back(row);
  }
  return rows;
}

std::vector<std::uint32_t> read_binary_words(const std::string& path) {
  std::ifstream in(path);
  REQUIRE_MESSAGE(in.good(), "cannot open " << path);
  std::vector<std::uint32_t> words;
  std::string line;
  while (std::getline(in, line))
    if (!line.empty()) words.push_back(static_cast<std::uint32_t>(std::stoul(line, nullptr, 2)));
  return words;
}

std::string to_hex(std::uint32_t bits) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%08x", bits);
  return buf;
}

struct hardware_set {
  const char* gpu;
  const char* input;   // folder and file tag
  const char* output;  // fp32 or fp16
  const char* preset;
  bool c_is_zero;      // H100 fp8 data came from wgmma with the accumulator starting at zero
  int k;
};

// Runs every case of one set; returns the number of mismatches and reports the first few.
int run_set(const hardware_set& s, int& cases) {
  const std::string dir = data_dir() + s.gpu + "/" + s.input + "/";
  const std::string tag = std::string(s.gpu) + "_" + s.input;
  const auto a = read_hex_rows(dir + "a_" + tag + ".txt");
  const auto b = read_hex_rows(dir + "b_" + tag + ".txt");
  const auto c = read_binary_words(dir + "c_" + s.gpu + "_fp32.txt");
  const auto d = read_binary_words(dir + "d_" + s.gpu + "_" + s.output + ".txt");
  REQUIRE(a.size() == d.size());
  REQUIRE(b.size() == d.size());
  REQUIRE(c.size() == d.size());
  const expected<tensor_core_preset> p = find_preset(s.preset);
  REQUIRE(p.has_value());
  const bool fp16 = std::string(s.output) == "fp16";
  int bad = 0;
  for (std::size_t i = 0; i < d.size(); ++i) {
    REQUIRE(a[i].size() == static_cast<std::size_t>(s.k));
    const expected<std::uint32_t> got = tensor_core_dot(*p, fp16, a[i], b[i], s.c_is_zero ? 0 : c[i]);
    REQUIRE_MESSAGE(got.has_value(), got.message());
    // fp16 files hold the binary32 pattern of the binary16 result.
    const std::uint32_t want = d[i];
    const std::uint32_t have = fp16 ? convert(formats::fp32, formats::fp16, *got).code : *got;
    ++cases;
    if (have != want && ++bad <= 3)
      MESSAGE(s.preset << " " << s.output << " case " << i << ": model " << to_hex(have) << " (" << to_decimal(formats::fp32, have)
                       << "), GPU " << to_hex(want) << " (" << to_decimal(formats::fp32, want) << ")");
  }
  return bad;
}

}  // namespace

TEST_CASE("tensor-core presets reproduce every published GPU output bit for bit") {
  const hardware_set sets[] = {
      {"V100", "fp16", "fp32", "v100-fp16", false, 4},   {"V100", "fp16", "fp16", "v100-fp16", false, 4},
      {"A100", "fp16", "fp32", "a100-fp16", false, 8},   {"A100", "fp16", "fp16", "a100-fp16", false, 8},
      {"A100", "bf16", "fp32", "a100-bf16", false, 8},   {"A100", "tf32", "fp32", "a100-tf32", false, 4},
      {"Ada", "E4M3", "fp32", "ada-e4m3", false, 32},    {"Ada", "E4M3", "fp16", "ada-e4m3", false, 32},
      {"Ada", "E5M2", "fp32", "ada-e5m2", false, 32},    {"Ada", "E5M2", "fp16", "ada-e5m2", false, 32},
      {"H100", "fp16", "fp32", "h100-fp16", false, 16},  {"H100", "fp16", "fp16", "h100-fp16", false, 16},
      {"H100", "bf16", "fp32", "h100-bf16", false, 16},  {"H100", "tf32", "fp32", "h100-tf32", false, 4},
      {"H100", "E4M3", "fp32", "h100-e4m3", true, 32},   {"H100", "E5M2", "fp32", "h100-e5m2", true, 32},
      {"H100", "E4M3", "fp32", "h100-e4m3-fastaccum", true, 32},
      // mma.sync with an fp16 accumulator: C is used (see hopper_fp8_fp16_dot).
      {"H100", "E4M3", "fp16", "h100-e4m3", false, 32},  {"H100", "E5M2", "fp16", "h100-e5m2", false, 32},
  };
  int cases = 0, sets_run = 0;
  for (const hardware_set& s : sets) {
    CAPTURE(s.preset);
    CAPTURE(s.output);
    CHECK(run_set(s, cases) == 0);
    ++sets_run;
  }
  CHECK(sets_run == 19);
  CHECK(cases == 19 * 5000);
}

// ---- Directed feature vectors -----------------------------------------------------------------
//
// Expected values are derived by hand from the preset's parameters (block size n, fraction bits
// F, accumulator precision) and the scenario's reference exponent E, using exact binary
// fractions in double and the truncation of each term written out below; the final rounding into
// the accumulator format is the core's (itself checked against MPFR).

namespace {

double exp2i(int e) { return std::ldexp(1.0, e); }

// |x| truncated to a multiple of q, sign kept: what the alignment does to one term.
double truncate_term(double x, double q) { return std::trunc(x / q) * q; }

std::uint32_t f32(double x) {
  const rounded r = from(formats::fp32, x, rounding{round_mode::toward_zero});
  REQUIRE((r.flags & flag::inexact) == 0);
  return r.code;
}

double run_block(const tensor_core_preset& p, const std::vector<double>& a, const std::vector<double>& b, double c) {
  std::vector<std::uint32_t> a32, b32;
  for (double x : a) a32.push_back(f32(x));
  for (double x : b) b32.push_back(f32(x));
  const expected<std::uint32_t> d = tensor_core_dot(p, false, a32, b32, f32(c));
  REQUIRE_MESSAGE(d.has_value(), d.message());
  return to_double(formats::fp32, *d);
}

double round_acc(const tensor_core_preset& p, double exact) {
  const block_fma_model& m = p.model.block;
  return to_double(m.acc, from(m.acc, exact, m.acc_rounding).code);
}

// A value 2^e written as a product of two powers of two that every input format can hold.
std::pair<double, double> split_pow2(int e) { return {exp2i(e / 2), exp2i(e - e / 2)}; }

const std::vector<std::string> kFp32Presets = {"v100-fp16", "a100-fp16", "a100-bf16", "a100-tf32", "ada-fp16",
                                               "ada-bf16",  "ada-tf32",  "ada-e4m3",  "ada-e5m2",  "h100-fp16",
                                               "h100-bf16", "h100-tf32", "h100-e4m3", "h100-e5m2"};

}  // namespace

TEST_CASE("directed: exactly F extra alignment bits are kept below the largest exponent") {
  int checked = 0;
  for (const std::string& name : kFp32Presets) {
    CAPTURE(name);
    const tensor_core_preset p = *find_preset(name);
    const int F = p.model.block.frac_bits, pf = p.model.block.acc.frac_bits;
    // C = 1 sets E = 0. 2^(F-pf) products of 2^-F add up to one accumulator ulp at 1: kept.
    const int kept = 1 << (F - pf);
    REQUIRE(kept <= p.model.block.block_size);
    const auto [x, y] = split_pow2(-F);
    CHECK(run_block(p, std::vector<double>(kept, x), std::vector<double>(kept, y), 1.0) == 1.0 + exp2i(-pf));
    // Twice as many products of 2^-(F+1): each falls below 2^-F and is truncated away.
    if (2 * kept <= p.model.block.block_size) {
      const auto [u, v] = split_pow2(-F - 1);
      CHECK(run_block(p, std::vector<double>(2 * kept, u), std::vector<double>(2 * kept, v), 1.0) == 1.0);
    }
    ++checked;
  }
  CHECK(checked == static_cast<int>(kFp32Presets.size()));
}

TEST_CASE("directed: products are aligned unnormalised (1.5 x 1.5 keeps E = 0)") {
  int checked = 0;
  for (const std::string& name : kFp32Presets) {
    CAPTURE(name);
    const tensor_core_preset p = *find_preset(name);
    const int F = p.model.block.frac_bits, pf = p.model.block.acc.frac_bits, n = p.model.block.block_size;
    // 1.5 * 1.5 = 2.25 has exponent e_a + e_b = 0, so terms of 2^-F survive; a normalising
    // datapath (E = 1) would drop them. 2^(F+1-pf) of them (C is one) make one ulp at 2.25.
    const int terms = 1 << (F + 1 - pf);
    REQUIRE(terms <= n);
    const auto [x, y] = split_pow2(-F);
    std::vector<double> a{1.5}, b{1.5};
    for (int i = 1; i < terms; ++i) a.push_back(x), b.push_back(y);
    CHECK(run_block(p, a, b, exp2i(-F)) == 2.25 + exp2i(1 - pf));
    ++checked;
  }
  CHECK(checked == static_cast<int>(kFp32Presets.size()));
}

TEST_CASE("directed: carries out of the top are kept; cancellation renormalises exactly") {
  int checked = 0;
  for (const std::string& name : kFp32Presets) {
    CAPTURE(name);
    const tensor_core_preset p = *find_preset(name);
    const int F = p.model.block.frac_bits, n = p.model.block.block_size;
    // n products of 1.75 * 1.75 = 3.0625 carry well past 2^(E+2): the sum is exact.
    CHECK(run_block(p, std::vector<double>(n, 1.75), std::vector<double>(n, 1.75), 0.0) == round_acc(p, n * 3.0625));
    // 1 - 1 + 2^-F: the survivor of the cancellation is exactly the last kept bit ...
    const auto [x, y] = split_pow2(-F);
    CHECK(run_block(p, {-1.0, x}, {1.0, y}, 1.0) == exp2i(-F));
    // ... and 2^-(F+1) was truncated before the cancellation: +0.
    const auto [u, v] = split_pow2(-F - 1);
    const double zero = run_block(p, {-1.0, u}, {1.0, v}, 1.0);
    CHECK(zero == 0.0);
    CHECK(!std::signbit(zero));
    ++checked;
  }
  CHECK(checked == static_cast<int>(kFp32Presets.size()));
}

TEST_CASE("directed: truncation relative to the largest term breaks monotonicity") {
  int violations = 0, checked = 0;
  for (const std::string& name : kFp32Presets) {
    CAPTURE(name);
    const tensor_core_preset p = *find_preset(name);
    const int F = p.model.block.frac_bits, n = p.model.block.block_size;
    // n products t = 1.5 * 2^(1-F) = 2^(1-F) + 2^-F. With C just below 2 (E = 0) every t is
    // kept; raising C to 2 (E = 1) truncates each t by 2^-F.
    const auto [x, y] = split_pow2(1 - F);
    const std::vector<double> a(n, 1.5 * x), b(n, y);
    const double t = 1.5 * exp2i(1 - F);
    const double c_low = 2.0 - exp2i(-23);
    const double low = run_block(p, a, b, c_low);
    const double high = run_block(p, a, b, 2.0);
    CHECK(low == round_acc(p, truncate_term(c_low, exp2i(-F)) + n * t));
    CHECK(high == round_acc(p, 2.0 + n * truncate_term(t, exp2i(1 - F))));
    violations += low > high;  // a larger C gave a smaller D
    ++checked;
  }
  CHECK(checked == static_cast<int>(kFp32Presets.size()));
  CHECK(violations >= 10);  // every preset with n * 2^-F above an fp32 ulp at 2
}

// ---- The named choices of the model ---------------------------------------------------------------

namespace {

std::uint32_t h(double x) { return from(formats::fp16, x).code; }
std::uint32_t bf(double x) { return from(formats::bf16, x).code; }

double step(const block_fma_model& m, const format& f, std::vector<std::uint32_t> a, std::vector<std::uint32_t> b,
            double c, std::uint8_t* flags = nullptr) {
  const rounded r = block_fma_step(m, f, a.data(), f, b.data(), static_cast<int>(a.size()), formats::fp32, f32(c));
  if (flags) *flags = r.flags;
  return to_double(m.acc, r.code);
}

}  // namespace

TEST_CASE("zero sign: +0 by default; the IEEE rule gives -0 for all -0 terms and under toward-negative") {
  block_fma_model m = find_preset("h100-fp16")->model.block;
  const std::vector<std::uint32_t> minus_zero{0x8000}, one{h(1.0)};
  const double pos = step(m, formats::fp16, minus_zero, one, -0.0);
  CHECK((pos == 0.0 && !std::signbit(pos)));
  m.zero = zero_sign::ieee;
  const double neg = step(m, formats::fp16, minus_zero, one, -0.0);
  CHECK((neg == 0.0 && std::signbit(neg)));
  // x + (-x): +0 under toward-zero, -0 under toward-negative.
  const double cancel = step(m, formats::fp16, one, one, -1.0);
  CHECK((cancel == 0.0 && !std::signbit(cancel)));
  m.acc_rounding.mode = round_mode::toward_negative;
  const double cancel_rd = step(m, formats::fp16, one, one, -1.0);
  CHECK((cancel_rd == 0.0 && std::signbit(cancel_rd)));
}

TEST_CASE("reference-exponent clamp: tiny blocks are aligned to 2^(clamp - F)") {
  block_fma_model m = find_preset("h100-bf16")->model.block;  // F = 25, clamped at -133
  REQUIRE(m.min_reference_exp == -133);
  // 2^-140 - 2^-164: clamped at -133 (quantum 2^-158) the small term is truncated away; unclamped
  // it is kept (quantum 2^-165), and the sum rounds toward zero to the fp32 subnormal below 2^-140.
  const std::vector<std::uint32_t> a{bf(0x1p-70), bf(-0x1p-82)}, b{bf(0x1p-70), bf(0x1p-82)};
  CHECK(step(m, formats::bf16, a, b, 0.0) == 0x1p-140);
  m.min_reference_exp = block_fma_model{}.min_reference_exp;
  CHECK(step(m, formats::bf16, a, b, 0.0) == 0x1p-140 - 0x1p-149);
}

TEST_CASE("alignment rounding: truncate, down, nearest, up on positive and negative terms") {
  block_fma_model m = find_preset("h100-fp16")->model.block;
  m.frac_bits = 23;  // the alignment quantum at C = 1 is then one fp32 ulp of 1
  struct row {
    alignment_rounding rule;
    double t375_pos, t375_neg, t625_pos;  // expected D - 1 in units of 2^-23
  };
  // Terms 0.375 and 0.625 quanta: truncate drops both; down rounds negative magnitudes up; up
  // rounds positive ones up; nearest rounds 0.625 up only.
  const row rows[] = {{alignment_rounding::truncate, 0, 0, 0},
                      {alignment_rounding::down, 0, -1, 0},
                      {alignment_rounding::up, 1, 0, 1},
                      {alignment_rounding::nearest, 0, 0, 1}};
  int checked = 0;
  for (const row& r : rows) {
    m.alignment = r.rule;
    const std::uint32_t q = h(0x1p-12);
    CHECK(step(m, formats::fp16, {h(1.5 * 0x1p-13)}, {q}, 1.0) == 1.0 + r.t375_pos * 0x1p-23);
    CHECK(step(m, formats::fp16, {h(-1.5 * 0x1p-13)}, {q}, 1.0) == 1.0 + r.t375_neg * 0x1p-23);
    CHECK(step(m, formats::fp16, {h(1.25 * 0x1p-12)}, {q}, 1.0) == 1.0 + r.t625_pos * 0x1p-23);
    ++checked;
  }
  CHECK(checked == 4);
}

TEST_CASE("subnormal inputs and outputs can be flushed; NaN and infinity rules") {
  block_fma_model m = find_preset("h100-fp16")->model.block;
  CHECK(step(m, formats::fp16, {0x0001}, {h(1.0)}, 0.0) == 0x1p-24);  // fp16 min subnormal
  m.input_subnormals = false;
  CHECK(step(m, formats::fp16, {0x0001}, {h(1.0)}, 0.0) == 0.0);
  block_fma_model o = find_preset("h100-bf16")->model.block;
  CHECK(step(o, formats::bf16, {bf(0x1p-70)}, {bf(0x1p-70)}, 0.0) == 0x1p-140);
  o.output_subnormals = false;
  std::uint8_t flags = 0;
  CHECK(step(o, formats::bf16, {bf(0x1p-70)}, {bf(0x1p-70)}, 0.0, &flags) == 0.0);
  CHECK((flags & flag::underflow) != 0);
  const std::uint32_t inf = 0x7c00, ninf = 0xfc00, zero = 0, one = h(1.0);
  CHECK(std::isnan(step(m, formats::fp16, {inf}, {zero}, 0.0)));                 // inf * 0
  CHECK(std::isnan(step(m, formats::fp16, {inf, ninf}, {one, one}, 0.0)));       // +inf - inf
  CHECK(step(m, formats::fp16, {inf, one}, {one, one}, 0.0) == INFINITY);       // inf + finite
  CHECK(std::isnan(step(m, formats::fp16, {one}, {one}, std::nan(""))));        // NaN in C
  CHECK(step(m, formats::fp16, {ninf}, {one}, 1.0) == -INFINITY);
}

// ---- The fields added for Blackwell and AMD (Xie et al. 2025), each pinned on directed inputs ----

namespace {

block_fma_model plain(int n, int frac_bits, round_mode mode = round_mode::toward_zero) {
  block_fma_model m;
  m.block_size = n;
  m.frac_bits = frac_bits;
  m.acc_rounding = rounding{mode};
  return m;
}

// D's code for same-format inputs, C binary32, optional scales.
std::uint32_t code_of(const block_fma_model& m, const format& f, std::vector<std::uint32_t> a,
                      std::vector<std::uint32_t> b, double c, const block_scales* s = nullptr) {
  return block_fma_step(m, f, a.data(), f, b.data(), static_cast<int>(a.size()), formats::fp32, f32(c), s).code;
}

}  // namespace

TEST_CASE("sum = exact: far-apart terms survive cancellation that F bits would lose") {
  // C = 2^100, products -2^100 and 2^-100 (bf16 operands): exactly 2^-100.
  block_fma_model m = plain(2, 60, round_mode::nearest_even);
  const std::vector<std::uint32_t> a{bf(0x1p50), bf(0x1p-50)}, b{bf(-0x1p50), bf(0x1p-50)};
  CHECK(step(m, formats::bf16, a, b, 0x1p100) == 0.0);  // aligned: 2^-100 is below 2^(100-60)
  m.sum = block_sum::exact;
  CHECK(step(m, formats::bf16, a, b, 0x1p100) == 0x1p-100);
  // exact_positive: a zero sum of -0 terms is +0; an underflow keeps its sign.
  m.zero = zero_sign::exact_positive;
  const double z = step(m, formats::bf16, {0x8000}, {bf(1.0)}, -0.0);
  CHECK((z == 0.0 && !std::signbit(z)));
  m.zero = zero_sign::ieee;
  CHECK(std::signbit(step(m, formats::bf16, {0x8000}, {bf(1.0)}, -0.0)));
  m.zero = zero_sign::exact_positive;
  CHECK(std::signbit(step(m, formats::bf16, {bf(-0x1p-80)}, {bf(0x1p-80)}, 0.0)));  // -2^-160 -> -0
}

TEST_CASE("sum = pairwise: (p0+p1)+(p2+p3) in fp32, then + C; flush to zero keeps the sign") {
  block_fma_model m = plain(4, 0, round_mode::nearest_even);
  m.sum = block_sum::pairwise;
  // 2^24 + 1 ties to 2^24; 1 - 2^24 is exact: the tree gives 1 where the exact sum is 2.
  const std::vector<std::uint32_t> a{bf(0x1p12), bf(1.0), bf(1.0), bf(-0x1p12)}, b{bf(0x1p12), bf(1.0), bf(1.0), bf(0x1p12)};
  CHECK(step(m, formats::bf16, a, b, 0.0) == 1.0);
  m.sum = block_sum::exact;
  CHECK(step(m, formats::bf16, a, b, 0.0) == 2.0);
  // With flushing (and IEEE zero signs, as the CDNA2 presets): a subnormal product becomes a zero
  // of its sign; subnormal inputs and a zero A or B read as +0; a -0 C keeps its sign (a block's
  // -0 result is the next block's C), a subnormal C is +0.
  m.sum = block_sum::pairwise;
  m.zero = zero_sign::ieee;
  m.input_subnormals = m.output_subnormals = false;
  const double neg = step(m, formats::bf16, {bf(-0x1p-70)}, {bf(0x1p-70)}, -0.0);
  CHECK((neg == 0.0 && std::signbit(neg)));  // -2^-140 flushes to -0; -0 + -0
  const std::uint32_t r = code_of(m, formats::bf16, {bf(-0x1p-70)}, {bf(0x1p-70)}, 0x1p-140);
  CHECK(r == 0x00000000);  // C = 2^-140 reads as +0; +0 + -0 = +0
  CHECK(step(m, formats::fp16, {0x0001}, {h(1.0)}, 1.0) == 1.0);  // the subnormal input reads as +0
  CHECK(!std::signbit(step(m, formats::fp16, {0x8000}, {h(1.0)}, -0.0)));  // -0 * 1 reads as +0 * 1; + -0
  // The first C of a chain is read like A and B (first_c_as_operand): -0 is +0 there.
  // -2^-70 * 2^-70 flushes to -0; with C = -0 read as +0 the sum is +0 (-0 unflushed).
  const tensor_core_preset mi250 = find_preset("mi250-bf16-legacy").value();
  const std::vector<std::uint32_t> a2{0x9c800000u, 0x9c800000u}, b2{0x1c800000u, 0x1c800000u};
  CHECK(*tensor_core_dot(mi250, false, a2, b2, 0x80000000u) == 0x00000000u);
  CHECK(code_of(mi250.model.block, formats::bf16, {bf(-0x1p-70), bf(-0x1p-70)}, {bf(0x1p-70), bf(0x1p-70)}, -0.0) ==
        0x80000000u);  // inside the chain, -0 + (-0 + -0)
}

TEST_CASE("first_c_as_operand: the C a chain starts from is read like A and B, later Cs as they stand") {
  // CDNA2 sets it; the other presets read the instruction's C like the C between blocks.
  int set = 0;
  for (const tensor_core_preset& p : tensor_core_presets()) {
    CAPTURE(p.name);
    CHECK(p.model.block.first_c_as_operand == (p.model.block.sum == block_sum::pairwise));
    set += p.model.block.first_c_as_operand ? 1 : 0;
  }
  CHECK(set == 3);
  accumulator_model m = find_preset("mi250-bf16-legacy")->model;  // blocks of 2, flushing
  auto chain = [&](std::uint32_t c, const std::vector<std::uint32_t>& a, const std::vector<std::uint32_t>& b) {
    dot_accumulator acc(m, formats::bf16, formats::bf16);
    acc.reset(formats::fp32, c);
    for (std::size_t i = 0; i < a.size(); ++i) acc.add_product(a[i], b[i]);
    return acc.result(formats::fp32).code;
  };
  // Two products -2^-140, each flushed to -0: C = -0 read as +0 gives +0 + -0 = +0; read as the C
  // between blocks it gives -0 + -0 = -0.
  const std::vector<std::uint32_t> tiny_a{bf(-0x1p-70), bf(-0x1p-70)}, tiny_b{bf(0x1p-70), bf(0x1p-70)};
  CHECK(chain(0x80000000u, tiny_a, tiny_b) == 0x00000000u);
  m.block.first_c_as_operand = false;
  CHECK(chain(0x80000000u, tiny_a, tiny_b) == 0x80000000u);
  m.block.first_c_as_operand = true;
  CHECK(first_c(m.block, formats::fp32, 0x80000000u) == 0u);
  CHECK(first_c(m.block, formats::fp32, 0x00000001u) == 0u);            // subnormal
  CHECK(first_c(m.block, formats::fp32, 0x80800000u) == 0x80800000u);   // -2^-126 is normal
  // Only the first: the first block's 2^-126 - 1.5 * 2^-126 = -2^-127 flushes to -0, the second
  // block's C, which keeps its sign: -0 + (-0 + -0) = -0.
  std::vector<std::uint32_t> a{bf(-0x1.8p-63), 0}, b{bf(0x1p-63), 0};
  a.insert(a.end(), tiny_a.begin(), tiny_a.end());
  b.insert(b.end(), tiny_b.begin(), tiny_b.end());
  CHECK(chain(0x00800000u, a, b) == 0x80000000u);
  // Without flushing inputs there is nothing to read differently.
  m.block.input_subnormals = true;
  CHECK(first_c(m.block, formats::fp32, 0x80000000u) == 0x80000000u);
}

TEST_CASE("interleave = 2: even and odd products are aligned apart, then rounded down together") {
  // F = 2; products 1 (even) and 0.125 + 0.125 (odd). One sum truncates each 0.125 at 2^-2 below
  // E = 0; apart, the odd half keeps 0.25 exactly and survives the realignment.
  block_fma_model m = plain(4, 2, round_mode::nearest_even);
  m.second_frac_bits = 31;
  const std::vector<std::uint32_t> a{h(1.0), h(0.125), 0, h(0.125)}, b{h(1.0), h(1.0), 0, h(1.0)};
  CHECK(step(m, formats::fp16, a, b, 0.0) == 1.0);
  m.interleave = 2;
  CHECK(step(m, formats::fp16, a, b, 0.0) == 1.25);
}

TEST_CASE("second_frac_bits: C joins after the products, both rounded down, then nearest-even") {
  block_fma_model m = plain(2, 24, round_mode::nearest_even);
  // C = 1, products 2^-24 + 2^-40: one exact rounding gives 1 + 2^-23 (above the midpoint); the
  // second stage floors the product sum at 2^-32 below E' = 0, leaving the tie 1 + 2^-24 -> 1.
  const std::vector<std::uint32_t> a{h(0x1p-12), h(0x1p-20)}, b{h(0x1p-12), h(0x1p-20)};
  m.sum = block_sum::exact;
  CHECK(step(m, formats::fp16, a, b, 1.0) == 1.0 + 0x1p-23);
  m.sum = block_sum::aligned;
  m.second_frac_bits = 31;
  CHECK(step(m, formats::fp16, a, b, 1.0) == 1.0);
  // A small negative C is rounded down at 2^-24 below E' (not toward zero): 1 - 2^-30 -> 1 - 2^-24.
  CHECK(step(m, formats::fp16, {h(1.0)}, {h(1.0)}, -0x1p-30) == 1.0 - 0x1p-24);
  m.drop_far_c = true;  // e_C = -30 < E' - F - 1 = -25: dropped
  CHECK(step(m, formats::fp16, {h(1.0)}, {h(1.0)}, -0x1p-30) == 1.0);
}

TEST_CASE("product_overflow: a product beyond fp32's range is an infinity before the sum") {
  block_fma_model m = plain(2, 24, round_mode::nearest_even);
  const std::vector<std::uint32_t> a{bf(0x1p100), bf(-0x1p100)}, b{bf(0x1p100), bf(0x1p100)};
  CHECK(step(m, formats::bf16, a, b, 1.0) == 0.0);  // 2^200 - 2^200, and C = 1 below 2^(200 - F)
  m.product_overflow = true;
  CHECK(std::isnan(step(m, formats::bf16, a, b, 1.0)));  // +inf - inf
  CHECK(step(m, formats::bf16, {bf(0x1p100)}, {bf(0x1p100)}, 1.0) == INFINITY);
  CHECK(step(m, formats::bf16, {bf(0x1p63)}, {bf(0x1p64)}, 0.0) == 0x1p127);  // 2^127: in range
}

TEST_CASE("block scales: exponents inside the fused sum, per product or per exactly summed group") {
  const format e8 = formats::e8m0fnu;
  auto e8m0 = [&](int e) { return static_cast<std::uint32_t>(127 + e); };
  block_fma_model m = plain(2, 25);
  m.scale_block = 2;
  // Per product: 1*1 with scales 2^3 and 2^-2 gives 2.
  std::vector<std::uint32_t> sa{e8m0(3)}, sb{e8m0(-2)};
  block_scales s{e8, sa.data(), sb.data()};
  CHECK(to_double(formats::fp32, code_of(m, formats::e4m3fn, {0x38, 0}, {0x38, 0}, 0.0, &s)) == 2.0);
  // Inside the sum: with scales 2^-30 the product 2^-60 is below 2^(0-25) of C = 1 and is cut.
  sa = {e8m0(-30)};
  sb = {e8m0(-30)};
  s = {e8, sa.data(), sb.data()};
  CHECK(to_double(formats::fp32, code_of(m, formats::e4m3fn, {0x38, 0}, {0x38, 0}, 1.0, &s)) == 1.0);
  // A NaN scale makes D NaN.
  sa = {0xff};
  s = {e8, sa.data(), sb.data()};
  CHECK(std::isnan(to_double(formats::fp32, code_of(m, formats::e4m3fn, {0x38, 0}, {0x38, 0}, 1.0, &s))));
  // UE4M3 scales: the sign bit is ignored.
  std::vector<std::uint32_t> ua{0xb8}, ub{0x40};  // -1.0 read as 1.0; 2.0
  s = {formats::e4m3fn, ua.data(), ub.data()};
  CHECK(to_double(formats::fp32, code_of(m, formats::e4m3fn, {0x38, 0}, {0x38, 0}, 0.0, &s)) == 2.0);

  // Groups of 2 summed exactly (E2M1): 4 + 0.25 kept whole at F = 2 where per-product
  // alignment to E = 2 truncates 0.25.
  const format f4 = formats::e2m1fn;
  const std::uint32_t one = 0x2, two = 0x4, half = 0x1, six = 0x7;
  sa = {e8m0(0)};
  sb = {e8m0(0)};
  s = {e8, sa.data(), sb.data()};
  block_fma_model g = plain(2, 2);
  g.scale_block = 2;
  CHECK(to_double(formats::fp32, code_of(g, f4, {two, half}, {two, half}, 0.0, &s)) == 4.0);
  g.scale_group = 2;
  CHECK(to_double(formats::fp32, code_of(g, f4, {two, half}, {two, half}, 0.0, &s)) == 4.25);
  // A group that cancels to zero still sets E at its scales' exponent: 6*6 - 6*6 under scales
  // 2^10 x 2^10 makes E = 20, and the other group's 1 falls below 2^(20-F).
  g = plain(4, 10);
  g.scale_block = g.scale_group = 2;
  sa = {e8m0(10), e8m0(0)};
  sb = {e8m0(10), e8m0(0)};
  s = {e8, sa.data(), sb.data()};
  CHECK(to_double(formats::fp32, code_of(g, f4, {six, six | 0x8, one, 0}, {six, six, one, 0}, 0.0, &s)) == 0.0);
  CHECK(to_double(formats::fp32, code_of(g, f4, {0, 0, one, 0}, {six, six, one, 0}, 0.0, &s)) == 1.0);  // all-zero group: no E
}

TEST_CASE("result conventions: overflow to infinity, the all-ones NaN, +0 for every zero") {
  block_fma_model m = plain(2, 25);  // RZ into fp32
  const std::vector<std::uint32_t> a{bf(0x1p100), bf(0x1p100)}, b{bf(0x1p27), bf(0x1p27)};
  CHECK(code_of(m, formats::bf16, a, b, 0.0) == 0x7f7fffff);  // 2^128: RZ gives the largest finite
  m.overflow_infinite = true;
  CHECK(code_of(m, formats::bf16, a, b, 0.0) == 0x7f800000);
  CHECK(code_of(m, formats::bf16, {0x7fc0}, {bf(1.0)}, 0.0) == 0x7fc00000);
  m.all_ones_nan = true;
  CHECK(code_of(m, formats::bf16, {0x7fc0}, {bf(1.0)}, 0.0) == 0x7fffffff);
  // -2^-160 rounds toward zero to -0 in IEEE; the positive rule makes every zero +0.
  m.zero = zero_sign::ieee;
  CHECK(code_of(m, formats::bf16, {bf(-0x1p-80)}, {bf(0x1p-80)}, 0.0) == 0x80000000);
  m.zero = zero_sign::positive;
  CHECK(code_of(m, formats::bf16, {bf(-0x1p-80)}, {bf(0x1p-80)}, 0.0) == 0x00000000);
}

TEST_CASE("every preset's accumulation bound holds on random dot products (dot_analysis block_model_bound)") {
  // Inputs of magnitude 2^-3..2^3 with random signs (normal: the bound's premise holds), random
  // block scales 2^-4..2^4 (E8M0) or normal UE4M3 values, C a random fp32 of similar size; the
  // terms a b s_a s_b have at most 8 + 8 + 4 + 4 (or 11 + 11) significant bits: exact in double.
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> mag(-3.0, 3.0);
  std::bernoulli_distribution sign(0.5);
  auto value = [&] { return (sign(rng) ? -1.0 : 1.0) * std::exp2(mag(rng)); };
  int checked = 0;
  for (const tensor_core_preset& base : tensor_core_presets()) {
    if (base.model.promote_every > 0) continue;  // the DeepSeek preset: test_gemm's promotion bound
    const tensor_core_preset& p = base;
    const int K = 4 * p.instruction_k;
    const block_fma_model& m = p.model.block;
    analysis::dot_problem prob;
    prob.a_format = p.a;
    prob.b_format = p.b;
    prob.k = static_cast<std::uint64_t>(K);
    prob.model = p.model;
    prob.out = formats::fp32;
    const bounds::coefficient c = analysis::accumulation_bound(prob, false);
    REQUIRE_MESSAGE(c.valid, p.name << ": " << c.condition);
    const format in_a = p.truncates_inputs ? formats::fp32 : p.a, in_b = p.truncates_inputs ? formats::fp32 : p.b;
    for (int t = 0; t < 200; ++t) {
      std::vector<std::uint32_t> a(static_cast<std::size_t>(K)), b(a.size()), sa, sb;
      const rounding near{round_mode::nearest_even, overflow_policy::saturate};
      for (std::size_t i = 0; i < a.size(); ++i) {
        a[i] = from(in_a, value(), near).code;
        b[i] = from(in_b, value(), near).code;
      }
      if (p.scale) {
        const std::size_t ns = a.size() / static_cast<std::size_t>(m.scale_block);
        for (std::size_t i = 0; i < ns; ++i) {
          const double s1 = std::exp2(std::round(mag(rng) * 4 / 3)), s2 = std::exp2(std::round(mag(rng) * 4 / 3));
          sa.push_back(from(*p.scale, *p.scale == formats::e4m3fn ? std::abs(value()) * s1 : s1, near).code);
          sb.push_back(from(*p.scale, *p.scale == formats::e4m3fn ? std::abs(value()) * s2 : s2, near).code);
        }
      }
      const std::uint32_t cc = from(formats::fp32, value() * 4).code;
      const expected<std::uint32_t> d = tensor_core_dot_codes(p, false, a, b, cc, sa, sb);
      REQUIRE(d);
      exact_accumulator x, s;
      x.add(decode(formats::fp32, cc));
      s.add(unpack(std::abs(to_double(formats::fp32, cc))));
      for (std::size_t i = 0; i < a.size(); ++i) {
        const double va = p.truncates_inputs ? to_double(p.a, a[i] >> 13) : to_double(p.a, a[i]);
        const double vb = p.truncates_inputs ? to_double(p.b, b[i] >> 13) : to_double(p.b, b[i]);
        double term = va * vb;
        if (p.scale) {
          const std::size_t j = i / static_cast<std::size_t>(m.scale_block);
          const std::uint32_t sign = *p.scale == formats::e4m3fn ? 0x7f : 0xff;  // UE4M3 ignores bit 7
          term *= to_double(*p.scale, sa[j] & sign) * to_double(*p.scale, sb[j] & sign);
        }
        x.add(unpack(term));
        s.add(unpack(std::abs(term)));
      }
      x.subtract(decode(formats::fp32, *d));
      const double err = std::abs(x.to_double()), bound = c.value * s.to_double() * (1 + 0x1p-40);
      CHECK_MESSAGE(err <= bound, p.name << " case " << t << ": |D - X| = " << err << " > " << bound);
      ++checked;
    }
  }
  CHECK(checked == 200 * 44);
}

TEST_CASE("parse_accumulator: one grammar for formats, 'exact' and every preset; roundings and promotion checked") {
  int cases = 0;
  for (const named_format& n : named_formats()) {
    const expected<accumulator_choice> c = parse_accumulator(n.name);
    REQUIRE(c);
    CHECK(c->model.kind == accumulator_kind::format);
    CHECK(c->model.acc == n.fmt);
    CHECK(c->model.acc_rounding == rounding{});
    CHECK(!c->preset);
    ++cases;
  }
  for (const tensor_core_preset& p : tensor_core_presets()) {
    const expected<accumulator_choice> c = parse_accumulator(p.name);
    REQUIRE(c);
    CHECK(c->preset->name == p.name);
    CHECK(c->model.kind == p.model.kind);
    CHECK(c->model.promote_every == p.model.promote_every);
    CHECK(describe(*c).rfind("preset " + p.name + " (", 0) == 0);
    // A preset fixes its rounding; a format's rounding is checked against the format.
    const expected<accumulator_choice> r = with_rounding(*c, rounding{round_mode::toward_zero});
    REQUIRE(!r);
    CHECK(r.message() == "the preset " + p.name + " fixes its own rounding; a rounding applies to a format accumulator");
    ++cases;
  }
  CHECK(cases == static_cast<int>(named_formats().size() + tensor_core_presets().size()));

  const expected<accumulator_choice> exact = parse_accumulator("exact");
  REQUIRE(exact);
  CHECK(exact->model.kind == accumulator_kind::exact);
  CHECK(describe(*exact) == "exact, rounded once into fp32 rne");
  const expected<accumulator_choice> custom = parse_accumulator("e5m3:fn");
  REQUIRE(custom);
  CHECK(custom->model.acc == format{5, 3, 15, true, nonfinite::fn});

  const expected<accumulator_choice> unknown = parse_accumulator("fp99");
  REQUIRE(!unknown);
  CHECK(unknown.message().rfind("'fp99' is neither 'exact', a tensor-core preset (v100-fp16, ", 0) == 0);
  CHECK(unknown.message().find(") nor a format: unknown format 'fp99'") != std::string::npos);

  const accumulator_choice bf16 = *parse_accumulator("bf16");
  const expected<accumulator_choice> sr = with_rounding(bf16, rounding{round_mode::stochastic, overflow_policy::ieee, 8});
  REQUIRE(sr);
  CHECK(describe(*sr) == "bf16 sr (8 bits)");
  CHECK(!with_rounding(bf16, rounding{round_mode::stochastic, overflow_policy::ieee, 33}));
  CHECK(!with_rounding(*parse_accumulator("e2m1fn"), rounding{round_mode::nearest_even, overflow_policy::nan}));  // no NaN

  const expected<accumulator_choice> promoted = with_promotion(bf16, 128);
  REQUIRE(promoted);
  CHECK(describe(*promoted) == "bf16 rne; promoted every 128 into fp32 rne");
  CHECK(!with_promotion(bf16, 0));
  CHECK(with_promotion(bf16, max_promote));
  CHECK(with_promotion(bf16, max_promote + 1).message() == "promotion every 1073741825 products is out of range (1..2^30)");
}
