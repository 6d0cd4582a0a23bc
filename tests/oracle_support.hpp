// Shared helpers of the MPFR-oracle test programs: the modes and policies to sweep, case
// counting, and mismatch reports that print the first few disagreements in full.
#pragma once

#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/oracle/mpfr_oracle.hpp"
#include "fpemu/convert.hpp"
#include "fpemu/format.hpp"
#include "fpemu/ops.hpp"
#include "fpemu/random.hpp"
#include "fpemu/spec.hpp"

namespace oracle_test {

using fpemu::format;
using fpemu::overflow_policy;
using fpemu::round_mode;
using fpemu::rounded;
using fpemu::rounding;

struct mode_case {
  const char* name;
  round_mode mode;
  int sr_bits;  // stochastic only
  bool stochastic() const { return mode == round_mode::stochastic || mode == round_mode::stochastic_exact; }
};

// Every deterministic mode, stochastic rounding with 1, 3 and 32 random bits, and sr-exact.
inline const std::vector<mode_case>& all_modes() {
  static const std::vector<mode_case> modes{
      {"rne", round_mode::nearest_even, 0},     {"rna", round_mode::nearest_away, 0},
      {"rz", round_mode::toward_zero, 0},       {"ru", round_mode::toward_positive, 0},
      {"rd", round_mode::toward_negative, 0},   {"rto", round_mode::to_odd, 0},
      {"sr1", round_mode::stochastic, 1},       {"sr3", round_mode::stochastic, 3},
      {"sr32", round_mode::stochastic, 32},     {"sr-exact", round_mode::stochastic_exact, 64},
  };
  return modes;
}

inline const std::vector<mode_case>& deterministic_modes() {
  static const std::vector<mode_case> modes(all_modes().begin(), all_modes().begin() + 6);
  return modes;
}

// The overflow policies that apply to a format (`nan` needs a NaN).
inline std::vector<overflow_policy> policies_for(const format& f) {
  std::vector<overflow_policy> p{overflow_policy::ieee, overflow_policy::saturate};
  if (fpemu::has_nan(f)) p.push_back(overflow_policy::nan);
  return p;
}

inline const char* policy_name(overflow_policy p) {
  switch (p) {
    case overflow_policy::ieee: return "ieee";
    case overflow_policy::saturate: return "saturate";
    case overflow_policy::nan: return "nan";
  }
  return "?";
}

// Random bits for case `index` under mode number `mode_index`: Philox keyed by a fixed seed.
inline std::uint64_t case_random(const mode_case& m, std::uint32_t mode_index, std::uint64_t index,
                                 std::uint64_t seed = 0x5eed'f9e3'0000'0001ull) {
  return m.stochastic() ? fpemu::random_bits(seed, mode_index, index) : 0;
}

struct named {
  std::string name;
  format fmt;
};

inline named user_format(const char* spec) {
  const auto f = fpemu::parse_format(spec);
  REQUIRE_MESSAGE(f.has_value(), std::string(spec));
  return {spec, *f};
}

// Named formats of <= 8 bits and user formats that exercise the other corners of the
// format space (IEEE encoding in 8 bits, flush-to-zero, unsigned).
inline std::vector<named> small_formats() {
  namespace F = fpemu::formats;
  std::vector<named> v{{"e4m3fn", F::e4m3fn}, {"e5m2", F::e5m2},     {"e4m3fnuz", F::e4m3fnuz},
                       {"e5m2fnuz", F::e5m2fnuz}, {"e8m0fnu", F::e8m0fnu}, {"e2m3fn", F::e2m3fn},
                       {"e3m2fn", F::e3m2fn},   {"e2m1fn", F::e2m1fn}};
  for (const char* spec : {"e3m4", "e4m3:nosub", "e4m4:unsigned", "e3m3:unsigned:nosub:fn"})
    v.push_back(user_format(spec));
  return v;
}

inline std::uint64_t code_count(const format& f) { return std::uint64_t{1} << fpemu::width(f); }

inline std::string show_code(const format& f, std::uint32_t code) {
  const auto d = fpemu::mpfr_oracle::decode_code(f, code);
  char buf[96];
  std::snprintf(buf, sizeof buf, "0x%" PRIx32 " (%.17g%s)", code, d.value, d.signaling ? " sNaN" : "");
  return buf;
}

inline std::string show_result(const format& f, const rounded& r) {
  return show_code(f, r.code) + " flags " + fpemu::flags_to_string(r.flags) + " dir " + std::to_string(r.direction);
}

// The arithmetic operations, their operands (b unused by sqrt, c only by fma), and the oracle
// and core calls for one of them.
enum class op_kind { add, sub, mul, div, fma, sqrt };

inline const char* op_name(op_kind op) {
  switch (op) {
    case op_kind::add: return "add";
    case op_kind::sub: return "sub";
    case op_kind::mul: return "mul";
    case op_kind::div: return "div";
    case op_kind::fma: return "fma";
    case op_kind::sqrt: return "sqrt";
  }
  return "?";
}

struct operands {
  std::uint32_t a = 0, b = 0, c = 0;
};

// Loads the exact result of op on x into the oracle.
inline void oracle_exact(fpemu::mpfr_oracle::oracle& o, const format& f, op_kind op, const operands& x) {
  switch (op) {
    case op_kind::add: o.exact_add(f, x.a, x.b); break;
    case op_kind::sub: o.exact_sub(f, x.a, x.b); break;
    case op_kind::mul: o.exact_mul(f, x.a, x.b); break;
    case op_kind::div: o.exact_div(f, x.a, x.b); break;
    case op_kind::fma: o.exact_fma(f, x.a, x.b, x.c); break;
    case op_kind::sqrt: o.exact_sqrt(f, x.a); break;
  }
}

// The core's result of op on x.
inline rounded core_op(const format& f, op_kind op, const operands& x, const rounding& r, std::uint64_t random) {
  switch (op) {
    case op_kind::add: return fpemu::add(f, x.a, x.b, r, random);
    case op_kind::sub: return fpemu::sub(f, x.a, x.b, r, random);
    case op_kind::mul: return fpemu::mul(f, x.a, x.b, r, random);
    case op_kind::div: return fpemu::div(f, x.a, x.b, r, random);
    case op_kind::fma: return fpemu::fma(f, x.a, x.b, x.c, r, random);
    case op_kind::sqrt: break;
  }
  return fpemu::sqrt(f, x.a, r, random);
}

// "<format> <op>(a, b[, c])", or "<format> sqrt(a)".
inline std::string describe(const format& f, std::string_view format_name, op_kind op, const operands& x) {
  std::string s = std::string(format_name) + " " + op_name(op) + "(" + show_code(f, x.a);
  if (op != op_kind::sqrt) s += ", " + show_code(f, x.b);
  if (op == op_kind::fma) s += ", " + show_code(f, x.c);
  return s + ")";
}

// Codes worth hitting in every format: zeros, the smallest and largest subnormals and normals,
// one, the largest finite values, infinities and NaNs, and their neighbours.
inline std::vector<std::uint32_t> boundary_codes(const format& f) {
  std::vector<std::uint32_t> seeds;
  const std::uint64_t n = code_count(f);
  const std::uint32_t sign = fpemu::sign_mask(f);
  const std::uint32_t maxmag = fpemu::magnitude_mask(f);
  const std::uint32_t one_field = static_cast<std::uint32_t>(f.bias) << f.frac_bits;
  for (std::uint32_t m : {0u, 1u, fpemu::frac_mask(f), fpemu::frac_mask(f) + 1, one_field, maxmag, maxmag - 1,
                          maxmag - fpemu::frac_mask(f), maxmag - fpemu::frac_mask(f) - 1, maxmag >> 1}) {
    for (std::uint32_t s : {0u, sign}) {
      for (int d : {-1, 0, 1}) {
        const std::uint32_t c = ((m + static_cast<std::uint32_t>(d)) & maxmag) | s;
        if (c < n) seeds.push_back(c);
      }
    }
  }
  std::sort(seeds.begin(), seeds.end());
  seeds.erase(std::unique(seeds.begin(), seeds.end()), seeds.end());
  return seeds;
}

// A code whose exponent field is within +-2 of a's (clamped to the finite fields), with random
// sign and fraction: operand pairs that cancel in add/sub and round near a binade boundary.
inline std::uint32_t near_code(const format& f, std::uint32_t a, std::uint64_t bits) {
  const int top_field = static_cast<int>(fpemu::exp_field_max(f)) - (f.encoding == fpemu::nonfinite::ieee ? 1 : 0);
  int field = static_cast<int>((a & fpemu::magnitude_mask(f)) >> f.frac_bits) + static_cast<int>(bits % 5) - 2;
  field = std::clamp(field, 0, top_field);
  const std::uint32_t frac = static_cast<std::uint32_t>(bits >> 8) & fpemu::frac_mask(f);
  const std::uint32_t sign = ((bits >> 60) & 1) != 0 ? fpemu::sign_mask(f) : 0;
  return sign | (static_cast<std::uint32_t>(field) << f.frac_bits) | frac;
}

// Counts cases and mismatches, and prints the first few mismatches in full.
class checker {
 public:
  explicit checker(std::string what, const char* reference = "mpfr  ", std::uint64_t max_shown = 8)
      : what_(std::move(what)), reference_(reference), max_shown_(max_shown) {}

