// The MPFR oracle (see mpfr_oracle.hpp). Nothing here calls the rounding core, the exact_*
// operations or fpemu::decode: codes are read and written from the format's fields, and MPFR
// makes every rounding decision.
#include "analysis/oracle/mpfr_oracle.hpp"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>

// clang-format off
#include <stdint.h>  // before mpfr.h: declares mpfr_get_uj
#include <mpfr.h>
// clang-format on

namespace fpemu::mpfr_oracle {
namespace {

using kind = decoded::kind;

// Precision of the exact result: >= p + 66 for every p <= 32, so that the round-to-odd value
// keeps the 64 bits below the quantum that stochastic_exact reads, plus a sticky bit.
constexpr mpfr_prec_t kPrecision = 128;

[[noreturn]] void oracle_bug(const char* what) {
  std::fprintf(stderr, "mpfr_oracle: internal check failed: %s\n", what);
  std::abort();
}
#define ORACLE_CHECK(cond) \
  do {                     \
    if (!(cond)) oracle_bug(#cond); \
  } while (0)

// ---- The format's fields, read plainly ----------------------------------------------------

int magnitude_bits(const format& f) { return f.exp_bits + f.frac_bits; }
std::uint32_t sign_bit(const format& f) { return f.is_signed ? std::uint32_t{1} << magnitude_bits(f) : 0; }
std::uint32_t all_ones(int bits) { return bits >= 32 ? ~std::uint32_t{0} : (std::uint32_t{1} << bits) - 1; }
std::uint32_t exponent_all_ones(const format& f) { return all_ones(f.exp_bits); }
bool format_has_nan(const format& f) { return f.encoding != nonfinite::finite; }
bool format_has_inf(const format& f) { return f.encoding == nonfinite::ieee; }
bool format_has_negative_zero(const format& f) {
  return f.is_signed && f.has_zero && f.encoding != nonfinite::fnuz;
}
// Exponent of the smallest normal number: the field 1 (or 0 when there is no zero) minus bias.
long smallest_normal_exponent(const format& f) { return (f.has_zero ? 1 : 0) - f.bias; }

std::uint32_t nan_code(const format& f, bool negative) {
  const std::uint32_t sign = negative ? sign_bit(f) : 0;
  switch (f.encoding) {
    case nonfinite::ieee:
      return sign | (exponent_all_ones(f) << f.frac_bits) | (std::uint32_t{1} << (f.frac_bits - 1));
    case nonfinite::fn: return sign | all_ones(magnitude_bits(f));
    case nonfinite::fnuz: return sign_bit(f);  // the negative-zero pattern, unsigned
    case nonfinite::finite: break;
  }
  oracle_bug("nan_code for a format without NaN");
}
std::uint32_t inf_code(const format& f, bool negative) {
  return (negative ? sign_bit(f) : 0) | (exponent_all_ones(f) << f.frac_bits);
}
std::uint32_t zero_code(const format& f, bool negative) {
  return negative && format_has_negative_zero(f) ? sign_bit(f) : 0;
}

// The magnitude bits of the largest finite code: walk down from all ones until a code decodes
// to a finite value (skipping the whole inf/NaN exponent field of an IEEE format at once).
std::uint32_t max_finite_magnitude_bits(const format& f) {
  std::uint32_t mag = all_ones(magnitude_bits(f));
  for (;;) {
    const decoded d = decode_code(f, mag);
    if (d.cls == kind::finite) break;
    if (f.encoding == nonfinite::ieee && (mag >> f.frac_bits) == exponent_all_ones(f)) {
      mag = (exponent_all_ones(f) << f.frac_bits) - 1;
    } else {
      ORACLE_CHECK(mag != 0);
      --mag;
    }
  }
  if (mag != all_ones(magnitude_bits(f))) ORACLE_CHECK(decode_code(f, mag + 1).cls != kind::finite);
  return mag;
}

struct format_facts {
  format fmt{};
  bool valid = false;
  std::uint32_t max_mag = 0;
  double max_value = 0;
};
const format_facts& facts(const format& f) {
  thread_local format_facts cache;
  if (!cache.valid || !(cache.fmt == f)) {
    cache.fmt = f;
    cache.max_mag = max_finite_magnitude_bits(f);
    cache.max_value = decode_code(f, cache.max_mag).value;
    cache.valid = true;
  }
  return cache;
}

// A finite value of f (already rounded into it) as its code.
std::uint32_t encode_finite(const format& f, double v) {
  const bool negative = std::signbit(v);
  if (v == 0) return zero_code(f, negative);
  ORACLE_CHECK(f.is_signed || !negative);
  const double a = std::fabs(v);
  const long lo = smallest_normal_exponent(f);
  std::uint32_t field = 0;
  double frac = 0;
  if (a < std::ldexp(1.0, static_cast<int>(lo))) {
    ORACLE_CHECK(f.subnormals && f.has_zero);
    frac = std::ldexp(a, static_cast<int>(f.frac_bits - lo));
  } else {
    const int e = std::ilogb(a);
    field = static_cast<std::uint32_t>(e + f.bias);
    frac = std::ldexp(a, f.frac_bits - e) - std::ldexp(1.0, f.frac_bits);
  }
  ORACLE_CHECK(frac >= 0 && frac < std::ldexp(1.0, f.frac_bits) && frac == std::floor(frac));
  const std::uint32_t code = (negative ? sign_bit(f) : 0) | (field << f.frac_bits) | static_cast<std::uint32_t>(frac);
  // Read it back: the code must decode to exactly v.
  const decoded back = decode_code(f, code);
  ORACLE_CHECK(back.cls == kind::finite && back.value == v);
  return code;
}

}  // namespace

decoded decode_code(const format& f, std::uint32_t code) {
  const int w = (f.is_signed ? 1 : 0) + magnitude_bits(f);
  code &= all_ones(w);
  decoded d;
  d.negative = f.is_signed && ((code >> magnitude_bits(f)) & 1) != 0;
  const std::uint32_t mag = code & all_ones(magnitude_bits(f));
  const std::uint32_t field = mag >> f.frac_bits;
  const std::uint32_t frac = mag & all_ones(f.frac_bits);
  const double sign = d.negative ? -1.0 : 1.0;

  switch (f.encoding) {
    case nonfinite::ieee:
      if (field == exponent_all_ones(f)) {
        if (frac == 0) {
          d.cls = kind::infinite;
          d.value = sign * std::numeric_limits<double>::infinity();
        } else {
          d.cls = kind::nan;
          d.signaling = ((frac >> (f.frac_bits - 1)) & 1) == 0;
          d.value = std::copysign(std::numeric_limits<double>::quiet_NaN(), sign);
        }
        return d;
      }
      break;
    case nonfinite::fn:
      if (mag == all_ones(magnitude_bits(f))) {
        d.cls = kind::nan;
        d.value = std::copysign(std::numeric_limits<double>::quiet_NaN(), sign);
        return d;
      }
      break;
    case nonfinite::fnuz:
      if (d.negative && mag == 0) {
        d.cls = kind::nan;
        d.negative = false;
        d.value = std::numeric_limits<double>::quiet_NaN();
        return d;
      }
      break;
    case nonfinite::finite: break;
  }
  if (f.has_zero && field == 0) {
    if (frac == 0 || !f.subnormals) {
      d.cls = kind::zero;
      d.value = sign * 0.0;
      return d;
    }
    d.cls = kind::finite;  // subnormal: frac * 2^(emin - frac_bits)
    d.value = sign * std::ldexp(static_cast<double>(frac), static_cast<int>(smallest_normal_exponent(f) - f.frac_bits));
    return d;
  }
  d.cls = kind::finite;  // normal: (2^frac_bits + frac) * 2^(field - bias - frac_bits)
  const double sig = std::ldexp(1.0, f.frac_bits) + static_cast<double>(frac);
  d.value = sign * std::ldexp(sig, static_cast<int>(field) - f.bias - f.frac_bits);
  return d;
}

double max_finite_value(const format& f) { return facts(f).max_value; }

// ---- The oracle ----------------------------------------------------------------------------

struct oracle::state {
  // The exact result: class, sign, and for finite values x, rounded to odd at kPrecision bits.
  kind cls = kind::zero;
  bool negative = false;
  bool zero_sign_by_mode = false;  // exact zero sum of non-zero (or opposite zero) operands
  std::uint8_t op_flags = 0;        // invalid / divide_by_zero raised by the operation
  std::uint8_t inf_flag = flag::invalid;  // raised when an infinite x is not kept (no inf, saturate)

