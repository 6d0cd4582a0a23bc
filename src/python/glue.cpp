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

#include "fpemu/array.hpp"
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

std::optional<std::string> dtype_name(const format& f) {
  for (const auto& [dtype, spec] : dtype_formats)
    if (value_or_raise(parse_format(spec)) == f) return std::string(dtype);
  return std::nullopt;
}

bool is_torch_dtype(const py::object& d) {
  return py::str(py::type::of(d).attr("__module__")).cast<std::string>() == "torch" &&
         py::str(py::type::of(d).attr("__name__")).cast<std::string>() == "dtype";
}
std::string torch_dtype_name(const py::object& d) {
  return py::str(d).cast<std::string>().substr(std::string("torch.").size());
}

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
  if (is_torch_dtype(f)) {  // torch.bfloat16, torch.float8_e4m3fn: the same names as ml_dtypes'
    if (const auto named = format_named_by_dtype(torch_dtype_name(f))) return *named;
    throw py::value_error(py::str(f).cast<std::string>() + " stores no format of fpemu (those that do: " +
                          dtype_names() + ")");
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

int thread_count(int threads) {
  if (threads < 0)
    throw py::value_error("threads = " + std::to_string(threads) + " (valid: 0 for fpemu.get_num_threads(), or >= 1)");
  return threads > 0 ? threads : array_threads();
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
