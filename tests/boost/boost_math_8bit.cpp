// Boost.Math in the FP8 formats, every step against MPFR (boost_math_run.hpp). The sweep takes
// every code of the format as an argument.
#include <doctest/doctest.h>

#include "boost_math_run.hpp"

using fpemu::round_mode;
using fpemu::rounding;
namespace F = fpemu::formats;

TEST_CASE(
    "Boost.Math in e4m3fn: every step of exp log sqrt erf tgamma, 2 quadratures and 3 root finders == MPFR; rne rz") {
  boost_test::compare_with_mpfr<F::e4m3fn, rounding{round_mode::nearest_even}>("e4m3fn rne");
  boost_test::compare_with_mpfr<F::e4m3fn, rounding{round_mode::toward_zero}>("e4m3fn rz");
}
TEST_CASE(
    "Boost.Math in e4m3fnuz and e5m2fnuz: every step of exp log sqrt erf tgamma, 2 quadratures and 3 root finders == "
    "MPFR; rne rd") {
  boost_test::compare_with_mpfr<F::e4m3fnuz, rounding{round_mode::nearest_even}>("e4m3fnuz rne");
  boost_test::compare_with_mpfr<F::e5m2fnuz, rounding{round_mode::toward_negative}>("e5m2fnuz rd");
}
TEST_CASE(
    "Boost.Math in e5m2: every step of exp log sqrt erf tgamma, 2 quadratures and 3 root finders == MPFR; rne ru") {
  boost_test::compare_with_mpfr<F::e5m2, rounding{round_mode::nearest_even}>("e5m2 rne");
  boost_test::compare_with_mpfr<F::e5m2, rounding{round_mode::toward_positive}>("e5m2 ru");
}
