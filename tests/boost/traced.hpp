// traced<B>: a Boost.Multiprecision backend that forwards every function to the backend B it wraps
// and records each call -- operation, operand codes, result code -- into a trace. Boost.Math run on
// number<traced<fpemu::mp::backend<F, R>>> and on number<traced<mpfr_backend<F, R>>> then yields two
// traces that are equal, element by element, exactly when every elementary step of fpemu agreed
// with MPFR (the same code path is taken as long as every earlier result agreed).
//
// traced<B> offers the same set of functions as fpemu::mp::backend, so Boost takes the same paths
// through it as through the untraced backend (the tests compare those final results too). exp
// runs fpemu's in-format algorithm on traced<B> itself, so its steps are recorded one by one.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "fpemu/boost_multiprecision.hpp"
#include "mpfr_backend.hpp"

namespace boost_test {

enum class step_op : std::uint8_t {
  from_int,
  from_uint,
  from_double,
  from_long_double,
  from_text,  // conversions into the format
  add,
  sub,
  mul,
  div,
  sqrt,
  fabs,
  floor,
  ceil,
  trunc,
  round,
  frexp,
  ldexp,
  negate,
  compare,
  eq,
  lt,
  gt,
  to_integer,
  to_double,
  to_float,
  classify,
  is_zero,
  sign,
  signbit,
};
inline const char* name(step_op o) {
  static const char* const names[] = {"from_int",  "from_uint", "from_double", "from_long_double",
                                      "from_text", "add",       "sub",         "mul",
                                      "div",       "sqrt",      "fabs",        "floor",
                                      "ceil",      "trunc",     "round",       "frexp",
                                      "ldexp",     "negate",    "compare",     "eq",
                                      "lt",        "gt",        "to_integer",  "to_double",
                                      "to_float",  "classify",  "is_zero",     "sign",
                                      "signbit"};
  return names[static_cast<int>(o)];
}
// The steps that make a rounding decision (those that produce a value of the format).
inline bool rounds(step_op o) { return o <= step_op::ldexp; }

struct step {
  step_op op{};
  std::uint64_t in1 = 0, in2 = 0;  // operand codes, or an arithmetic operand's bits
  std::uint64_t out = 0;           // result code (kNaN for any NaN), or the integer/bool result
  std::uint64_t aux = 0;           // frexp's exponent
  friend bool operator==(const step&, const step&) = default;
};
using trace = std::vector<step>;

// Every NaN code as one key: NaN payloads and signs are conventions, not roundings.
inline constexpr std::uint64_t kNaN = ~std::uint64_t{0};

template <fpemu::format F, fpemu::rounding R>
std::uint64_t key(const fpemu::mp::backend<F, R>& b) {
  return eval_fpclassify(b) == FP_NAN ? kNaN : b.code();
}
template <fpemu::format F, fpemu::rounding R>
std::uint64_t key(const mpfr_backend<F, R>& b) {
  return b.is_nan() ? kNaN : b.code();
}

template <class A>
std::uint64_t bits_of(const A& a) {
  if constexpr (std::is_floating_point_v<A> && sizeof(A) > sizeof(double)) {
    // The significand and the sign/exponent word, folded; an x87 long double has 10 bytes of
    // value and 6 of padding whose contents are unspecified.
    constexpr std::size_t value_bytes = std::numeric_limits<A>::digits == 64 ? 10 : sizeof(A);
    std::uint64_t w[2] = {0, 0};
    std::memcpy(w, &a, value_bytes < sizeof w ? value_bytes : sizeof w);
    return w[0] ^ (w[1] * 0x9e3779b97f4a7c15ull);
  } else if constexpr (std::is_floating_point_v<A>) {
    const double d = a;
    std::uint64_t w = 0;
    std::memcpy(&w, &d, sizeof d);
    return w;
  } else {
    return static_cast<std::uint64_t>(a);
  }
}

template <class B>
class traced {
 public:
  using signed_types = typename B::signed_types;
  using unsigned_types = typename B::unsigned_types;
  using float_types = typename B::float_types;
  using exponent_type = typename B::exponent_type;

  // Where steps go; none (nullptr) while Boost initialises its constants before main.
  static inline trace* sink = nullptr;

  B inner;

  traced() = default;
  explicit traced(const B& b) : inner(b) {}

