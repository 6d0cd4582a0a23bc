// The Python module `fpemu`: binding glue over the C++ library, no numerics of its own. Names
// mirror the C++ API and the CLI (format specs, mode names rne/rna/rz/ru/rd/rto/sr/sr-exact,
// overflow policies ieee/saturate/nan). Bad arguments raise ValueError with the library's message.
// This file: formats, rounding, decoding, conversion and arithmetic on code arrays; the other
// areas are bound in accumulation.cpp, bounds.cpp, training.cpp and casgd.cpp.
#include <cstdint>
#include <string>
#include <vector>

#include "bindings.hpp"
#include "fpemu/array.hpp"
#include "fpemu/convert.hpp"
#include "fpemu/spec.hpp"

using namespace fpemu;
using namespace fpemu::python;

namespace {

// Flags per element as uint8 in the shape of `like`, next to the result.
py::object with_flags(const py::object& result, const std::vector<std::uint8_t>& flags, const py::array& like) {
  py::array_t<std::uint8_t> f(static_cast<py::ssize_t>(flags.size()), flags.data());
  return py::make_tuple(result, reshaped(f, like));
}

py::array decoded(const format& f, const std::vector<std::uint32_t>& codes) {
  py::array_t<double> values(static_cast<py::ssize_t>(codes.size()));
  value_or_raise(decode_array(f, codes, std::span<double>(values.mutable_data(), codes.size())));
  return values;
}

py::object round_impl(const py::array& x, const py::object& fmt, const std::string& mode, const std::string& overflow,
                      int sr_bits, std::uint64_t seed, std::uint32_t stream, const std::string& out, bool flags) {
  const format f = to_format(fmt);
  const rounding r = to_rounding(f, mode, overflow, sr_bits);
  if (out != "codes" && out != "values") throw py::value_error("out = '" + out + "' (valid: codes, values)");
  const sr_stream sr{seed, stream, 0};
  const auto n = static_cast<std::size_t>(x.size());
  std::vector<std::uint8_t> element_flags(flags ? n : 0);
  // Rounds into `codes` (uint8, uint16 or uint32 codes).
  const auto round_into = [&](auto codes) {
    if (x.dtype().is(py::dtype::of<float>())) {
      const std::vector<float> in = to_floats(x, "x");  // float32 stays float32: no double rounding question
      value_or_raise(round_array(f, std::span<const float>(in), codes, r, sr, element_flags));
    } else {
      const std::vector<double> in = exact_doubles(x, "x");
      value_or_raise(round_array(f, std::span<const double>(in), codes, r, sr, element_flags));
    }
  };
  py::object result;
  if (out == "codes") {
    // Straight into the array returned, at the format's storage width.
    const auto into_array = [&](auto tag) {
      using C = decltype(tag);
      py::array_t<C> a(static_cast<py::ssize_t>(n));
      round_into(std::span<C>(a.mutable_data(), n));
      return py::array(a);
    };
    result = reshaped(width(f) <= 8    ? into_array(std::uint8_t{})
                      : width(f) <= 16 ? into_array(std::uint16_t{})
                                       : into_array(std::uint32_t{}),
                      x);
  } else {
    std::vector<std::uint32_t> codes(n);
    round_into(std::span<std::uint32_t>(codes));
    result = reshaped(decoded(f, codes), x);
  }
  return flags ? with_flags(result, element_flags, x) : result;
}

void same_shape(const py::array& a, const py::array& b, const char* an, const char* bn) {
  if (shape_of(a) != shape_of(b))
    throw py::value_error(std::string(an) + " has shape " + std::string(py::str(py::cast(shape_of(a)))) + " but " + bn +
                          " has shape " + std::string(py::str(py::cast(shape_of(b)))) + "; they must be equal");
}

// An element-wise operation on code arrays of one format: `run` fills codes and flags.
template <class Run>
py::object elementwise(const py::array& like, const format& f, bool flags, Run run) {
  std::vector<std::uint32_t> out(static_cast<std::size_t>(like.size()));
  std::vector<std::uint8_t> element_flags(flags ? out.size() : 0);
  value_or_raise(run(std::span<std::uint32_t>(out), std::span<std::uint8_t>(element_flags)));
  const py::object result = reshaped(codes_array(f, out), like);
  return flags ? with_flags(result, element_flags, like) : result;
}

constexpr const char* arithmetic_doc =
    "(codes of fmt, same shape) -> codes of fmt: the correctly rounded result of each element, one\n"
    "rounding by the core in `mode` (stochastic: bits of element i from (seed, stream, i)).\n"
    "flags=True returns (codes, per-element IEEE flags as uint8: fpemu.INVALID | DIVIDE_BY_ZERO |\n"
    "OVERFLOW | UNDERFLOW | INEXACT).";

void bind_binary(py::module_& m, const char* name, array_op op, const std::string& what) {
  m.def(
      name,
      [op](const py::array& a, const py::array& b, const py::object& fmt, const std::string& mode,
           const std::string& overflow, int sr_bits, std::uint64_t seed, std::uint32_t stream, bool flags) {
        const format f = to_format(fmt);
        const rounding r = to_rounding(f, mode, overflow, sr_bits);
        same_shape(a, b, "a", "b");
        const auto ca = to_codes(f, a, "a"), cb = to_codes(f, b, "b");
        return elementwise(a, f, flags, [&](std::span<std::uint32_t> out, std::span<std::uint8_t> fl) {
          return apply(op, f, ca, cb, out, r, sr_stream{seed, stream, 0}, fl);
        });
      },
      py::arg("a"), py::arg("b"), py::arg("fmt"), py::kw_only(), py::arg("mode") = "rne", py::arg("overflow") = "ieee",
      py::arg("sr_bits") = 16, py::arg("seed") = 0, py::arg("stream") = 0, py::arg("flags") = false,
      (what + " " + arithmetic_doc).c_str());
}

}  // namespace

