// The reference for fpemu::mp::backend<F, R>: a Boost.Multiprecision backend over Boost's
// mpfr_float_backend<0> (MPFR, Fousse et al., ACM TOMS 2007) that holds values of format F at
// its precision p = frac_bits + 1 and offers exactly the functions fpemu's backend offers, so
// that Boost.Math takes the same path through both types.
//
// Every rounding is MPFR's: the operation is computed with p bits in the MPFR mode of R and the
// format's exponent range (emin set so that the smallest subnormal is MPFR's smallest value), and
// mpfr_subnormalize then rounds subnormal results with the operation's ternary value, so nothing
// is rounded twice (the subnormal emulation of the MPFR manual, section 5.4). Overflow and the
// non-IEEE encodings are applied afterwards from format.hpp's stated rules: a result rounded
// beyond the largest finite value becomes infinity, NaN (fn, fnuz) or the largest finite value as
// IEEE 754 prescribes for the mode, always the largest in a format without NaN (finite), where an
// invalid operation gives +0; fnuz has no -0. Round to nearest even, toward zero, up and down
// only (MPFR has no nearest-away or to-odd mode); overflow policy ieee only.
#pragma once

#include <boost/mpl/list.hpp>
#include <boost/multiprecision/mpfr.hpp>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "fpemu/boost_multiprecision.hpp"
#include "fpemu/format.hpp"
#include "fpemu/rounding.hpp"
#include "reference_codes.hpp"

namespace boost_test {

template <class T>
concept arithmetic = std::is_arithmetic_v<T> && !std::is_same_v<T, bool>;

constexpr mpfr_rnd_t mpfr_mode(fpemu::round_mode m) {
  switch (m) {
    case fpemu::round_mode::nearest_even: return MPFR_RNDN;
    case fpemu::round_mode::toward_zero: return MPFR_RNDZ;
    case fpemu::round_mode::toward_positive: return MPFR_RNDU;
    case fpemu::round_mode::toward_negative: return MPFR_RNDD;
    default: break;
  }
  return MPFR_RNDNA;  // refused by the static_assert below
}

// The format's exponent range for one MPFR call, restored afterwards.
class format_range {
 public:
  explicit format_range(const fpemu::format& f) : emin_(mpfr_get_emin()), emax_(mpfr_get_emax()) {
    mpfr_set_emin(1 - f.bias - f.frac_bits + 1);  // the smallest subnormal is 0.1b * 2^emin
    mpfr_set_emax(mpfr_get_emax_max());           // overflow is decided below, from the value
  }
  ~format_range() {
    mpfr_set_emin(emin_);
    mpfr_set_emax(emax_);
  }
  format_range(const format_range&) = delete;
  format_range& operator=(const format_range&) = delete;

 private:
  mpfr_exp_t emin_, emax_;
};

template <fpemu::format F, fpemu::rounding R>
class mpfr_backend {
  static_assert(mpfr_mode(R.mode) != MPFR_RNDNA && R.overflow == fpemu::overflow_policy::ieee,
                "mpfr_backend: rne, rz, ru, rd with the ieee overflow policy only");
  static_assert(F.has_zero && F.subnormals, "mpfr_backend: formats with zero and subnormals");

 public:
  using signed_types = boost::mpl::list<long long>;
  using unsigned_types = boost::mpl::list<unsigned long long>;
  using float_types = boost::mpl::list<double, long double>;
  using exponent_type = int;
  static constexpr int precision = F.frac_bits + 1;
  static constexpr mpfr_rnd_t rnd = mpfr_mode(R.mode);

  mpfr_backend() {
    mpfr_set_prec(data(), precision);
    mpfr_set_zero(data(), 1);
  }

  mpfr_ptr data() { return v_.data(); }
  mpfr_srcptr data() const { return v_.data(); }

  // Runs one MPFR operation into this value (its ternary value returned by `op`) and applies the
  // format: subnormals, overflow, encodings.
  template <class Op>
  mpfr_backend& apply(Op op) {
    format_range range(F);
    const int ternary = op(data());
    mpfr_subnormalize(data(), ternary, rnd);
    finish();
    return *this;
  }

