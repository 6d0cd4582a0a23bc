// A Boost.Multiprecision backend for the emulated formats, so that Boost.Math runs in them:
// number<fpemu::mp::backend<F, R>> is format F with every operation rounded once by the core in
// rounding R (Boost.Multiprecision's "Backend Requirements"; tested with Boost 1.74).
//
//   #include <boost/math/special_functions/erf.hpp>
//   #include <fpemu/boost_multiprecision.hpp>
//   using bf16 = boost::multiprecision::number<fpemu::mp::backend<fpemu::formats::bf16>>;
//   bf16 x = 2;
//   bf16 y = boost::math::erf(x);          // 0.99609375, every step rounded into bf16
//   std::uint8_t f = y.backend().flags();  // fpemu::flag::inexact
//   using e4m3_rz = boost::multiprecision::number<
//       fpemu::mp::backend<fpemu::formats::e4m3fn, fpemu::rounding{fpemu::round_mode::toward_zero}>>;
//
// One call to the core, in R: +, -, *, /, sqrt, fpemu::mp::fma, every conversion into the format
// (integers, double, long double, decimal or hex text) and to float. A mixed operand (x + 0.1)
// is converted first, as in every Boost backend: two roundings, each correct. Exact: negate, abs,
// comparisons (mixed ones too: x < 0.1 compares with the exact 0.1), classification, conversion
// to double, long double and integers (truncated, saturated; NaN throws, as in Boost's backends);
// floor, ceil, trunc, round, frexp, ldexp round their exact result once, so they are exact
// whenever it is a value of the format. exp is fpemu's in-format algorithm (detail::exp_in_format;
// Boost's fails in formats whose largest value is below 2048); log, pow and the rest are Boost's
// generic algorithms built from the operations above. str() prints the code's exact value with
// printf's correctly rounded decimal conversion; digits == 0 asks for max_digits10 digits.
//
// Status flags, without global or thread-local state: each value carries the OR of the IEEE
// flags (fpemu::flag) of every rounding its computation went through, its own and its operands',
// so x.backend().flags() tells whether anything that fed x overflowed, underflowed, was inexact,
// invalid or divided by zero. Flags follow data, not control flow (a NaN in a branch not taken
// leaves no mark). clear_flags() resets them.
//
// Not supported: the stochastic modes (a value has nowhere to keep a random stream; refused at
// compile time). Expression templates are off by default; with et_on, Boost's default evaluates
// a * b + c with two roundings, as with them off.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <ios>
#include <limits>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>

#include <boost/mpl/list.hpp>
#include <boost/multiprecision/number.hpp>
#include <boost/version.hpp>

#include "fpemu/compare.hpp"
#include "fpemu/convert.hpp"
#include "fpemu/detail/bits.hpp"
#include "fpemu/limits.hpp"
#include "fpemu/ops.hpp"
#include "fpemu/text.hpp"
#include "fpemu/value.hpp"

namespace fpemu::mp {

namespace detail {

// Boost.Multiprecision names a backend's canonical arithmetic types in Boost.MPL lists up to
// 1.76 and in std::tuple from 1.77 on (when it stopped depending on MPL).
#if BOOST_VERSION < 107700
template <class... T>
using type_list = boost::mpl::list<T...>;
#else
template <class... T>
using type_list = std::tuple<T...>;
#endif

// The exact value of a long double, beside convert.hpp's unpack of double, float and integers: its
// significand (64 bits on x86, up to 113 elsewhere) read as two 64-bit integers, each exactly.
using fpemu::unpack;
inline unpacked unpack(long double x) {
  static_assert(std::numeric_limits<long double>::radix == 2 && std::numeric_limits<long double>::digits <= 128);
  if (std::isnan(x)) return unpacked{value_class::nan, static_cast<bool>(std::signbit(x))};
  if (std::isinf(x)) return unpacked{value_class::infinite, static_cast<bool>(std::signbit(x))};
  if (x == 0) return unpacked{value_class::zero, static_cast<bool>(std::signbit(x))};
  int e = 0;
  const long double m = std::ldexp(std::frexp(std::fabs(x), &e), 64);  // in [2^63, 2^64)
  const long double hi = std::floor(m);
  const auto lo = static_cast<std::uint64_t>(std::ldexp(m - hi, 64));
  const fpemu::detail::u128 sig = (fpemu::detail::u128{static_cast<std::uint64_t>(hi)} << 64) | lo;
  return make_finite(std::signbit(x), sig, e - 128);
}

// NaN is unordered with everything; otherwise the exact order of the two values.
inline ordering order_exact(const unpacked& a, const unpacked& b) {
  if (fpemu::detail::any_nan(a, b)) return ordering::unordered;
  return fpemu::detail::order_of(a, b);
}

enum class integral_rule : std::uint8_t { floor, ceil, trunc, half_away };

template <class T>
concept arithmetic = std::is_arithmetic_v<T> && !std::is_same_v<T, bool>;

}  // namespace detail

template <format F, rounding R = rounding{}>
class backend {
  static_assert(!is_stochastic(R.mode),
                "fpemu::mp::backend: stochastic rounding needs random bits per operation; use the core functions");

