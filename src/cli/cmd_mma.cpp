// fpemu mma --preset NAME [--out-format fp32|fp16] [--a-format F] [--b-format F] [--list]: dot products
// D = C + sum_i A_i * B_i as a GPU tensor core computes them (fpemu/presets.hpp).
//
// Reads one case per stdin line, "A_0 ... A_{K-1} ; B_0 ... B_{K-1} ; C", every value as 8 hex
// digits of its binary32 bit pattern (optional 0x, either case). K may be any length >= 1: the
// preset forms its blocks in order. Prints D per line, 8 lowercase hex digits of the binary32
// pattern (4 of the binary16 pattern with --out-format fp16). Blank lines and lines whose first
// non-blank character is '#' are skipped. Input is streamed: each result is printed as its line
// is read, and on the first bad line the command stops with status 2 and one message
// "line N: ..." (common.hpp); the results of the lines before it have already been printed.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdint>
#include <iostream>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common.hpp"
#include "fpemu/presets.hpp"
#include "fpemu/spec.hpp"
#include "fpemu/text.hpp"

namespace fpemu::cli {
namespace {

struct mma_options {
  std::string preset;
  std::string out = "fp32";
  std::string a_format;
  std::string b_format;
  bool list = false;
  output_options output;
};

constexpr std::string_view kBlanks = " \t\r\n\v\f";

// A token for a message: about 40 characters at most (printable()).
std::string show(std::string_view token) { return quote(printable(token, 40)); }

// Splits a field on blanks.
void split_words(std::string_view text, std::vector<std::string_view>& words) {
  words.clear();
  for (std::size_t pos = 0; pos < text.size();) {
    const std::size_t b = text.find_first_not_of(kBlanks, pos);
    if (b == std::string_view::npos) break;
    const std::size_t e = std::min(text.find_first_of(kBlanks, b), text.size());
    words.push_back(text.substr(b, e - b));
    pos = e;
  }
}

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Exactly 8 hex digits with an optional 0x / 0X.
std::uint32_t parse_bits(std::string_view token, std::string_view name, std::size_t index, const std::string& where) {
  std::string_view digits = token;
  if (digits.starts_with("0x") || digits.starts_with("0X")) digits.remove_prefix(2);
  std::uint32_t v = 0;
  bool ok = digits.size() == 8;
  for (std::size_t i = 0; ok && i < digits.size(); ++i) {
    const int d = hex_digit(digits[i]);
    ok = d >= 0;
    v = (v << 4) | static_cast<std::uint32_t>(d < 0 ? 0 : d);
  }
  if (!ok) {
    const std::string field = name == "C" ? std::string("C") : std::string(name) + "_" + std::to_string(index);
    fail(where + ": " + field + " " + show(token) +
         " is not valid: expected 8 hex digits of a binary32 bit pattern (optional 0x), e.g. 3f800000 for 1.0");
  }
  return v;
}

void parse_values(const std::vector<std::string_view>& words, std::string_view name, const std::string& where,
                  std::vector<std::uint32_t>& values) {
  values.clear();
  values.reserve(words.size());
  for (std::size_t i = 0; i < words.size(); ++i) values.push_back(parse_bits(words[i], name, i, where));
}

std::string hex(std::uint32_t v, int digits) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string s(static_cast<std::size_t>(digits), '0');
  for (int i = digits - 1; i >= 0; --i, v >>= 4) s[static_cast<std::size_t>(i)] = kHex[v & 15];
  return s;
}

std::string inputs_of(const tensor_core_preset& p) {
  std::string s = to_string(p.a);
  if (!(p.a == p.b)) s += " x " + to_string(p.b);
  if (p.mixed_fp8) s += " (or mixed e4m3fn x e5m2)";
  return s;
}

std::string accumulator_of(const tensor_core_preset& p) {
  const block_fma_model& b = p.model.block;
  std::string s = to_string(b.acc) + " " + std::string(to_string(b.acc_rounding.mode));
  if (p.model.promote_every > 0)
    s += ", promoted every " + std::to_string(p.model.promote_every) + " into fp32, " + to_string(p.output) + " out";
  return s;
}

void print_list(const output_options& output) {
  const std::vector<tensor_core_preset>& presets = tensor_core_presets();
  struct row {
    std::string cells[9];
  };
  std::vector<row> rows;
  rows.push_back({{"NAME", "INPUTS", "K", "N", "F", "ACCUMULATOR", "FP16-OUT", "VALIDATED", "SUMMARY"}});
  output_sinks sinks(output);
  table_writer table(sinks, {"name", "inputs", "k", "n", "f", "accumulator", "fp16_out", "validated", "summary"});
  for (const tensor_core_preset& p : presets) {
    rows.push_back({{p.name, inputs_of(p), std::to_string(p.instruction_k), std::to_string(p.model.block.block_size),
                     std::to_string(p.model.block.frac_bits), accumulator_of(p), p.fp16_accumulator ? "yes" : "no",
                     p.validated ? "yes" : "no", p.summary}});
    table.row({p.name, inputs_of(p), p.instruction_k, p.model.block.block_size, p.model.block.frac_bits,
               accumulator_of(p), p.fp16_accumulator.has_value(), p.validated, p.summary});
  }
  table.finish();
  sinks.commit();
  if (!sinks.text()) return;
  std::size_t widths[9] = {};
  for (const row& r : rows)
    for (std::size_t i = 0; i < 9; ++i) widths[i] = std::max(widths[i], r.cells[i].size());
  for (const row& r : rows) {
    std::string line;
    for (std::size_t i = 0; i < 9; ++i) {
      line += r.cells[i];
      if (i + 1 < 9) line += std::string(widths[i] - r.cells[i].size() + 2, ' ');
    }
    std::cout << line << '\n';
  }
  std::cout << "K: products per instruction; N: products per block (one rounding each); F: fraction bits\n"
               "kept below the largest exponent of a block; VALIDATED: reproduces published hardware outputs.\n";
}

tensor_core_preset resolve_preset(const mma_options& o) {
  if (o.preset.empty()) fail("mma: --preset NAME is required (fpemu mma --list shows the presets)");
  tensor_core_preset p = value_or_fail(find_preset(o.preset));
  if (!o.a_format.empty() || !o.b_format.empty()) {
    const format fa = o.a_format.empty() ? p.a : require_format(o.a_format);
    const format fb = o.b_format.empty() ? p.b : require_format(o.b_format);
    p = value_or_fail(with_inputs(p, fa, fb));
  }
  return p;
}

void run_mma(const mma_options& o) {
  if (o.list) {
    print_list(o.output);
    return;
  }
  if (!o.output.csv.empty() || !o.output.json.empty()) fail("mma: --csv and --json apply to --list (the preset table)");
  const bool fp16_out = o.out == "fp16";
  const tensor_core_preset p = resolve_preset(o);
  if (fp16_out && !p.fp16_accumulator) {
    std::string with;
    for (const tensor_core_preset& q : tensor_core_presets())
      if (q.fp16_accumulator) with += (with.empty() ? "" : ", ") + q.name;
    fail("preset " + p.name + " has no fp16 accumulator (--out-format fp16): presets with one are " + with);
  }
  const int digits = fp16_out ? 4 : 8;

  std::string line;
  std::vector<std::string_view> words;
  std::vector<std::uint32_t> a, b;
  for (std::uint64_t number = 1; std::getline(std::cin, line); ++number) {
    const std::string_view text = trim(line);
    if (text.empty() || text.front() == '#') continue;
    const std::string where = "line " + std::to_string(number);
    const std::size_t s1 = text.find(';');
    const std::size_t s2 = s1 == std::string_view::npos ? s1 : text.find(';', s1 + 1);
    if (s2 == std::string_view::npos || text.find(';', s2 + 1) != std::string_view::npos) {
      std::size_t count = 0;
      for (const char c : text) count += c == ';' ? 1 : 0;
      fail(where + ": expected 'A_0 ... A_{K-1} ; B_0 ... B_{K-1} ; C' with exactly two ';' separators, found " +
           std::to_string(count));
    }
    split_words(text.substr(0, s1), words);
    if (words.empty()) fail(where + ": A is empty: expected at least one value before the first ';'");
    parse_values(words, "A", where, a);
    split_words(text.substr(s1 + 1, s2 - s1 - 1), words);
    if (words.empty()) fail(where + ": B is empty: expected at least one value between the two ';'");
    parse_values(words, "B", where, b);
    split_words(text.substr(s2 + 1), words);
    if (words.size() != 1)
      fail(where + ": C must be a single value after the second ';', got " + std::to_string(words.size()));
    const std::uint32_t c = parse_bits(words.front(), "C", 0, where);
    const expected<std::uint32_t> d = tensor_core_dot(p, fp16_out, a, b, c);
    if (!d) fail(where + ": " + d.message());
    std::cout << hex(*d, digits) << '\n';
  }
}

}  // namespace

