// fpemu decode --format FMT CODE...: the exact value, the bit fields, the unbiased exponent and the
// IEEE 754 class of each code, one line per code:
//
//   0x7e  448  sign=0 exp=1111 frac=110 (2^8 x 1.75)  positive_normal
//
// Every code is checked before anything is printed, so that the columns can be aligned; a bad
// code prints nothing and exits with status 2.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <array>
#include <iostream>
#include <string>
#include <vector>

#include "common.hpp"
#include "fpemu/spec.hpp"
#include "fpemu/text.hpp"
#include "fpemu/unpacked.hpp"

namespace fpemu::cli {
namespace {

struct decode_options {
  std::string format;
  std::vector<std::string> codes;
  output_options output;
};

std::string to_binary(std::uint32_t v, int bits) {
  if (bits == 0) return "-";
  std::string s(static_cast<std::size_t>(bits), '0');
  for (int i = 0; i < bits; ++i)
    if ((v >> i) & 1) s[static_cast<std::size_t>(bits - 1 - i)] = '1';
  return s;
}

// "sign=0 exp=1111 frac=110 (2^8 x 1.75)"
std::string fields(const format& f, std::uint32_t code) {
  std::string s;
  if (f.is_signed) s += "sign=" + std::to_string((code & sign_mask(f)) != 0 ? 1 : 0) + " ";
  const std::uint32_t mag = code & magnitude_mask(f);
  s += "exp=" + to_binary(mag >> f.frac_bits, f.exp_bits) + " frac=" + to_binary(mag & frac_mask(f), f.frac_bits);
  const unpacked x = decode(f, code);
  switch (x.cls) {
    case value_class::nan: return s + " (NaN)";
    case value_class::infinite: return s + " (infinity)";
    case value_class::zero:
      return s + ((mag >> f.frac_bits) == 0 && (mag & frac_mask(f)) != 0 ? " (zero: no subnormals)" : " (zero)");
    case value_class::finite: break;
  }
  // value = sig * 2^exp = 2^(exp + frac_bits) x (sig / 2^frac_bits); sig carries the hidden
  // bit for normals, none for subnormals (whose exponent is emin).
  const int e = x.exp + f.frac_bits;
  const std::string significand = to_decimal(make_finite(false, x.sig, -f.frac_bits));
  return s + " (2^" + std::to_string(e) + " x " + significand + ")";
}

void run_decode(const decode_options& o) {
  const format f = require_format(o.format);
  std::vector<std::uint32_t> codes;
  for (const std::string& c : o.codes) codes.push_back(parse_code(f, c));

  std::vector<std::array<std::string, 4>> rows;
  std::size_t w0 = 0, w1 = 0, w2 = 0;
  for (const std::uint32_t c : codes) {
    rows.push_back({hex_code(f, c), to_decimal(f, c), fields(f, c), std::string(to_string(classify(f, c)))});
    w0 = std::max(w0, rows.back()[0].size());
    w1 = std::max(w1, rows.back()[1].size());
    w2 = std::max(w2, rows.back()[2].size());
  }
  output_sinks sinks(o.output);
  table_writer table(sinks, {"code", "value", "fields", "class"});
  for (const auto& r : rows) {
    if (sinks.text())
      std::cout << r[0] << std::string(w0 - r[0].size() + 2, ' ') << r[1] << std::string(w1 - r[1].size() + 2, ' ')
                << r[2] << std::string(w2 - r[2].size() + 2, ' ') << r[3] << '\n';
    table.row({r[0], r[1], r[2], r[3]});
  }
  table.finish();
  sinks.commit();
}

}  // namespace

command add_decode(CLI::App& parent) {
  auto o = std::make_shared<decode_options>();
  CLI::App* app = parent.add_subcommand("decode", "Show the value, bit fields and class of codes");
  add_format_option(*app, o->format, "Format of the codes: a name (e4m3fn, bf16, ...) or eXmY[:options]")->required();
  app->add_option("CODE", o->codes, "Codes in hex, with or without 0x (e.g. 0x7e 3dcd)")->type_name("");
  add_output_options(*app, o->output);
  app->footer("Prints: 0xCODE  EXACT-VALUE  sign=S exp=E frac=F (2^e x significand)  class");
  return {app, [o](const std::vector<std::string>& rest) {
            o->codes.insert(o->codes.end(), rest.begin(), rest.end());
            if (o->codes.empty()) fail("decode: at least one CODE is required: fpemu decode --format FMT CODE...");
            run_decode(*o);
          }};
}

}  // namespace fpemu::cli
