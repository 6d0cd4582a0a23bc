// Boost.Math in fp16, every step against MPFR (boost_math_run.hpp), in the four modes MPFR has.
#include <doctest/doctest.h>

#include "boost_math_run.hpp"

using fpemu::round_mode;
using fpemu::rounding;
namespace F = fpemu::formats;

TEST_CASE(
    "Boost.Math in fp16: every step of exp log sqrt erf tgamma, 2 quadratures and 3 root finders == MPFR; rne rz ru "
    "rd") {
  boost_test::compare_with_mpfr<F::fp16, rounding{round_mode::nearest_even}>("fp16 rne");
  boost_test::compare_with_mpfr<F::fp16, rounding{round_mode::toward_zero}>("fp16 rz");
  boost_test::compare_with_mpfr<F::fp16, rounding{round_mode::toward_positive}>("fp16 ru");
  boost_test::compare_with_mpfr<F::fp16, rounding{round_mode::toward_negative}>("fp16 rd");
}
