// fpemu::exact_accumulator against MPFR. The accumulator is the ground truth of the summation
// and tensor-core models, so it must be exactly right: every sum is also accumulated by MPFR at
// 5000 bits (more than the 4205-bit span of any such sum, and every mpfr_add / mpfr_fma is checked
// to return ternary 0, i.e. to be exact), and
//  (a) the accumulator's exact value, rebuilt 128 bits at a time from value(), equals MPFR's sum,
//      and to_double() equals mpfr_get_d(RNDN);
//  (b) round() into fp32, bf16 and e4m3fn equals the MPFR oracle in the 6 deterministic modes and
//      every overflow policy (the oracle gets MPFR's sum rounded to odd at 53 bits: Boldo and
//      Melquiond 2008, enough for p <= 51), and the stochastic modes equal the rounding core fed
//      MPFR's sum truncated to 100 bits plus a sticky bit (>= p + 66 bits, round_core's contract).
// Terms are decoded by the oracle's own decoder (mpfr_oracle::decode_code), not fpemu::decode.
#include <doctest/doctest.h>

#include <algorithm>
#include <bit>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <random>
#include <vector>

#include "fpemu/exact_accumulator.hpp"
#include "oracle_support.hpp"

// clang-format off
#include <stdint.h>  // before mpfr.h
#include <mpfr.h>
// clang-format on

using namespace oracle_test;
namespace oracle = fpemu::mpfr_oracle;
using fpemu::exact_accumulator;
using fpemu::unpacked;
using fpemu::value_class;
using fpemu::detail::u128;