 public:
  using signed_types = detail::type_list<long long>;
  using unsigned_types = detail::type_list<unsigned long long>;
  using float_types = detail::type_list<double, long double>;
  using exponent_type = int;

  static constexpr format fmt = F;
  static constexpr rounding mode = R;

  constexpr backend() = default;  // +0 (code 0), no flags
  // Member by member: GCC 12 takes a whole copy of a backend with a 1-byte code for a 2-byte write
  // into the code (-Wstringop-overflow).
  constexpr backend(const backend& o) : value_(o.value_), flags_(o.flags_) {}
  constexpr backend& operator=(const backend& o) {
    value_ = o.value_;
    flags_ = o.flags_;
    return *this;
  }

  static backend from_code(std::uint32_t code, std::uint8_t flags = 0) {
    return backend().assign(rounded{code, flags, 0});
  }
  // Stores a core result; `inherited` are the operands' flags.
  backend& assign(const rounded& r, std::uint8_t inherited = 0) {
    value_ = fp<F>::from_code(r.code);
    flags_ = static_cast<std::uint8_t>(inherited | r.flags);
    return *this;
  }

  backend& operator=(long long x) { return assign(from(F, static_cast<std::int64_t>(x), R)); }
  backend& operator=(unsigned long long x) { return assign(from(F, static_cast<std::uint64_t>(x), R)); }
  backend& operator=(double x) { return assign(from(F, x, R)); }
  backend& operator=(long double x) { return assign(fpemu::round(F, detail::unpack(x), R)); }
  // Decimal or C99 hex-float text, or inf/nan, rounded once (text.hpp); Boost's convention for bad
  // text is an exception.
  backend& operator=(const char* text) {
    const expected<rounded> r = from_string(F, text, R);
    if (!r) throw std::runtime_error("fpemu::mp::backend: " + r.message());
    return assign(*r);
  }

  void swap(backend& o) noexcept { std::swap(*this, o); }

  // The iostream flags as printf's: showpos +, showpoint #, fixed f, scientific e, both a, neither g.
  std::string str(std::streamsize digits, std::ios_base::fmtflags f) const {
    const bool fixed = (f & std::ios_base::fixed) != 0, scientific = (f & std::ios_base::scientific) != 0;
    char conversion = fixed && scientific ? 'a' : fixed ? 'f' : scientific ? 'e' : 'g';
    if (f & std::ios_base::uppercase) conversion = static_cast<char>(conversion - 'a' + 'A');
    const std::string spec = std::string("%") + ((f & std::ios_base::showpos) ? "+" : "") +
                             ((f & std::ios_base::showpoint) ? "#" : "") + ".*" + conversion;
    const int precision = digits > 0 ? static_cast<int>(digits) : std::numeric_limits<fp<F>>::max_digits10;
    const double v = to_double(F, code());  // exact
    std::string out(static_cast<std::size_t>(std::snprintf(nullptr, 0, spec.c_str(), precision, v)) + 1, '\0');
    std::snprintf(out.data(), out.size(), spec.c_str(), precision, v);
    out.pop_back();
    return out;
  }