PYBIND11_MODULE(_fpemu, m) {
  // The package fpemu re-exports everything here: classes and submodules are named as users
  // reach them (fpemu.format, fpemu.bounds), not by the extension's own name.
  m.attr("__name__") = "fpemu";
  m.attr("__version__") = FPEMU_VERSION;
  // The NumPy releases this build reads arrays of correctly, [low, high): pybind11 speaks NumPy 2's
  // ABI from 2.12 on; fpemu/__init__.py refuses any other NumPy at import.
  m.attr("_numpy_supported") = py::make_tuple(py::make_tuple(1, 22), PYBIND11_VERSION_HEX >= 0x020C0000
                                                                          ? py::make_tuple(3, 0)
                                                                          : py::make_tuple(2, 0));
  m.doc() =
      "fpemu: bit-exact software emulation of floating-point formats (FP8, FP6, FP4, bf16, fp16, tf32,\n"
      "fp32, eXmY). Formats are spec strings ('e4m3fn', 'bf16', 'e5m3:fn'), fpemu.format objects, or\n"
      "dtypes that store one (ml_dtypes.float8_e4m3fn, numpy.float16, 'bfloat16'); rounding modes are\n"
      "rne rna rz ru rd rto sr sr-exact; overflow policies ieee saturate nan.\n"
      "Where a function takes codes of a format, an integer array holds codes, a typed array of that\n"
      "format (float16, ml_dtypes' types) holds them in its bits, and any other float array holds\n"
      "values, each of which must be one of the format's. Codes come back at the storage width:\n"
      "codes.view(ml_dtypes.float8_e4m3fn) is the typed array of the result.\n"
      "Every rounding is the C++ core's; bad arguments raise ValueError with the library's message.";

  py::class_<format>(m, "format", "A floating-point format: exponent and fraction widths, bias and encoding.")
      .def(py::init([](const py::object& spec) { return to_format(spec); }), py::arg("spec"),
           "A format from its spec: a name (e4m3fn, bf16, ...) or eXmY[:bias=B][:nosub][:fn|fnuz|finite][:unsigned];\n"
           "or from a dtype that stores one (numpy.float16, ml_dtypes.float8_e4m3fn, 'bfloat16').")
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
      // Any other object is unequal (NotImplemented lets Python decide), as `fmt == None` expects.
      .def("__eq__",
           [](const format& a, const py::object& b) -> py::object {
             if (!py::isinstance<format>(b)) return py::reinterpret_borrow<py::object>(Py_NotImplemented);
             return py::bool_(a == b.cast<format>());
           })
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
        py::arg("out") = "codes", py::arg("flags") = false,
        "Rounds a float32, float64 or typed array (float16, ml_dtypes' types; any shape) into a format,\n"
        "once, by the core.\n\n"
        "out='codes' returns codes (uint8 up to 8 bits, uint16 up to 16, else uint32); out='values'\n"
        "returns the rounded values as float64. Stochastic rounding (mode 'sr', sr_bits random bits)\n"
        "takes element i's bits from Philox keyed by (seed, stream, i): the same seed gives the same\n"
        "result on every run, thread count and device. flags=True returns (result, per-element IEEE flags).");

  m.def(
      "decode", [](const py::array& codes, const py::object& fmt) {
        const format f = to_format(fmt);
        return reshaped(decoded(f, to_codes(f, codes)), codes);
      },
      py::arg("codes"), py::arg("fmt"), "The exact values of codes as float64 (NaN codes give NaN).");

  m.def(
      "convert",
      [](const py::array& codes, const py::object& src, const py::object& dst, const std::string& mode,
         const std::string& overflow, int sr_bits, std::uint64_t seed, std::uint32_t stream, bool flags) {
        const format from = to_format(src), to = to_format(dst);
        const rounding r = to_rounding(to, mode, overflow, sr_bits);
        const auto in = to_codes(from, codes);
        return elementwise(codes, to, flags, [&](std::span<std::uint32_t> out, std::span<std::uint8_t> fl) {
          return convert_array(to, from, in, out, r, sr_stream{seed, stream, 0}, fl);
        });
      },
      py::arg("codes"), py::arg("src"), py::arg("dst"), py::kw_only(), py::arg("mode") = "rne",
      py::arg("overflow") = "ieee", py::arg("sr_bits") = 16, py::arg("seed") = 0, py::arg("stream") = 0,
      py::arg("flags") = false,
      "Codes of format src rounded once into format dst (no detour through a binary float).");

  bind_binary(m, "add", array_op::add, "add(a, b, fmt): a + b.");
  bind_binary(m, "sub", array_op::sub, "sub(a, b, fmt): a - b.");
  bind_binary(m, "mul", array_op::mul, "mul(a, b, fmt): a * b.");
  bind_binary(m, "div", array_op::div, "div(a, b, fmt): a / b.");
  m.def(
      "fma",
      [](const py::array& a, const py::array& b, const py::array& c, const py::object& fmt, const std::string& mode,
         const std::string& overflow, int sr_bits, std::uint64_t seed, std::uint32_t stream, bool flags) {
        const format f = to_format(fmt);
        const rounding r = to_rounding(f, mode, overflow, sr_bits);
        same_shape(a, b, "a", "b");
        same_shape(a, c, "a", "c");
        const auto ca = to_codes(f, a, "a"), cb = to_codes(f, b, "b"), cc = to_codes(f, c, "c");
        return elementwise(a, f, flags, [&](std::span<std::uint32_t> out, std::span<std::uint8_t> fl) {
          return apply_fma(f, ca, cb, cc, out, r, sr_stream{seed, stream, 0}, fl);
        });
      },
      py::arg("a"), py::arg("b"), py::arg("c"), py::arg("fmt"), py::kw_only(), py::arg("mode") = "rne",
      py::arg("overflow") = "ieee", py::arg("sr_bits") = 16, py::arg("seed") = 0, py::arg("stream") = 0,
      py::arg("flags") = false, (std::string("fma(a, b, c, fmt): a * b + c with one rounding. ") + arithmetic_doc).c_str());
  m.def(
      "sqrt",
      [](const py::array& a, const py::object& fmt, const std::string& mode, const std::string& overflow, int sr_bits,
         std::uint64_t seed, std::uint32_t stream, bool flags) {
        const format f = to_format(fmt);
        const rounding r = to_rounding(f, mode, overflow, sr_bits);
        const auto ca = to_codes(f, a, "a");
        return elementwise(a, f, flags, [&](std::span<std::uint32_t> out, std::span<std::uint8_t> fl) {
          return apply_sqrt(f, ca, out, r, sr_stream{seed, stream, 0}, fl);
        });
      },
      py::arg("a"), py::arg("fmt"), py::kw_only(), py::arg("mode") = "rne", py::arg("overflow") = "ieee",
      py::arg("sr_bits") = 16, py::arg("seed") = 0, py::arg("stream") = 0, py::arg("flags") = false,
      (std::string("sqrt(a, fmt): the square root. ") + arithmetic_doc).c_str());

  m.attr("INVALID") = flag::invalid;
  m.attr("DIVIDE_BY_ZERO") = flag::divide_by_zero;
  m.attr("OVERFLOW") = flag::overflow;
  m.attr("UNDERFLOW") = flag::underflow;
  m.attr("INEXACT") = flag::inexact;

  bind_accumulation(m);
  bind_bounds(m);
  bind_training(m);
  bind_casgd(m);
}
