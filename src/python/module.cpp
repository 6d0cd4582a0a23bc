// The Python module `fpemu`: binding glue over the C++ library, no numerics of its own. Names
// mirror the C++ API and the CLI (format specs, mode names rne/rna/rz/ru/rd/rto/sr/sr-exact,
// overflow policies ieee/saturate/nan). Bad arguments raise ValueError with the library's message.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <bit>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "fpemu/array.hpp"
#include "fpemu/convert.hpp"
#include "fpemu/spec.hpp"

namespace py = pybind11;
using namespace fpemu;

namespace {

template <class T>
T value_or_raise(expected<T> e) {
  if (!e) throw py::value_error(e.message());
  return std::move(e).value();
}

format to_format(const py::object& f) {
  if (py::isinstance<format>(f)) return f.cast<format>();
  if (py::isinstance<py::str>(f)) return value_or_raise(parse_format(f.cast<std::string>()));
  throw py::value_error("a format is a spec string such as 'e4m3fn' or 'e5m3:fn', or an fpemu.format");
}

rounding to_rounding(const format& f, const std::string& mode, const std::string& overflow, int sr_bits) {
  const rounding r{value_or_raise(parse_round_mode(mode)), value_or_raise(parse_overflow_policy(overflow)), sr_bits};
  if (auto bad = check(f, r)) throw py::value_error("rounding: " + *bad);
  return r;
}

// Codes in the narrowest unsigned numpy type that holds the format's width.
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

// Any array of unsigned or signed integers as codes of f (each checked against the width).
std::vector<std::uint32_t> to_codes(const format& f, const py::array& a) {
  if (a.dtype().kind() != 'u' && a.dtype().kind() != 'i')
    throw py::value_error("codes must be an integer array (uint8, uint16 or uint32); got dtype " +
                          std::string(py::str(a.dtype())));
  const auto wide = py::array_t<std::int64_t, py::array::c_style | py::array::forcecast>::ensure(a);
  std::vector<std::uint32_t> codes(static_cast<std::size_t>(wide.size()));
  const auto* p = wide.data();
  for (std::size_t i = 0; i < codes.size(); ++i) {
    if (p[i] < 0 || (static_cast<std::uint64_t>(p[i]) & ~std::uint64_t{code_mask(f)}) != 0)
      throw py::value_error("codes[" + std::to_string(i) + "] = " + std::to_string(p[i]) + " is not a code of " +
                            to_string(f) + " (valid: 0.." + std::to_string(code_mask(f)) + ")");
    codes[i] = static_cast<std::uint32_t>(p[i]);
  }
  return codes;
}

// `flat` (one dimension) in the shape of `like`.
py::object reshaped(const py::array& flat, const py::array& like) {
  return flat.attr("reshape")(py::tuple(py::cast(std::vector<py::ssize_t>(like.shape(), like.shape() + like.ndim()))));
}

py::object round_impl(const py::array& x, const py::object& fmt, const std::string& mode, const std::string& overflow,
                      int sr_bits, std::uint64_t seed, std::uint32_t stream, const std::string& out) {
  const format f = to_format(fmt);
  const rounding r = to_rounding(f, mode, overflow, sr_bits);
  if (out != "codes" && out != "values") throw py::value_error("out = '" + out + "' (valid: codes, values)");
  std::vector<std::uint32_t> codes;
  const sr_stream sr{seed, stream, 0};
  if (x.dtype().is(py::dtype::of<float>())) {
    const auto in = py::array_t<float, py::array::c_style>::ensure(x);
    codes.resize(static_cast<std::size_t>(in.size()));
    value_or_raise(round_array(f, std::span<const float>(in.data(), codes.size()), codes, r, sr));
  } else if (x.dtype().kind() == 'f' || x.dtype().kind() == 'i' || x.dtype().kind() == 'u') {
    const auto in = py::array_t<double, py::array::c_style | py::array::forcecast>::ensure(x);
    codes.resize(static_cast<std::size_t>(in.size()));
    value_or_raise(round_array(f, std::span<const double>(in.data(), codes.size()), codes, r, sr));
  } else {
    throw py::value_error("x must be a float32 or float64 array; got dtype " + std::string(py::str(x.dtype())));
  }
  py::array result;
  if (out == "codes") {
    result = codes_array(f, codes);
  } else {
    py::array_t<double> values(static_cast<py::ssize_t>(codes.size()));
    value_or_raise(decode_array(f, codes, std::span<double>(values.mutable_data(), codes.size())));
    result = values;
  }
  return reshaped(result, x);
}

}  // namespace