  // IEEE negate: a sign-bit flip (fp<F>'s unary minus); where -x has no code, the core decides.
  void negate() {
    if constexpr (F.is_signed)
      value_ = -value_;
    else
      assign(fpemu::round(F, fpemu::negate(decode(F, code())), R), flags_);
  }

  // -1, 0, +1; 0 also for an unordered pair, as MPFR's mpfr_cmp (Boost's operators test NaN first).
  int compare(const backend& o) const { return sign_of(compare_quiet(F, code(), o.code()).order); }
  template <detail::arithmetic A>
  int compare(const A& a) const {
    return sign_of(detail::order_exact(decode(F, code()), detail::unpack(a)));
  }

  fp<F> value() const { return value_; }
  std::uint32_t code() const { return value_.code(); }
  std::uint8_t flags() const { return flags_; }
  void clear_flags() { flags_ = 0; }

 private:
  static int sign_of(ordering o) { return o == ordering::less ? -1 : (o == ordering::greater ? 1 : 0); }

  fp<F> value_{};
  std::uint8_t flags_ = 0;
};

namespace detail {

using core_operation = rounded (*)(const format&, std::uint32_t, std::uint32_t, const rounding&, std::uint64_t);

// out = a op b (out may be a or b), op one of fpemu::add, sub, mul, div.
template <format F, rounding R>
void arithmetic_op(backend<F, R>& out, core_operation op, const backend<F, R>& a, const backend<F, R>& b) {
  out.assign(op(F, a.code(), b.code(), R, 0), static_cast<std::uint8_t>(a.flags() | b.flags()));
}

// The type of signed_types, unsigned_types or float_types that an arithmetic operand converts
// through (exactly) before it is rounded into the format.
template <class A>
using canonical_t = std::conditional_t<std::is_floating_point_v<A>,
                                       std::conditional_t<(sizeof(A) > sizeof(double)), long double, double>,
                                       std::conditional_t<std::is_signed_v<A>, long long, unsigned long long>>;

// A backend as it is, an arithmetic operand converted (rounded once) into one.
template <format F, rounding R, class A>
backend<F, R> operand(const A& a) {
  if constexpr (std::is_same_v<A, backend<F, R>>) {
    return a;
  } else {
    backend<F, R> b;
    b = static_cast<canonical_t<A>>(a);
    return b;
  }
}

template <class A, format F, rounding R>
concept operand_of = std::is_same_v<A, backend<F, R>> || arithmetic<A>;

// floor/ceil/trunc/round: the exact integer, rounded once (exact whenever the format holds it).
template <format F, rounding R>
void integral(backend<F, R>& out, const backend<F, R>& x, integral_rule rule) {
  const unpacked u = decode(F, x.code());
  if (u.cls != value_class::finite || u.exp >= 0) return void(out = x);
  const int shift = -u.exp;
  const fpemu::detail::u128 whole = shift >= 128 ? 0 : u.sig >> shift;
  const fpemu::detail::u128 fraction = shift >= 128 ? u.sig : u.sig & fpemu::detail::low_mask(shift);
  const bool at_least_half = shift <= 127 && (fraction >> (shift - 1)) != 0;
  const bool up = rule == integral_rule::floor  ? u.negative && fraction != 0  // away from zero
                  : rule == integral_rule::ceil ? !u.negative && fraction != 0
                                                : rule == integral_rule::half_away && at_least_half;
  out.assign(fpemu::round(F, make_finite(u.negative, whole + (up ? 1 : 0), 0), R), x.flags());
}

}  // namespace detail

// ---- The functions Boost.Multiprecision looks up for a backend (found by ADL) ----------------

// Two- and three-operand forms, the latter for every mix of backend and arithmetic operands
// (Boost's defaults would compute 1 - x as -(x - 1): another rounding in the directed modes).
#define FPEMU_MP_ARITHMETIC(name, op)                                                     \
  template <format F, rounding R>                                                         \
  void name(backend<F, R>& r, const backend<F, R>& a) {                                   \
    detail::arithmetic_op(r, op, r, a);                                                   \
  }                                                                                       \
  template <format F, rounding R, detail::operand_of<F, R> A, detail::operand_of<F, R> B> \
  void name(backend<F, R>& r, const A& a, const B& b) {                                   \
    detail::arithmetic_op(r, op, detail::operand<F, R>(a), detail::operand<F, R>(b));     \
  }
FPEMU_MP_ARITHMETIC(eval_add, &fpemu::add)
FPEMU_MP_ARITHMETIC(eval_subtract, &fpemu::sub)
FPEMU_MP_ARITHMETIC(eval_multiply, &fpemu::mul)
FPEMU_MP_ARITHMETIC(eval_divide, &fpemu::div)
#undef FPEMU_MP_ARITHMETIC

template <format F, rounding R>
void eval_sqrt(backend<F, R>& r, const backend<F, R>& a) { r.assign(fpemu::sqrt(F, a.code(), R), a.flags()); }

template <format F, rounding R>
void eval_fabs(backend<F, R>& r, const backend<F, R>& a) { r.assign(rounded{abs(a.value()).code(), 0, 0}, a.flags()); }
template <format F, rounding R>
void eval_abs(backend<F, R>& r, const backend<F, R>& a) { eval_fabs(r, a); }

template <format F, rounding R>
void eval_floor(backend<F, R>& r, const backend<F, R>& a) { detail::integral(r, a, detail::integral_rule::floor); }
template <format F, rounding R>
void eval_ceil(backend<F, R>& r, const backend<F, R>& a) { detail::integral(r, a, detail::integral_rule::ceil); }
template <format F, rounding R>
void eval_trunc(backend<F, R>& r, const backend<F, R>& a) { detail::integral(r, a, detail::integral_rule::trunc); }
template <format F, rounding R>
void eval_round(backend<F, R>& r, const backend<F, R>& a) { detail::integral(r, a, detail::integral_rule::half_away); }

// x = m * 2^e with 1/2 <= |m| < 1; m rounded once (exact unless m falls below the format's
// smallest value, as in a format whose 1/2 is subnormal). Zero, infinities and NaN: e = 0.
template <format F, rounding R, class I>
void eval_frexp(backend<F, R>& r, const backend<F, R>& x, I* e) {
  unpacked u = decode(F, x.code());
  *e = 0;
  if (u.cls != value_class::finite) return void(r = x);
  const int lead = fpemu::detail::msb128(u.sig) + u.exp;  // 2^lead <= |x| < 2^(lead + 1)
  *e = static_cast<I>(lead + 1);
  u.exp -= lead + 1;
  r.assign(fpemu::round(F, u, R), x.flags());
}

// x * 2^e, rounded once (exact unless it leaves the format's range).
template <format F, rounding R, class I>
void eval_ldexp(backend<F, R>& r, const backend<F, R>& x, I e) {
  unpacked u = decode(F, x.code());
  if (u.cls != value_class::finite) return void(r = x);
  // Far beyond every format's range; the clamp keeps the exponent arithmetic from overflowing.
  constexpr long long limit = 1 << 20;
  const long long shift = static_cast<long long>(e);
  u.exp += static_cast<int>(shift > limit ? limit : (shift < -limit ? -limit : shift));
  r.assign(fpemu::round(F, u, R), x.flags());
}

template <format F, rounding R>
int eval_fpclassify(const backend<F, R>& x) {
  switch (classify(F, x.code())) {
    case fp_class::signaling_nan:
    case fp_class::quiet_nan: return FP_NAN;
    case fp_class::negative_infinity:
    case fp_class::positive_infinity: return FP_INFINITE;
    case fp_class::negative_zero:
    case fp_class::positive_zero: return FP_ZERO;
    case fp_class::negative_subnormal:
    case fp_class::positive_subnormal: return FP_SUBNORMAL;
    default: return FP_NORMAL;
  }
}
template <format F, rounding R>
bool eval_is_zero(const backend<F, R>& x) { return decode(F, x.code()).cls == value_class::zero; }
// -1, 0 or +1; 0 for zeros and NaN.
template <format F, rounding R>
int eval_get_sign(const backend<F, R>& x) {
  const unpacked u = decode(F, x.code());
  return u.cls == value_class::zero || u.cls == value_class::nan ? 0 : (u.negative ? -1 : 1);
}
// As fpemu::signbit: the sign the core decodes, none for the NaN of fnuz (code 0x80: unsigned).
template <format F, rounding R>
int eval_signbit(const backend<F, R>& x) { return signbit(x.value()) ? 1 : 0; }

// IEEE comparisons: false whenever a NaN takes part; exact against arithmetic values as well.
#define FPEMU_MP_COMPARISON(name, relation)                                         \
  template <format F, rounding R>                                                   \
  bool name(const backend<F, R>& a, const backend<F, R>& b) {                       \
    return compare_quiet(F, a.code(), b.code()).order == relation;                  \
  }                                                                                 \
  template <format F, rounding R, detail::arithmetic A>                             \
  bool name(const backend<F, R>& a, const A& b) {                                   \
    return detail::order_exact(decode(F, a.code()), detail::unpack(b)) == relation; \
  }
FPEMU_MP_COMPARISON(eval_eq, ordering::equal)
FPEMU_MP_COMPARISON(eval_lt, ordering::less)
FPEMU_MP_COMPARISON(eval_gt, ordering::greater)
#undef FPEMU_MP_COMPARISON

template <format F, rounding R, detail::arithmetic T>
void eval_convert_to(T* out, const backend<F, R>& x) {
  if constexpr (std::is_floating_point_v<T> && sizeof(T) >= sizeof(double)) {
    *out = static_cast<T>(to_double(F, x.code()));  // exact
  } else if constexpr (std::is_floating_point_v<T>) {
    *out = to_float(F, x.code(), R);
  } else {
    // Every value of the format is a double: truncation and the range tests are exact.
    const double v = std::trunc(to_double(F, x.code()));
    if (std::isnan(v)) throw std::runtime_error("fpemu::mp::backend: NaN has no integer value");
    using limits = std::numeric_limits<T>;
    const double top = std::ldexp(1.0, limits::digits);  // T's largest value + 1
    *out = v >= top ? limits::max() : (v < (limits::is_signed ? -top : 0.0) ? limits::lowest() : static_cast<T>(v));
  }
}

namespace detail {

// exp in the format's own arithmetic, for any backend B with the functions above. Boost's generic
// exp divides by 2^11 held as a value of the type: NaN in e4m3fn and e4m3fnuz (its series then
// throws), the largest value in the MX types. Here:
// x = n ln2 + r with n = round(x / ln2), exp(r) by its Taylor series until a term falls below
// 2^-p of the sum, then the exact scaling by 2^n. Every step is one operation of the format.
// Beyond +-(range + 2 binades) the result is 1 scaled past the range, which the core rounds to
// overflow or underflow exactly as it would the true value.
template <class B>
void exp_in_format(B& result, const B& x) {
  using limits = std::numeric_limits<boost::multiprecision::number<B>>;
  B one;
  one = 1ull;
  const int cls = eval_fpclassify(x);
  if (cls == FP_NAN || (cls == FP_INFINITE && !eval_signbit(x))) return void(result = x);
  if (cls == FP_INFINITE) return void(result = 0ull);
  if (cls == FP_ZERO) return void(result = one);
  constexpr double ln2_approx = 0.6931471805599453;
  const int past = eval_gt(x, (limits::max_exponent + 1) * ln2_approx) ? limits::max_exponent + 1
                   : eval_lt(x, (limits::min_exponent - limits::digits - 3) * ln2_approx)
                       ? limits::min_exponent - limits::digits - 3
                       : 0;
  if (past != 0) return eval_ldexp(result, one, past);
  B ln2, n_value, reduced, t;
  ln2 = "0.69314718055994530941723212145817656807550013436025525412068";
  eval_divide(t, x, ln2);
  eval_round(n_value, t);
  const int n_cls = eval_fpclassify(n_value);  // NaN or infinite only in a format too narrow for its own range
  if (n_cls == FP_NAN || n_cls == FP_INFINITE) return void(result = n_value);
  int n = 0;
  eval_convert_to(&n, n_value);
  eval_multiply(t, n_value, ln2);
  eval_subtract(reduced, x, t);
  B sum = one, term = one, bound;
  for (unsigned long long k = 1; k < 100; ++k) {
    eval_multiply(term, reduced);
    eval_divide(term, term, k);
    eval_fabs(bound, sum);
    eval_ldexp(bound, bound, -limits::digits);
    B magnitude;
    eval_fabs(magnitude, term);
    if (!eval_gt(magnitude, bound)) break;
    eval_add(sum, term);
  }
  eval_ldexp(result, sum, n);
}

}  // namespace detail

template <format F, rounding R>
void eval_exp(backend<F, R>& r, const backend<F, R>& x) {
  backend<F, R> out;  // r may be x
  detail::exp_in_format(out, x);
  r = out;
}

// fma(a, b, c) = a * b + c rounded once, for numbers (Boost's own fma would round twice).
namespace detail {
template <format F, rounding R, boost::multiprecision::expression_template_option ET>
using number = boost::multiprecision::number<backend<F, R>, ET>;
}  // namespace detail
template <format F, rounding R, boost::multiprecision::expression_template_option ET>
detail::number<F, R, ET> fma(const detail::number<F, R, ET>& a, const detail::number<F, R, ET>& b,
                             const detail::number<F, R, ET>& c) {
  backend<F, R> r;
  r.assign(fpemu::fma(F, a.backend().code(), b.backend().code(), c.backend().code(), R),
           static_cast<std::uint8_t>(a.backend().flags() | b.backend().flags() | c.backend().flags()));
  return detail::number<F, R, ET>(r);
}

}  // namespace fpemu::mp