  mpfr_t x, op[3];
  mpfr_t unbounded, bounded, rz, ra, tmp, tmp2;
  mpfr_exp_t default_emin;

  state() {
    mpfr_init2(x, kPrecision);
    for (auto& o : op) mpfr_init2(o, 64);
    mpfr_inits2(kPrecision, unbounded, bounded, rz, ra, tmp, tmp2, static_cast<mpfr_ptr>(nullptr));
    default_emin = mpfr_get_emin();
  }
  ~state() {
    mpfr_clear(x);
    for (auto& o : op) mpfr_clear(o);
    mpfr_clears(unbounded, bounded, rz, ra, tmp, tmp2, static_cast<mpfr_ptr>(nullptr));
  }

  void reset() {
    cls = kind::zero;
    negative = false;
    zero_sign_by_mode = false;
    op_flags = 0;
    inf_flag = flag::invalid;
  }
  void set_nan(bool neg) {
    cls = kind::nan;
    negative = neg;
  }
  void set_invalid() {  // an invalid operation: a positive quiet NaN
    cls = kind::nan;
    negative = false;
    op_flags |= flag::invalid;
  }
  void set_inf(bool neg) {
    cls = kind::infinite;
    negative = neg;
  }
  void set_zero(bool neg) {
    cls = kind::zero;
    negative = neg;
  }
  void set_zero_by_mode() {
    cls = kind::zero;
    zero_sign_by_mode = true;
  }
  // x holds an MPFR_RNDZ result with ternary t: classify it and make it round-to-odd.
  void finish_finite(int t) {
    if (mpfr_zero_p(x)) {
      ORACLE_CHECK(t == 0);
      set_zero_by_mode();
      return;
    }
    ORACLE_CHECK(mpfr_number_p(x));
    cls = kind::finite;
    negative = mpfr_signbit(x) != 0;
    if (t != 0 && mpfr_min_prec(x) < kPrecision) {  // inexact with last bit 0: set it
      if (negative) {
        mpfr_nextbelow(x);
      } else {
        mpfr_nextabove(x);
      }
      ORACLE_CHECK(mpfr_min_prec(x) == kPrecision);
    }
  }

