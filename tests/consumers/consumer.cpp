// A user's program, built against fpemu three ways by tests/consumers/run.py (installed and found
// by pkg-config, installed and found by CMake, built as a meson subproject): one value rounded by
// the header-only core, an array by libfpemu, their sum by the analysis library.
#include <fpemu/fpemu.hpp>
#include <iomanip>
#include <iostream>
#include <vector>

#include "analysis/reference/summation.hpp"

int main() {
  const fpemu::e4m3fn_t x(0.1);
  const std::vector<double> in{0.1, 448, 1e9};
  std::vector<std::uint32_t> codes(in.size());
  const fpemu::format f = fpemu::parse_format("e4m3fn").value();
  if (!fpemu::round_array(f, in, codes, {.overflow = fpemu::overflow_policy::saturate})) return 1;
  const auto s = fpemu::analysis::sum(codes, {.input = f});  // recursive, in fp32
  if (!s) return 1;
  std::cout << std::hex << "x 0x" << int(x.code()) << " codes 0x" << codes[0] << " 0x" << codes[1] << " 0x"
            << codes[2] << std::dec << std::setprecision(17) << " sum " << s->value << " version "
            << FPEMU_VERSION_STRING << "\n";
}