  void record(step_op op, std::uint64_t in1, std::uint64_t in2, std::uint64_t out, std::uint64_t aux = 0) const {
    if (sink != nullptr) sink->push_back(step{op, in1, in2, out, aux});
  }

  traced& operator=(long long x) { return assign(step_op::from_int, x); }
  traced& operator=(unsigned long long x) { return assign(step_op::from_uint, x); }
  traced& operator=(double x) { return assign(step_op::from_double, x); }
  traced& operator=(long double x) { return assign(step_op::from_long_double, x); }
  traced& operator=(const char* text) {
    inner = text;
    record(step_op::from_text, std::hash<std::string>{}(text), 0, key(inner));
    return *this;
  }

  void swap(traced& o) noexcept { std::swap(inner, o.inner); }
  std::string str(std::streamsize digits, std::ios_base::fmtflags f) const { return inner.str(digits, f); }
  void negate() {
    const std::uint64_t before = key(inner);
    inner.negate();
    record(step_op::negate, before, 0, key(inner));
  }
  int compare(const traced& o) const {
    const int c = inner.compare(o.inner);
    record(step_op::compare, key(inner), key(o.inner), static_cast<std::uint64_t>(c));
    return c;
  }
  template <arithmetic A>
  int compare(const A& a) const {
    const int c = inner.compare(a);
    record(step_op::compare, key(inner), bits_of(a), static_cast<std::uint64_t>(c));
    return c;
  }