  // An operand: its class; finite values go into op[i] exactly.
  decoded load(const format& f, std::uint32_t code, int i) {
    const decoded d = decode_code(f, code);
    if (d.cls == kind::finite) ORACLE_CHECK(mpfr_set_d(op[i], d.value, MPFR_RNDN) == 0);
    return d;
  }
  // NaN operands: the first one's sign, invalid if any is signaling.
  bool propagate_nan(const decoded* ds, int n) {
    const decoded* first = nullptr;
    for (int i = 0; i < n; ++i) {
      if (ds[i].cls != kind::nan) continue;
      if (first == nullptr) first = &ds[i];
      if (ds[i].signaling) op_flags |= flag::invalid;
    }
    if (first == nullptr) return false;
    set_nan(first->negative);
    return true;
  }

  void add(const decoded& a, const decoded& b, bool b_negated) {
    // b_negated: b's sign (zero, inf and finite value) is flipped, NaN signs are not.
    const bool bneg = b.negative != b_negated;
    const decoded ds[2] = {a, b};
    if (propagate_nan(ds, 2)) return;
    if (a.cls == kind::infinite && b.cls == kind::infinite) {
      if (a.negative != bneg) {
        set_invalid();
      } else {
        set_inf(a.negative);
      }
      return;
    }
    if (a.cls == kind::infinite) return set_inf(a.negative);
    if (b.cls == kind::infinite) return set_inf(bneg);
    if (a.cls == kind::zero && b.cls == kind::zero) {
      if (a.negative == bneg) return set_zero(a.negative);
      return set_zero_by_mode();
    }
    if (a.cls == kind::zero) {
      ORACLE_CHECK(mpfr_set(x, op[1], MPFR_RNDN) == 0);
      if (b_negated) mpfr_neg(x, x, MPFR_RNDN);
      return finish_finite(0);
    }
    if (b.cls == kind::zero) {
      ORACLE_CHECK(mpfr_set(x, op[0], MPFR_RNDN) == 0);
      return finish_finite(0);
    }
    const int t = b_negated ? mpfr_sub(x, op[0], op[1], MPFR_RNDZ) : mpfr_add(x, op[0], op[1], MPFR_RNDZ);
    finish_finite(t);
  }

