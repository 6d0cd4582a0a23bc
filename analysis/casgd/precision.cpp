// Precision slots and Table 3's recipes (Devarakonda et al. 2026).
#include "analysis/casgd/precision.hpp"

#include <array>
#include <cmath>
#include <limits>
#include <vector>

#include "fpemu/convert.hpp"
#include "fpemu/ops.hpp"
#include "fpemu/presets.hpp"
#include "fpemu/spec.hpp"

namespace fpemu::casgd {

namespace {

bool is_float(double v) { return static_cast<double>(static_cast<float>(v)) == v || std::isnan(v); }

}  // namespace

precision of(const format& f) { return precision{f, {}}; }

bool precision::is_host_fp32() const {
  return fmt && *fmt == formats::fp32 && r.mode == round_mode::nearest_even && r.overflow == overflow_policy::ieee;
}

expected<precision> parse_precision(std::string_view spec) {
  if (spec == "fp64" || spec == "binary64") return binary64;
  auto f = parse_format(spec);
  if (!f) return error{f.message()};
  return of(*f);
}

double precision::unit_roundoff() const { return fmt ? fpemu::unit_roundoff(*fmt) : std::ldexp(1.0, -53); }

std::string precision::name() const { return fmt ? to_string(*fmt) : std::string("fp64"); }

double round_to(const precision& p, double x, std::uint64_t random) {
  if (!p.fmt) return x;
  if (p.is_host_fp32()) return static_cast<float>(x);  // the host's conversion is nearest-even
  return to_double(*p.fmt, from(*p.fmt, x, p.r, random).code);
}

double fma_in(const precision& p, double a, double b, double c, std::uint64_t random) {
  if (!p.fmt) return std::fma(a, b, c);
  // fmaf computes a*b + c exactly and rounds once to nearest-even: the core's answer, when the
  // operands are floats.
  if (p.is_host_fp32() && is_float(a) && is_float(b) && is_float(c))
    return std::fma(static_cast<float>(a), static_cast<float>(b), static_cast<float>(c));
  const exact_result e = exact_fma(unpack(a), unpack(b), unpack(c), p.r.mode);
  return to_double(*p.fmt, round_exact(*p.fmt, e, p.r, random).code);
}

void add_into(const precision& p, std::span<double> acc, std::span<const double> v) {
  // The host's binary64 and binary32 additions are the correctly rounded sums of values of those
  // formats; a NaN result goes through add_in so that its sign and payload are add_in's.
  if (!p.fmt) {
    for (std::size_t i = 0; i < acc.size(); ++i) {
      const double r = acc[i] + v[i];
      acc[i] = r == r ? r : add_in(p, acc[i], v[i]);
    }
  } else if (p.is_host_fp32()) {
    for (std::size_t i = 0; i < acc.size(); ++i) {
      const float r = static_cast<float>(acc[i]) + static_cast<float>(v[i]);
      acc[i] = r == r ? static_cast<double>(r) : add_in(p, acc[i], v[i]);
    }
  } else {
    for (std::size_t i = 0; i < acc.size(); ++i) acc[i] = add_in(p, acc[i], v[i]);
  }
}

double gamma(long q, double u) {
  const double qu = static_cast<double>(q) * u;
  return qu >= 1 ? std::numeric_limits<double>::infinity() : qu / (1 - qu);
}

double higham_factor(const kernel_precision& k, long q) {
  double u_acc = std::ldexp(1.0, -53);
  if (k.acc) {
    switch (k.acc->kind) {
      case accumulator_kind::format: u_acc = fpemu::unit_roundoff(k.acc->acc); break;
      case accumulator_kind::block_fma: u_acc = 2 * fpemu::unit_roundoff(k.acc->block.acc); break;
      case accumulator_kind::exact: u_acc = 0; break;
    }
    if (k.acc->promote_every > 0) u_acc = std::max(u_acc, fpemu::unit_roundoff(k.acc->promoted));
  }
  const double u_in = k.input.unit_roundoff();
  const double g = gamma(q, u_acc);
  return u_in > u_acc ? 2 * u_in + g : g;
}

namespace {

constexpr std::array<std::string_view, slot_count> slot_names{"u_A",   "u_G", "u_r",    "u_c",   "u_sigma",
                                                               "u_g",   "u_AR_r", "u_AR_G", "u_x"};

accumulator_model format_accumulator(const format& f) {
  accumulator_model m;
  m.kind = accumulator_kind::format;
  m.acc = f;
  return m;
}

kernel_precision kernel(const precision& in, const format& acc, std::string label) {
  return kernel_precision{in, format_accumulator(acc), of(acc), std::move(label)};
}

// Table 3's kernel symbols.
expected<kernel_precision> kernel_symbol(std::string_view s) {
  if (s == "f") return kernel(of(formats::fp32), formats::fp32, "f");
  if (s == "b") return kernel(of(formats::bf16), formats::fp32, "b");
  if (s == "h") return kernel(of(formats::fp16), formats::fp32, "h");
  if (s == "ha") return kernel(of(formats::fp16), formats::fp16, "ha");
  if (s == "t") return kernel(of(formats::tf32), formats::fp32, "t");
  return error{"unknown kernel symbol '" + std::string(s) + "' (expected f, b, h, ha or t)"};
}

expected<precision> storage_symbol(std::string_view s) {
  if (s == "f") return of(formats::fp32);
  if (s == "b") return of(formats::bf16);
  if (s == "h") return of(formats::fp16);
  if (s == "t") return of(formats::tf32);
  return error{"unknown storage symbol '" + std::string(s) + "'"};
}

// Splits "a,b,c" into at most three fields.
std::vector<std::string_view> fields(std::string_view s) {
  std::vector<std::string_view> out;
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = s.find(',', start);
    out.push_back(s.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return out;
}

expected<kernel_precision> parse_kernel(std::string_view spec) {
  if (auto k = kernel_symbol(spec)) return k;
  if (spec == "fp64" || spec == "binary64") return kernel_precision{binary64, std::nullopt, binary64, "fp64"};
  const std::vector<std::string_view> f = fields(spec);
  if (f.size() > 3)
    return error{"kernel precision '" + std::string(spec) + "' has more than three fields (IN,ACC,OUT)"};
  auto in = parse_precision(f[0]);
  if (!in) return error{in.message()};
  kernel_precision k{*in, std::nullopt, binary64, std::string(spec)};
  const std::string_view acc_spec = f.size() > 1 ? f[1] : f[0];
  if (acc_spec == "fp64" || acc_spec == "binary64") {
    k.output = binary64;
  } else if (auto preset = find_preset(acc_spec)) {
    k.acc = preset->model;
    k.output = of(preset->output);
  } else {
    auto acc = parse_format(acc_spec);
    if (!acc)
      return error{"accumulator '" + std::string(acc_spec) + "' is neither fp64, a format (" + acc.message() +
                        ") nor a tensor-core preset (see fpemu mma --list)"};
    k.acc = format_accumulator(*acc);
    k.output = of(*acc);
  }
  if (f.size() == 3) {
    auto out = parse_precision(f[2]);
    if (!out) return error{out.message()};
    k.output = *out;
  }
  return k;
}

}  // namespace

std::string_view to_string(slot s) { return slot_names[static_cast<std::size_t>(s)]; }

expected<slot> parse_slot(std::string_view name) {
  for (int i = 0; i < slot_count; ++i) {
    const std::string_view full = slot_names[static_cast<std::size_t>(i)];
    if (name == full || name == full.substr(2)) return static_cast<slot>(i);
  }
  return error{"unknown precision slot '" + std::string(name) +
                    "' (expected u_A, u_G, u_r, u_c, u_sigma, u_g, u_AR_r, u_AR_G or u_x)"};
}

std::string slots::describe() const {
  std::string out;
  auto add = [&](slot s, const std::string& v) {
    if (!out.empty()) out += ' ';
    out += std::string(to_string(s)) + "=" + v;
  };
  add(slot::A, A.name());
  add(slot::G, G.label);
  add(slot::r, r.label);
  add(slot::c, c.name());
  add(slot::sigma, sigma.name());
  add(slot::g, g.label);
  add(slot::AR_r, AR_r.name());
  add(slot::AR_G, AR_G.name());
  add(slot::x, x.name());
  return out;
}

expected<slots> recipe(char letter) {
  // Table 3, one column per recipe, rows in the order u_A u_G u_r u_c u_sigma u_g u_AR_r u_AR_G u_x.
  static constexpr std::array<std::array<std::string_view, slot_count>, 9> table{{
      {"f", "f", "f", "f", "f", "f", "f", "f", "f"},          // A
      {"b", "f", "f", "f", "f", "f", "f", "f", "f"},          // B
      {"b", "b", "b", "f", "f", "b", "b", "f", "f"},          // C
      {"b", "b", "b", "f", "f", "b", "b", "b", "f"},          // D
      {"h", "h", "h", "f", "f", "h", "h", "f", "f"},          // E
      {"h", "ha", "ha", "f", "f", "ha", "h", "f", "f"},       // F
      {"f", "t", "t", "t", "f", "t", "f", "f", "f"},          // G
      {"h", "ha", "ha", "h", "h", "ha", "h", "h", "h"},       // H
      {"b", "b", "b", "b", "b", "b", "b", "b", "b"},          // I
  }};
  const char upper = (letter >= 'a' && letter <= 'z') ? static_cast<char>(letter - 'a' + 'A') : letter;
  const std::size_t i = recipe_letters.find(upper);
  if (i == std::string_view::npos || letter == '\0')
    return error{"unknown recipe '" + std::string(1, letter) + "' (expected one of A B C D E F G H I)"};
  const auto& col = table[i];
  slots s;
  s.A = *storage_symbol(col[0]);
  s.G = *kernel_symbol(col[1]);
  s.r = *kernel_symbol(col[2]);
  s.c = *storage_symbol(col[3]);
  s.sigma = *storage_symbol(col[4]);
  s.g = *kernel_symbol(col[5]);
  s.AR_r = *storage_symbol(col[6]);
  s.AR_G = *storage_symbol(col[7]);
  s.x = *storage_symbol(col[8]);
  return s;
}

expected<slots> parse_recipe(std::string_view name) {
  if (name.size() != 1)
    return error{"unknown recipe '" + std::string(name) + "' (expected one of A B C D E F G H I)"};
  return recipe(name[0]);
}

slots all_binary64() {
  const kernel_precision k{binary64, std::nullopt, binary64, "fp64"};
  return slots{binary64, binary64, binary64, binary64, binary64, binary64, k, k, k};
}

expected<slots> with_slot(slots s, std::string_view assignment) {
  const std::size_t eq = assignment.find('=');
  if (eq == std::string_view::npos)
    return error{"slot assignment '" + std::string(assignment) + "' is not NAME=PRECISION (e.g. u_c=fp32)"};
  auto which = parse_slot(assignment.substr(0, eq));
  if (!which) return error{which.message()};
  const std::string_view spec = assignment.substr(eq + 1);
  auto in_slot = [&](std::string message) {
    return error{std::string(to_string(*which)) + ": " + message};
  };
  switch (*which) {
    case slot::G:
    case slot::r:
    case slot::g: {
      auto k = parse_kernel(spec);
      if (!k) return in_slot(k.message());
      (*which == slot::G ? s.G : *which == slot::r ? s.r : s.g) = *k;
      return s;
    }
    default: break;
  }
  auto p = storage_symbol(spec);
  if (!p) p = parse_precision(spec);
  if (!p) return in_slot(p.message());
  switch (*which) {
    case slot::A: s.A = *p; break;
    case slot::c: s.c = *p; break;
    case slot::sigma: s.sigma = *p; break;
    case slot::AR_r: s.AR_r = *p; break;
    case slot::AR_G: s.AR_G = *p; break;
    case slot::x: s.x = *p; break;
    default: break;
  }
  return s;
}

}  // namespace fpemu::casgd