 private:
  template <class A>
  traced& assign(step_op op, const A& x) {
    inner = x;
    record(op, bits_of(x), 0, key(inner));
    return *this;
  }
};

template <class B>
const B& unwrap(const traced<B>& t) {
  return t.inner;
}
template <arithmetic A>
const A& unwrap(const A& a) {
  return a;
}
template <class B>
std::uint64_t operand_key(const traced<B>& t) {
  return key(t.inner);
}
template <arithmetic A>
std::uint64_t operand_key(const A& a) {
  return bits_of(a);
}

template <class A, class B>
concept traced_operand = std::is_same_v<A, traced<B>> || arithmetic<A>;

#define BOOST_TEST_TRACED_BINARY(name, op)                        \
  template <class B>                                              \
  void name(traced<B>& r, const traced<B>& a) {                   \
    const std::uint64_t k1 = key(r.inner), k2 = key(a.inner);     \
    name(r.inner, a.inner);                                       \
    r.record(op, k1, k2, key(r.inner));                           \
  }                                                               \
  template <class B, traced_operand<B> X, traced_operand<B> Y>    \
  void name(traced<B>& r, const X& x, const Y& y) {               \
    const std::uint64_t k1 = operand_key(x), k2 = operand_key(y); \
    name(r.inner, unwrap(x), unwrap(y));                          \
    r.record(op, k1, k2, key(r.inner));                           \
  }
BOOST_TEST_TRACED_BINARY(eval_add, step_op::add)
BOOST_TEST_TRACED_BINARY(eval_subtract, step_op::sub)
BOOST_TEST_TRACED_BINARY(eval_multiply, step_op::mul)
BOOST_TEST_TRACED_BINARY(eval_divide, step_op::div)
#undef BOOST_TEST_TRACED_BINARY

#define BOOST_TEST_TRACED_UNARY(name, op)       \
  template <class B>                            \
  void name(traced<B>& r, const traced<B>& a) { \
    const std::uint64_t k = key(a.inner);       \
    name(r.inner, a.inner);                     \
    r.record(op, k, 0, key(r.inner));           \
  }
BOOST_TEST_TRACED_UNARY(eval_sqrt, step_op::sqrt)
BOOST_TEST_TRACED_UNARY(eval_fabs, step_op::fabs)
BOOST_TEST_TRACED_UNARY(eval_abs, step_op::fabs)
BOOST_TEST_TRACED_UNARY(eval_floor, step_op::floor)
BOOST_TEST_TRACED_UNARY(eval_ceil, step_op::ceil)
BOOST_TEST_TRACED_UNARY(eval_trunc, step_op::trunc)
BOOST_TEST_TRACED_UNARY(eval_round, step_op::round)
#undef BOOST_TEST_TRACED_UNARY

template <class B, class I>
void eval_frexp(traced<B>& r, const traced<B>& a, I* e) {
  const std::uint64_t k = key(a.inner);
  eval_frexp(r.inner, a.inner, e);
  r.record(step_op::frexp, k, 0, key(r.inner), static_cast<std::uint64_t>(*e));
}
template <class B, class I>
void eval_ldexp(traced<B>& r, const traced<B>& a, I e) {
  const std::uint64_t k = key(a.inner);
  eval_ldexp(r.inner, a.inner, e);
  r.record(step_op::ldexp, k, static_cast<std::uint64_t>(e), key(r.inner));
}
// fpemu's exp algorithm on the traced type: each of its steps is recorded.
template <class B>
void eval_exp(traced<B>& r, const traced<B>& x) {
  traced<B> out;
  fpemu::mp::detail::exp_in_format(out, x);
  r = out;
}

template <class B>
int eval_fpclassify(const traced<B>& x) {
  const int c = eval_fpclassify(x.inner);
  x.record(step_op::classify, key(x.inner), 0, static_cast<std::uint64_t>(c));
  return c;
}
template <class B>
bool eval_is_zero(const traced<B>& x) {
  const bool z = eval_is_zero(x.inner);
  x.record(step_op::is_zero, key(x.inner), 0, z);
  return z;
}
template <class B>
int eval_get_sign(const traced<B>& x) {
  const int s = eval_get_sign(x.inner);
  x.record(step_op::sign, key(x.inner), 0, static_cast<std::uint64_t>(s));
  return s;
}
template <class B>
int eval_signbit(const traced<B>& x) {
  const int s = eval_signbit(x.inner);
  x.record(step_op::signbit, key(x.inner), 0, static_cast<std::uint64_t>(s));
  return s;
}

#define BOOST_TEST_TRACED_COMPARE(name, op)           \
  template <class B>                                  \
  bool name(const traced<B>& a, const traced<B>& b) { \
    const bool c = name(a.inner, b.inner);            \
    a.record(op, key(a.inner), key(b.inner), c);      \
    return c;                                         \
  }                                                   \
  template <class B, arithmetic A>                    \
  bool name(const traced<B>& a, const A& b) {         \
    const bool c = name(a.inner, b);                  \
    a.record(op, key(a.inner), bits_of(b), c);        \
    return c;                                         \
  }
BOOST_TEST_TRACED_COMPARE(eval_eq, step_op::eq)
BOOST_TEST_TRACED_COMPARE(eval_lt, step_op::lt)
BOOST_TEST_TRACED_COMPARE(eval_gt, step_op::gt)
#undef BOOST_TEST_TRACED_COMPARE

template <class B, arithmetic T>
void eval_convert_to(T* out, const traced<B>& x) {
  eval_convert_to(out, x.inner);
  const step_op op = std::is_integral_v<T> ? step_op::to_integer
                                           : (sizeof(T) < sizeof(double) ? step_op::to_float : step_op::to_double);
  x.record(op, key(x.inner), sizeof(T), bits_of(*out));
}

}  // namespace boost_test

namespace boost::multiprecision {
template <class B>
struct number_category<boost_test::traced<B>> : number_category<double> {};
template <class B>
struct expression_template_default<boost_test::traced<B>> {
  static const expression_template_option value = et_off;
};
}  // namespace boost::multiprecision

namespace std {

// The wrapped type's limits.
template <class B, boost::multiprecision::expression_template_option ET>
class numeric_limits<boost::multiprecision::number<boost_test::traced<B>, ET>>
    : public numeric_limits<boost::multiprecision::number<B, ET>> {
  using number_type = boost::multiprecision::number<boost_test::traced<B>, ET>;
  using base = numeric_limits<boost::multiprecision::number<B, ET>>;
  static number_type of(const boost::multiprecision::number<B, ET>& v) {
    return number_type(boost_test::traced<B>(v.backend()));
  }

 public:
  static number_type min() { return of(base::min()); }
  static number_type max() { return of(base::max()); }
  static number_type lowest() { return of(base::lowest()); }
  static number_type epsilon() { return of(base::epsilon()); }
  static number_type round_error() { return of(base::round_error()); }
  static number_type infinity() { return of(base::infinity()); }
  static number_type quiet_NaN() { return of(base::quiet_NaN()); }
  static number_type signaling_NaN() { return of(base::signaling_NaN()); }
  static number_type denorm_min() { return of(base::denorm_min()); }
};

}  // namespace std
