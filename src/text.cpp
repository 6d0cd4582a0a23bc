// Decimal and hexadecimal text to and from exact values (see text.hpp), with GMP integers.
//
// Reading: the text's exact value D * 10^k (or D * 2^k for hex floats) is reduced to a 124-bit
// significand plus a sticky bit by integer division, so the rounding core sees the exact value
// to far more bits than any rounding needs (it needs p + 66 for the stochastic modes).
// Writing: a binary value sig * 2^e is the finite decimal sig * 5^-e / 10^-e.
#include "fpemu/text.hpp"

#include <gmp.h>

#include <algorithm>
#include <cctype>
#include <climits>
#include <string>

#include "fpemu/round_core.hpp"

namespace fpemu {
namespace {

// RAII for mpz_t.
struct mpz {
  mpz_t v;
  mpz() { mpz_init(v); }
  ~mpz() { mpz_clear(v); }
  mpz(const mpz&) = delete;
  mpz& operator=(const mpz&) = delete;
};

constexpr int kKeptBits = 124;

// Values beyond these decimal magnitudes overflow or underflow every format (formats are
// validated to lie within binary64's range, 2^-1074 .. 2^1024 ~ 10^-324 .. 10^308.3).
constexpr long kHugeDecimalExponent = 400;
constexpr long kTinyDecimalExponent = -400;

// The top kKeptBits bits of n (n > 0) with the lower bits as sticky; value = sig * 2^exp.
unpacked from_integer(bool negative, const mpz_t n, long exp2) {
  const long bits = static_cast<long>(mpz_sizeinbase(n, 2));
  const long drop = std::max(0L, bits - kKeptBits);
  mpz top;
  mpz_tdiv_q_2exp(top.v, n, static_cast<mp_bitcnt_t>(drop));
  const bool sticky = drop > 0 && mpz_scan1(n, 0) < static_cast<mp_bitcnt_t>(drop);
  detail::u128 sig = 0;
  // Two 64-bit limbs, most significant first.
  mpz hi;
  mpz_tdiv_q_2exp(hi.v, top.v, 64);
  sig = static_cast<detail::u128>(mpz_get_ui(hi.v)) << 64;
  mpz_tdiv_r_2exp(hi.v, top.v, 64);
  sig |= mpz_get_ui(hi.v);
  return make_finite(negative, sig, static_cast<int>(exp2 + drop), sticky);
}

unpacked overflowing(bool negative) { return make_finite(negative, 1, 4000); }
unpacked underflowing(bool negative) { return make_finite(negative, 1, -4000, true); }

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() &&
         std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) { return std::tolower(x) == y; });
}

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Parses [+-]digits after an exponent letter; saturates far beyond any meaningful value.
bool parse_exponent(std::string_view s, long& out) {
  bool neg = false;
  if (!s.empty() && (s[0] == '+' || s[0] == '-')) {
    neg = s[0] == '-';
    s.remove_prefix(1);
  }
  if (s.empty()) return false;
  long v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    v = std::min(v * 10 + (c - '0'), 1L << 40);
  }
  out = neg ? -v : v;
  return true;
}

error malformed(std::string_view text) {
  return error{"cannot parse '" + std::string(text) +
               "' as a number: expected decimal (1.5e-3), hex float (0x1.8p-3), inf or nan"};
}

}  // namespace

expected<unpacked> parse_number(std::string_view text) {
  const std::string_view original = text;
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) text.remove_prefix(1);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.remove_suffix(1);
  bool negative = false;
  if (!text.empty() && (text[0] == '+' || text[0] == '-')) {
    negative = text[0] == '-';
    text.remove_prefix(1);
  }
  if (iequals(text, "inf") || iequals(text, "infinity")) return unpacked{value_class::infinite, negative};
  if (iequals(text, "nan")) return unpacked{value_class::nan, negative};

  const bool hex = text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X');
  if (hex) text.remove_prefix(2);
  const int base = hex ? 16 : 10;

  // Mantissa digits (at most one point), then an optional exponent.
  std::string digits;
  long frac_digits = 0;
  bool seen_point = false;
  std::size_t i = 0;
  for (; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '.' && !seen_point) {
      seen_point = true;
      continue;
    }
    const int d = hex ? hex_digit(c) : (c >= '0' && c <= '9' ? c - '0' : -1);
    if (d < 0) break;
    digits += c;
    if (seen_point) ++frac_digits;
  }
  if (digits.empty()) return malformed(original);
  long exponent = 0;
  if (i < text.size()) {
    const char e = static_cast<char>(std::tolower(text[i]));
    if (e != (hex ? 'p' : 'e') || !parse_exponent(text.substr(i + 1), exponent)) return malformed(original);
  }

  mpz d;
  if (mpz_set_str(d.v, digits.c_str(), base) != 0) return malformed(original);
  if (mpz_sgn(d.v) == 0) return unpacked{value_class::zero, negative};

  if (hex) {  // value = d * 2^(exponent - 4 * frac_digits)
    const long exp2 = exponent - 4 * frac_digits;
    const long lead = exp2 + static_cast<long>(mpz_sizeinbase(d.v, 2));
    if (lead > 2000) return overflowing(negative);
    if (lead < -2000) return underflowing(negative);
    return from_integer(negative, d.v, exp2);
  }

  // value = d * 10^k; the leading decimal digit has exponent k + ndigits - 1.
  const long k = exponent - frac_digits;
  const long lead10 = k + static_cast<long>(mpz_sizeinbase(d.v, 10));
  if (lead10 > kHugeDecimalExponent) return overflowing(negative);
  if (lead10 < kTinyDecimalExponent) return underflowing(negative);
  mpz scale;
  if (k >= 0) {
    mpz_ui_pow_ui(scale.v, 10, static_cast<unsigned long>(k));
    mpz_mul(d.v, d.v, scale.v);
    return from_integer(negative, d.v, 0);
  }
  // d / 10^-k: shift d left so that the quotient keeps at least kKeptBits + 2 bits.
  mpz_ui_pow_ui(scale.v, 10, static_cast<unsigned long>(-k));
  const long shift = std::max(0L, kKeptBits + 2 + static_cast<long>(mpz_sizeinbase(scale.v, 2)) -
                                      static_cast<long>(mpz_sizeinbase(d.v, 2)));
  mpz_mul_2exp(d.v, d.v, static_cast<mp_bitcnt_t>(shift));
  mpz q, r;
  mpz_tdiv_qr(q.v, r.v, d.v, scale.v);
  unpacked x = from_integer(negative, q.v, -shift);
  x.sticky = x.sticky || mpz_sgn(r.v) != 0;
  return x;
}