  mpfr_backend& operator=(long long x) {
    return apply([&](mpfr_ptr r) { return mpfr_set_si(r, x, rnd); });
  }
  mpfr_backend& operator=(unsigned long long x) {
    return apply([&](mpfr_ptr r) { return mpfr_set_ui(r, x, rnd); });
  }
  mpfr_backend& operator=(double x) {
    return apply([&](mpfr_ptr r) { return mpfr_set_d(r, x, rnd); });
  }
  mpfr_backend& operator=(long double x) {
    return apply([&](mpfr_ptr r) { return mpfr_set_ld(r, x, rnd); });
  }
  mpfr_backend& operator=(const char* text) {
    return apply([&](mpfr_ptr r) {
      char* end = nullptr;
      const int t = mpfr_strtofr(r, text, &end, 0, rnd);
      if (end == text || *end != '\0') throw std::runtime_error(std::string("mpfr_backend: bad number ") + text);
      return t;
    });
  }

  void swap(mpfr_backend& o) noexcept { mpfr_swap(data(), o.data()); }
  std::string str(std::streamsize digits, std::ios_base::fmtflags f) const {
    return fpemu::mp::backend<F, R>::from_code(code()).str(digits, f);  // printing only: the same text
  }

  void negate() {
    mpfr_neg(data(), data(), MPFR_RNDN);
    finish();
  }
  int compare(const mpfr_backend& o) const {
    return mpfr_cmp(data(), o.data()) < 0 ? -1 : (mpfr_cmp(data(), o.data()) > 0);
  }
  template <arithmetic A>
  int compare(const A& a) const {
    const int c = compare_value(a);
    return c < 0 ? -1 : (c > 0);
  }
  // mpfr_cmp_* of this value and an arithmetic value; 0 where either is NaN.
  template <arithmetic A>
  int compare_value(const A& a) const {
    if (mpfr_nan_p(data())) return 0;
    if constexpr (std::is_floating_point_v<A>) {
      if (std::isnan(a)) return 0;
      if constexpr (sizeof(A) > sizeof(double))
        return mpfr_cmp_ld(data(), a);
      else
        return mpfr_cmp_d(data(), static_cast<double>(a));
    } else if constexpr (std::is_signed_v<A>) {
      return mpfr_cmp_si(data(), static_cast<long>(a));
    } else {
      return mpfr_cmp_ui(data(), static_cast<unsigned long>(a));
    }
  }

  bool is_nan() const { return mpfr_nan_p(data()) != 0; }
  double to_double() const { return mpfr_get_d(data(), MPFR_RNDN); }  // exact: every value is a double
  std::uint32_t code() const { return is_nan() ? ref_nan(F, mpfr_signbit(data()) != 0) : ref_encode(F, to_double()); }

 private:
  void finish() {
    mpfr_ptr x = data();
    if (mpfr_nan_p(x)) {  // an invalid operation: +0 in a format without NaN
      if (!fpemu::has_nan(F)) mpfr_set_zero(x, 1);
      return;
    }
    const bool negative = mpfr_signbit(x) != 0;
    const double max = ref_max_value(F);
    if (mpfr_inf_p(x) || mpfr_cmp_d(x, max) > 0 || mpfr_cmp_d(x, -max) < 0) {
      // An exact infinity (x / 0, inf + 1) is that infinity; a finite value rounded past the
      // largest goes to infinity only in the modes that round away from it. Without infinity,
      // NaN; without NaN either, the largest finite value.
      const bool toward_infinity = mpfr_inf_p(x) || R.mode == fpemu::round_mode::nearest_even ||
                                   (R.mode == fpemu::round_mode::toward_positive && !negative) ||
                                   (R.mode == fpemu::round_mode::toward_negative && negative);
      if (!toward_infinity || !fpemu::has_nan(F)) {
        mpfr_set_d(x, negative ? -max : max, MPFR_RNDN);
      } else if (fpemu::has_inf(F)) {
        mpfr_set_inf(x, negative ? -1 : 1);
      } else {
        mpfr_set_nan(x);
        if (negative) mpfr_setsign(x, x, 1, MPFR_RNDN);
      }
    }
    if (mpfr_zero_p(x) && F.encoding == fpemu::nonfinite::fnuz) mpfr_set_zero(x, 1);
  }

