// Format specs, named formats and the names of modes and policies (see spec.hpp).
#include "fpemu/spec.hpp"

#include <array>
#include <charconv>
#include <string>

#include "fpemu/status.hpp"

namespace fpemu {
namespace {

int default_bias(int exp_bits, nonfinite enc) {
  const int half = 1 << (exp_bits - 1);
  return enc == nonfinite::fnuz ? half : half - 1;
}

std::optional<int> parse_int(std::string_view s) {
  int v = 0;
  const char* end = s.data() + s.size();
  const auto [ptr, ec] = std::from_chars(s.data(), end, v);
  if (ec != std::errc{} || ptr != end || s.empty()) return std::nullopt;
  return v;
}

std::string quoted(std::string_view s) { return "'" + std::string(s) + "'"; }

}  // namespace

std::optional<std::string> check(const format& f) {
  if (f.exp_bits < 1 || f.exp_bits > 11)
    return "exp_bits " + std::to_string(f.exp_bits) + " is out of range: valid 1..11";
  const int max_frac = 31 - f.exp_bits;
  if (f.frac_bits < 0 || f.frac_bits > max_frac)
    return "frac_bits " + std::to_string(f.frac_bits) + " is out of range for " + std::to_string(f.exp_bits) +
           " exponent bits: valid 0.." + std::to_string(max_frac) + " (at most 32 bits with the sign)";
  if (f.encoding == nonfinite::ieee && (f.exp_bits < 2 || f.frac_bits < 1))
    return "the ieee encoding needs exp_bits >= 2 and frac_bits >= 1 (a normal binade and NaN codes)";
  if (f.encoding == nonfinite::fnuz && !f.is_signed)
    return "the fnuz encoding needs a sign bit (its NaN is the negative-zero pattern)";
  if (!f.has_zero && f.subnormals)
    return "nozero needs nosub (the zero exponent field becomes a normal binade)";
  // Without a zero, fnuz's NaN pattern 1000...0 would be -2^emin: a value missing from the format.
  if (!f.has_zero && f.encoding == nonfinite::fnuz)
    return "the fnuz encoding needs a zero (its NaN is the negative-zero pattern): drop nozero";
  // The largest finite code must be a normal number: at least one normal binade below NaN/inf.
  if (f.has_zero && (max_finite_magnitude(f) >> f.frac_bits) == 0)
    return "the format has no normal numbers: add exponent bits or change the encoding";
  // Every value must be exactly a binary64 value, so that to_double is exact. The lowest binade
  // has the quantum 2^(emin - frac_bits) with or without subnormals.
  const int lo = emin(f) - f.frac_bits;
  const int hi = emax(f);
  if (hi > 1023 || lo < -1074) {
    const int top = static_cast<int>(max_finite_magnitude(f) >> f.frac_bits);
    const int bias_min = top - 1023;
    const int bias_max = (f.has_zero ? 1 : 0) - f.frac_bits + 1074;
    return "bias " + std::to_string(f.bias) + " puts values outside binary64's range: valid " +
           std::to_string(bias_min) + ".." + std::to_string(bias_max) + " for this format";
  }
  return std::nullopt;
}

expected<format> parse_format(std::string_view spec) {
  for (const named_format& n : named_formats())
    if (n.name == spec) return n.fmt;

  const std::string_view whole = spec;
  const std::size_t colon = spec.find(':');
  const std::string_view head = spec.substr(0, colon);
  const auto unknown = [&] {
    std::string names;
    for (const named_format& n : named_formats()) names += (names.empty() ? "" : ", ") + std::string(n.name);
    return error{"unknown format " + quoted(whole) + ": expected one of " + names +
                 ", or eXmY[:bias=N][:nosub][:ieee|fn|fnuz|finite][:unsigned][:nozero]"};
  };
  const std::size_t m = head.find('m');
  if (head.size() < 4 || head[0] != 'e' || m == std::string_view::npos) return unknown();
  const auto e_bits = parse_int(head.substr(1, m - 1));
  const auto m_bits = parse_int(head.substr(m + 1));
  if (!e_bits || !m_bits) return unknown();

  format f{};
  f.exp_bits = *e_bits;
  f.frac_bits = *m_bits;
  f.encoding = nonfinite::ieee;
  f.subnormals = true;
  f.is_signed = true;
  f.has_zero = true;
  std::optional<int> bias;
  if (f.exp_bits < 1 || f.exp_bits > 11)
    return error{"format " + quoted(whole) + ": exponent bits " + std::to_string(f.exp_bits) +
                 " out of range: valid 1..11"};

  std::string_view rest = colon == std::string_view::npos ? std::string_view{} : spec.substr(colon + 1);
  while (colon != std::string_view::npos) {
    const std::size_t next = rest.find(':');
    const std::string_view opt = rest.substr(0, next);
    if (opt.starts_with("bias=")) {
      bias = parse_int(opt.substr(5));
      if (!bias) return error{"format " + quoted(whole) + ": bias " + quoted(opt.substr(5)) + " is not an integer"};
    } else if (opt == "nosub") {
      f.subnormals = false;
    } else if (opt == "ieee") {
      f.encoding = nonfinite::ieee;
    } else if (opt == "fn") {
      f.encoding = nonfinite::fn;
    } else if (opt == "fnuz") {
      f.encoding = nonfinite::fnuz;
    } else if (opt == "finite") {
      f.encoding = nonfinite::finite;
    } else if (opt == "unsigned") {
      f.is_signed = false;
    } else if (opt == "nozero") {
      f.has_zero = false;
    } else {
      return error{"format " + quoted(whole) + ": unknown option " + quoted(opt) +
                   ": valid bias=N, nosub, ieee, fn, fnuz, finite, unsigned, nozero"};
    }
    if (next == std::string_view::npos) break;
    rest = rest.substr(next + 1);
  }
  f.bias = bias ? *bias : default_bias(f.exp_bits, f.encoding);
  if (auto problem = check(f)) return error{"format " + quoted(whole) + ": " + *problem};
  return f;
}

std::string to_string(const format& f) {
  for (const named_format& n : named_formats())
    if (n.fmt == f) return std::string(n.name);
  std::string s = "e" + std::to_string(f.exp_bits) + "m" + std::to_string(f.frac_bits);
  if (f.bias != default_bias(f.exp_bits, f.encoding)) s += ":bias=" + std::to_string(f.bias);
  if (!f.subnormals) s += ":nosub";
  if (f.encoding != nonfinite::ieee) s += ":" + std::string(to_string(f.encoding));
  if (!f.is_signed) s += ":unsigned";
  if (!f.has_zero) s += ":nozero";
  return s;
}

namespace {
template <class T>
struct name_of {
  std::string_view name;
  T value;
};
constexpr name_of<round_mode> kModes[] = {
    {"rne", round_mode::nearest_even},
    {"rna", round_mode::nearest_away},
    {"rz", round_mode::toward_zero},
    {"ru", round_mode::toward_positive},
    {"rd", round_mode::toward_negative},
    {"rto", round_mode::to_odd},
    {"sr", round_mode::stochastic},
    {"sr-exact", round_mode::stochastic_exact},
};
constexpr name_of<overflow_policy> kPolicies[] = {
    {"ieee", overflow_policy::ieee},
    {"saturate", overflow_policy::saturate},
    {"nan", overflow_policy::nan},
};

template <class Table>
std::string names_of(const Table& t) {
  std::string s;
  for (const auto& [name, v] : t) s += (s.empty() ? "" : "|") + std::string(name);
  return s;
}
}  // namespace

expected<round_mode> parse_round_mode(std::string_view name) {
  for (const auto& [n, m] : kModes)
    if (n == name) return m;
  return error{"unknown rounding mode " + quoted(name) + ": valid " + names_of(kModes)};
}
std::string_view to_string(round_mode m) {
  for (const auto& [n, v] : kModes)
    if (v == m) return n;
  return "?";
}
expected<overflow_policy> parse_overflow_policy(std::string_view name) {
  for (const auto& [n, p] : kPolicies)
    if (n == name) return p;
  return error{"unknown overflow policy " + quoted(name) + ": valid " + names_of(kPolicies)};
}
std::string_view to_string(overflow_policy p) {
  for (const auto& [n, v] : kPolicies)
    if (v == p) return n;
  return "?";
}

std::optional<std::string> check(const format& f, const rounding& r) {
  if (r.mode == round_mode::stochastic && (r.sr_bits < 1 || r.sr_bits > 32))
    return "stochastic-rounding bits " + std::to_string(r.sr_bits) + " out of range: valid 1..32";
  if (r.overflow == overflow_policy::nan && !has_nan(f))
    return "overflow policy nan needs a format with a NaN; " + to_string(f) + " has none (use ieee or saturate)";
  return std::nullopt;
}

std::string_view to_string(nonfinite e) {
  switch (e) {
    case nonfinite::ieee: return "ieee";
    case nonfinite::fn: return "fn";
    case nonfinite::fnuz: return "fnuz";
    case nonfinite::finite: return "finite";
  }
  return "?";
}

std::string_view to_string(fp_class c) {
  switch (c) {
    case fp_class::signaling_nan: return "signaling_nan";
    case fp_class::quiet_nan: return "quiet_nan";
    case fp_class::negative_infinity: return "negative_infinity";
    case fp_class::negative_normal: return "negative_normal";
    case fp_class::negative_subnormal: return "negative_subnormal";
    case fp_class::negative_zero: return "negative_zero";
    case fp_class::positive_zero: return "positive_zero";
    case fp_class::positive_subnormal: return "positive_subnormal";
    case fp_class::positive_normal: return "positive_normal";
    case fp_class::positive_infinity: return "positive_infinity";
  }
  return "?";
}

std::string flags_to_string(unsigned flags) {
  static constexpr name_of<unsigned> kNames[] = {
      {"invalid", flag::invalid},
      {"divide-by-zero", flag::divide_by_zero},
      {"overflow", flag::overflow},
      {"underflow", flag::underflow},
      {"inexact", flag::inexact},
  };
  std::string s;
  for (const auto& [name, bit] : kNames)
    if (flags & bit) s += (s.empty() ? "" : ",") + std::string(name);
  return s.empty() ? "-" : s;
}

}  // namespace fpemu