namespace {

constexpr mpfr_prec_t kExactPrecision = 5000;

struct mp {  // an mpfr_t that frees itself
  mpfr_t v;
  explicit mp(mpfr_prec_t prec) { mpfr_init2(v, prec); }
  ~mp() { mpfr_clear(v); }
  mp(const mp&) = delete;
  mp& operator=(const mp&) = delete;
};

// One term of a sum: a code, a product of two codes, or +-2^exp; negated when `negate`.
struct term {
  enum class kind : std::uint8_t { code, product, pow2 } k = kind::code;
  format fa{}, fb{};
  std::uint32_t a = 0, b = 0;
  int exp = 0;
  bool negate = false;
};

term code_term(const format& f, std::uint32_t c, bool negate = false) { return {term::kind::code, f, {}, c, 0, 0, negate}; }
term product_term(const format& fa, std::uint32_t a, const format& fb, std::uint32_t b, bool negate = false) {
  return {term::kind::product, fa, fb, a, b, 0, negate};
}
term pow2_term(int exp, bool negate) { return {term::kind::pow2, {}, {}, 0, 0, exp, negate}; }
term negated(term t) {
  t.negate = !t.negate;
  return t;
}

void apply(exact_accumulator& acc, const term& t) {
  switch (t.k) {
    case term::kind::code:
      if (t.negate) acc.subtract(fpemu::decode(t.fa, t.a));
      else acc.add_code(t.fa, t.a);
      break;
    case term::kind::product:
      if (t.negate) acc.add_product(fpemu::negate(fpemu::decode(t.fa, t.a)), fpemu::decode(t.fb, t.b));
      else acc.add_product_codes(t.fa, t.a, t.fb, t.b);
      break;
    case term::kind::pow2: acc.add(fpemu::make_finite(t.negate, 1, t.exp)); break;
  }
}

// sum += t in MPFR; returns whether it was exact (ternary 0).
bool apply(mpfr_t sum, const term& t, mpfr_t x, mpfr_t y) {
  const double sign = t.negate ? -1.0 : 1.0;
  switch (t.k) {
    case term::kind::code:
      mpfr_set_d(x, sign * oracle::decode_code(t.fa, t.a).value, MPFR_RNDN);
      return mpfr_add(sum, sum, x, MPFR_RNDN) == 0;
    case term::kind::product:
      mpfr_set_d(x, sign * oracle::decode_code(t.fa, t.a).value, MPFR_RNDN);
      mpfr_set_d(y, oracle::decode_code(t.fb, t.b).value, MPFR_RNDN);
      return mpfr_fma(sum, x, y, sum, MPFR_RNDN) == 0;
    case term::kind::pow2:
      mpfr_set_si_2exp(x, t.negate ? -1 : 1, t.exp, MPFR_RNDN);
      return mpfr_add(sum, sum, x, MPFR_RNDN) == 0;
  }
  return false;
}

// Whether t is a zero, and its sign then (by the oracle's decoder).
struct zero_info {
  bool zero, negative;
};
zero_info zero_of(const term& t) {
  if (t.k == term::kind::pow2) return {false, false};
  const oracle::decoded a = oracle::decode_code(t.fa, t.a);
  if (t.k == term::kind::code) return {a.value == 0, a.negative != t.negate};
  const oracle::decoded b = oracle::decode_code(t.fb, t.b);
  return {a.value == 0 || b.value == 0, (a.negative != b.negative) != t.negate};
}

// IEEE 754 6.3 for the exact zero sum of `terms` rounded in `mode`.
bool zero_sum_negative(const std::vector<term>& terms, round_mode mode) {
  bool all_neg = true, all_pos = true;
  for (const term& t : terms) {
    const zero_info z = zero_of(t);
    all_neg = all_neg && z.zero && z.negative;
    all_pos = all_pos && z.zero && !z.negative;
  }
  if (all_pos) return false;
  return all_neg || mode == round_mode::toward_negative;
}

void set_u128(mpfr_t out, u128 v, int exp) {  // out = v * 2^exp, exact (prec >= 128)
  mpfr_set_ui(out, static_cast<unsigned long>(v >> 64), MPFR_RNDN);
  mpfr_mul_2ui(out, out, 64, MPFR_RNDN);
  REQUIRE(mpfr_add_ui(out, out, static_cast<unsigned long>(v), MPFR_RNDN) == 0);
  mpfr_mul_2si(out, out, exp, MPFR_RNDN);
}

// The accumulator's exact value in MPFR, rebuilt from value(): take the top 128 bits, subtract
// them, repeat. Each round clears >= 128 bits of the 4288-bit window, so 40 rounds are plenty.
bool rebuild(const exact_accumulator& acc, mpfr_t out) {
  exact_accumulator rest = acc;
  mp part(128);
  mpfr_set_zero(out, 1);
  for (int round = 0; round < 40; ++round) {
    if (rest.is_zero()) return true;
    unpacked u = rest.value();
    if (u.cls != value_class::finite) return false;
    set_u128(part.v, u.sig, u.exp);
    if (u.negative) mpfr_neg(part.v, part.v, MPFR_RNDN);
    if (mpfr_add(out, out, part.v, MPFR_RNDN) != 0) return false;
    u.sticky = false;
    rest.subtract(u);
  }
  return false;
}

// MPFR's sum rounded to odd at binary64 (53 bits, quantum >= 2^-1074). Sums of 2^1024 and more
// become +-DBL_MAX (odd, and far above the range of every target format, so they round alike).
double round_to_odd_double(const mpfr_t s) {
  mp limit(2);
  mpfr_set_ui_2exp(limit.v, 1, 1024, MPFR_RNDN);
  if (mpfr_cmpabs(s, limit.v) >= 0) return mpfr_sgn(s) < 0 ? -1.7976931348623157e308 : 1.7976931348623157e308;
  const double d = mpfr_get_d(s, MPFR_RNDZ);
  if (mpfr_cmp_d(s, d) == 0) return d;
  return std::bit_cast<double>(std::bit_cast<std::uint64_t>(d) | 1);
}

// MPFR's sum truncated to 100 bits, with the sticky bit saying whether anything was cut.
unpacked truncated_100(const mpfr_t s, bool zero_negative) {
  if (mpfr_zero_p(s)) return unpacked{value_class::zero, zero_negative};
  mp t(100);
  const bool sticky = mpfr_set(t.v, s, MPFR_RNDZ) != 0;
  mpz_t z;
  mpz_init(z);
  const long exp = mpfr_get_z_2exp(z, t.v);
  const bool negative = mpz_sgn(z) < 0;
  mpz_abs(z, z);
  REQUIRE(mpz_size(z) <= 2);
  const u128 sig = (u128{mpz_getlimbn(z, 1)} << 64) | mpz_getlimbn(z, 0);
  mpz_clear(z);
  return fpemu::make_finite(negative, sig, static_cast<int>(exp), sticky);
}

struct sum_formats {
  std::vector<named> inputs;  // the 8 formats the sums are drawn from
  format wide;                // e11m20 with bias 1055: smallest subnormal 2^-1074, so its square is 2^-2148
};
sum_formats formats_under_test() {
  namespace F = fpemu::formats;
  return {{{"fp32", F::fp32},
           {"bf16", F::bf16},
           {"fp16", F::fp16},
           {"e4m3fn", F::e4m3fn},
           {"e5m2", F::e5m2},
           {"tf32", F::tf32},
           {"e2m1fn", F::e2m1fn},
           {"e11m20", format{11, 20, 1023, true, fpemu::nonfinite::ieee, true, true}}},
          user_format("e11m20:bias=1055").fmt};
}

const std::vector<named>& round_targets() {
  static const std::vector<named> t{{"fp32", fpemu::formats::fp32}, {"bf16", fpemu::formats::bf16},
                                    {"e4m3fn", fpemu::formats::e4m3fn}};
  return t;
}

// Builds the sums: kind (i / 8) % 5 picks random terms, heavy cancellation, extreme exponents,
// long carries, or a rounding tie, exact or decided only by a term > 128 bits below it.
class generator {
 public:
  explicit generator(const sum_formats& fs) : fs_(fs) {}