  boost::multiprecision::backends::mpfr_float_backend<0> v_;
};

template <fpemu::format F, fpemu::rounding R, class A>
mpfr_backend<F, R> as_operand(const A& a) {
  if constexpr (std::is_same_v<A, mpfr_backend<F, R>>) {
    return a;
  } else {
    mpfr_backend<F, R> b;
    b = static_cast<fpemu::mp::detail::canonical_t<A>>(a);  // as fpemu's backend converts it
    return b;
  }
}

template <class A, fpemu::format F, fpemu::rounding R>
concept mpfr_operand = std::is_same_v<A, mpfr_backend<F, R>> || arithmetic<A>;

// ---- The same functions as fpemu::mp::backend, each one MPFR call -----------------------------

#define BOOST_TEST_MPFR_BINARY(name, mpfr_fn)                                                         \
  template <fpemu::format F, fpemu::rounding R>                                                       \
  void name(mpfr_backend<F, R>& r, const mpfr_backend<F, R>& a) {                                     \
    const mpfr_backend<F, R> x = r;                                                                   \
    r.apply([&](mpfr_ptr out) { return mpfr_fn(out, x.data(), a.data(), mpfr_backend<F, R>::rnd); }); \
  }                                                                                                   \
  template <fpemu::format F, fpemu::rounding R, mpfr_operand<F, R> A, mpfr_operand<F, R> B>           \
  void name(mpfr_backend<F, R>& r, const A& a, const B& b) {                                          \
    const mpfr_backend<F, R> x = as_operand<F, R>(a), y = as_operand<F, R>(b);                        \
    r.apply([&](mpfr_ptr out) { return mpfr_fn(out, x.data(), y.data(), mpfr_backend<F, R>::rnd); }); \
  }
BOOST_TEST_MPFR_BINARY(eval_add, mpfr_add)
BOOST_TEST_MPFR_BINARY(eval_subtract, mpfr_sub)
BOOST_TEST_MPFR_BINARY(eval_multiply, mpfr_mul)
BOOST_TEST_MPFR_BINARY(eval_divide, mpfr_div)
#undef BOOST_TEST_MPFR_BINARY

// mpfr_abs is a macro; the table below needs a function.
inline int mpfr_abs_function(mpfr_ptr r, mpfr_srcptr x, mpfr_rnd_t rnd) { return mpfr_abs(r, x, rnd); }

#define BOOST_TEST_MPFR_UNARY(name, mpfr_call)                                                \
  template <fpemu::format F, fpemu::rounding R>                                               \
  void name(mpfr_backend<F, R>& r, const mpfr_backend<F, R>& a) {                             \
    const mpfr_backend<F, R> x = a;                                                           \
    r.apply([&](mpfr_ptr out) { return mpfr_call(out, x.data(), mpfr_backend<F, R>::rnd); }); \
  }
BOOST_TEST_MPFR_UNARY(eval_sqrt, mpfr_sqrt)
BOOST_TEST_MPFR_UNARY(eval_fabs, mpfr_abs_function)
BOOST_TEST_MPFR_UNARY(eval_abs, mpfr_abs_function)
BOOST_TEST_MPFR_UNARY(eval_floor, mpfr_rint_floor)
BOOST_TEST_MPFR_UNARY(eval_ceil, mpfr_rint_ceil)
BOOST_TEST_MPFR_UNARY(eval_trunc, mpfr_rint_trunc)
BOOST_TEST_MPFR_UNARY(eval_round, mpfr_rint_round)
#undef BOOST_TEST_MPFR_UNARY

template <fpemu::format F, fpemu::rounding R, class I>
void eval_frexp(mpfr_backend<F, R>& r, const mpfr_backend<F, R>& a, I* e) {
  const mpfr_backend<F, R> x = a;
  if (!mpfr_regular_p(x.data())) {
    r = x;
    *e = 0;
    return;
  }
  mpfr_exp_t exponent = 0;
  r.apply([&](mpfr_ptr out) { return mpfr_frexp(&exponent, out, x.data(), mpfr_backend<F, R>::rnd); });
  *e = static_cast<I>(exponent);
}
template <fpemu::format F, fpemu::rounding R, class I>
void eval_ldexp(mpfr_backend<F, R>& r, const mpfr_backend<F, R>& a, I e) {
  const mpfr_backend<F, R> x = a;
  const long shift = static_cast<long>(e) > (1 << 20)
                         ? (1 << 20)
                         : (static_cast<long>(e) < -(1 << 20) ? -(1 << 20) : static_cast<long>(e));
  r.apply([&](mpfr_ptr out) { return mpfr_mul_2si(out, x.data(), shift, mpfr_backend<F, R>::rnd); });
}
template <fpemu::format F, fpemu::rounding R>
void eval_exp(mpfr_backend<F, R>& r, const mpfr_backend<F, R>& x) {
  mpfr_backend<F, R> out;
  fpemu::mp::detail::exp_in_format(out, x);
  r = out;
}

template <fpemu::format F, fpemu::rounding R>
int eval_fpclassify(const mpfr_backend<F, R>& x) {
  if (mpfr_nan_p(x.data())) return FP_NAN;
  if (mpfr_inf_p(x.data())) return FP_INFINITE;
  if (mpfr_zero_p(x.data())) return FP_ZERO;
  return mpfr_get_exp(x.data()) <= 1 - F.bias ? FP_SUBNORMAL : FP_NORMAL;  // |x| < 2^emin
}
template <fpemu::format F, fpemu::rounding R>
bool eval_is_zero(const mpfr_backend<F, R>& x) {
  return mpfr_zero_p(x.data()) != 0;
}
template <fpemu::format F, fpemu::rounding R>
int eval_get_sign(const mpfr_backend<F, R>& x) {
  if (mpfr_nan_p(x.data()) || mpfr_zero_p(x.data())) return 0;
  return mpfr_sgn(x.data()) < 0 ? -1 : 1;
}
// The NaN of fnuz has no sign (format.hpp); every other code has one.
template <fpemu::format F, fpemu::rounding R>
int eval_signbit(const mpfr_backend<F, R>& x) {
  if (F.encoding == fpemu::nonfinite::fnuz && x.is_nan()) return 0;
  return mpfr_signbit(x.data()) ? 1 : 0;
}

template <fpemu::format F, fpemu::rounding R>
bool eval_eq(const mpfr_backend<F, R>& a, const mpfr_backend<F, R>& b) {
  return mpfr_equal_p(a.data(), b.data()) != 0;
}
template <fpemu::format F, fpemu::rounding R>
bool eval_lt(const mpfr_backend<F, R>& a, const mpfr_backend<F, R>& b) {
  return mpfr_less_p(a.data(), b.data()) != 0;
}
template <fpemu::format F, fpemu::rounding R>
bool eval_gt(const mpfr_backend<F, R>& a, const mpfr_backend<F, R>& b) {
  return mpfr_greater_p(a.data(), b.data()) != 0;
}
template <fpemu::format F, fpemu::rounding R, arithmetic A>
bool unordered_with(const mpfr_backend<F, R>& a, const A& b) {
  if constexpr (std::is_floating_point_v<A>)
    return a.is_nan() || std::isnan(b);
  else
    return a.is_nan();
}
template <fpemu::format F, fpemu::rounding R, arithmetic A>
bool eval_eq(const mpfr_backend<F, R>& a, const A& b) {
  return !unordered_with(a, b) && a.compare_value(b) == 0;
}
template <fpemu::format F, fpemu::rounding R, arithmetic A>
bool eval_lt(const mpfr_backend<F, R>& a, const A& b) {
  return !unordered_with(a, b) && a.compare_value(b) < 0;
}
template <fpemu::format F, fpemu::rounding R, arithmetic A>
bool eval_gt(const mpfr_backend<F, R>& a, const A& b) {
  return !unordered_with(a, b) && a.compare_value(b) > 0;
}

template <fpemu::format F, fpemu::rounding R, arithmetic T>
void eval_convert_to(T* out, const mpfr_backend<F, R>& x) {
  if constexpr (std::is_floating_point_v<T> && sizeof(T) > sizeof(double)) {
    *out = mpfr_get_ld(x.data(), MPFR_RNDN);
  } else if constexpr (std::is_same_v<T, double>) {
    *out = x.to_double();
  } else if constexpr (std::is_floating_point_v<T>) {
    *out = mpfr_get_flt(x.data(), mpfr_backend<F, R>::rnd);
  } else {
    if (x.is_nan()) throw std::runtime_error("mpfr_backend: NaN has no integer value");
    if constexpr (std::is_signed_v<T>) {
      const long v = mpfr_get_si(x.data(), MPFR_RNDZ);  // saturates at long's range
      using limits = std::numeric_limits<T>;
      *out = v < static_cast<long>(limits::lowest())
                 ? limits::lowest()
                 : (v > static_cast<long>(limits::max()) ? limits::max() : static_cast<T>(v));
    } else {
      const unsigned long v = mpfr_get_ui(x.data(), MPFR_RNDZ);  // 0 for negative values
      *out = v > std::numeric_limits<T>::max() ? std::numeric_limits<T>::max() : static_cast<T>(v);
    }
  }
}

}  // namespace boost_test

