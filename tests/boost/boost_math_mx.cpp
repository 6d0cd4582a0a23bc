// Boost.Math in the OCP MX element types (no infinity, no NaN: overflow saturates, an invalid
// operation gives +0), every step against MPFR (boost_math_run.hpp). The sweep takes every code
// of the format as an argument.
#include <doctest/doctest.h>

#include "boost_math_run.hpp"

using fpemu::round_mode;
using fpemu::rounding;
namespace F = fpemu::formats;

TEST_CASE(
    "Boost.Math in e2m1fn e3m2fn e2m3fn: every step of exp log sqrt erf tgamma, 2 quadratures and 3 root finders == "
    "MPFR; rne rz") {
  boost_test::compare_with_mpfr<F::e2m1fn, rounding{round_mode::nearest_even}>("e2m1fn rne");
  boost_test::compare_with_mpfr<F::e3m2fn, rounding{round_mode::toward_zero}>("e3m2fn rz");
  boost_test::compare_with_mpfr<F::e2m3fn, rounding{round_mode::nearest_even}>("e2m3fn rne");
}
