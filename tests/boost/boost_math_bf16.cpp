// Boost.Math in bf16, every step against MPFR (boost_math_run.hpp), in the four modes MPFR has.
#include <doctest/doctest.h>

#include "boost_math_run.hpp"

using fpemu::round_mode;
using fpemu::rounding;
namespace F = fpemu::formats;

TEST_CASE(
    "Boost.Math in bf16: every step of exp log sqrt erf tgamma, 2 quadratures and 3 root finders == MPFR; rne rz ru "
    "rd") {
  boost_test::compare_with_mpfr<F::bf16, rounding{round_mode::nearest_even}>("bf16 rne");
  boost_test::compare_with_mpfr<F::bf16, rounding{round_mode::toward_zero}>("bf16 rz");
  boost_test::compare_with_mpfr<F::bf16, rounding{round_mode::toward_positive}>("bf16 ru");
  boost_test::compare_with_mpfr<F::bf16, rounding{round_mode::toward_negative}>("bf16 rd");
}
