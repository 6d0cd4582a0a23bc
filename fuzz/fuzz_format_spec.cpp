// libFuzzer harness: the format-spec parser. Any text either parses into a format that prints
// as a spec parsing back to the same format, with its derived quantities defined, or fails with
// a message; nothing crashes (the build adds AddressSanitizer and UBSan).
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
  // The largest finite value reads back from binary64 to its own code (where binary64 holds
  // the format's range).
  if (fpemu::emax(*f) <= 1023 && fpemu::emin(*f) - f->frac_bits >= -1074) {
    const std::uint32_t largest = fpemu::max_finite_magnitude(*f);
    if (fpemu::from(*f, fpemu::to_double(*f, largest)).code != largest) __builtin_trap();
  }
  return 0;
}
