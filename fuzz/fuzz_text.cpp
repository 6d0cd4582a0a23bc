// libFuzzer harness: decimal and hex-float text into formats. The first byte picks one of the
// IEEE-like named formats, the second a rounding direction (rne rz ru rd), the rest is the text.
// Wherever both from_string and MPFR's mpfr_strtofr read the whole text as a number, they must
// give the same value, rounded once with subnormals and overflow (the oracle's precision and
// exponent range set to the format's); a text from_string refuses must come with a message.
// MPFR reads more syntax than the project does ('@' exponents, base prefixes), so a text only
// MPFR reads is not a mismatch (regressions/fuzz_text/mpfr-at-exponent was the first such).
// Mismatches and crashes stop the run (__builtin_trap), leaving the input behind.
#include <mpfr.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "fpemu/convert.hpp"
#include "fpemu/spec.hpp"
#include "fpemu/text.hpp"

namespace {

const std::vector<fpemu::format>& ieee_formats() {
  static const std::vector<fpemu::format> v = [] {
    std::vector<fpemu::format> out;
    for (const fpemu::named_format& n : fpemu::named_formats())
      if (n.fmt.encoding == fpemu::nonfinite::ieee && n.fmt.is_signed && n.fmt.has_zero) out.push_back(n.fmt);
    return out;
  }();
  return v;
}

struct direction {
  fpemu::round_mode mode;
  mpfr_rnd_t mpfr;
};
constexpr direction kDirections[] = {{fpemu::round_mode::nearest_even, MPFR_RNDN},
                                     {fpemu::round_mode::toward_zero, MPFR_RNDZ},
                                     {fpemu::round_mode::toward_positive, MPFR_RNDU},
                                     {fpemu::round_mode::toward_negative, MPFR_RNDD}};

// MPFR's value of the whole text in format f (NaN where MPFR does not read all of it).
double oracle(const fpemu::format& f, const std::string& text, mpfr_rnd_t rnd) {
  mpfr_t x;
  mpfr_init2(x, f.frac_bits + 1);
  mpfr_set_emin(fpemu::emin(f) - f.frac_bits + 1);  // MPFR significands are in [1/2, 1)
  mpfr_set_emax(fpemu::emax(f) + 1);
  char* end = nullptr;
  int ternary = mpfr_strtofr(x, text.c_str(), &end, 0, rnd);
  double value = std::nan("");
  if (!text.empty() && end == text.c_str() + text.size() && !mpfr_nan_p(x)) {
    ternary = mpfr_check_range(x, ternary, rnd);
    mpfr_subnormalize(x, ternary, rnd);
    value = mpfr_get_d(x, MPFR_RNDN);  // exact: at most 24 significant bits, in binary64's range
  }
  mpfr_clear(x);
  mpfr_set_emin(mpfr_get_emin_min());
  mpfr_set_emax(mpfr_get_emax_max());
  return value;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 2 || size > 256) return 0;
  const std::vector<fpemu::format>& formats = ieee_formats();
  const fpemu::format& f = formats[data[0] % formats.size()];
  const direction& d = kDirections[data[1] % 4];
  const std::string text(reinterpret_cast<const char*>(data + 2), size - 2);
  if (text.find('\0') != std::string::npos) return 0;  // MPFR reads C strings
  const auto ours = fpemu::from_string(f, text, fpemu::rounding{d.mode});
  if (!ours && ours.message().empty()) __builtin_trap();  // every refusal says why
  const double want = oracle(f, text, d.mpfr);
  if (std::isnan(want) || !ours) return 0;  // not a number to one of the two (or NaN)
  const double got = fpemu::to_double(f, ours->code);
  if (!(got == want && std::signbit(got) == std::signbit(want))) __builtin_trap();
  return 0;
}