  void mul(const decoded& a, const decoded& b) {
    const decoded ds[2] = {a, b};
    if (propagate_nan(ds, 2)) return;
    const bool neg = a.negative != b.negative;
    const bool a_inf = a.cls == kind::infinite, b_inf = b.cls == kind::infinite;
    const bool a_zero = a.cls == kind::zero, b_zero = b.cls == kind::zero;
    if ((a_inf && b_zero) || (a_zero && b_inf)) return set_invalid();
    if (a_inf || b_inf) return set_inf(neg);
    if (a_zero || b_zero) return set_zero(neg);
    finish_finite(mpfr_mul(x, op[0], op[1], MPFR_RNDZ));
  }

  void div(const decoded& a, const decoded& b) {
    const decoded ds[2] = {a, b};
    if (propagate_nan(ds, 2)) return;
    const bool neg = a.negative != b.negative;
    const bool a_inf = a.cls == kind::infinite, b_inf = b.cls == kind::infinite;
    const bool a_zero = a.cls == kind::zero, b_zero = b.cls == kind::zero;
    if ((a_inf && b_inf) || (a_zero && b_zero)) return set_invalid();
    if (a_inf) return set_inf(neg);
    if (b_inf || a_zero) return set_zero(neg);
    if (b_zero) {  // finite non-zero / 0
      op_flags |= flag::divide_by_zero;
      inf_flag = flag::divide_by_zero;
      return set_inf(neg);
    }
    finish_finite(mpfr_div(x, op[0], op[1], MPFR_RNDZ));
  }

  void sqrt(const decoded& a) {
    if (propagate_nan(&a, 1)) return;
    if (a.cls == kind::zero) return set_zero(a.negative);  // sqrt(-0) = -0
    if (a.negative) return set_invalid();
    if (a.cls == kind::infinite) return set_inf(false);
    finish_finite(mpfr_sqrt(x, op[0], MPFR_RNDZ));
  }

  void fma(const decoded& a, const decoded& b, const decoded& c) {
    const bool a_inf = a.cls == kind::infinite, b_inf = b.cls == kind::infinite;
    const bool a_zero = a.cls == kind::zero, b_zero = b.cls == kind::zero;
    const bool zero_times_inf = (a_inf && b_zero) || (a_zero && b_inf);
    const decoded ds[3] = {a, b, c};
    if (propagate_nan(ds, 3)) {
      if (zero_times_inf) op_flags |= flag::invalid;
      return;
    }
    if (zero_times_inf) return set_invalid();
    const bool pneg = a.negative != b.negative;
    if (a_inf || b_inf) {
      if (c.cls == kind::infinite && c.negative != pneg) return set_invalid();
      return set_inf(pneg);
    }
    if (c.cls == kind::infinite) return set_inf(c.negative);
    if (a_zero || b_zero) {  // exact zero product
      if (c.cls == kind::zero) {
        if (c.negative == pneg) return set_zero(pneg);
        return set_zero_by_mode();
      }
      ORACLE_CHECK(mpfr_set(x, op[2], MPFR_RNDN) == 0);
      return finish_finite(0);
    }
    if (c.cls == kind::zero) {
      ORACLE_CHECK(mpfr_mul(x, op[0], op[1], MPFR_RNDZ) == 0);  // 64 + 64 bits fit
      return finish_finite(0);
    }
    finish_finite(mpfr_fma(x, op[0], op[1], op[2], MPFR_RNDZ));
  }

