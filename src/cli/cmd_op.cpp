// fpemu op add|sub|mul|div|fma|sqrt --format FMT [options]: IEEE 754 arithmetic on codes.
//
// Reads one operation per stdin line: the operand codes in hex, whitespace-separated (one for
// sqrt, two for add/sub/mul/div, three for fma: a*b+c). Prints "0xCODE FLAGS" per line.
// Blank lines are skipped; in the stochastic modes the k-th operation (0-based, counting
// operations, not blank lines) takes keystream_bits(seed, stream, k, width), as the array
// functions do. On the first bad line the command stops with status 2, naming the line; the
// results before it are already printed.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <array>
#include <iostream>
#include <string>
#include <vector>

#include "common.hpp"
#include "fpemu/ops.hpp"
#include "fpemu/spec.hpp"

namespace fpemu::cli {
namespace {

struct op_options {
  std::string op;
  std::string format;
  rounding_options rounding;
};

struct op_info {
  std::string_view name;
  int operands;
};
constexpr std::array<op_info, 6> kOps{{{"add", 2}, {"sub", 2}, {"mul", 2}, {"div", 2}, {"fma", 3}, {"sqrt", 1}}};

rounded apply(std::string_view op, const format& f, const std::uint32_t* c, const rounding& r, std::uint64_t random) {
  if (op == "add") return add(f, c[0], c[1], r, random);
  if (op == "sub") return sub(f, c[0], c[1], r, random);
  if (op == "mul") return mul(f, c[0], c[1], r, random);
  if (op == "div") return div(f, c[0], c[1], r, random);
  if (op == "fma") return fma(f, c[0], c[1], c[2], r, random);
  return sqrt(f, c[0], r, random);
}

void run_op(const op_options& o) {
  const op_info* info = nullptr;
  for (const op_info& i : kOps)
    if (i.name == o.op) info = &i;
  if (info == nullptr) fail("unknown operation " + quote(o.op) + ": valid add|sub|mul|div|fma|sqrt");
  const format f = require_format(o.format);
  const rounding_setup s = resolve_rounding(f, o.rounding);

  std::string line;
  std::uint64_t index = 0;
  for (std::uint64_t number = 1; std::getline(std::cin, line); ++number) {
    const std::string_view text = trim(line);
    if (text.empty()) continue;
    const std::string where = "stdin line " + std::to_string(number);
    std::vector<std::string_view> words;
    for (std::size_t pos = 0; pos < text.size();) {
      const std::size_t b = text.find_first_not_of(" \t", pos);
      if (b == std::string_view::npos) break;
      const std::size_t e = std::min(text.find_first_of(" \t", b), text.size());
      words.push_back(text.substr(b, e - b));
      pos = e;
    }
    if (static_cast<int>(words.size()) != info->operands)
      fail(where + ": " + std::string(info->name) + " takes " + std::to_string(info->operands) + " operand code" +
           (info->operands == 1 ? "" : "s") + ", got " + std::to_string(words.size()) + ": " + quote(text));
    std::array<std::uint32_t, 3> codes{};
    for (std::size_t i = 0; i < words.size(); ++i) codes[i] = parse_code(f, words[i], where);
    const rounded r = apply(info->name, f, codes.data(), s.r, s.random(index++));
    std::cout << hex_code(f, r.code) << ' ' << flags_to_string(r.flags) << '\n';
  }
}

}  // namespace

command add_op(CLI::App& parent) {
  auto o = std::make_shared<op_options>();
  CLI::App* app = parent.add_subcommand("op", "Apply add/sub/mul/div/fma/sqrt to codes read from stdin");
  app->add_option("OP", o->op, "Operation")
      ->required()
      ->transform(choice_check({"add", "sub", "mul", "div", "fma", "sqrt"}))
      ->type_name("");
  add_format_option(*app, o->format, "Format of operands and result: a name or eXmY[:options]")->required();
  add_rounding_options(*app, o->rounding);
  app->footer(
      "Reads one operation per stdin line: operand codes in hex (1 for sqrt, 2 for add/sub/mul/div,\n"
      "3 for fma = a*b+c). Prints 0xCODE FLAGS per line. Stochastic modes: operation k (0-based)\n"
      "uses keystream_bits(seed, stream, k, width). Stops with status 2 at the first bad line.");
  return {app, [o](const std::vector<std::string>& rest) {
            no_trailing("op", rest);
            run_op(*o);
          }};
}

}  // namespace fpemu::cli
