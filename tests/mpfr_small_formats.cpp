// Every format of at most 8 bits against the MPFR oracle, bit for bit (code, flags, direction):
// every code through sqrt and through conversion into every other small format, every pair
// through add/sub/mul/div, and fma on random plus boundary triples -- in every rounding mode
// (rne rna rz ru rd rto, stochastic with 1, 3 and 32 bits, sr-exact) and every overflow policy.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "oracle_support.hpp"

using namespace oracle_test;
namespace oracle = fpemu::mpfr_oracle;

namespace {

void all_pairs(op_kind op) {
  const auto& modes = all_modes();
  for (const named& nf : small_formats()) {
    const format& f = nf.fmt;
    const auto n = static_cast<std::uint32_t>(code_count(f));
    const auto policies = policies_for(f);
    checker chk(std::string("mpfr_small_formats: ") + op_name(op) + " " + nf.name);
    oracle::oracle o;
    for (std::uint32_t a = 0; a < n; ++a) {
      for (std::uint32_t b = 0; b < n; ++b) {
        const operands x{a, b, 0};
        oracle_exact(o, f, op, x);
        const std::uint64_t index = std::uint64_t{a} * n + b;
        compare_modes(
            chk, o, f, modes, policies, index,
            [&](const rounding& r, std::uint64_t random) { return core_op(f, op, x, r, random); },
            [&] { return describe(f, nf.name, op, x); });
      }
    }
    const std::uint64_t expected = std::uint64_t{n} * n * policy_mode_count(f, modes);
    chk.finish(expected, std::to_string(std::uint64_t{n} * n) + " pairs x " + std::to_string(modes.size()) +
                             " modes x " + std::to_string(policies.size()) + " policies");
  }
}

}  // namespace

TEST_CASE("sqrt: every code of every format of <= 8 bits, every mode and policy == MPFR") {
  const auto& modes = all_modes();
  for (const named& nf : small_formats()) {
    const format& f = nf.fmt;
    const auto n = static_cast<std::uint32_t>(code_count(f));
    checker chk("mpfr_small_formats: sqrt " + nf.name);
    oracle::oracle o;
    for (std::uint32_t a = 0; a < n; ++a) {
      o.exact_sqrt(f, a);
      compare_modes(
          chk, o, f, modes, policies_for(f), a,
          [&](const rounding& r, std::uint64_t random) { return fpemu::sqrt(f, a, r, random); },
          [&] { return nf.name + " sqrt(" + show_code(f, a) + ")"; });
    }
    chk.finish(n * policy_mode_count(f, modes), std::to_string(n) + " codes x " + std::to_string(modes.size()) +
                                                    " modes x " + std::to_string(policies_for(f).size()) + " policies");
  }
}

TEST_CASE("convert: every code of every format of <= 8 bits into every other, every mode and policy == MPFR") {
  const auto& modes = all_modes();
  const auto formats = small_formats();
  for (const named& to : formats) {
    checker chk("mpfr_small_formats: convert into " + to.name);
    oracle::oracle o;
    std::uint64_t expected = 0, codes = 0;
    for (const named& from : formats) {
      if (from.fmt == to.fmt) continue;
      const auto n = static_cast<std::uint32_t>(code_count(from.fmt));
      codes += n;
      expected += n * policy_mode_count(to.fmt, modes);
      for (std::uint32_t a = 0; a < n; ++a) {
        o.exact_code(from.fmt, a);
        compare_modes(
            chk, o, to.fmt, modes, policies_for(to.fmt), a,
            [&](const rounding& r, std::uint64_t random) { return fpemu::convert(to.fmt, from.fmt, a, r, random); },
            [&] { return from.name + " " + show_code(from.fmt, a) + " -> " + to.name; });
      }
    }
    chk.finish(expected, std::to_string(codes) + " source codes x " + std::to_string(modes.size()) + " modes x " +
                             std::to_string(policies_for(to.fmt).size()) + " policies");
  }
}

TEST_CASE("add: all pairs of every format of <= 8 bits, every mode and policy == MPFR") { all_pairs(op_kind::add); }
TEST_CASE("sub: all pairs of every format of <= 8 bits, every mode and policy == MPFR") { all_pairs(op_kind::sub); }
TEST_CASE("mul: all pairs of every format of <= 8 bits, every mode and policy == MPFR") { all_pairs(op_kind::mul); }
TEST_CASE("div: all pairs of every format of <= 8 bits, every mode and policy == MPFR") { all_pairs(op_kind::div); }

TEST_CASE("fma: boundary triples and 2e5 random triples per format of <= 8 bits, every mode and policy == MPFR") {
  const auto& modes = all_modes();
  constexpr std::uint64_t kRandom = 200000;
  for (const named& nf : small_formats()) {
    const format& f = nf.fmt;
    const auto n = static_cast<std::uint32_t>(code_count(f));
    const auto policies = policies_for(f);
    checker chk("mpfr_small_formats: fma " + nf.name);
    oracle::oracle o;
    std::uint64_t index = 0;
    const auto run = [&](std::uint32_t a, std::uint32_t b, std::uint32_t c) {
      o.exact_fma(f, a, b, c);
      compare_modes(
          chk, o, f, modes, policies, index++,
          [&](const rounding& r, std::uint64_t random) { return fpemu::fma(f, a, b, c, r, random); },
          [&] {
            return nf.name + " fma(" + show_code(f, a) + ", " + show_code(f, b) + ", " + show_code(f, c) + ")";
          });
    };
    // Every triple of boundary codes.
    const std::vector<std::uint32_t> edges = boundary_codes(f);
    for (std::uint32_t a : edges)
      for (std::uint32_t b : edges)
        for (std::uint32_t c : edges) run(a, b, c);
    const std::uint64_t edge_triples = edges.size() * edges.size() * edges.size();
    // Random triples: half uniform, half with c near -(a * b) so that the sum cancels.
    for (std::uint64_t i = 0; i < kRandom; ++i) {
      const std::uint64_t bits = fpemu::random_bits(0xf3a, 7, i);
      const std::uint32_t a = static_cast<std::uint32_t>(bits) % n, b = static_cast<std::uint32_t>(bits >> 16) % n;
      std::uint32_t c = static_cast<std::uint32_t>(bits >> 32) % n;
      if (i % 2 == 1) {
        const rounded p = oracle::mul(f, a, b, rounding{});
        const int delta = static_cast<int>((bits >> 48) % 7) - 3;
        c = (((p.code & fpemu::magnitude_mask(f)) + static_cast<std::uint32_t>(delta)) & fpemu::magnitude_mask(f)) |
            ((p.code & fpemu::sign_mask(f)) ^ fpemu::sign_mask(f));
      }
      run(a, b, c);
    }
    const std::uint64_t triples = edge_triples + kRandom;
    chk.finish(triples * policy_mode_count(f, modes),
               std::to_string(edge_triples) + " boundary + " + std::to_string(kRandom) + " random triples x " +
                   std::to_string(modes.size()) + " modes x " + std::to_string(policies.size()) + " policies");
  }
}