PYBIND11_MODULE(fpemu, m) {
  m.doc() =
      "fpemu: bit-exact software emulation of floating-point formats (FP8, FP6, FP4, bf16, fp16, tf32,\n"
      "fp32, eXmY). Formats are spec strings ('e4m3fn', 'bf16', 'e5m3:fn') or fpemu.format objects;\n"
      "rounding modes are rne rna rz ru rd rto sr sr-exact; overflow policies ieee saturate nan.\n"
      "Every rounding is the C++ core's; bad arguments raise ValueError with the library's message.";

  py::class_<format>(m, "format", "A floating-point format: exponent and fraction widths, bias and encoding.")
      .def(py::init([](const std::string& spec) { return value_or_raise(parse_format(spec)); }), py::arg("spec"),
           "A format from its spec: a name (e4m3fn, bf16, ...) or eXmY[:bias=B][:nosub][:fn|fnuz|finite][:unsigned].")
      .def_readonly("exp_bits", &format::exp_bits)
      .def_readonly("frac_bits", &format::frac_bits)
      .def_readonly("bias", &format::bias)
      .def_readonly("subnormals", &format::subnormals)
      .def_readonly("is_signed", &format::is_signed)
      .def_property_readonly("encoding", [](const format& f) { return std::string(to_string(f.encoding)); },
                             "ieee (inf, NaN), fn (NaN only), fnuz (NaN = 0x80, no -0) or finite")
      .def_property_readonly("name", [](const format& f) { return to_string(f); }, "The canonical spec.")
      .def_property_readonly("width", [](const format& f) { return width(f); }, "Bits per code.")
      .def_property_readonly("precision", [](const format& f) { return precision(f); }, "Significant bits p.")
      .def_property_readonly("emin", [](const format& f) { return emin(f); }, "Exponent of the smallest normal.")
      .def_property_readonly("emax", [](const format& f) { return emax(f); }, "Exponent of the largest finite.")
      .def_property_readonly("max_finite", [](const format& f) { return max_finite(f); })
      .def_property_readonly("min_normal", [](const format& f) { return min_normal(f); })
      .def_property_readonly("min_positive", [](const format& f) { return min_positive(f); },
                             "The smallest positive value (subnormal where the format has them).")
      .def_property_readonly("unit_roundoff", [](const format& f) { return unit_roundoff(f); }, "u = 2^-p.")
      .def_property_readonly("machine_epsilon", [](const format& f) { return machine_epsilon(f); }, "2^(1-p).")
      .def_property_readonly("has_inf", [](const format& f) { return has_inf(f); })
      .def_property_readonly("has_nan", [](const format& f) { return has_nan(f); })
      .def("__eq__", [](const format& a, const format& b) { return a == b; })
      .def("__hash__", [](const format& f) { return std::hash<std::string>{}(to_string(f)); })
      .def("__repr__", [](const format& f) { return "fpemu.format('" + to_string(f) + "')"; });

  m.def(
      "formats",
      [] {
        std::vector<std::string> names;
        for (const auto& n : named_formats()) names.emplace_back(n.name);
        return names;
      },
      "The names of the named formats, in display order.");

  m.def("round", &round_impl, py::arg("x"), py::arg("fmt"), py::kw_only(), py::arg("mode") = "rne",
        py::arg("overflow") = "ieee", py::arg("sr_bits") = 16, py::arg("seed") = 0, py::arg("stream") = 0,
        py::arg("out") = "codes",
        "Rounds a float32 or float64 array (any shape) into a format, once, by the core.\n\n"
        "out='codes' returns codes (uint8 up to 8 bits, uint16 up to 16, else uint32); out='values'\n"
        "returns the rounded values as float64. Stochastic rounding (mode 'sr', sr_bits random bits)\n"
        "takes element i's bits from Philox keyed by (seed, stream, i): the same seed gives the same\n"
        "result on every run, thread count and device.");

  m.def(
      "decode",
      [](const py::array& codes, const py::object& fmt) {
        const format f = to_format(fmt);
        const std::vector<std::uint32_t> c = to_codes(f, codes);
        py::array_t<double> out(static_cast<py::ssize_t>(c.size()));
        value_or_raise(decode_array(f, c, std::span<double>(out.mutable_data(), c.size())));
        return reshaped(out, codes);
      },
      py::arg("codes"), py::arg("fmt"), "The exact values of codes as float64 (NaN codes give NaN).");
}
