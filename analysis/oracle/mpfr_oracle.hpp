// An independent reference for every rounding the core makes: the MPFR oracle.
//
// It shares no code with the rounding core (round_core.hpp), the exact_* operations or
// fpemu::decode. Codes are read and written by its own decoder/encoder built from the format's
// fields, and every rounding decision is made by MPFR (Fousse et al., "MPFR: A multiple-precision
// binary floating-point library with correct rounding", ACM TOMS 2007):
//
//  1. The exact result X of the operation is computed at kPrecision = 128 bits in MPFR_RNDZ with
//     the default (huge) exponent range and made "round to odd" when inexact (the last bit set),
//     so every later rounding to <= 126 bits, and the 64 stochastic-rounding bits below a
//     quantum of a format of <= 32 bits, see the true value (Boldo & Melquiond 2008).
//  2. X is rounded to the format's precision p by mpfr_set with MPFR's own modes (RNDN, RNDZ,
//     RNDU, RNDD, RNDA), once with the unbounded exponent range (that result decides tininess and
//     overflow) and once with emin set to the format's, followed by mpfr_check_range and, for
//     formats with subnormals, mpfr_subnormalize -- the subnormal emulation of the MPFR manual.
//     Round-to-nearest-away, round-to-odd and the stochastic modes choose between the RNDZ and
//     RNDA candidates, with the distance d = (|X| - |RZ|) / (|RA| - |RZ|) computed exactly.
//  3. The IEEE special cases (NaN, infinities, signed zeros, invalid operations, division by
//     zero) and the overflow policy follow the rules in rounding.hpp and round_core.hpp, written
//     out again here case by case.
//
// The oracle is slow (hundreds of ns per rounding) and obviously correct; it is for tests.
// An `oracle` object owns its MPFR variables and is not thread-safe; the free functions use a
// thread_local oracle.
#pragma once

#include <array>
#include <cstdint>
#include <memory>

#include "fpemu/format.hpp"
#include "fpemu/rounding.hpp"
#include "fpemu/status.hpp"

namespace fpemu::mpfr_oracle {

// What the oracle reads from a code, without fpemu::decode. `value` is exact (every value of a
// validated format is a binary64 value); +-inf for infinities, NaN for NaN codes.
struct decoded {
  enum class kind : std::uint8_t { zero, finite, infinite, nan } cls = kind::zero;
  bool negative = false;
  bool signaling = false;  // IEEE-encoded NaN with the top fraction bit clear
  double value = 0;
};
decoded decode_code(const format& f, std::uint32_t code);

// The largest finite value of f, found by decoding the largest finite code.
double max_finite_value(const format& f);

// Results for the three overflow policies, indexed by static_cast<int>(overflow_policy).
using by_policy = std::array<rounded, 3>;

class oracle {
 public:
  oracle();
  ~oracle();
  oracle(const oracle&) = delete;
  oracle& operator=(const oracle&) = delete;

  // Step 1: compute the exact result of an operation on codes of f (kept inside the oracle).
  void exact_add(const format& f, std::uint32_t a, std::uint32_t b);
  void exact_sub(const format& f, std::uint32_t a, std::uint32_t b);
  void exact_mul(const format& f, std::uint32_t a, std::uint32_t b);
  void exact_div(const format& f, std::uint32_t a, std::uint32_t b);
  void exact_fma(const format& f, std::uint32_t a, std::uint32_t b, std::uint32_t c);
  void exact_sqrt(const format& f, std::uint32_t a);
  void exact_code(const format& from, std::uint32_t code);  // a conversion's source
  void exact_double(double x);

  // Step 2: round the exact result into f. The same exact result may be rounded many times.
  rounded round(const format& f, const rounding& r, std::uint64_t random = 0);
  // All three overflow policies at once (the `nan` entry is meaningless without a NaN).
  by_policy round_policies(const format& f, round_mode mode, int sr_bits, std::uint64_t random = 0);

 private:
  struct state;
  std::unique_ptr<state> s_;
};

// One-call entry points on a thread_local oracle.
rounded add(const format& f, std::uint32_t a, std::uint32_t b, const rounding& r, std::uint64_t random = 0);
rounded sub(const format& f, std::uint32_t a, std::uint32_t b, const rounding& r, std::uint64_t random = 0);
rounded mul(const format& f, std::uint32_t a, std::uint32_t b, const rounding& r, std::uint64_t random = 0);
rounded div(const format& f, std::uint32_t a, std::uint32_t b, const rounding& r, std::uint64_t random = 0);
rounded fma(const format& f, std::uint32_t a, std::uint32_t b, std::uint32_t c, const rounding& r,
            std::uint64_t random = 0);
rounded sqrt(const format& f, std::uint32_t a, const rounding& r, std::uint64_t random = 0);
rounded convert(const format& to, const format& from, std::uint32_t code, const rounding& r,
                std::uint64_t random = 0);
rounded from_double(const format& f, double x, const rounding& r, std::uint64_t random = 0);

}  // namespace fpemu::mpfr_oracle