  // ---- Rounding x into a format ---------------------------------------------------------

  enum class range : std::uint8_t { unbounded, gradual, flush };

  // x rounded to PREC(y) bits by an MPFR mode, with the format's emin (MPFR exponent E: the
  // smallest positive value is 2^(E-1)) applied by mpfr_check_range and, for gradual
  // underflow, mpfr_subnormalize. Returns the ternary value (sign of y - x).
  int native(mpfr_ptr y, mpfr_rnd_t rnd, range rg, mpfr_exp_t e_mpfr) {
    int t = mpfr_set(y, x, rnd);
    if (rg != range::unbounded) {
      ORACLE_CHECK(mpfr_set_emin(e_mpfr) == 0);
      t = mpfr_check_range(y, t, rnd);
      if (rg == range::gradual) t = mpfr_subnormalize(y, t, rnd);
      mpfr_set_emin(default_emin);
    }
    return t;
  }

  // Is y (non-zero, a value of the range) odd in units of its quantum?
  bool odd(mpfr_srcptr y, range rg, int frac_bits, long emin_f) {
    if (mpfr_zero_p(y)) return false;
    const long e = static_cast<long>(mpfr_get_exp(y)) - 1;  // 2^e <= |y| < 2^(e+1)
    const long quantum = (rg == range::gradual && e < emin_f ? emin_f : e) - frac_bits;
    const long lowest_set = static_cast<long>(mpfr_get_exp(y)) - static_cast<long>(mpfr_min_prec(y));
    return lowest_set == quantum;
  }

