// A second reference for the core's arithmetic, independent of MPFR and of fpemu: the exact
// result of add, sub, mul, div and sqrt in boost::multiprecision::cpp_bin_float, rounded into the
// format by the routine below, written with cpp_bin_float operations and integer logic only.
//
//  - add, sub, mul: exact in a 320-bit cpp_bin_float (the operands of a format of at most 16 bits
//    span at most 2^128 .. 2^-133, so a sum needs at most 262 bits and a product 22).
//  - div, sqrt: a 128-bit quotient or root q (faithful at least), and the sign of the exact
//    residual a - q b or a - q^2 computed in 320 bits. The true result lies strictly between q and
//    the next 128-bit number in the residual's direction, and the rounding boundaries of a format
//    of at most 24 bits are 128-bit numbers, so q and that sign decide every mode.
//  - rounding: with E = floor(log2 |v|) and the quantum 2^Q, Q = max(E, emin) - frac_bits, the
//    scaled t = |v| / 2^Q splits exactly into n = floor(t) and a fraction compared with 1/2; the
//    residual sign settles the cases where the fraction is 0 or 1/2. The mode then picks n or
//    n + 1; a result above the largest finite value overflows as IEEE 754 prescribes (infinity,
//    NaN without one, the largest finite value in the modes that round toward zero).
//  - special values follow the stated conventions (format.hpp, ops.hpp): NaN takes the sign of the
//    first NaN operand, an invalid operation gives +NaN (+0 without NaN), an exact zero sum is +0
//    (-0 rounding down), x / 0 is an exact infinity, stored as NaN in fn/fnuz formats and as the
//    largest finite value in formats without NaN.
// Codes are read and written by reference_codes.hpp, from the format's fields.
#pragma once

#include <boost/multiprecision/cpp_bin_float.hpp>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <unordered_map>

#include "fpemu/format.hpp"
#include "fpemu/rounding.hpp"
#include "reference_codes.hpp"

namespace boost_test {

using wide =
    boost::multiprecision::number<boost::multiprecision::cpp_bin_float<320, boost::multiprecision::digit_base_2>,
                                  boost::multiprecision::et_off>;
using narrow =
    boost::multiprecision::number<boost::multiprecision::cpp_bin_float<128, boost::multiprecision::digit_base_2>,
                                  boost::multiprecision::et_off>;

enum class arith_op : std::uint8_t { add, sub, mul, div, sqrt };

struct exact_value {
  ref_value::kind cls = ref_value::kind::zero;
  bool negative = false;
  wide magnitude;    // finite only: > 0
  int residual = 0;  // finite only: sign of (true magnitude - magnitude)
};

struct ref_result {
  std::uint32_t code = 0;
  int direction = 0;  // sign of (result - exact value), 0 when exact or NaN
};

class bin_float_reference {
 public:
  explicit bin_float_reference(const fpemu::format& f) : f_(f), max_(ref_max_value(f)) {
    if (!f.has_zero || !f.subnormals)
      throw std::logic_error("bin_float_reference: formats with zero and subnormals only");
    const std::uint32_t codes = std::uint32_t{1} << ((f.is_signed ? 1 : 0) + f.exp_bits + f.frac_bits);
    for (std::uint32_t c = 0; c < codes; ++c) {
      const ref_value v = ref_decode(f, c);
      if (v.cls != ref_value::kind::nan) code_of_.emplace(bits(v.value), c);
    }
  }

  exact_value exact(arith_op op, std::uint32_t a_code, std::uint32_t b_code, fpemu::round_mode mode) const {
    const ref_value a = ref_decode(f_, a_code), b = ref_decode(f_, b_code);
    using kind = ref_value::kind;
    const auto special = [](kind k, bool negative) { return exact_value{k, negative, wide(0), 0}; };
    if (op == arith_op::sqrt) {
      if (a.cls == kind::nan || a.cls == kind::zero) return special(a.cls, a.negative);
      if (a.negative) return special(kind::nan, false);
      if (a.cls == kind::infinite) return special(kind::infinite, false);
      const narrow root = sqrt(narrow(a.value));
      const wide r = wide(root);
      return finite(false, r, wide(a.value) - r * r);
    }
    ref_value y = b;
    if (op == arith_op::sub && y.cls != kind::nan) {
      y.negative = !y.negative;
      y.value = -y.value;
    }
    if (a.cls == kind::nan) return special(kind::nan, a.negative);
    if (y.cls == kind::nan) return special(kind::nan, y.negative);
    const bool a_inf = a.cls == kind::infinite, y_inf = y.cls == kind::infinite;
    const bool a_zero = a.cls == kind::zero, y_zero = y.cls == kind::zero;
    const bool product_negative = a.negative != y.negative;
    switch (op) {
      case arith_op::add:
      case arith_op::sub: {
        if (a_inf && y_inf && a.negative != y.negative) return special(kind::nan, false);
        if (a_inf) return special(kind::infinite, a.negative);
        if (y_inf) return special(kind::infinite, y.negative);
        const bool round_down = mode == fpemu::round_mode::toward_negative;
        if (a_zero && y_zero) return special(kind::zero, a.negative == y.negative ? a.negative : round_down);
        const wide sum = wide(a.value) + wide(y.value);
        if (sum == 0) return special(kind::zero, round_down);
        return finite(sum < 0, abs(sum), wide(0));
      }
      case arith_op::mul:
        if ((a_inf && y_zero) || (a_zero && y_inf)) return special(kind::nan, false);
        if (a_inf || y_inf) return special(kind::infinite, product_negative);
        if (a_zero || y_zero) return special(kind::zero, product_negative);
        return finite(product_negative, abs(wide(a.value) * wide(y.value)), wide(0));
      case arith_op::div: {
        if ((a_inf && y_inf) || (a_zero && y_zero)) return special(kind::nan, false);
        if (a_inf || y_zero) return special(kind::infinite, product_negative);
        if (y_inf || a_zero) return special(kind::zero, product_negative);
        const narrow q = abs(narrow(a.value)) / abs(narrow(y.value));
        const wide wq = wide(q);
        return finite(product_negative, wq, abs(wide(a.value)) - wq * abs(wide(y.value)));
      }
      case arith_op::sqrt: break;
    }
    throw std::logic_error("bin_float_reference: unknown operation");
  }