expected<rounded> from_string(const format& f, std::string_view text, const rounding& r, std::uint64_t random) {
  expected<unpacked> x = parse_number(text);
  if (!x) return error{x.message()};
  return round(f, *x, r, random);
}

std::string to_decimal(const unpacked& x) {
  const std::string sign = x.negative ? "-" : "";
  switch (x.cls) {
    case value_class::nan: return "nan";
    case value_class::infinite: return sign + "inf";
    case value_class::zero: return sign + "0";
    case value_class::finite: break;
  }
  mpz n;
  mpz_set_ui(n.v, static_cast<unsigned long>(x.sig >> 64));
  mpz_mul_2exp(n.v, n.v, 64);
  mpz_add_ui(n.v, n.v, static_cast<unsigned long>(x.sig & ~std::uint64_t{0}));
  long point = 0;  // number of digits after the decimal point
  if (x.exp >= 0) {
    mpz_mul_2exp(n.v, n.v, static_cast<mp_bitcnt_t>(x.exp));
  } else {
    mpz five;
    mpz_ui_pow_ui(five.v, 5, static_cast<unsigned long>(-x.exp));
    mpz_mul(n.v, n.v, five.v);
    point = -x.exp;
  }
  std::string digits(mpz_sizeinbase(n.v, 10) + 2, '\0');
  mpz_get_str(digits.data(), 10, n.v);
  digits.resize(std::char_traits<char>::length(digits.c_str()));
  // Drop trailing zeros of the fraction.
  while (point > 0 && digits.size() > 1 && digits.back() == '0') {
    digits.pop_back();
    --point;
  }
  const long lead10 = static_cast<long>(digits.size()) - point - 1;  // exponent of first digit
  if (lead10 >= -6 && lead10 < 21) {
    if (point <= 0) return sign + digits + std::string(static_cast<std::size_t>(-point), '0');
    if (static_cast<long>(digits.size()) <= point)
      return sign + "0." + std::string(static_cast<std::size_t>(point - static_cast<long>(digits.size())), '0') + digits;
    return sign + digits.substr(0, digits.size() - point) + "." + digits.substr(digits.size() - point);
  }
  while (digits.size() > 1 && digits.back() == '0') digits.pop_back();
  std::string mantissa = digits.substr(0, 1);
  if (digits.size() > 1) mantissa += "." + digits.substr(1);
  const std::string e = lead10 < 0 ? "e-" + std::to_string(-lead10) : "e+" + std::to_string(lead10);
  return sign + mantissa + e;
}

std::string to_decimal(const format& f, std::uint32_t code) { return to_decimal(decode(f, code)); }

std::string to_hex_float(const format& f, std::uint32_t code) {
  const unpacked x = decode(f, code);
  const std::string sign = x.negative ? "-" : "";
  switch (x.cls) {
    case value_class::nan: return "nan";
    case value_class::infinite: return sign + "inf";
    case value_class::zero: return sign + "0x0p+0";
    case value_class::finite: break;
  }
  // sig < 2^32: write it as 1.fraction with the fraction left-aligned to whole hex digits.
  auto sig = static_cast<std::uint64_t>(x.sig);
  const int lead = 63 - __builtin_clzll(sig);
  const int exponent = x.exp + lead;
  std::uint64_t frac = sig & ((std::uint64_t{1} << lead) - 1);
  const int frac_digits = (lead + 3) / 4;
  frac <<= frac_digits * 4 - lead;
  std::string s = sign + "0x1";
  if (frac != 0) {
    static constexpr char kHex[] = "0123456789abcdef";
    std::string hex;
    for (int d = frac_digits - 1; d >= 0; --d) hex += kHex[(frac >> (4 * d)) & 0xF];
    while (!hex.empty() && hex.back() == '0') hex.pop_back();
    s += "." + hex;
  }
  return s + "p" + (exponent < 0 ? "-" : "+") + std::to_string(exponent < 0 ? -exponent : exponent);
}

std::string printable(std::string_view text, std::size_t max_chars) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  std::size_t i = 0;
  for (; i < text.size() && out.size() < max_chars; ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x20 || c == 0x7f) {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    } else {
      out += static_cast<char>(c);
    }
  }
  if (i < text.size()) out += "... (" + std::to_string(text.size()) + " bytes)";
  return out;
}

}  // namespace fpemu