  // x rounded in `mode` into y (precision already set) over range rg.
  void round_in(mpfr_ptr y, round_mode mode, int sr_bits, std::uint64_t random, range rg, mpfr_exp_t e_mpfr,
                int frac_bits, long emin_f) {
    switch (mode) {
      case round_mode::nearest_even: native(y, MPFR_RNDN, rg, e_mpfr); return;
      case round_mode::toward_zero: native(y, MPFR_RNDZ, rg, e_mpfr); return;
      case round_mode::toward_positive: native(y, MPFR_RNDU, rg, e_mpfr); return;
      case round_mode::toward_negative: native(y, MPFR_RNDD, rg, e_mpfr); return;
      default: break;
    }
    // The two candidates around x: RZ (toward zero) and RA (away from zero).
    mpfr_set_prec(rz, mpfr_get_prec(y));
    mpfr_set_prec(ra, mpfr_get_prec(y));
    if (native(rz, MPFR_RNDZ, rg, e_mpfr) == 0) {  // x is a value of the range
      mpfr_set(y, rz, MPFR_RNDN);
      return;
    }
    native(ra, MPFR_RNDA, rg, e_mpfr);
    bool away = false;
    switch (mode) {
      case round_mode::nearest_away: {
        // Away iff |x| >= the midpoint (|RZ| + |RA|) / 2, computed exactly.
        ORACLE_CHECK(mpfr_add(tmp, rz, ra, MPFR_RNDN) == 0);
        mpfr_div_2ui(tmp, tmp, 1, MPFR_RNDN);
        away = mpfr_cmpabs(x, tmp) >= 0;
        break;
      }
      case round_mode::to_odd:
        away = !odd(rz, rg, frac_bits, emin_f);
        break;
      case round_mode::stochastic:
      case round_mode::stochastic_exact: {
        // d = (|x| - |RZ|) / (|RA| - |RZ|), exact: the difference keeps x's low bits and the
        // divisor is a power of two.
        ORACLE_CHECK(mpfr_sub(tmp, x, rz, MPFR_RNDN) == 0);
        ORACLE_CHECK(mpfr_sub(tmp2, ra, rz, MPFR_RNDN) == 0);
        mpfr_abs(tmp, tmp, MPFR_RNDN);
        mpfr_abs(tmp2, tmp2, MPFR_RNDN);
        ORACLE_CHECK(mpfr_div(tmp, tmp, tmp2, MPFR_RNDN) == 0);
        ORACLE_CHECK(mpfr_cmp_ui(tmp, 0) > 0 && mpfr_cmp_ui(tmp, 1) < 0);
        if (mode == round_mode::stochastic) {
          ORACLE_CHECK(sr_bits >= 1 && sr_bits <= 32);
          mpfr_mul_2ui(tmp, tmp, static_cast<unsigned long>(sr_bits), MPFR_RNDN);
          const std::uint64_t floor_d = mpfr_get_uj(tmp, MPFR_RNDZ);  // floor(d * 2^k)
          const std::uint64_t r = random & ((std::uint64_t{1} << sr_bits) - 1);
          away = floor_d + r >= (std::uint64_t{1} << sr_bits);
        } else {
          mpfr_mul_2ui(tmp, tmp, 64, MPFR_RNDN);
          const std::uint64_t floor_d = mpfr_get_uj(tmp, MPFR_RNDZ);  // floor(d * 2^64)
          const bool s = !mpfr_integer_p(tmp);
          // F + random + s >= 2^64  <=>  random + s > 2^64 - 1 - F = ~F
          const std::uint64_t room = ~floor_d;
          away = s ? random >= room : random > room;
        }
        break;
      }
      default: oracle_bug("unknown rounding mode");
    }
    mpfr_set(y, away ? ra : rz, MPFR_RNDN);
  }

