// The Python module `fpemu`: binding glue over the C++ library, no numerics of its own. Names
// mirror the C++ API and the CLI (format specs, mode names rne/rna/rz/ru/rd/rto/sr/sr-exact,
// overflow policies ieee/saturate/nan). Bad arguments raise ValueError with the library's message.
// This file: formats, rounding, decoding, conversion and arithmetic on code arrays; the other
// areas are bound in accumulation.cpp, bounds.cpp, training.cpp and casgd.cpp.
#include <algorithm>
#include <array>
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <type_traits>
#include <vector>

#include "bindings.hpp"
#include "fpemu/array.hpp"
#include "fpemu/convert.hpp"
#include "fpemu/spec.hpp"
#include "fpemu/version.hpp"

using namespace fpemu;
using namespace fpemu::python;

namespace {

constexpr int kMaxThreads = 4096;

// Flags per element as uint8 in the result's shape, next to the result.
py::object with_flags(const py::object& result, const std::vector<std::uint8_t>& flags,
                      const std::vector<py::ssize_t>& shape) {
  py::array_t<std::uint8_t> f(static_cast<py::ssize_t>(flags.size()), flags.data());
  return py::make_tuple(result, reshaped(f, shape));
}

// x's elements as T, read in place where x holds exactly that (C-contiguous and aligned), else
// copied (every value exact in T: narrowing would be a rounding before the emulated one).
template <class T>
std::span<const T> reals_of(const py::array& x, std::vector<T>& copy) {
  if (x.dtype().is(py::dtype::of<T>()) && holds_as<T>(x))
    return {static_cast<const T*>(x.data()), static_cast<std::size_t>(x.size())};
  if constexpr (std::is_same_v<T, float>)
    copy = exact_floats(x, "x");
  else
    copy = exact_doubles(x, "x");
  return copy;
}

// Runs `run(codes, flags)` of the library into `codes`: the result's memory, or a buffer
// (`buffered`), which the result then stores; returns the result (with the flags where asked).
template <class Run, class C>
py::object run_into(result_array& result, std::span<C> codes, bool buffered, bool flags,
                    const std::vector<py::ssize_t>& shape, const Run& run) {
  std::vector<std::uint8_t> element_flags(flags ? codes.size() : 0);
  value_or_raise(without_gil([&] { return run(codes, std::span<std::uint8_t>(element_flags)); }));
  if (buffered) result.store(std::span<const C>(codes));
  return flags ? with_flags(result.get(), element_flags, shape) : result.get();
}

// The same into the result's memory as codes of width C only, where it takes them (nullopt
// where not).
template <class C, class Run>
std::optional<py::object> fill_direct(result_array& result, std::size_t n, bool flags,
                                      const std::vector<py::ssize_t>& shape, const Run& run) {
  const std::span<C> d = result.direct<C>();
  if (d.empty() && n != 0) return std::nullopt;
  return run_into(result, d, false, flags, shape, run);
}

// run_into the result's memory where the library can write there directly (storage-width codes
// where `run` takes them, as round_array does; else 32-bit codes), else into a buffer.
template <class Run>
py::object fill(result_array& result, std::size_t n, bool flags, const std::vector<py::ssize_t>& shape, Run run) {
  if constexpr (std::is_invocable_v<Run, std::span<std::uint8_t>, std::span<std::uint8_t>>) {
    if (auto done = fill_direct<std::uint8_t>(result, n, flags, shape, run)) return *done;
    if (auto done = fill_direct<std::uint16_t>(result, n, flags, shape, run)) return *done;
  }
  if (auto done = fill_direct<std::uint32_t>(result, n, flags, shape, run)) return *done;
  std::vector<std::uint32_t> codes(n);
  return run_into(result, std::span<std::uint32_t>(codes), true, flags, shape, run);
}

py::object round_impl(const py::object& x_in, const py::object& fmt, const std::string& mode,
                      const std::string& overflow, int sr_bits, std::uint64_t seed, std::uint32_t stream, bool flags,
                      const py::object& out, const py::object& dtype) {
  const py::array x = as_array(x_in, "x");
  // Integer arrays are codes everywhere in the module, and round has no format to read them in.
  // Python's own numbers (3, [1, 2]) are values, as in NumPy.
  const bool integers = x.dtype().kind() == 'i' || x.dtype().kind() == 'u';
  if (integers && (py::isinstance<py::array>(x_in) || is_torch_tensor(x_in)))
    throw py::type_error("x is an integer array (dtype " + py::str(x.dtype()).cast<std::string>() +
                         "), and integer arrays are codes: convert codes with fpemu.convert(codes, src, dst), or "
                         "round integer values with x.astype(float)");
  const format f = to_format(fmt);
  const rounding r = to_rounding(f, mode, overflow, sr_bits);
  const sr_stream sr{seed, stream, 0};
  const auto shape = shape_of(x);
  const auto n = static_cast<std::size_t>(x.size());
  result_array result(f, out, dtype, shape, py::none(), is_torch_tensor(x_in));
  // float32 stays float32 (no double-rounding question); anything else is read as float64.
  std::vector<float> floats;
  std::vector<double> doubles;
  const bool single = x.dtype().is(py::dtype::of<float>());
  const std::span<const float> in32 = single ? reals_of(x, floats) : std::span<const float>{};
  const std::span<const double> in64 = single ? std::span<const double>{} : reals_of(x, doubles);
  // Storage-width codes go straight into the caller's memory: no copy either way.
  return fill(result, n, flags, shape, [&](auto codes, std::span<std::uint8_t> fl) {
    return single ? round_array(f, in32, codes, r, sr, fl) : round_array(f, in64, codes, r, sr, fl);
  });
}

// The dtype an element-wise result takes by default: the first operand's where it stores fmt's
// codes (bfloat16 in, bfloat16 out), else codes at storage width.
py::object default_dtype(const format& f, const py::array& first) {
  const auto typed = dtype_format(first.dtype());
  return typed && *typed == f ? py::object(first.dtype()) : py::none();
}

using operand_list = std::vector<std::pair<py::array, std::string>>;

// The operands' codes read in place, where every operand holds storage-width codes of width C
// in the result's shape (an unsigned integer array, or one of f's own dtype, C-contiguous and
// aligned) and every code lies within f's width: to_codes would copy them to 32 bits (through a
// 64-bit copy for integer arrays), which made element-wise FP8 arithmetic on 2^24 codes run at
// 0.12 G elements/s, page faults and copies, against 2-3 for the library. Nullopt otherwise (a
// code beyond the width included, which to_codes then names).
template <class C, std::size_t N>
std::optional<std::array<std::span<const C>, N>> codes_in_place(const format& f, const operand_list& operands,
                                                               const std::vector<py::ssize_t>& shape) {
  std::array<std::span<const C>, N> in;
  for (std::size_t k = 0; k < N; ++k) {
    const py::array& a = operands[k].first;
    const auto typed = dtype_format(a.dtype());
    const bool codes = a.dtype().kind() == 'u' || (typed && *typed == f);
    if (!codes || shape_of(a) != shape || !holds_as<C>(a)) return std::nullopt;
    in[k] = {static_cast<const C*>(a.data()), static_cast<std::size_t>(a.size())};
    if (width(f) < static_cast<int>(8 * sizeof(C))) {  // a pass over the codes only where one can be beyond
      C bits = 0;
      for (const C c : in[k]) bits = static_cast<C>(bits | c);
      if ((bits & ~code_mask(f)) != 0) return std::nullopt;
    }
  }
  return in;
}

// fn(result, in): `result` made by make_result(), `in` the operands' codes of f in `shape` (a
// std::array of N std::span<const C>), read in place (codes_in_place) where every operand holds
// them so and none may share memory with the result (the library reads operands again after
// writing results: the elements its lanes leave to the core, convert's non-finite codes), else
// 32-bit copies, whose codes are checked before the result is made, as the arguments come.
template <std::size_t N, class MakeResult, class Fn>
py::object on_codes(const format& f, const operand_list& operands, const std::vector<py::ssize_t>& shape,
                    const MakeResult& make_result, const Fn& fn) {
  const auto in8 = codes_in_place<std::uint8_t, N>(f, operands, shape);
  const auto in16 = codes_in_place<std::uint16_t, N>(f, operands, shape);
  const auto in32 = codes_in_place<std::uint32_t, N>(f, operands, shape);
  std::array<std::vector<std::uint32_t>, N> copies;
  std::array<std::span<const std::uint32_t>, N> copied;
  const auto copy = [&] {
    for (std::size_t k = 0; k < N; ++k)
      copied[k] = copies[k] = codes_in_shape(f, operands[k].first, operands[k].second, shape);
  };
  const bool in_place = in8 || in16 || in32;
  if (!in_place) copy();
  result_array result = make_result();
  const auto shared = [&] {
    return std::any_of(operands.begin(), operands.end(), [&](const auto& o) { return result.may_share_memory(o.first); });
  };
  if (in_place && !shared()) {
    if (in8) return fn(result, *in8);
    if (in16) return fn(result, *in16);
    return fn(result, *in32);
  }
  if (in_place) copy();
  return fn(result, copied);
}

// Element-wise arithmetic on operands of one format, broadcast together: `run(operands, codes,
// flags)` calls the library on codes of one width, written into the result's memory where it
// holds them at that width, else into a buffer that the result then stores.
template <std::size_t N, class Run>
py::object elementwise(const std::array<py::object, N>& args, const std::array<const char*, N>& names,
                       const format& f, bool flags, const py::object& out, const py::object& dtype, Run run) {
  operand_list operands;
  bool torch = false;
  for (std::size_t k = 0; k < N; ++k) {
    operands.emplace_back(as_array(args[k], names[k]), names[k]);
    torch = torch || is_torch_tensor(args[k]);
  }
  const auto shape = broadcast_shape(operands);
  std::size_t n = 1;
  for (const py::ssize_t d : shape) n *= static_cast<std::size_t>(d);
  const auto make_result = [&] {
    return result_array(f, out, dtype, shape, default_dtype(f, operands[0].first), torch);
  };
  return on_codes<N>(f, operands, shape, make_result, [&](result_array& result, const auto& in) {
    using C = std::remove_const_t<typename std::remove_reference_t<decltype(in[0])>::element_type>;
    const auto call = [&](std::span<C> o, std::span<std::uint8_t> fl) { return run(in, o, fl); };
    if (auto done = fill_direct<C>(result, n, flags, shape, call)) return *done;
    std::vector<C> buffer(n);
    return run_into(result, std::span<C>(buffer), true, flags, shape, call);
  });
}

constexpr const char* arithmetic_doc =
    "Operands follow the module's one convention (integer arrays: codes; a dtype that stores fmt:\n"
    "its codes; other floats: values, each exactly one of fmt's) and broadcast as NumPy's do; each\n"
    "result is rounded once by the core in `mode` (stochastic: bits of element i from (seed, stream,\n"
    "i)). The result is written into `out` when given, else a new array of `dtype` (default: the\n"
    "first operand's dtype where it stores fmt, else codes at storage width); flags=True returns\n"
    "(result, per-element IEEE flags as uint8: fpemu.INVALID | DIVIDE_BY_ZERO | OVERFLOW |\n"
    "UNDERFLOW | INEXACT).";

void bind_binary(py::module_& m, const char* name, array_op op, const std::string& what) {
  m.def(
      name,
      [op](const py::object& a, const py::object& b, const py::object& fmt, const std::string& mode,
           const std::string& overflow, int sr_bits, std::uint64_t seed, std::uint32_t stream, bool flags,
           const py::object& out, const py::object& dtype) {
        const format f = to_format(fmt);
        const rounding r = to_rounding(f, mode, overflow, sr_bits);
        return elementwise<2>({a, b}, {"a", "b"}, f, flags, out, dtype,
                              [&](const auto& c, auto o, std::span<std::uint8_t> fl) {
                                return apply(op, f, c[0], c[1], o, r, sr_stream{seed, stream, 0}, fl);
                              });
      },
      py::arg("a"), py::arg("b"), py::arg("fmt"), py::kw_only(), py::arg("mode") = "rne", py::arg("overflow") = "ieee",
      py::arg("sr_bits") = 16, py::arg("seed") = 0, py::arg("stream") = 0, py::arg("flags") = false,
      py::arg("out") = py::none(), py::arg("dtype") = py::none(), (what + "\n\n" + arithmetic_doc).c_str());
}

}  // namespace