  // The two candidates of a finite exact value, n * 2^Q and (n + 1) * 2^Q, and how the exact value
  // lies between them; the modes only choose.
  struct split {
    enum class position : std::uint8_t { exact, below_half, half, above_half } where = position::exact;
    std::uint64_t n = 0;
    int quantum_exponent = 0;
  };

  split locate(const exact_value& v) const {
    int e = 0;
    frexp(v.magnitude, &e);  // magnitude = m 2^e, 1/2 <= m < 1: floor(log2) = e - 1
    const int emin = 1 - f_.bias;
    split s;
    s.quantum_exponent = (e - 1 > emin ? e - 1 : emin) - f_.frac_bits;
    const wide t = ldexp(v.magnitude, -s.quantum_exponent);
    const wide whole = floor(t);
    const wide fraction = t - whole;
    s.n = whole.convert_to<std::uint64_t>();
    using position = split::position;
    if (fraction == 0) {
      if (v.residual == 0)
        s.where = position::exact;
      else if (v.residual > 0)
        s.where = position::below_half;
      else {  // just below n: between n - 1 and n, above the half-way point
        s.n -= 1;
        s.where = position::above_half;
      }
    } else if (fraction < wide(0.5)) {
      s.where = position::below_half;
    } else if (fraction == wide(0.5)) {
      s.where = v.residual == 0 ? position::half : (v.residual > 0 ? position::above_half : position::below_half);
    } else {
      s.where = position::above_half;
    }
    return s;
  }

  ref_result round(const exact_value& v, const split& s, fpemu::round_mode mode) const {
    using kind = ref_value::kind;
    switch (v.cls) {
      case kind::nan: return {fpemu::has_nan(f_) ? ref_nan(f_, v.negative) : ref_zero(f_, false), 0};
      case kind::zero: return {ref_zero(f_, v.negative), 0};
      case kind::infinite:
        if (f_.encoding == fpemu::nonfinite::ieee) return {ref_inf(f_, v.negative), 0};
        if (fpemu::has_nan(f_)) return {ref_nan(f_, v.negative), 0};
        return {ref_max(f_, v.negative), v.negative ? 1 : -1};
      case kind::finite: break;
    }
    const bool neg = v.negative;
    using position = split::position;
    const bool inexact = s.where != position::exact, odd = (s.n & 1) != 0;
    bool up = false;  // away from zero
    switch (mode) {
      case fpemu::round_mode::nearest_even:
        up = s.where == position::above_half || (s.where == position::half && odd);
        break;
      case fpemu::round_mode::nearest_away: up = s.where == position::above_half || s.where == position::half; break;
      case fpemu::round_mode::toward_zero: up = false; break;
      case fpemu::round_mode::toward_positive: up = inexact && !neg; break;
      case fpemu::round_mode::toward_negative: up = inexact && neg; break;
      case fpemu::round_mode::to_odd: up = inexact && !odd; break;
      default: throw std::logic_error("bin_float_reference: deterministic modes only");
    }
    const int direction = !inexact ? 0 : ((up != neg) ? 1 : -1);
    const std::uint64_t m = s.n + (up ? 1 : 0);
    if (m == 0) return {ref_zero(f_, neg), direction};
    const wide value = ldexp(wide(m), s.quantum_exponent);
    if (value > wide(max_)) {
      const bool to_infinity = mode == fpemu::round_mode::nearest_even || mode == fpemu::round_mode::nearest_away ||
                               (mode == fpemu::round_mode::toward_positive && !neg) ||
                               (mode == fpemu::round_mode::toward_negative && neg);
      const int toward_zero = neg ? 1 : -1;
      if (!to_infinity) return {ref_max(f_, neg), toward_zero};
      if (f_.encoding == fpemu::nonfinite::ieee) return {ref_inf(f_, neg), -toward_zero};
      if (fpemu::has_nan(f_)) return {ref_nan(f_, neg), 0};
      return {ref_max(f_, neg), toward_zero};
    }
    const double d = value.convert_to<double>();  // exact: a value of the format
    const auto it = code_of_.find(bits(neg ? -d : d));
    if (it == code_of_.end()) throw std::logic_error("bin_float_reference: the rounded value is not in the format");
    return {it->second, direction};
  }

 private:
  static exact_value finite(bool negative, const wide& magnitude, const wide& residual) {
    return exact_value{ref_value::kind::finite, negative, magnitude, residual > 0 ? 1 : (residual < 0 ? -1 : 0)};
  }
  static std::uint64_t bits(double d) {
    std::uint64_t b = 0;
    std::memcpy(&b, &d, sizeof d);
    return b;
  }

  fpemu::format f_;
  double max_;
  std::unordered_map<std::uint64_t, std::uint32_t> code_of_;
};

}  // namespace boost_test