  std::uint32_t finite_code(const format& f) {  // a random code that is not NaN or infinite
    for (;;) {
      const auto c = static_cast<std::uint32_t>(rng_()) & fpemu::code_mask(f);
      const auto cls = oracle::decode_code(f, c).cls;
      if (cls == oracle::decoded::kind::finite || cls == oracle::decoded::kind::zero) return c;
    }
  }
  bool coin() { return (rng_() & 1) != 0; }
  std::uint32_t below(std::uint32_t n) { return static_cast<std::uint32_t>(rng_() % n); }
  std::uint64_t bits() { return rng_(); }
  const format& any_input() { return fs_.inputs[below(static_cast<std::uint32_t>(fs_.inputs.size()))].fmt; }

  term random_term(const format& f) {
    const std::uint32_t r = below(100);
    if (r < 45) return code_term(f, finite_code(f));
    if (r < 85) {
      const format& g = coin() ? f : any_input();
      return product_term(f, finite_code(f), g, finite_code(g), coin());
    }
    return code_term(f, finite_code(f), true);
  }
  term extreme_term(const format& f) {
    const std::uint32_t big = fpemu::max_finite_magnitude(f), tiny = 1;  // tiny: smallest subnormal
    const format& w = fs_.wide;
    const format e11 = fs_.inputs.back().fmt;
    switch (below(7)) {
      case 0: return product_term(f, big, f, big, coin());
      case 1: return product_term(f, tiny, f, tiny, coin());
      case 2: return product_term(e11, fpemu::max_finite_magnitude(e11), e11, fpemu::max_finite_magnitude(e11), coin());
      case 3: return product_term(w, tiny, w, tiny, coin());
      case 4: return code_term(f, coin() ? big : tiny, coin());
      default: return random_term(f);
    }
  }