PYBIND11_MODULE(_fpemu, m) {
  // The package fpemu re-exports everything here: classes and submodules are named as users
  // reach them (fpemu.format, fpemu.bounds), not by the extension's own name.
  m.attr("__name__") = "fpemu";
  m.attr("__version__") = FPEMU_VERSION_STRING;
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
      "values, each of which must be one of the format's. Results follow the same rule, read from the\n"
      "dtype= asked for or the out= array given: codes (integer dtypes; by default the storage width),\n"
      "a typed array of the format, or values (float64, another format's dtype). Arguments are\n"
      "array_like and broadcast as NumPy's; torch CPU tensors go in and come back without a copy.\n"
      "Long calls release the GIL and stop on Ctrl-C; set_num_threads sets their threads.\n"
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
        py::arg("flags") = false, py::arg("out") = py::none(), py::arg("dtype") = py::none(),
        "Rounds values (any array_like: float32 or float64 arrays, read in place where C-contiguous;\n"
        "typed arrays such as ml_dtypes' or float16 give their values; torch CPU tensors) into fmt,\n"
        "once, by the core.\n\n"
        "The result goes where the module's convention says: into `out` (a preallocated array or\n"
        "tensor of x's shape, written in place and returned), or a new array of `dtype`. Integer dtypes\n"
        "take codes, the dtype that stores fmt (ml_dtypes.bfloat16 for bf16) its codes as a typed\n"
        "array, float64 or another format's dtype the rounded values. Default: codes at storage width\n"
        "(uint8 up to 8 bits, uint16 up to 16, else uint32); for a torch tensor, a tensor of fmt's\n"
        "torch dtype where there is one. Stochastic rounding (mode 'sr', sr_bits random bits) takes\n"
        "element i's bits from Philox keyed by (seed, stream, i): the same seed gives the same result\n"
        "on every run, thread count and device. flags=True returns (result, per-element IEEE flags).");

  m.def(
      "decode",
      [](const py::object& codes, const py::object& fmt, const py::object& out, const py::object& dtype) {
        const format f = to_format(fmt);
        const operand_list operands{{as_array(codes, "codes"), "codes"}};
        const auto shape = shape_of(operands[0].first);
        const auto make_result = [&] {
          return result_array(f, out, dtype, shape, py::dtype::of<double>(), is_torch_tensor(codes));
        };
        return on_codes<1>(f, operands, shape, make_result, [](result_array& result, const auto& in) {
          result.store(in[0]);
          return result.get();
        });
      },
      py::arg("codes"), py::arg("fmt"), py::kw_only(), py::arg("out") = py::none(), py::arg("dtype") = py::none(),
      "The exact values of codes of fmt (NaN codes give NaN), as float64 unless `dtype` or `out` asks\n"
      "for another (float32, float16... where every value is exact there; a typed array of fmt).");

  m.def(
      "convert",
      [](const py::object& codes, const py::object& src, const py::object& dst, const std::string& mode,
         const std::string& overflow, int sr_bits, std::uint64_t seed, std::uint32_t stream, bool flags,
         const py::object& out, const py::object& dtype) {
        const format from = to_format(src), to = to_format(dst);
        const rounding r = to_rounding(to, mode, overflow, sr_bits);
        const operand_list operands{{as_array(codes, "codes"), "codes"}};
        const auto shape = shape_of(operands[0].first);
        const auto make_result = [&] {
          return result_array(to, out, dtype, shape, py::none(), is_torch_tensor(codes));
        };
        return on_codes<1>(from, operands, shape, make_result, [&](result_array& result, const auto& in) {
          return fill(result, in[0].size(), flags, shape, [&](auto o, std::span<std::uint8_t> fl) {
            return convert_array(to, from, in[0], o, r, sr_stream{seed, stream, 0}, fl);
          });
        });
      },
      py::arg("codes"), py::arg("src"), py::arg("dst"), py::kw_only(), py::arg("mode") = "rne",
      py::arg("overflow") = "ieee", py::arg("sr_bits") = 16, py::arg("seed") = 0, py::arg("stream") = 0,
      py::arg("flags") = false, py::arg("out") = py::none(), py::arg("dtype") = py::none(),
      "Codes of format src (by the module's convention) rounded once into format dst, with no detour\n"
      "through a binary float; the result goes to `out` or a new array of `dtype` as in round().");

  bind_binary(m, "add", array_op::add, "add(a, b, fmt): a + b.");
  bind_binary(m, "sub", array_op::sub, "sub(a, b, fmt): a - b.");
  bind_binary(m, "mul", array_op::mul, "mul(a, b, fmt): a * b.");
  bind_binary(m, "div", array_op::div, "div(a, b, fmt): a / b.");
  m.def(
      "fma",
      [](const py::object& a, const py::object& b, const py::object& c, const py::object& fmt, const std::string& mode,
         const std::string& overflow, int sr_bits, std::uint64_t seed, std::uint32_t stream, bool flags,
         const py::object& out, const py::object& dtype) {
        const format f = to_format(fmt);
        const rounding r = to_rounding(f, mode, overflow, sr_bits);
        return elementwise<3>({a, b, c}, {"a", "b", "c"}, f, flags, out, dtype,
                              [&](const auto& x, auto o, std::span<std::uint8_t> fl) {
                                return apply_fma(f, x[0], x[1], x[2], o, r, sr_stream{seed, stream, 0}, fl);
                              });
      },
      py::arg("a"), py::arg("b"), py::arg("c"), py::arg("fmt"), py::kw_only(), py::arg("mode") = "rne",
      py::arg("overflow") = "ieee", py::arg("sr_bits") = 16, py::arg("seed") = 0, py::arg("stream") = 0,
      py::arg("flags") = false, py::arg("out") = py::none(), py::arg("dtype") = py::none(),
      (std::string("fma(a, b, c, fmt): a * b + c with one rounding.\n\n") + arithmetic_doc).c_str());
  m.def(
      "sqrt",
      [](const py::object& a, const py::object& fmt, const std::string& mode, const std::string& overflow, int sr_bits,
         std::uint64_t seed, std::uint32_t stream, bool flags, const py::object& out, const py::object& dtype) {
        const format f = to_format(fmt);
        const rounding r = to_rounding(f, mode, overflow, sr_bits);
        return elementwise<1>({a}, {"a"}, f, flags, out, dtype,
                              [&](const auto& x, auto o, std::span<std::uint8_t> fl) {
                                return apply_sqrt(f, x[0], o, r, sr_stream{seed, stream, 0}, fl);
                              });
      },
      py::arg("a"), py::arg("fmt"), py::kw_only(), py::arg("mode") = "rne", py::arg("overflow") = "ieee",
      py::arg("sr_bits") = 16, py::arg("seed") = 0, py::arg("stream") = 0, py::arg("flags") = false,
      py::arg("out") = py::none(), py::arg("dtype") = py::none(),
      (std::string("sqrt(a, fmt): the square root.\n\n") + arithmetic_doc).c_str());

  m.def(
      "set_num_threads",
      [](int n) {
        if (n < 0 || n > kMaxThreads)
          throw py::value_error("n = " + std::to_string(n) + " (valid: 1.." + std::to_string(kMaxThreads) +
                                ", or 0 for every hardware thread)");
        set_array_threads(n);
      },
      py::arg("n"),
      "Threads for long arrays (65536 elements or more) and the default of every `threads=0` argument\n"
      "(gemm, train, casgd); 0: every hardware thread. $FPEMU_NUM_THREADS sets it at import. Results never\n"
      "depend on it.");
  m.def("get_num_threads", &array_threads, "The thread count set_num_threads set (every hardware thread by default).");
  if (const char* env = std::getenv("FPEMU_NUM_THREADS"); env != nullptr && *env != '\0') {
    int n = -1;
    const std::string_view text(env);
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
    if (ec != std::errc{} || end != text.data() + text.size() || n < 0 || n > kMaxThreads)
      throw py::value_error("FPEMU_NUM_THREADS = '" + std::string(text) + "' (valid: 1.." + std::to_string(kMaxThreads) +
                            ", or 0 for every hardware thread)");
    set_array_threads(n);
  }

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