namespace boost::multiprecision {
template <fpemu::format F, fpemu::rounding R>
struct number_category<boost_test::mpfr_backend<F, R>> : number_category<double> {};
template <fpemu::format F, fpemu::rounding R>
struct expression_template_default<boost_test::mpfr_backend<F, R>> {
  static const expression_template_option value = et_off;
};
}  // namespace boost::multiprecision

namespace std {

// The format's limits, from its fields (reference_codes.hpp), not from fpemu's limits.hpp; the
// decimal-presentation constants (digits10 and the like) are taken from there, and the test of
// limits compares the two types member by member.
template <fpemu::format F, fpemu::rounding R, boost::multiprecision::expression_template_option ET>
class numeric_limits<boost::multiprecision::number<boost_test::mpfr_backend<F, R>, ET>> {
  using number_type = boost::multiprecision::number<boost_test::mpfr_backend<F, R>, ET>;
  using decimal = numeric_limits<fpemu::fp<F>>;
  static number_type of(double v) {
    number_type n;
    n.backend().apply([&](mpfr_ptr r) { return mpfr_set_d(r, v, MPFR_RNDN); });
    return n;
  }
  static constexpr bool nearest = R.mode == fpemu::round_mode::nearest_even;

 public:
  static constexpr bool is_specialized = true;
  static constexpr bool is_signed = true;
  static constexpr bool is_integer = false;
  static constexpr bool is_exact = false;
  static constexpr bool has_infinity = F.encoding == fpemu::nonfinite::ieee;
  static constexpr bool has_quiet_NaN = fpemu::has_nan(F);
  static constexpr bool has_signaling_NaN = decimal::has_signaling_NaN;
  static constexpr float_denorm_style has_denorm = denorm_present;
  static constexpr bool has_denorm_loss = false;
  static constexpr float_round_style round_style = nearest                                    ? round_to_nearest
                                                   : R.mode == fpemu::round_mode::toward_zero ? round_toward_zero
                                                   : R.mode == fpemu::round_mode::toward_positive
                                                       ? round_toward_infinity
                                                       : round_toward_neg_infinity;
  static constexpr bool is_iec559 = decimal::is_iec559;
  static constexpr bool is_bounded = true;
  static constexpr bool is_modulo = false;
  static constexpr int digits = F.frac_bits + 1;
  static constexpr int digits10 = decimal::digits10;
  static constexpr int max_digits10 = decimal::max_digits10;
  static constexpr int radix = 2;
  static constexpr int min_exponent = 2 - F.bias;  // 2^(min_exponent - 1) is the smallest normal
  // 2^(max_exponent - 1) <= max() < 2^max_exponent: the largest code's exponent field.
  static constexpr int max_exponent =
      static_cast<int>((boost_test::ref_max(F, false) & boost_test::field_mask(F.exp_bits + F.frac_bits)) >>
                       F.frac_bits) -
      F.bias + 1;
  static constexpr int min_exponent10 = decimal::min_exponent10;
  static constexpr int max_exponent10 = decimal::max_exponent10;
  static constexpr bool traps = false;
  static constexpr bool tinyness_before = false;

  static number_type min() { return of(std::ldexp(1.0, 1 - F.bias)); }
  static number_type max() { return of(boost_test::ref_max_value(F)); }
  static number_type lowest() { return of(-boost_test::ref_max_value(F)); }
  static number_type epsilon() { return of(std::ldexp(1.0, -F.frac_bits)); }
  static number_type round_error() { return of(nearest ? 0.5 : 1.0); }
  static number_type infinity() { return has_infinity ? of(HUGE_VAL) : number_type(); }
  static number_type quiet_NaN() { return has_quiet_NaN ? of(NAN) : number_type(); }
  static number_type signaling_NaN() { return of(NAN); }
  static number_type denorm_min() { return of(std::ldexp(1.0, 1 - F.bias - F.frac_bits)); }
};

}  // namespace std
