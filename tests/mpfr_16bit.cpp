// bf16 and fp16 against the MPFR oracle, bit for bit (code, flags, direction): every code through
// sqrt and through conversion into every narrower named format and into the other 16-bit
// format; add/sub/mul/div/fma on every pair (triple) of boundary codes and on random operands
// (uniform codes, and operands close in exponent so that cancellation and binade boundaries are
// exercised); every rounding mode and every overflow policy.
//
// The number of random pairs per operation and format is FPEMU_MPFR_16BIT_PAIRS (default below);
// each pair runs through all 10 modes and all 3 policies.
#include <doctest/doctest.h>

#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "oracle_support.hpp"

using namespace oracle_test;
namespace oracle = fpemu::mpfr_oracle;

namespace {

constexpr std::uint64_t kDefaultPairs = 1'000'000;

std::uint64_t random_pairs() {
  if (const char* env = std::getenv("FPEMU_MPFR_16BIT_PAIRS")) return std::strtoull(env, nullptr, 10);
  return kDefaultPairs;
}

std::vector<named> sixteen_bit() { return {{"bf16", fpemu::formats::bf16}, {"fp16", fpemu::formats::fp16}}; }

std::vector<named> narrower_targets() {
  namespace F = fpemu::formats;
  return {{"e4m3fn", F::e4m3fn}, {"e5m2", F::e5m2},       {"e4m3fnuz", F::e4m3fnuz}, {"e5m2fnuz", F::e5m2fnuz},
          {"e8m0fnu", F::e8m0fnu}, {"e2m3fn", F::e2m3fn}, {"e3m2fn", F::e3m2fn},     {"e2m1fn", F::e2m1fn}};
}

void run_op(op_kind op) {
  const auto& modes = all_modes();
  const std::uint64_t pairs = random_pairs();
  std::uint32_t stream = static_cast<std::uint32_t>(op) * 16;
  for (const named& nf : sixteen_bit()) {
    const format& f = nf.fmt;
    const auto policies = policies_for(f);
    checker chk(std::string("mpfr_16bit: ") + op_name(op) + " " + nf.name);
    oracle::oracle o;
    std::uint64_t index = 0;
    const auto run = [&](const operands& x) {
      oracle_exact(o, f, op, x);
      compare_modes(
          chk, o, f, modes, policies, index++,
          [&](const rounding& r, std::uint64_t random) { return core_op(f, op, x, r, random); },
          [&] { return describe(f, nf.name, op, x); });
    };

    // Every pair (triple for fma) of boundary codes.
    const std::vector<std::uint32_t> edges = boundary_codes(f);
    std::uint64_t edge_cases = 0;
    for (std::uint32_t a : edges) {
      for (std::uint32_t b : edges) {
        if (op != op_kind::fma) {
          run({a, b, 0});
          ++edge_cases;
          continue;
        }
        for (std::uint32_t c : edges) {
          run({a, b, c});
          ++edge_cases;
        }
      }
    }
    // Random operands: uniform codes, and codes close in exponent.
    for (std::uint64_t i = 0; i < pairs; ++i) {
      const std::uint64_t bits = fpemu::random_bits(0x16b17, stream, i);
      const std::uint64_t more = fpemu::random_bits(0x16b17, stream + 1, i);
      operands x{static_cast<std::uint32_t>(bits & 0xffff), static_cast<std::uint32_t>((bits >> 16) & 0xffff),
                 static_cast<std::uint32_t>((bits >> 32) & 0xffff)};
      if (op != op_kind::fma) {
        if (i % 2 == 1) x.b = near_code(f, x.a, more);
      } else if (i % 3 == 1) {
        // c close to -(a * b): the sum cancels.
        const rounded p = oracle::mul(f, x.a, x.b, rounding{});
        const int delta = static_cast<int>(more % 7) - 3;
        x.c = (((p.code & 0x7fff) + static_cast<std::uint32_t>(delta)) & 0x7fff) | ((p.code & 0x8000) ^ 0x8000);
      } else if (i % 3 == 2) {
        // c within a few binades of a * b.
        const rounded p = oracle::mul(f, x.a, x.b, rounding{});
        x.c = near_code(f, p.code, more);
      }
      run(x);
    }
    stream += 2;
    const std::uint64_t expected = (edge_cases + pairs) * policy_mode_count(f, modes);
    chk.finish(expected, std::to_string(edge_cases) + " boundary + " + std::to_string(pairs) + " random " +
                             (op == op_kind::fma ? "triples" : "pairs") + " x " + std::to_string(modes.size()) +
                             " modes x " + std::to_string(policies.size()) + " policies");
  }
}

}  // namespace

TEST_CASE("sqrt: every bf16 and fp16 code, every mode and policy == MPFR") {
  const auto& modes = all_modes();
  for (const named& nf : sixteen_bit()) {
    const format& f = nf.fmt;
    checker chk("mpfr_16bit: sqrt " + nf.name);
    oracle::oracle o;
    for (std::uint32_t a = 0; a < 0x10000; ++a) {
      o.exact_sqrt(f, a);
      compare_modes(
          chk, o, f, modes, policies_for(f), a,
          [&](const rounding& r, std::uint64_t random) { return fpemu::sqrt(f, a, r, random); },
          [&] { return nf.name + " sqrt(" + show_code(f, a) + ")"; });
    }
    chk.finish(0x10000 * policy_mode_count(f, modes), "65536 codes x 10 modes x 3 policies");
  }
}

TEST_CASE("convert: every bf16 and fp16 code into every narrower named format and into each other, every mode and "
          "policy == MPFR") {
  const auto& modes = all_modes();
  for (const named& from : sixteen_bit()) {
    std::vector<named> targets = narrower_targets();
    for (const named& other : sixteen_bit())
      if (!(other.fmt == from.fmt)) targets.push_back(other);
    for (const named& to : targets) {
      checker chk("mpfr_16bit: convert " + from.name + " -> " + to.name);
      oracle::oracle o;
      for (std::uint32_t a = 0; a < 0x10000; ++a) {
        o.exact_code(from.fmt, a);
        compare_modes(
            chk, o, to.fmt, modes, policies_for(to.fmt), a,
            [&](const rounding& r, std::uint64_t random) { return fpemu::convert(to.fmt, from.fmt, a, r, random); },
            [&] { return from.name + " " + show_code(from.fmt, a) + " -> " + to.name; });
      }
      chk.finish(0x10000 * policy_mode_count(to.fmt, modes),
                 "65536 codes x 10 modes x " + std::to_string(policies_for(to.fmt).size()) + " policies");
    }
  }
}

TEST_CASE("add bf16 and fp16: boundary pairs and random pairs, every mode and policy == MPFR") { run_op(op_kind::add); }
TEST_CASE("sub bf16 and fp16: boundary pairs and random pairs, every mode and policy == MPFR") { run_op(op_kind::sub); }
TEST_CASE("mul bf16 and fp16: boundary pairs and random pairs, every mode and policy == MPFR") { run_op(op_kind::mul); }
TEST_CASE("div bf16 and fp16: boundary pairs and random pairs, every mode and policy == MPFR") { run_op(op_kind::div); }
TEST_CASE("fma bf16 and fp16: boundary triples and random triples, every mode and policy == MPFR") {
  run_op(op_kind::fma);
}