  std::vector<term> make(std::uint64_t i, const format& f) {
    std::vector<term> v;
    switch ((i / 8) % 5) {
      case 0: {
        const std::uint32_t n = 1 + below(300);
        for (std::uint32_t k = 0; k < n; ++k) v.push_back(random_term(f));
        break;
      }
      case 1: {  // x_1..x_n, then -x_n..-x_1 shuffled, with up to 3 tiny terms anywhere
        const std::uint32_t n = 1 + below(140);
        for (std::uint32_t k = 0; k < n; ++k) v.push_back(random_term(f));
        std::vector<term> back;
        for (const term& t : v) back.push_back(negated(t));
        std::shuffle(back.begin(), back.end(), rng_);
        v.insert(v.end(), back.begin(), back.end());
        for (std::uint32_t k = below(4); k > 0; --k) {
          const term tiny = below(3) == 0 ? pow2_term(-2148 + static_cast<int>(below(2148)), coin())
                                          : extreme_term(f);
          v.insert(v.begin() + below(static_cast<std::uint32_t>(v.size()) + 1), tiny);
        }
        break;
      }
      case 2: {
        const std::uint32_t n = 1 + below(300);
        for (std::uint32_t k = 0; k < n; ++k) v.push_back(extreme_term(f));
        break;
      }
      case 3: {  // k huge terms, a tiny one of either sign, the k negations: carries over the window
        const std::uint32_t k = 1 + below(140);
        const term big = extreme_term(f);
        for (std::uint32_t j = 0; j < k; ++j) v.push_back(big);
        v.push_back(coin() ? product_term(fs_.wide, 1, fs_.wide, 1, coin()) : pow2_term(-2148, coin()));
        for (std::uint32_t j = 0; j < k; ++j) v.push_back(negated(big));
        if (coin()) v.push_back(random_term(f));
        break;
      }
      default: {  // x + half an ulp of x in a target format (or binary64, for to_double), and
                  // mostly a term far below: a tie, exact or broken only by the sticky bit
        const std::uint32_t which = (i / 40) % 4;
        const format& t = which < 3 ? round_targets()[which].fmt : fs_.inputs.back().fmt;
        const int frac_bits = which < 3 ? t.frac_bits : 52, lowest = which < 3 ? fpemu::emin(t) : -1022;
        std::uint32_t c = 0;
        double x = 0;
        while (x == 0) {
          c = finite_code(t);
          x = oracle::decode_code(t, c).value;
        }
        const int lead = std::ilogb(x);
        v.push_back(code_term(t, c));
        v.push_back(pow2_term(std::max(lead, lowest) - frac_bits - 1, coin()));
        if (below(3) != 0) v.push_back(pow2_term(std::max(-2148, lead - 129 - static_cast<int>(below(400))), coin()));
        if (below(4) == 0) v.push_back(code_term(f, finite_code(f)));
        std::shuffle(v.begin(), v.end(), rng_);
        break;
      }
    }
    return v;
  }

