// The tensor-core presets against real GPU outputs (tests/data/tensor-core-vectors, 5000 cases
// per set, bit for bit), the directed feature vectors of Fasi, Higham, Mikaitis and Pranesh
// (PeerJ CS 2021) with expected values derived from each preset's parameters, and every named
// choice of the block-FMA model.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "fpemu/accumulator.hpp"
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
  block_fma_model m = find_preset("h100-bf16")->model.block;  // F = 25
  // 2^-140 - 2^-164: unclamped the small term is kept (quantum 2^-165), and the sum rounds toward
  // zero to the fp32 subnormal below 2^-140; clamped at -133 (quantum 2^-158) it is truncated away.
  const std::vector<std::uint32_t> a{bf(0x1p-70), bf(-0x1p-82)}, b{bf(0x1p-70), bf(0x1p-82)};
  CHECK(step(m, formats::bf16, a, b, 0.0) == 0x1p-140 - 0x1p-149);
  m.min_reference_exp = -133;
  CHECK(step(m, formats::bf16, a, b, 0.0) == 0x1p-140);
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
