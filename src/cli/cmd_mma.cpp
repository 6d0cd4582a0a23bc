// fpemu mma --preset NAME [--out-format fp32|fp16] [--a-format F] [--b-format F] [--list]: dot products
// D = C + sum_i A_i * B_i (block-scaled: sum_i SA_{i/n} SB_{i/n} A_i B_i) as a GPU tensor core
// computes them (fpemu/presets.hpp).
//
// Reads one case per stdin line, "A_0 ... A_{K-1} ; B_0 ... B_{K-1} ; C", every value as 8 hex
// digits of its binary32 bit pattern (optional 0x, either case); block-scaled presets read two
// more fields, "; SA_0 ... SA_{K/n-1} ; SB_0 ... SB_{K/n-1}", one scale per n = scale_block
// products of A's row and of B's column. K may be any length >= 1 (a multiple of n when scaled):
// the preset forms its blocks in order. Prints D per line, 8 lowercase hex digits of the binary32
// pattern (4 of the binary16 pattern with --out-format fp16). Blank lines and lines whose first
// non-blank character is '#' are skipped. Input is streamed: each result is printed as its line
// is read, and on the first bad line the command stops with status 2 and one message
// "line N: ..." (common.hpp); the results of the lines before it have already been printed.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <array>
#include <cctype>
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
  if (!p.inputs.empty()) s += " (each of " + input_formats_text(p, " ", " ") + ")";
  return s;
}

std::string accumulator_of(const tensor_core_preset& p) {
  const block_fma_model& b = p.model.block;
  std::string s = to_string(b.acc) + " " + std::string(to_string(b.acc_rounding.mode));
  if (p.model.promote_every > 0)
    s += ", promoted every " + std::to_string(p.model.promote_every) + " into fp32, " + to_string(p.output) + " out";
  return s;
}

// The scale format's name (scale_format_name: e4m3fn codes are read as unsigned UE4M3) in lower
// case, as this command spells every format.
std::string scale_name(const format& f) {
  std::string s = scale_format_name(f);
  for (char& ch : s) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return s;
}

// SCALES: "e8m0fnu/32" (format / products per scale), "-" when unscaled.
std::string scales_of(const tensor_core_preset& p) {
  if (!p.scale) return "-";
  return scale_name(*p.scale) + "/" + std::to_string(p.model.block.scale_block);
}

// N: products per block, with the exactly summed groups of the fp4 kinds: "64 (G=16)".
std::string block_of(const block_fma_model& b) {
  std::string s = std::to_string(b.block_size);
  if (b.scale_group > 0) s += " (G=" + std::to_string(b.scale_group) + ")";
  return s;
}

// F as the model uses it: the alignment bits of an aligned sum ("24 (F2=31)" when two-stage),
// "exact" for an exact block sum, "-" for a pairwise chain of rounded operations.
std::string frac_of(const block_fma_model& b) {
  switch (b.sum) {
    case block_sum::exact: return "exact";
    case block_sum::pairwise: return "-";
    case block_sum::aligned: break;
  }
  std::string s = std::to_string(b.frac_bits);
  if (b.second_frac_bits > 0) s += " (F2=" + std::to_string(b.second_frac_bits) + ")";
  return s;
}

