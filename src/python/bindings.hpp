// Shared glue of the Python module: argument conversion (formats, roundings, code arrays,
// accumulators) and the per-area binding functions. Every conversion that can fail raises
// ValueError with the library's message, naming the value and the valid range.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "fpemu/accumulator.hpp"
#include "fpemu/expected.hpp"
#include "fpemu/format.hpp"
#include "fpemu/rounding.hpp"

namespace fpemu::python {

namespace py = pybind11;

template <class T>
T value_or_raise(expected<T> e) {
  if (!e) throw py::value_error(e.message());
  return std::move(e).value();
}
inline void value_or_raise(expected<void> e) {
  if (!e) throw py::value_error(e.message());
}
inline void raise_if(const std::optional<std::string>& bad, const std::string& prefix = {}) {
  if (bad) throw py::value_error(prefix + *bad);
}

// A spec string ('e4m3fn', 'e5m3:fn'), an fpemu.format, or a floating-point dtype of NumPy or
// ml_dtypes (numpy.float16, ml_dtypes.float8_e4m3fn) or its name ('bfloat16').
format to_format(const py::object& f);
// The format whose codes a dtype stores (float32, float16, ml_dtypes' types), if any.
std::optional<format> dtype_format(const py::dtype& d);
// mode (rne rna rz ru rd rto sr sr-exact), overflow (ieee saturate nan), checked against f.
rounding to_rounding(const format& f, const std::string& mode, const std::string& overflow = "ieee", int sr_bits = 16);

// Codes in the narrowest unsigned numpy type that holds f's width (uint8, uint16, uint32).
py::array codes_array(const format& f, const std::vector<std::uint32_t>& codes);
// An array as codes of f, by the module's one convention: an integer array holds codes (each
// checked against the width), a typed array of f (float32 for fp32, float16 for fp16, ml_dtypes'
// types) holds them in its bits, and any other float or typed array holds values, each of which
// must be one of f's; `name` is used in messages.
std::vector<std::uint32_t> to_codes(const format& f, const py::array& a, const std::string& name = "codes");
// A float array (any float or integer dtype) as float32 values, C order, narrowed to float32 with
// nearest-even (the storage of optimizer tensors and datasets).
std::vector<float> to_floats(const py::array& a, const std::string& name);
// The same without any rounding: a value that float32 (float64) does not hold exactly is refused,
// since narrowing it first would be a second rounding next to the core's.
std::vector<float> exact_floats(const py::array& a, const std::string& name);
std::vector<double> exact_doubles(const py::array& a, const std::string& name);
// Element `flat` (C order) of a for messages: "x[3]", "A[1, 2]".
std::string element(const std::string& name, const py::array& a, std::size_t flat);
// A number for messages: the shortest text that reads back to the same value ("1e-09", not
// std::to_string's "0.000000").
std::string number(double v);
// Copies into a new numpy array.
py::array_t<double> doubles_array(const std::vector<double>& v);
py::array_t<float> floats_array(const std::vector<float>& v);
// `flat` (one dimension) in the shape of `like`, or in `shape`.
py::object reshaped(const py::array& flat, const py::array& like);
py::object reshaped(const py::array& flat, const std::vector<py::ssize_t>& shape);
// The shape of a numpy array, and a 2-D array's (rows, cols) with a message naming it otherwise.
std::vector<py::ssize_t> shape_of(const py::array& a);
std::pair<int, int> matrix_shape(const py::array& a, const std::string& name);

// An accumulator: acc = a format spec ('fp32', 'bf16', ...), 'exact', or a tensor-core preset
// name (fpemu.presets()); acc_mode and sr_bits apply to a format accumulator; promote = products
// per promotion into an fp32 register (0: the preset's, or never).
accumulator_model to_accumulator(const std::string& acc, const std::string& acc_mode, int sr_bits, int promote);

void bind_accumulation(py::module_& m);
void bind_bounds(py::module_& m);
void bind_training(py::module_& m);
void bind_casgd(py::module_& m);

}  // namespace fpemu::python
