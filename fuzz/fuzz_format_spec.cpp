// libFuzzer harness: the format-spec parser. Any text either parses into a format that prints
// as a spec parsing back to the same format, whose values are all binary64 values and, when it is
// signed, include the negations of its extreme values, or fails with a message; nothing crashes
// (the build adds AddressSanitizer and UBSan).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fpemu/convert.hpp"
#include "fpemu/spec.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view spec(reinterpret_cast<const char*>(data), size);
  const auto f = fpemu::parse_format(spec);
  if (!f) {
    if (f.message().empty()) __builtin_trap();  // every refusal says why
    return 0;
  }
  const std::string printed = fpemu::to_string(*f);
  const auto again = fpemu::parse_format(printed);
  if (!again || !(*again == *f)) __builtin_trap();
  // Every value is a binary64 value (the lowest binade's quantum too, with or without
  // subnormals: regressions/fuzz_arith/nosub-lowest-binade-below-binary64), and the largest
  // finite value reads back from binary64 to its own code.
  if (fpemu::emax(*f) > 1023 || fpemu::emin(*f) - f->frac_bits < -1074) __builtin_trap();
  const std::uint32_t largest = fpemu::max_finite_magnitude(*f);
  if (fpemu::from(*f, fpemu::to_double(*f, largest)).code != largest) __builtin_trap();
  // A signed format holds -max and -min_positive exactly (regressions/fuzz_arith/
  // fnuz-nozero-negative-min-is-nan: fnuz with nozero made the NaN pattern take -2^emin).
  if (f->is_signed) {
    for (const double v : {fpemu::max_finite(*f), fpemu::min_positive(*f)}) {
      const fpemu::rounded r = fpemu::from(*f, -v);
      if (r.flags != 0 || fpemu::to_double(*f, r.code) != -v) __builtin_trap();
    }
  }
  return 0;
}
