// Runtime-format functions over spans (see array.hpp): one scalar core call per element.
//
// Every function validates before it writes: the format(s), the rounding against the target
// format, and every span size against the first input. Errors name both spans and their sizes.
#include "fpemu/array.hpp"

#include <cstddef>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>

#include "fpemu/convert.hpp"
#include "fpemu/ops.hpp"
#include "fpemu/random.hpp"
#include "fpemu/spec.hpp"

namespace fpemu {
namespace {

struct sized {
  std::string_view name;
  std::size_t size;
};

std::string elements(std::size_t n) { return std::to_string(n) + (n == 1 ? " element" : " elements"); }

// "size mismatch: 'in' has 10 elements, 'out' has 9" for the first span that differs from the
// first one; `flags` is checked only when it is not empty.
std::optional<error> check_sizes(std::initializer_list<sized> spans, std::size_t flags_size) {
  const sized& first = *spans.begin();
  for (const sized& s : spans)
    if (s.size != first.size)
      return error{"size mismatch: '" + std::string(first.name) + "' has " + elements(first.size) + ", '" +
                   std::string(s.name) + "' has " + std::to_string(s.size)};
  if (flags_size != 0 && flags_size != first.size)
    return error{"size mismatch: '" + std::string(first.name) + "' has " + elements(first.size) +
                 ", 'flags' has " + std::to_string(flags_size)};
  return std::nullopt;
}

std::optional<error> check_format(const format& f, std::string_view role) {
  if (auto problem = check(f)) return error{std::string(role) + ": " + *problem};
  return std::nullopt;
}

std::optional<error> check_rounding(const format& f, const rounding& r) {
  if (auto problem = check(f, r)) return error{"rounding: " + *problem};
  return std::nullopt;
}

// Runs `one(i, random)` for every element, collects flags, and returns their union. Philox is
// evaluated only for the stochastic modes; every other mode ignores the random bits.
template <class One>
std::uint8_t for_each_element(std::size_t n, const rounding& r, const sr_stream& sr, std::span<std::uint8_t> flags,
                              One one) {
  const bool stochastic = is_stochastic(r.mode);
  std::uint8_t all = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint64_t random = stochastic ? random_bits(sr.seed, sr.stream, sr.first_index + i) : 0;
    const std::uint8_t f = one(i, random);
    if (!flags.empty()) flags[i] = f;
    all |= f;
  }
  return all;
}

template <class T>
expected<std::uint8_t> round_span(const format& f, std::span<const T> in, std::span<std::uint32_t> out,
                                  const rounding& r, sr_stream sr, std::span<std::uint8_t> flags) {
  if (auto e = check_format(f, "format")) return *e;
  if (auto e = check_rounding(f, r)) return *e;
  if (auto e = check_sizes({{"in", in.size()}, {"out", out.size()}}, flags.size())) return *e;
  return for_each_element(in.size(), r, sr, flags, [&](std::size_t i, std::uint64_t random) {
    const rounded res = from(f, in[i], r, random);
    out[i] = res.code;
    return res.flags;
  });
}

}  // namespace

expected<std::uint8_t> round_array(const format& f, std::span<const double> in, std::span<std::uint32_t> out,
                                   const rounding& r, sr_stream sr, std::span<std::uint8_t> flags) {
  return round_span(f, in, out, r, sr, flags);
}

expected<std::uint8_t> round_array(const format& f, std::span<const float> in, std::span<std::uint32_t> out,
                                   const rounding& r, sr_stream sr, std::span<std::uint8_t> flags) {
  return round_span(f, in, out, r, sr, flags);
}

expected<std::uint8_t> convert_array(const format& to, const format& from_format, std::span<const std::uint32_t> in,
                                     std::span<std::uint32_t> out, const rounding& r, sr_stream sr,
                                     std::span<std::uint8_t> flags) {
  if (auto e = check_format(to, "target format")) return *e;
  if (auto e = check_format(from_format, "source format")) return *e;
  if (auto e = check_rounding(to, r)) return *e;
  if (auto e = check_sizes({{"in", in.size()}, {"out", out.size()}}, flags.size())) return *e;
  return for_each_element(in.size(), r, sr, flags, [&](std::size_t i, std::uint64_t random) {
    const rounded res = convert(to, from_format, in[i], r, random);
    out[i] = res.code;
    return res.flags;
  });
}

// Exact (every value of a validated format is a binary64 value), so no flags are raised.
expected<std::uint8_t> decode_array(const format& f, std::span<const std::uint32_t> codes, std::span<double> out) {
  if (auto e = check_format(f, "format")) return *e;
  if (auto e = check_sizes({{"codes", codes.size()}, {"out", out.size()}}, 0)) return *e;
  for (std::size_t i = 0; i < codes.size(); ++i) out[i] = to_double(f, codes[i]);
  return std::uint8_t{0};
}

expected<std::uint8_t> apply(array_op op, const format& f, std::span<const std::uint32_t> a,
                             std::span<const std::uint32_t> b, std::span<std::uint32_t> out, const rounding& r,
                             sr_stream sr, std::span<std::uint8_t> flags) {
  if (auto e = check_format(f, "format")) return *e;
  if (auto e = check_rounding(f, r)) return *e;
  if (auto e = check_sizes({{"a", a.size()}, {"b", b.size()}, {"out", out.size()}}, flags.size())) return *e;
  return for_each_element(a.size(), r, sr, flags, [&](std::size_t i, std::uint64_t random) {
    rounded res;
    switch (op) {
      case array_op::add: res = add(f, a[i], b[i], r, random); break;
      case array_op::sub: res = sub(f, a[i], b[i], r, random); break;
      case array_op::mul: res = mul(f, a[i], b[i], r, random); break;
      case array_op::div: res = div(f, a[i], b[i], r, random); break;
    }
    out[i] = res.code;
    return res.flags;
  });
}

expected<std::uint8_t> apply_fma(const format& f, std::span<const std::uint32_t> a, std::span<const std::uint32_t> b,
                                 std::span<const std::uint32_t> c, std::span<std::uint32_t> out, const rounding& r,
                                 sr_stream sr, std::span<std::uint8_t> flags) {
  if (auto e = check_format(f, "format")) return *e;
  if (auto e = check_rounding(f, r)) return *e;
  if (auto e = check_sizes({{"a", a.size()}, {"b", b.size()}, {"c", c.size()}, {"out", out.size()}}, flags.size()))
    return *e;
  return for_each_element(a.size(), r, sr, flags, [&](std::size_t i, std::uint64_t random) {
    const rounded res = fma(f, a[i], b[i], c[i], r, random);
    out[i] = res.code;
    return res.flags;
  });
}

expected<std::uint8_t> apply_sqrt(const format& f, std::span<const std::uint32_t> a, std::span<std::uint32_t> out,
                                  const rounding& r, sr_stream sr, std::span<std::uint8_t> flags) {
  if (auto e = check_format(f, "format")) return *e;
  if (auto e = check_rounding(f, r)) return *e;
  if (auto e = check_sizes({{"a", a.size()}, {"out", out.size()}}, flags.size())) return *e;
  return for_each_element(a.size(), r, sr, flags, [&](std::size_t i, std::uint64_t random) {
    const rounded res = sqrt(f, a[i], r, random);
    out[i] = res.code;
    return res.flags;
  });
}

}  // namespace fpemu
