// libFuzzer harness: every arithmetic operation of the core against the MPFR oracle, bit for bit
// (code, flags and direction, as tests/mpfr_small_formats.cpp compares them), in formats, modes
// and policies chosen by the input:
//   format    a named format, or a user eXmY format (any exponent and fraction width up to 32
//             bits, ieee/fn/fnuz/finite, nosub, unsigned, nozero, the default bias or one moved
//             by up to +-1099) built as a spec string and kept where parse_format accepts it;
//   rounding  rne rna rz ru rd rto, sr with 1..32 random bits, sr-exact; the 64-bit random
//             value; every overflow policy the format takes;
//   operation add sub mul div fma sqrt, a conversion from a second such format, or from binary64;
//   operands  codes of the format; optionally b close to a (cancelling sums, binade edges) and
//             c close to -(a*b) (cancelling fma).
// The oracle covers every format the parser accepts (analysis/oracle/mpfr_oracle.hpp: <= 32 bits, values
// within binary64). A mismatch prints the case and traps, leaving the input behind.
#include <bit>
#include <cinttypes>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>

#include "analysis/oracle/mpfr_oracle.hpp"
#include "fpemu/convert.hpp"
#include "fpemu/ops.hpp"
#include "fpemu/spec.hpp"
#include "fuzz_input.hpp"

// oracle_support.hpp's doctest checks belong to the test programs (there is no doctest runner
// here); disabled, they leave a parameter unused.
#define DOCTEST_CONFIG_DISABLE
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "tests/oracle_support.hpp"
#pragma GCC diagnostic pop

namespace {

using fuzz_input::byte_reader;
using oracle_test::op_kind;

constexpr fpemu::round_mode kModes[] = {
    fpemu::round_mode::nearest_even,    fpemu::round_mode::nearest_away,   fpemu::round_mode::toward_zero,
    fpemu::round_mode::toward_positive, fpemu::round_mode::toward_negative, fpemu::round_mode::to_odd,
    fpemu::round_mode::stochastic,      fpemu::round_mode::stochastic_exact};

// A named format (even first byte), or a user format from the spec that the next bytes spell.
std::optional<fpemu::format> take_format(byte_reader& in) {
  const std::uint8_t kind = in.byte();
  const auto named = fpemu::named_formats();
  if (kind % 2 == 0) return named[(kind / 2) % named.size()].fmt;
  const int exp_bits = 1 + in.byte() % 11;
  const int frac_bits = in.byte() % (32 - exp_bits);  // at most 32 bits with the sign
  const std::uint8_t options = in.byte();
  static constexpr const char* kEncodings[] = {"", ":fn", ":fnuz", ":finite"};  // "": ieee
  std::string spec = "e" + std::to_string(exp_bits) + "m" + std::to_string(frac_bits) + kEncodings[options & 3];
  if (options & 4) spec += ":nosub";
  if (options & 8) spec += ":unsigned";
  if (options & 16) spec += ":nozero";
  auto f = fpemu::parse_format(spec);
  if (!f) return std::nullopt;
  // Moving the bias away from the default reaches the extremes of binary64's range.
  if (options & 32) {
    const int delta = (options & 64) ? static_cast<std::int16_t>(in.u16()) % 1100 : static_cast<std::int8_t>(in.byte());
    f = fpemu::parse_format(spec + ":bias=" + std::to_string(f->bias + delta));
    if (!f) return std::nullopt;
  }
  return *f;
}

std::uint32_t take_code(byte_reader& in, const fpemu::format& f) {
  return static_cast<std::uint32_t>(in.bits((fpemu::width(f) + 7) / 8)) & fpemu::code_mask(f);
}

// Core and oracle must agree; `describe` names the case (built only for a report).
template <class Describe>
void compare(const fpemu::format& f, const fpemu::rounding& r, std::uint64_t random, const fpemu::rounded& core,
             const fpemu::rounded& oracle, Describe&& describe) {
  if (core == oracle) return;
  const std::string what = describe();
  std::fprintf(stderr,
               "MISMATCH %s mode %s policy %s sr_bits %d random 0x%016" PRIx64 "\n    core %s\n    mpfr %s\n",
               what.c_str(), std::string(fpemu::to_string(r.mode)).c_str(),
               std::string(fpemu::to_string(r.overflow)).c_str(), r.sr_bits, random,
               oracle_test::show_result(f, core).c_str(), oracle_test::show_result(f, oracle).c_str());
  __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  byte_reader in(data, size);
  const std::optional<fpemu::format> f = take_format(in);
  if (!f) return 0;
  const std::uint8_t op_byte = in.byte();
  const std::uint8_t mode_byte = in.byte();
  const std::uint8_t sr_byte = in.byte();
  const std::uint8_t policy_byte = in.byte();
  const std::uint64_t random = in.u64();
  const auto policies = oracle_test::policies_for(*f);
  const fpemu::rounding r{kModes[mode_byte % 8], policies[policy_byte % policies.size()], 1 + sr_byte % 32};
  if (fpemu::check(*f, r)) __builtin_trap();  // the choices above are all valid ones

  static fpemu::mpfr_oracle::oracle oracle;  // keeps its MPFR variables between inputs
  switch (op_byte % 8) {
    case 6: {  // conversion from a second format
      const std::optional<fpemu::format> from = take_format(in);
      if (!from) return 0;
      const std::uint32_t a = take_code(in, *from);
      oracle.exact_code(*from, a);
      compare(*f, r, random, fpemu::convert(*f, *from, a, r, random), oracle.round(*f, r, random), [&] {
        return fpemu::to_string(*from) + " " + oracle_test::show_code(*from, a) + " -> " + fpemu::to_string(*f);
      });
      break;
    }
    case 7: {  // conversion from binary64
      const std::uint64_t bits = in.u64();
      const double x = std::bit_cast<double>(bits);
      oracle.exact_double(x);
      compare(*f, r, random, fpemu::from(*f, x, r, random), oracle.round(*f, r, random), [&] {
        char buf[64];
        std::snprintf(buf, sizeof buf, "binary64 0x%016" PRIx64 " (%.17g) -> ", bits, x);
        return buf + fpemu::to_string(*f);
      });
      break;
    }
    default: {
      const auto op = static_cast<op_kind>(op_byte % 8);
      const std::uint8_t shape = in.byte();
      oracle_test::operands x;
      x.a = take_code(in, *f);
      x.b = (shape & 1) ? oracle_test::near_code(*f, x.a, in.u64()) : take_code(in, *f);
      x.c = take_code(in, *f);
      if (op == op_kind::fma && (shape & 2)) {
        // c within a few codes of -(a*b): the sum cancels down to the low bits of the product.
        const fpemu::rounded p = fpemu::mpfr_oracle::mul(*f, x.a, x.b, fpemu::rounding{});
        const int delta = static_cast<int>(x.c % 7) - 3;
        x.c = (((p.code & fpemu::magnitude_mask(*f)) + static_cast<std::uint32_t>(delta)) & fpemu::magnitude_mask(*f)) |
              ((p.code & fpemu::sign_mask(*f)) ^ fpemu::sign_mask(*f));
      }
      oracle_test::oracle_exact(oracle, *f, op, x);
      compare(*f, r, random, oracle_test::core_op(*f, op, x, r, random), oracle.round(*f, r, random),
              [&] { return oracle_test::describe(*f, fpemu::to_string(*f), op, x); });
      break;
    }
  }
  return 0;
}