  by_policy round_policies(const format& f, round_mode mode, int sr_bits, std::uint64_t random) {
    by_policy out{};
    const auto all = [&](rounded r) {
      out.fill(r);
      return out;
    };
    const auto invalid_result = [&]() {  // NaN, or +0 where there is none; flag invalid
      return rounded{format_has_nan(f) ? nan_code(f, false) : 0, static_cast<std::uint8_t>(op_flags | flag::invalid), 0};
    };
    const format_facts& ff = facts(f);
    const std::uint32_t max_pos = ff.max_mag, max_neg = sign_bit(f) | ff.max_mag;

    switch (cls) {
      case kind::nan:
        if (!format_has_nan(f)) return all(invalid_result());
        return all({nan_code(f, negative), op_flags, 0});
      case kind::infinite: {
        if (negative && !f.is_signed) return all(invalid_result());
        const std::uint8_t flags = op_flags | inf_flag;
        const rounded largest{negative ? max_neg : max_pos, flags, static_cast<std::int8_t>(negative ? 1 : -1)};
        if (format_has_inf(f)) {  // kept, except that saturate clamps it (PTX .satfinite)
          all({inf_code(f, negative), op_flags, 0});
          out[static_cast<int>(overflow_policy::saturate)] = largest;
          return out;
        }
        if (!format_has_nan(f)) return all(largest);
        const rounded nan{nan_code(f, negative), flags, 0};
        out[static_cast<int>(overflow_policy::ieee)] = nan;
        out[static_cast<int>(overflow_policy::saturate)] = largest;
        out[static_cast<int>(overflow_policy::nan)] = nan;
        return out;
      }
      case kind::zero: {
        if (!f.has_zero) return all(invalid_result());
        const bool neg = zero_sign_by_mode ? mode == round_mode::toward_negative : negative;
        return all({zero_code(f, neg), op_flags, 0});
      }
      case kind::finite: break;
    }
    if (negative && !f.is_signed) return all(invalid_result());

    const mpfr_prec_t p = f.frac_bits + 1;
    const long emin_f = smallest_normal_exponent(f);
    const bool gradual = f.subnormals && f.has_zero;
    // MPFR writes values as 0.1b...b * 2^E: the smallest subnormal 2^(emin_f - frac_bits) (or
    // the smallest normal 2^emin_f without subnormals) is 2^(E-1).
    const mpfr_exp_t e_mpfr = static_cast<mpfr_exp_t>(gradual ? emin_f - f.frac_bits + 1 : emin_f + 1);

    // p bits, unbounded exponent range: decides tininess and overflow.
    mpfr_set_prec(unbounded, p);
    round_in(unbounded, mode, sr_bits, random, range::unbounded, 0, f.frac_bits, emin_f);
    const double max_value = ff.max_value;
    mpfr_set_d(tmp, max_value, MPFR_RNDN);
    const bool overflow = mpfr_cmpabs(unbounded, tmp) > 0;
    const bool tiny = mpfr_get_exp(unbounded) - 1 < emin_f;

    if (overflow) {
      const std::uint8_t flags = op_flags | flag::overflow | flag::inexact;
      const rounded largest{negative ? max_neg : max_pos, flags, static_cast<std::int8_t>(negative ? 1 : -1)};
      const bool toward_zero_like = mode == round_mode::toward_zero || mode == round_mode::to_odd ||
                                    (mode == round_mode::toward_positive && negative) ||
                                    (mode == round_mode::toward_negative && !negative);
      rounded ieee = largest;
      if (!toward_zero_like) {
        if (format_has_inf(f)) {
          ieee = {inf_code(f, negative), flags, static_cast<std::int8_t>(negative ? -1 : 1)};
        } else if (format_has_nan(f)) {
          ieee = {nan_code(f, negative), flags, 0};
        }
      }
      out[static_cast<int>(overflow_policy::ieee)] = ieee;
      out[static_cast<int>(overflow_policy::saturate)] = largest;
      out[static_cast<int>(overflow_policy::nan)] = format_has_nan(f) ? rounded{nan_code(f, negative), flags, 0} : largest;
      return out;
    }

    mpfr_set_prec(bounded, p);
    round_in(bounded, mode, sr_bits, random, gradual ? range::gradual : range::flush, e_mpfr, f.frac_bits, emin_f);
    if (mpfr_zero_p(bounded) && !f.has_zero) {  // no zero: the smallest positive value instead
      mpfr_set_ui_2exp(bounded, 1, emin_f, MPFR_RNDN);
      if (negative) mpfr_neg(bounded, bounded, MPFR_RNDN);
    }
    const int cmp = mpfr_cmp(bounded, x);
    std::uint8_t flags = op_flags;
    if (cmp != 0) flags |= flag::inexact;
    if (cmp != 0 && tiny) flags |= flag::underflow;
    const double v = mpfr_get_d(bounded, MPFR_RNDN);
    ORACLE_CHECK(mpfr_cmp_d(bounded, v) == 0 && std::fabs(v) <= max_value);
    return all({encode_finite(f, v), flags, static_cast<std::int8_t>(cmp > 0 ? 1 : (cmp < 0 ? -1 : 0))});
  }
};

oracle::oracle() : s_(std::make_unique<state>()) {}
oracle::~oracle() = default;

void oracle::exact_add(const format& f, std::uint32_t a, std::uint32_t b) {
  s_->reset();
  const decoded da = s_->load(f, a, 0), db = s_->load(f, b, 1);
  s_->add(da, db, false);
}
void oracle::exact_sub(const format& f, std::uint32_t a, std::uint32_t b) {
  s_->reset();
  const decoded da = s_->load(f, a, 0), db = s_->load(f, b, 1);
  s_->add(da, db, true);
}
void oracle::exact_mul(const format& f, std::uint32_t a, std::uint32_t b) {
  s_->reset();
  const decoded da = s_->load(f, a, 0), db = s_->load(f, b, 1);
  s_->mul(da, db);
}
void oracle::exact_div(const format& f, std::uint32_t a, std::uint32_t b) {
  s_->reset();
  const decoded da = s_->load(f, a, 0), db = s_->load(f, b, 1);
  s_->div(da, db);
}
void oracle::exact_fma(const format& f, std::uint32_t a, std::uint32_t b, std::uint32_t c) {
  s_->reset();
  const decoded da = s_->load(f, a, 0), db = s_->load(f, b, 1), dc = s_->load(f, c, 2);
  s_->fma(da, db, dc);
}
void oracle::exact_sqrt(const format& f, std::uint32_t a) {
  s_->reset();
  s_->sqrt(s_->load(f, a, 0));
}
void oracle::exact_code(const format& from, std::uint32_t code) {
  s_->reset();
  const decoded d = s_->load(from, code, 0);
  switch (d.cls) {
    case kind::nan:
      s_->set_nan(d.negative);
      if (d.signaling) s_->op_flags |= flag::invalid;
      return;
    case kind::infinite: return s_->set_inf(d.negative);
    case kind::zero: return s_->set_zero(d.negative);
    case kind::finite: break;
  }
  ORACLE_CHECK(mpfr_set(s_->x, s_->op[0], MPFR_RNDN) == 0);
  s_->finish_finite(0);
}
void oracle::exact_double(double v) {
  s_->reset();
  std::uint64_t bits = 0;
  static_assert(sizeof bits == sizeof v);
  __builtin_memcpy(&bits, &v, sizeof bits);
  const bool negative = (bits >> 63) != 0;
  if (std::isnan(v)) {
    s_->set_nan(negative);
    if (((bits >> 51) & 1) == 0) s_->op_flags |= flag::invalid;  // signaling
    return;
  }
  if (std::isinf(v)) return s_->set_inf(negative);
  if (v == 0) return s_->set_zero(negative);
  ORACLE_CHECK(mpfr_set_d(s_->x, v, MPFR_RNDN) == 0);
  s_->finish_finite(0);
}

rounded oracle::round(const format& f, const rounding& r, std::uint64_t random) {
  return s_->round_policies(f, r.mode, r.sr_bits, random)[static_cast<int>(r.overflow)];
}
by_policy oracle::round_policies(const format& f, round_mode mode, int sr_bits, std::uint64_t random) {
  return s_->round_policies(f, mode, sr_bits, random);
}

namespace {
oracle& local() {
  thread_local oracle o;
  return o;
}
}  // namespace

rounded add(const format& f, std::uint32_t a, std::uint32_t b, const rounding& r, std::uint64_t random) {
  local().exact_add(f, a, b);
  return local().round(f, r, random);
}
rounded sub(const format& f, std::uint32_t a, std::uint32_t b, const rounding& r, std::uint64_t random) {
  local().exact_sub(f, a, b);
  return local().round(f, r, random);
}
rounded mul(const format& f, std::uint32_t a, std::uint32_t b, const rounding& r, std::uint64_t random) {
  local().exact_mul(f, a, b);
  return local().round(f, r, random);
}
rounded div(const format& f, std::uint32_t a, std::uint32_t b, const rounding& r, std::uint64_t random) {
  local().exact_div(f, a, b);
  return local().round(f, r, random);
}
rounded fma(const format& f, std::uint32_t a, std::uint32_t b, std::uint32_t c, const rounding& r,
            std::uint64_t random) {
  local().exact_fma(f, a, b, c);
  return local().round(f, r, random);
}
rounded sqrt(const format& f, std::uint32_t a, const rounding& r, std::uint64_t random) {
  local().exact_sqrt(f, a);
  return local().round(f, r, random);
}
rounded convert(const format& to, const format& from, std::uint32_t code, const rounding& r, std::uint64_t random) {
  local().exact_code(from, code);
  return local().round(to, r, random);
}
rounded from_double(const format& f, double x, const rounding& r, std::uint64_t random) {
  local().exact_double(x);
  return local().round(f, r, random);
}

}  // namespace fpemu::mpfr_oracle