command add_mma(CLI::App& parent) {
  auto o = std::make_shared<mma_options>();
  CLI::App* app = parent.add_subcommand("mma", "Tensor-core dot products D = C + sum A_i*B_i, bit-exact per GPU preset");
  app->add_option("--preset,-p", o->preset, "Tensor-core preset, e.g. v100-fp16, a100-fp16, h100-e4m3 (see --list)")
      ->type_name("NAME");
  app->add_option("--out-format", o->out, "D's format: fp32, or fp16 (the fp16-accumulator variant, where the preset has one)")
      ->transform(choice_check({"fp32", "fp16"}))
      ->capture_default_str()
      ->type_name("FMT");
  app->add_option("--a-format", o->a_format, "Format of A; fp8 presets take e4m3fn or e5m2")
      ->check(format_check())
      ->default_str("the preset's")
      ->type_name("FMT");
  app->add_option("--b-format", o->b_format, "Format of B; fp8 presets take e4m3fn or e5m2")
      ->check(format_check())
      ->default_str("the preset's")
      ->type_name("FMT");
  app->add_flag("--list", o->list, "List the presets (inputs, instruction k, block size n, F, accumulator, "
                                   "validation against hardware) and exit");
  add_output_options(*app, o->output);
  app->footer(
      "Usage: fpemu mma --preset NAME [--out-format fp32|fp16] [--a-format FMT] [--b-format FMT] < CASES\n"
      "Reads one case per stdin line:  A_0 ... A_{K-1} ; B_0 ... B_{K-1} ; C\n"
      "each value as 8 hex digits of its binary32 bit pattern (optional 0x, any case), separated\n"
      "by blanks; both ';' are required. A and B have the same length K >= 1; K may exceed the\n"
      "instruction's k: the blocks are formed in order. Every A_i, B_i must be exactly representable\n"
      "in the input format (tf32 presets drop the low 13 bits, as the hardware does). With --out-format\n"
      "fp16, C is first rounded to binary16 (nearest-even).\n"
      "Prints D per line: 8 lowercase hex digits of the binary32 pattern, or 4 of the binary16\n"
      "pattern with --out-format fp16. Blank lines and lines starting with '#' are skipped.\n"
      "Input is streamed; on the first bad line the command prints 'fpemu: line N: ...' on stderr\n"
      "and stops with status 2: the results of the lines before it are already printed, nothing\n"
      "after it is.");
  return {app, [o](const std::vector<std::string>& rest) {
            no_trailing("mma", rest);
            run_mma(*o);
          }};
}

}  // namespace fpemu::cli