void print_list(const output_options& output) {
  const std::vector<tensor_core_preset>& presets = tensor_core_presets();
  // The text table; CSV and JSON hold the same columns with numbers as numbers (f and f2 null
  // where the model has none, sum naming it; group the exact group, null without), plus the summary.
  constexpr std::size_t columns = 11;
  using row = std::array<std::string, columns>;
  std::vector<row> rows;
  rows.push_back({"NAME", "INSTRUCTION", "INPUTS", "K", "N", "F", "SCALES", "ACCUMULATOR", "FP16-OUT", "VALIDATED",
                  "SOURCE"});
  output_sinks sinks(output);
  table_writer table(sinks, {"name", "instruction", "inputs", "k", "n", "group", "f", "f2", "sum", "scales",
                             "accumulator", "fp16_out", "validated", "source", "summary"});
  for (const tensor_core_preset& p : presets) {
    const block_fma_model& b = p.model.block;
    rows.push_back({p.name, p.instruction, inputs_of(p), std::to_string(p.instruction_k), block_of(b), frac_of(b),
                    scales_of(p), accumulator_of(p), p.fp16_accumulator ? "yes" : "no", p.validated ? "yes" : "no",
                    p.source});
    const bool aligned = b.sum == block_sum::aligned;
    table.row({p.name, p.instruction, inputs_of(p), p.instruction_k, b.block_size,
               b.scale_group > 0 ? cell(b.scale_group) : cell(), aligned ? cell(b.frac_bits) : cell(),
               aligned && b.second_frac_bits > 0 ? cell(b.second_frac_bits) : cell(), std::string(to_string(b.sum)),
               p.scale ? cell(scales_of(p)) : cell(), accumulator_of(p), p.fp16_accumulator.has_value(), p.validated,
               p.source, p.summary});
  }
  table.finish();
  sinks.commit();
  if (!sinks.text()) return;
  std::array<std::size_t, columns> widths{};
  for (const row& r : rows)
    for (std::size_t i = 0; i < columns; ++i) widths[i] = std::max(widths[i], r[i].size());
  for (const row& r : rows) {
    std::string line;
    for (std::size_t i = 0; i < columns; ++i) {
      line += r[i];
      if (i + 1 < columns) line += std::string(widths[i] - r[i].size() + 2, ' ');
    }
    std::cout << line << '\n';
  }
  std::cout
      << "INSTRUCTION: the instruction modelled (PTX or the CDNA ISA); SOURCE: who published the parameters.\n"
         "K: products per instruction; N: products per block (one rounding each); G=16: groups of 16\n"
         "products summed exactly, each group one term under its scales. F: fraction bits kept below the\n"
         "largest exponent of a block; 24 (F2=31): two-stage, C added after the products, that sum\n"
         "rounded down to F2 bits before the accumulator's rounding; exact: each block and C summed\n"
         "exactly, rounded once; -: products and a pairwise tree of additions, each rounded into the\n"
         "accumulator, subnormals flushed. SCALES: block scales as format/products per scale pair\n"
         "(e8m0fnu: powers of two; ue4m3: e4m3fn read as unsigned), input lines take two more fields\n"
         "(fpemu mma --help); -: unscaled. VALIDATED: reproduces published hardware outputs.\n";
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
  // Block-scaled presets take two more fields: one scale per `block` products of A's row (SA)
  // and of B's column (SB).
  const std::size_t block = p.scale ? static_cast<std::size_t>(p.model.block.scale_block) : 0;
  const std::size_t separators = p.scale ? 4 : 2;
  const std::string blocks = "K/" + std::to_string(block);
  const std::string syntax =
      p.scale ? "'A_0 ... A_{K-1} ; B_0 ... B_{K-1} ; C ; SA_0 ... SA_{" + blocks + "-1} ; SB_0 ... SB_{" + blocks +
                    "-1}' with exactly four ';' separators"
              : "'A_0 ... A_{K-1} ; B_0 ... B_{K-1} ; C' with exactly two ';' separators";
  const std::string why = p.scale ? "preset " + p.name + " takes one " + scale_name(*p.scale) + " scale per " +
                                        std::to_string(block) + " products of A and of B"
                                  : "preset " + p.name + " takes no block scales";

  std::string line;
  std::vector<std::string_view> words;
  std::vector<std::uint32_t> a, b, sa, sb;
  std::vector<std::string_view> fields;
  for (std::uint64_t number = 1; std::getline(std::cin, line); ++number) {
    const std::string_view text = trim(line);
    if (text.empty() || text.front() == '#') continue;
    const std::string where = "line " + std::to_string(number);
    fields.clear();
    for (std::size_t start = 0;;) {
      const std::size_t end = text.find(';', start);
      fields.push_back(text.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start));
      if (end == std::string_view::npos) break;
      start = end + 1;
    }
    if (fields.size() != separators + 1)
      fail(where + ": expected " + syntax + ", found " + std::to_string(fields.size() - 1) + " (" + why + ")");
    split_words(fields[0], words);
    if (words.empty()) fail(where + ": A is empty: expected at least one value before the first ';'");
    parse_values(words, "A", where, a);
    split_words(fields[1], words);
    if (words.empty()) fail(where + ": B is empty: expected at least one value between the first two ';'");
    parse_values(words, "B", where, b);
    split_words(fields[2], words);
    if (words.size() != 1)
      fail(where + ": C must be a single value after the second ';', got " + std::to_string(words.size()));
    const std::uint32_t c = parse_bits(words.front(), "C", 0, where);
    if (p.scale) {
      split_words(fields[3], words);
      if (words.empty())
        fail(where + ": SA is empty: expected " + blocks + " scales of A between the third and fourth ';'");
      parse_values(words, "SA", where, sa);
      split_words(fields[4], words);
      if (words.empty()) fail(where + ": SB is empty: expected " + blocks + " scales of B after the fourth ';'");
      parse_values(words, "SB", where, sb);
    }
    const expected<std::uint32_t> d = tensor_core_dot(p, fp16_out, a, b, c, sa, sb);
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
  app->add_option("--a-format", o->a_format, "Format of A: one of the preset's `inputs` list (--list: INPUTS)")
      ->check(format_check())
      ->default_str("the preset's")
      ->type_name("FMT");
  app->add_option("--b-format", o->b_format, "Format of B: one of the preset's `inputs` list (--list: INPUTS)")
      ->check(format_check())
      ->default_str("the preset's")
      ->type_name("FMT");
  app->add_flag("--list", o->list,
                "List the presets (instruction, inputs, instruction k, block size n, F, block scales, accumulator, "
                "validation against hardware, source) and exit");
  add_output_options(*app, o->output);
  app->footer(
      "Usage: fpemu mma --preset NAME [--out-format fp32|fp16] [--a-format FMT] [--b-format FMT] < CASES\n"
      "Reads one case per stdin line:  A_0 ... A_{K-1} ; B_0 ... B_{K-1} ; C\n"
      "each value as 8 hex digits of its binary32 bit pattern (optional 0x, any case), separated\n"
      "by blanks; both ';' are required (four with block scales, below). A and B have the same\n"
      "length K >= 1; K may exceed the instruction's k: the blocks are formed in order. Every A_i,\n"
      "B_i must be exactly representable in the input format (tf32 presets drop the low 13 bits, as\n"
      "the hardware does). With --out-format fp16, C is first rounded to binary16 (nearest-even).\n"
      "Block-scaled presets (a SCALES entry format/n in --list, e.g. b200-mxf8f6f4: e8m0fnu/32) read\n"
      "two more fields, one scale per n products of A's row and of B's column (K a multiple of n):\n"
      "  A_0 ... A_{K-1} ; B_0 ... B_{K-1} ; C ; SA_0 ... SA_{K/n-1} ; SB_0 ... SB_{K/n-1}\n"
      "each scale a binary32 pattern like the rest, its value one of the scale format's (e8m0fnu: a\n"
      "power of two 2^-127..2^127; ue4m3: an e4m3fn value >= 0); other presets take no scales. E.g.\n"
      "b200-mxf8f6f4 with K = 32, A_i = 1 (3f800000), B_i = 0.5 (3f000000), C = 0, SA_0 = 2^0\n"
      "(3f800000), SB_0 = 2^2 (40800000): the line\n"
      "  3f800000 ... 3f800000 ; 3f000000 ... 3f000000 ; 00000000 ; 3f800000 ; 40800000\n"
      "(32 values each of A and B) prints 42800000 (16 x 2^0 x 2^2 = 64).\n"
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
