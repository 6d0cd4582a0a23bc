// Argument conversion shared by every part of the Python module (bindings.hpp).
#include "bindings.hpp"

#include <charconv>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include "fpemu/convert.hpp"
#include "fpemu/presets.hpp"
#include "fpemu/spec.hpp"

namespace fpemu::python {

namespace {
// The floating-point dtypes of NumPy and ml_dtypes, by NumPy name (ml_dtypes registers its names
// when imported), and the fpemu format whose codes they store.
constexpr std::pair<std::string_view, std::string_view> dtype_formats[] = {
    {"float32", "fp32"},
    {"float16", "fp16"},
    {"bfloat16", "bf16"},
    {"float8_e5m2", "e5m2"},
    {"float8_e4m3fn", "e4m3fn"},
    {"float8_e4m3fnuz", "e4m3fnuz"},
    {"float8_e5m2fnuz", "e5m2fnuz"},
    {"float8_e4m3b11fnuz", "e4m3:bias=11:fnuz"},
    {"float8_e4m3", "e4m3"},
    {"float8_e3m4", "e3m4"},
    {"float8_e8m0fnu", "e8m0fnu"},
    {"float6_e3m2fn", "e3m2fn"},
    {"float6_e2m3fn", "e2m3fn"},
    {"float4_e2m1fn", "e2m1fn"},
};

std::optional<format> format_named_by_dtype(std::string_view name) {
  for (const auto& [dtype, spec] : dtype_formats)
    if (dtype == name) return value_or_raise(parse_format(spec));
  return std::nullopt;
}

std::string dtype_names() {
  std::string s;
  for (const auto& [dtype, spec] : dtype_formats) s += (s.empty() ? "" : " ") + std::string(dtype);
  return s;
}
}  // namespace

std::optional<format> dtype_format(const py::dtype& d) {
  return format_named_by_dtype(py::str(d.attr("name")).cast<std::string>());
}

format to_format(const py::object& f) {
  if (py::isinstance<format>(f)) return f.cast<format>();
  if (py::isinstance<py::str>(f)) {
    const auto spec = f.cast<std::string>();
    if (const auto named = format_named_by_dtype(spec)) return *named;
    return value_or_raise(parse_format(spec));
  }
  // A dtype, or a scalar type such as numpy.float16 or ml_dtypes.float8_e4m3fn.
  if (py::isinstance<py::dtype>(f) || PyType_Check(f.ptr())) {
    const auto d = py::dtype::from_args(f);
    if (const auto typed = dtype_format(d)) return *typed;
    throw py::value_error("dtype " + py::str(d.attr("name")).cast<std::string>() +
                          " stores no format of fpemu (those that do: " + dtype_names() + ")");
  }
  throw py::value_error(
      "a format is a spec string such as 'e4m3fn' or 'e5m3:fn', a dtype such as ml_dtypes.float8_e4m3fn, or an "
      "fpemu.format; got " +
      std::string(py::str(py::repr(f))));
}

rounding to_rounding(const format& f, const std::string& mode, const std::string& overflow, int sr_bits) {
  const rounding r{value_or_raise(parse_round_mode(mode)), value_or_raise(parse_overflow_policy(overflow)), sr_bits};
  raise_if(check(f, r), "rounding: ");
  return r;
}

py::array codes_array(const format& f, const std::vector<std::uint32_t>& codes) {
  auto fill = [&](auto tag) {
    using T = decltype(tag);
    py::array_t<T> out(static_cast<py::ssize_t>(codes.size()));
    auto* p = out.mutable_data();
    for (std::size_t i = 0; i < codes.size(); ++i) p[i] = static_cast<T>(codes[i]);
    return py::array(out);
  };
  if (width(f) <= 8) return fill(std::uint8_t{});
  if (width(f) <= 16) return fill(std::uint16_t{});
  return fill(std::uint32_t{});
}

namespace {
// The codes that the bits of a typed array hold, as unsigned integers of its width (a view).
py::array bits_of(const py::array& a) {
  const auto bytes = a.dtype().itemsize();
  const char* as = bytes == 1 ? "uint8" : bytes == 2 ? "uint16" : "uint32";
  return a.attr("view")(as);
}
}  // namespace

std::vector<std::uint32_t> to_codes(const format& f, const py::array& a, const std::string& name) {
  if (a.dtype().kind() != 'u' && a.dtype().kind() != 'i') {
    const auto typed = dtype_format(a.dtype());
    if (typed && *typed == f) return to_codes(f, bits_of(a), name);  // its own bits are f's codes
    if (!typed && a.dtype().kind() != 'f')
      throw py::value_error(name + " must hold codes (an integer array), values (a float array) or a typed " +
                            "array (float16, bfloat16, float8_*, float6_*, float4_*); got dtype " +
                            std::string(py::str(a.dtype())));
    // Values, each of which must be one of f's: rounding it here would be a rounding not asked for.
    const std::vector<double> values = exact_doubles(a, name);
    std::vector<std::uint32_t> codes(values.size());
    for (std::size_t i = 0; i < values.size(); ++i) {
      const rounded r = from(f, values[i]);
      if ((r.flags & (flag::inexact | flag::overflow | flag::invalid)) != 0) {
        const double nearest = to_double(f, r.code);
        throw py::value_error(element(name, a, i) + " = " + number(values[i]) + " is not a value of " + to_string(f) +
                              (std::isfinite(nearest) ? " (nearest: " + number(nearest) + ")" : std::string()) +
                              "; round it with fpemu.round first");
      }
      codes[i] = r.code;
    }
    return codes;
  }
  // Unsigned arrays are read as uint64, so that a value of 2^63 or more is named as it is rather
  // than wrapped to a negative one.
  const auto checked = [&](auto tag) {
    using T = decltype(tag);
    const auto wide = py::array_t<T, py::array::c_style | py::array::forcecast>::ensure(a);
    std::vector<std::uint32_t> codes(static_cast<std::size_t>(wide.size()));
    const T* p = wide.data();
    for (std::size_t i = 0; i < codes.size(); ++i) {
      bool negative = false;
      if constexpr (std::is_signed_v<T>) negative = p[i] < 0;
      if (negative || (static_cast<std::uint64_t>(p[i]) & ~std::uint64_t{code_mask(f)}) != 0)
        throw py::value_error(element(name, a, i) + " = " + std::to_string(p[i]) + " is not a code of " + to_string(f) +
                              " (valid: 0.." + std::to_string(code_mask(f)) + ")");
      codes[i] = static_cast<std::uint32_t>(p[i]);
    }
    return codes;
  };
  return a.dtype().kind() == 'u' ? checked(std::uint64_t{}) : checked(std::int64_t{});
}

namespace {
std::string shortest(auto v) {
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

template <class T>
std::vector<T> to_reals(const py::array& a, const std::string& name, bool exact) {
  // A typed array of a format NumPy lacks (ml_dtypes'): its values, each exact in float32.
  if (const auto typed = dtype_format(a.dtype()); typed && a.dtype().kind() == 'V') {
    const std::vector<std::uint32_t> codes = to_codes(*typed, a, name);
    std::vector<T> out(codes.size());
    for (std::size_t i = 0; i < codes.size(); ++i) out[i] = static_cast<T>(to_double(*typed, codes[i]));
    return out;
  }
  const char kind = a.dtype().kind();
  if (kind != 'f' && kind != 'i' && kind != 'u')
    throw py::value_error(name + " must be a float32 or float64 array; got dtype " + std::string(py::str(a.dtype())));
  const auto bits = static_cast<int>(a.dtype().itemsize()) * 8;
  const bool holds_every_value = kind == 'f' ? bits <= static_cast<int>(sizeof(T)) * 8
                                             : bits - (kind == 'i' ? 1 : 0) <= std::numeric_limits<T>::digits;
  if (!exact || holds_every_value) {
    const auto in = py::array_t<T, py::array::c_style | py::array::forcecast>::ensure(a);
    return std::vector<T>(in.data(), in.data() + in.size());
  }
  // Compared in long double, which holds every int64, uint64 and float64 value where it is the
  // x87 80-bit format (x86-64) or binary128.
  const auto wide = py::array_t<long double, py::array::c_style | py::array::forcecast>::ensure(a);
  std::vector<T> out(static_cast<std::size_t>(wide.size()));
  for (std::size_t i = 0; i < out.size(); ++i) {
    const long double v = wide.data()[i];
    out[i] = static_cast<T>(v);
    if (static_cast<long double>(out[i]) != v && !std::isnan(v)) {
      const std::string text = kind == 'f' && bits <= 64 ? number(static_cast<double>(v)) : shortest(v);
      throw py::value_error(element(name, a, i) + " = " + text + " is not a " +
                            (std::is_same_v<T, float> ? "float32" : "float64") +
                            " value (narrowing it would round it before the emulated rounding)");
    }
  }
  return out;
}
}  // namespace

std::vector<float> to_floats(const py::array& a, const std::string& name) { return to_reals<float>(a, name, false); }
std::vector<float> exact_floats(const py::array& a, const std::string& name) { return to_reals<float>(a, name, true); }
std::vector<double> exact_doubles(const py::array& a, const std::string& name) { return to_reals<double>(a, name, true); }

std::string number(double v) { return shortest(v); }

std::string element(const std::string& name, const py::array& a, std::size_t flat) {
  std::vector<std::size_t> index(static_cast<std::size_t>(a.ndim()));
  for (auto d = a.ndim(); d-- > 0;) {
    const auto side = static_cast<std::size_t>(a.shape(d));
    index[static_cast<std::size_t>(d)] = flat % side;
    flat /= side;
  }
  std::string s = name + "[";
  for (std::size_t d = 0; d < index.size(); ++d) s += (d ? ", " : "") + std::to_string(index[d]);
  return index.empty() ? name : s + "]";
}

py::array_t<double> doubles_array(const std::vector<double>& v) {
  return py::array_t<double>(static_cast<py::ssize_t>(v.size()), v.data());
}
py::array_t<float> floats_array(const std::vector<float>& v) {
  return py::array_t<float>(static_cast<py::ssize_t>(v.size()), v.data());
}

std::vector<py::ssize_t> shape_of(const py::array& a) { return {a.shape(), a.shape() + a.ndim()}; }

py::object reshaped(const py::array& flat, const std::vector<py::ssize_t>& shape) {
  return flat.attr("reshape")(py::tuple(py::cast(shape)));
}
py::object reshaped(const py::array& flat, const py::array& like) { return reshaped(flat, shape_of(like)); }

std::pair<int, int> matrix_shape(const py::array& a, const std::string& name) {
  if (a.ndim() != 2)
    throw py::value_error(name + " must be a 2-D array; got " + std::to_string(a.ndim()) + " dimension(s)");
  constexpr py::ssize_t limit = 1 << 30;
  if (a.shape(0) < 1 || a.shape(1) < 1 || a.shape(0) > limit || a.shape(1) > limit)
    throw py::value_error(name + " has shape (" + std::to_string(a.shape(0)) + ", " + std::to_string(a.shape(1)) +
                          "); each side must be 1..2^30");
  return {static_cast<int>(a.shape(0)), static_cast<int>(a.shape(1))};
}

accumulator_model to_accumulator(const std::string& acc, const std::string& acc_mode, int sr_bits, int promote) {
  if (promote < 0 || promote > max_promote)
    throw py::value_error("promote = " + std::to_string(promote) + " (valid: 0 for the default, or 1..2^30 products)");
  expected<accumulator_choice> c = parse_accumulator(acc);
  if (!c) throw py::value_error("acc = " + c.message());
  if (acc_mode != "rne") {
    if (c->model.kind == accumulator_kind::exact)
      throw py::value_error("acc_mode = '" + acc_mode + "' applies to a format accumulator; 'exact' keeps the exact " +
                            "sum (the output rounding is out_mode)");
    if (c->preset)
      throw py::value_error("acc_mode = '" + acc_mode + "' applies to a format accumulator, not to the preset '" + acc +
                            "' (the preset fixes its rounding)");
  }
  if (c->model.kind == accumulator_kind::format)
    c = with_rounding(*c, to_rounding(c->model.acc, acc_mode, "ieee", sr_bits));
  if (c && promote > 0) c = with_promotion(*c, promote);
  return value_or_raise(std::move(c)).model;
}

}  // namespace fpemu::python