namespace boost::multiprecision {

// A floating-point backend. number_category<double> is the library's own spelling of that (an
// MPL or a std integral constant, depending on the Boost version).
template <fpemu::format F, fpemu::rounding R>
struct number_category<fpemu::mp::backend<F, R>> : number_category<double> {};

template <fpemu::format F, fpemu::rounding R>
struct expression_template_default<fpemu::mp::backend<F, R>> {
  static const expression_template_option value = et_off;
};

}  // namespace boost::multiprecision

namespace std {

// The format's limits: limits.hpp's numeric_limits<fp<F>>, with the values as numbers and
// round_style and round_error following the mode.
template <fpemu::format F, fpemu::rounding R, boost::multiprecision::expression_template_option ET>
class numeric_limits<boost::multiprecision::number<fpemu::mp::backend<F, R>, ET>>
    : public numeric_limits<fpemu::fp<F>> {
  using base = numeric_limits<fpemu::fp<F>>;
  using number_type = boost::multiprecision::number<fpemu::mp::backend<F, R>, ET>;
  static number_type of(fpemu::fp<F> v) { return number_type(fpemu::mp::backend<F, R>::from_code(v.code())); }
  static constexpr bool nearest =
      R.mode == fpemu::round_mode::nearest_even || R.mode == fpemu::round_mode::nearest_away;

 public:
  static constexpr float_round_style round_style =
      nearest                                        ? round_to_nearest
      : R.mode == fpemu::round_mode::toward_zero     ? round_toward_zero
      : R.mode == fpemu::round_mode::toward_positive ? round_toward_infinity
      : R.mode == fpemu::round_mode::toward_negative ? round_toward_neg_infinity
                                                     : round_indeterminate;
  static number_type min() { return of(base::min()); }
  static number_type max() { return of(base::max()); }
  static number_type lowest() { return of(base::lowest()); }
  static number_type epsilon() { return of(base::epsilon()); }
  static number_type round_error() { return of(fpemu::fp<F>(nearest ? 0.5 : 1.0)); }
  static number_type infinity() { return of(base::infinity()); }
  static number_type quiet_NaN() { return of(base::quiet_NaN()); }
  static number_type signaling_NaN() { return of(base::signaling_NaN()); }
  static number_type denorm_min() { return of(base::denorm_min()); }
};

}  // namespace std