  // One comparison. `describe` builds the case description only when it is needed.
  template <class Describe>
  void compare(const format& f, const rounded& core, const rounded& oracle, Describe&& describe) {
    ++cases_;
    if (core == oracle) return;
    if (mismatches_++ < max_shown_) {
      std::printf("MISMATCH %s: %s\n    core   %s\n    %s %s\n", what_.c_str(), describe().c_str(),
                  show_result(f, core).c_str(), reference_, show_result(f, oracle).c_str());
    }
  }

  std::uint64_t cases() const { return cases_; }
  std::uint64_t mismatches() const { return mismatches_; }

  // Checks the case count and that nothing disagreed, and prints the count.
  void finish(std::uint64_t expected, const std::string& breakdown) {
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    std::printf("%s: %s = %" PRIu64 " cases, %" PRIu64 " mismatches (%.1f s)\n", what_.c_str(), breakdown.c_str(),
                cases_, mismatches_, s);
    std::fflush(stdout);
    CHECK_MESSAGE(cases_ == expected, what_ << ": ran " << cases_ << " cases, expected " << expected);
    CHECK_MESSAGE(mismatches_ == 0, what_ << ": " << mismatches_ << " mismatches with MPFR");
  }

 private:
  std::string what_;
  const char* reference_;
  std::uint64_t max_shown_;
  std::uint64_t cases_ = 0, mismatches_ = 0;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

// Runs one exact case (already loaded into `o`) through every mode in `modes` and every policy
// of f: `core(rounding, random)` must equal the oracle's rounding bit for bit.
template <class Core, class Describe>
void compare_modes(checker& chk, fpemu::mpfr_oracle::oracle& o, const format& f, const std::vector<mode_case>& modes,
                   const std::vector<overflow_policy>& policies, std::uint64_t index, Core&& core,
                   Describe&& describe) {
  for (std::uint32_t mi = 0; mi < modes.size(); ++mi) {
    const mode_case& m = modes[mi];
    const std::uint64_t random = case_random(m, mi, index);
    const fpemu::mpfr_oracle::by_policy ref = o.round_policies(f, m.mode, m.stochastic() ? m.sr_bits : 16, random);
    for (const overflow_policy p : policies) {
      const rounding r{m.mode, p, m.stochastic() && m.sr_bits <= 32 ? m.sr_bits : 16};
      const rounded got = core(r, random);
      chk.compare(f, got, ref[static_cast<int>(p)], [&] {
        char buf[96];
        std::snprintf(buf, sizeof buf, " mode %s policy %s random 0x%016" PRIx64, m.name, policy_name(p), random);
        return describe() + buf;
      });
    }
  }
}

inline std::uint64_t policy_mode_count(const format& f, const std::vector<mode_case>& modes) {
  return modes.size() * policies_for(f).size();
}

}  // namespace oracle_test