 private:
  const sum_formats& fs_;
  std::mt19937_64 rng_{0xacc0'5eed'2024'0001ull};
};

}  // namespace

TEST_CASE("exact_accumulator == MPFR exact sum, and its roundings == MPFR: 20000 random sums in 8 formats") {
  const sum_formats fs = formats_under_test();
  generator gen(fs);
  constexpr std::uint64_t kSums = 20000;
  const std::vector<mode_case>& modes = deterministic_modes();
  const mode_case stochastic[] = {{"sr3", round_mode::stochastic, 3}, {"sr-exact", round_mode::stochastic_exact, 64}};

  mp sum(kExactPrecision), rebuilt(kExactPrecision), x(64), y(64);
  oracle::oracle o;
  checker det("accumulated sums rounded, deterministic modes");
  checker sto("accumulated sums rounded, stochastic modes", "core(100-bit MPFR)");
  std::uint64_t sums = 0, terms = 0, exact_ok = 0, double_ok = 0, wide = 0, sticky_decides = 0;
  std::uint64_t per_format_sums[8] = {};
  const auto start = std::chrono::steady_clock::now();

  for (std::uint64_t i = 0; i < kSums; ++i) {
    const format& f = fs.inputs[i % 8].fmt;
    const std::vector<term> v = gen.make(i, f);
    exact_accumulator acc;
    mpfr_set_zero(sum.v, 1);
    bool mpfr_exact = true;
    for (const term& t : v) {
      apply(acc, t);
      mpfr_exact = apply(sum.v, t, x.v, y.v) && mpfr_exact;
    }
    REQUIRE(mpfr_exact);
    ++sums;
    ++per_format_sums[i % 8];
    terms += v.size();

    // (a) the exact value, and the nearest double.
    const bool same = rebuild(acc, rebuilt.v) && mpfr_cmp(rebuilt.v, sum.v) == 0 &&
                      acc.is_zero() == (mpfr_zero_p(sum.v) != 0);
    if (same) ++exact_ok;
    else if (exact_ok + 8 > sums) std::printf("MISMATCH exact sum %" PRIu64 " (%zu terms)\n", i, v.size());
    const double want = mpfr_get_d(sum.v, MPFR_RNDN), got = acc.to_double();
    if (want == 0 ? got == 0 : std::bit_cast<std::uint64_t>(want) == std::bit_cast<std::uint64_t>(got)) ++double_ok;
    else if (double_ok + 8 > sums) std::printf("MISMATCH to_double %" PRIu64 ": %a vs mpfr %a\n", i, got, want);
    if (acc.value().sticky) ++wide;

    // (b) one rounding of the sum.
    const double odd = round_to_odd_double(sum.v);
    for (const named& target : round_targets()) {
      const auto describe = [&] { return target.name + " sum #" + std::to_string(i); };
      for (std::uint32_t mi = 0; mi < modes.size(); ++mi) {
        const round_mode m = modes[mi].mode;
        o.exact_double(odd != 0 ? odd : (zero_sum_negative(v, m) ? -0.0 : 0.0));
        const oracle::by_policy ref = o.round_policies(target.fmt, m, 16);
        for (const overflow_policy p : policies_for(target.fmt)) {
          const rounded r = acc.round(target.fmt, rounding{m, p});
          det.compare(target.fmt, r, ref[static_cast<int>(p)], describe);
          unpacked cut = acc.value(m);  // the same sum without the sticky bit
          cut.sticky = false;
          if (fpemu::round(target.fmt, cut, rounding{m, p}) != r) ++sticky_decides;
        }
      }
      for (const mode_case& m : stochastic) {
        const rounding r{m.mode, overflow_policy::ieee, m.mode == round_mode::stochastic ? m.sr_bits : 16};
        const std::uint64_t random = gen.bits();
        const unpacked ref = truncated_100(sum.v, zero_sum_negative(v, m.mode));
        sto.compare(target.fmt, acc.round(target.fmt, r, random), fpemu::round(target.fmt, ref, r, random), describe);
      }
    }
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("exact sums: %" PRIu64 " sums, %" PRIu64 " terms, %" PRIu64 " exact == MPFR, %" PRIu64
              " to_double == MPFR, %" PRIu64 " wider than 128 bits, %" PRIu64
              " roundings where the sticky bit decided (%.1f s)\n",
              sums, terms, exact_ok, double_ok, wide, sticky_decides, seconds);
  CHECK(sums == kSums);
  for (const std::uint64_t n : per_format_sums) CHECK(n == kSums / 8);
  CHECK(exact_ok == kSums);
  CHECK(double_ok == kSums);
  CHECK(wide > kSums / 10);          // the sticky path is exercised...
  CHECK(sticky_decides > kSums / 20);  // ...and changes roundings, so it is really tested
  std::uint64_t det_per_sum = 0;
  for (const named& target : round_targets()) det_per_sum += policy_mode_count(target.fmt, modes);
  det.finish(kSums * det_per_sum, "20000 sums x (fp32, bf16, e4m3fn) x 6 modes x policies");
  sto.finish(kSums * 3 * 2, "20000 sums x 3 formats x (sr3, sr-exact)");
}

namespace {

namespace F = fpemu::formats;
constexpr std::uint32_t kOne = 0x3f80'0000, kTwo = 0x4000'0000, kPinf = 0x7f80'0000, kNinf = 0xff80'0000;
constexpr std::uint32_t kQnan = 0x7fc0'0000, kNqnan = 0xffc0'0000, kSnan = 0x7f80'0001;
constexpr std::uint32_t kPzero = 0, kNzero = 0x8000'0000;

// 1 + 2^-24 is a tie in fp32; a term 2^-200, far below any 128-bit window of the sum, breaks it
// upward. Evaluated by the compiler: the accumulator is constexpr end to end.
constexpr rounded compile_time_sum() {
  exact_accumulator acc;
  acc.add_code(F::fp32, kOne);
  acc.add_product_codes(F::bf16, 0x3f80, F::bf16, 0x3380);  // 1 * 2^-24
  acc.add(fpemu::make_finite(false, 1, -200));
  return acc.round(F::fp32);
}
static_assert(compile_time_sum().code == 0x3f80'0001);
static_assert(compile_time_sum().flags == fpemu::flag::inexact);

mpfr_rnd_t mpfr_mode(round_mode m) {
  switch (m) {
    case round_mode::toward_zero: return MPFR_RNDZ;
    case round_mode::toward_positive: return MPFR_RNDU;
    case round_mode::toward_negative: return MPFR_RNDD;
    default: return MPFR_RNDN;  // every other mode gives an exact zero sum the sign RNE gives it
  }
}

}  // namespace

TEST_CASE("exact_accumulator special values: NaN propagates, inf - inf and 0 * inf are NaN (invalid), infinities win") {
  const format f = F::fp32;
  std::uint64_t cases = 0;
  const auto expect = [&](const exact_accumulator& acc, std::uint32_t code, std::uint8_t flags) {
    for (const mode_case& m : deterministic_modes()) {
      const rounded r = acc.round(f, rounding{m.mode});
      CHECK_MESSAGE(r.code == code, m.name);
      CHECK_MESSAGE(r.flags == flags, m.name);
      ++cases;
    }
  };
  const auto sum_of = [](std::initializer_list<std::uint32_t> codes) {
    exact_accumulator acc;
    for (const std::uint32_t c : codes) acc.add_code(F::fp32, c);
    return acc;
  };
  expect(sum_of({kOne, kQnan, kTwo}), kQnan, 0);
  expect(sum_of({kOne, kSnan}), kQnan, fpemu::flag::invalid);  // quieted, invalid
  expect(sum_of({kNqnan, kQnan}), kNqnan, 0);                  // the first NaN's sign
  expect(sum_of({kPinf, kNinf}), kQnan, fpemu::flag::invalid);
  expect(sum_of({kNinf, kOne, kPinf}), kQnan, fpemu::flag::invalid);
  expect(sum_of({kPinf, kQnan}), kQnan, 0);
  expect(sum_of({kPinf, kOne, kPinf}), kPinf, 0);
  expect(sum_of({kNinf, kTwo}), kNinf, 0);
  exact_accumulator acc;
  acc.add_product_codes(f, kPzero, f, kPinf);
  expect(acc, kQnan, fpemu::flag::invalid);
  acc.clear();
  acc.add_product_codes(f, kNinf, f, kNzero);
  expect(acc, kQnan, fpemu::flag::invalid);
  acc.clear();
  acc.add_product_codes(f, kNinf, f, kTwo);
  acc.add_code(f, kOne);
  expect(acc, kNinf, 0);
  acc.add_product_codes(f, kNinf, f, kNinf);  // -inf + inf
  expect(acc, kQnan, fpemu::flag::invalid);
  acc.clear();
  acc.add_product_codes(f, kQnan, f, kPzero);  // NaN * 0: quiet NaN, no invalid
  expect(acc, kQnan, 0);
  acc.clear();
  acc.add_product_codes(f, kTwo, f, kSnan);
  expect(acc, kQnan, fpemu::flag::invalid);
  CHECK(!acc.is_zero());
  CHECK(acc.value().cls == value_class::nan);
  acc.clear();
  CHECK(acc.is_zero());
  CHECK(acc.value().cls == value_class::zero);
  CHECK(cases == 14 * 6);
}

TEST_CASE("exact_accumulator signed zeros == IEEE 754 6.3 and mpfr_sum: -0 + -0 = -0, -0 + +0 and x - x = +0 (-0 rounding down)") {
  const format f = F::fp32;
  const auto c = [&](std::uint32_t code) { return code_term(f, code); };
  const auto p = [&](std::uint32_t a, std::uint32_t b) { return product_term(f, a, f, b); };
  const term x = code_term(f, 0x4049'0fdb), mx = negated(x), xy = p(0x4049'0fdb, 0x3eaa'aaab);
  const std::vector<std::vector<term>> sums{
      {},
      {c(kNzero)},
      {c(kPzero)},
      {c(kNzero), c(kNzero)},
      {c(kNzero), c(kPzero)},
      {c(kPzero), c(kPzero)},
      {x, mx},
      {x, mx, c(kNzero)},
      {c(kNzero), mx, x, c(kNzero)},
      {p(kNzero, kTwo)},
      {p(kNzero, 0xc000'0000)},
      {p(kNzero, kTwo), p(kPzero, 0xc000'0000), c(kNzero)},
      {p(kNzero, kTwo), c(kPzero)},
      {xy, negated(xy)},
      {negated(xy), c(kNzero), xy},
  };
  std::uint64_t cases = 0;
  mp x_mp(64), y_mp(64);
  for (std::size_t i = 0; i < sums.size(); ++i) {
    exact_accumulator acc;
    std::vector<mp*> parts;
    for (const term& t : sums[i]) {
      apply(acc, t);
      parts.push_back(new mp(128));
      mpfr_set_zero(parts.back()->v, 1);
      REQUIRE(apply(parts.back()->v, t, x_mp.v, y_mp.v));  // 0 + t: +0 + -0 would lose a -0, so
      if (zero_of(t).zero) mpfr_set_zero(parts.back()->v, zero_of(t).negative ? -1 : 1);  // set it
    }
    std::vector<mpfr_ptr> tab;
    for (mp* q : parts) tab.push_back(q->v);
    mp total(128);
    for (const mode_case& m : deterministic_modes()) {
      REQUIRE(mpfr_sum(total.v, tab.data(), tab.size(), mpfr_mode(m.mode)) == 0);
      REQUIRE(mpfr_zero_p(total.v));
      const bool want_negative = mpfr_signbit(total.v) != 0;
      CHECK_MESSAGE(want_negative == zero_sum_negative(sums[i], m.mode), "sum #" << i << " " << m.name);
      CHECK(acc.is_zero());
      const unpacked u = acc.value(m.mode);
      CHECK_MESSAGE((u.cls == value_class::zero && u.negative == want_negative), "sum #" << i << " " << m.name);
      CHECK(acc.round(f, rounding{m.mode}).code == (want_negative ? kNzero : kPzero));
      ++cases;
    }
    for (mp* q : parts) delete q;
  }
  CHECK(cases == 15 * 6);
  // The rules spelled out, independently of MPFR.
  exact_accumulator nn, np, xx;
  nn.add_code(f, kNzero), nn.add_code(f, kNzero);
  np.add_code(f, kNzero), np.add_code(f, kPzero);
  xx.add_code(f, kTwo), xx.subtract(fpemu::decode(f, kTwo));
  for (const mode_case& m : deterministic_modes()) {
    const bool down = m.mode == round_mode::toward_negative;
    CHECK(nn.value(m.mode).negative);
    CHECK(np.value(m.mode).negative == down);
    CHECK(xx.value(m.mode).negative == down);
  }
}

TEST_CASE("exact_accumulator window edges == MPFR: 2^-2148, 2^2138, (max e11m20)^2 x 2^20, borrows across all 67 limbs") {
  const format w = user_format("e11m20:bias=1055").fmt, e11 = user_format("e11m20").fmt;
  const std::uint32_t big = fpemu::max_finite_magnitude(e11);
  mp want(kExactPrecision), got(kExactPrecision), x(64), y(64);
  std::uint64_t cases = 0;
  const auto check_exact = [&](const exact_accumulator& acc, const char* what) {
    CHECK_MESSAGE(rebuild(acc, got.v), what);
    CHECK_MESSAGE(mpfr_cmp(got.v, want.v) == 0, what);
    CHECK_MESSAGE(acc.to_double() == mpfr_get_d(want.v, MPFR_RNDN), what);
    ++cases;
  };
  exact_accumulator acc;
  mpfr_set_zero(want.v, 1);
  acc.add_product_codes(w, 1, w, 1);
  REQUIRE(apply(want.v, product_term(w, 1, w, 1), x.v, y.v));
  CHECK(acc.value().exp == -2148);
  CHECK(acc.value().sig == 1);
  check_exact(acc, "2^-2148");

  acc.clear();  // -2^-2148 (all limbs ones) + max^2: a carry through every limb
  acc.add_product(fpemu::negate(fpemu::decode(w, 1)), fpemu::decode(w, 1));
  acc.add_product_codes(e11, big, e11, big);
  mpfr_set_zero(want.v, 1);
  REQUIRE(apply(want.v, product_term(w, 1, w, 1, true), x.v, y.v));
  REQUIRE(apply(want.v, product_term(e11, big, e11, big), x.v, y.v));
  CHECK(acc.value().sticky);
  check_exact(acc, "max^2 - 2^-2148");
  CHECK(acc.round(F::fp32, rounding{round_mode::toward_zero}).code == 0x7f7f'ffff);
  CHECK(acc.round(F::fp32).code == kPinf);

  for (int k = 0; k < (1 << 20); ++k) acc.add_product_codes(e11, big, e11, big);
  for (int k = 0; k < (1 << 20); ++k) REQUIRE(apply(want.v, product_term(e11, big, e11, big), x.v, y.v));
  check_exact(acc, "2^20 + 1 times max^2 - 2^-2148");
  for (int k = 0; k <= (1 << 20); ++k) acc.add_product_codes(e11, big | fpemu::sign_mask(e11), e11, big);
  for (int k = 0; k <= (1 << 20); ++k) REQUIRE(apply(want.v, product_term(e11, big, e11, big, true), x.v, y.v));
  check_exact(acc, "-2^-2148 after the borrows");

  for (const bool neg : {false, true}) {  // the top of the window: 2^2138 just below the sign bit
    acc.clear();
    acc.add(fpemu::make_finite(neg, 1, 2138));
    acc.add(fpemu::make_finite(!neg, 3, -2148));
    mpfr_set_zero(want.v, 1);
    REQUIRE(apply(want.v, pow2_term(2138, neg), x.v, y.v));
    REQUIRE(apply(want.v, pow2_term(-2148, !neg), x.v, y.v));
    REQUIRE(apply(want.v, pow2_term(-2147, !neg), x.v, y.v));
    check_exact(acc, "+-(2^2138 - 3 * 2^-2148)");
    CHECK(acc.to_double() == (neg ? -HUGE_VAL : HUGE_VAL));
  }
  CHECK(cases == 6);
}
