// Shared glue of the Python module: argument conversion (formats, roundings, code arrays,
// accumulators) and the per-area binding functions. Every conversion that can fail raises
// ValueError with the library's message, naming the value and the valid range.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <type_traits>
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
// The NumPy name of the dtype that stores f's codes (float16, bfloat16, float8_e4m3fn...), if any.
std::optional<std::string> dtype_name(const format& f);
// A dtype argument: a NumPy dtype or scalar type, a name ('uint8', 'bfloat16'), or a torch dtype.
py::dtype dtype_named(const py::object& d);
// torch.bfloat16 and the like (torch's dtype names are ml_dtypes' where both have the type).
bool is_torch_dtype(const py::object& d);
std::string torch_dtype_name(const py::object& d);
// mode (rne rna rz ru rd rto sr sr-exact), overflow (ieee saturate nan), checked against f.
rounding to_rounding(const format& f, const std::string& mode, const std::string& overflow = "ieee", int sr_bits = 16);

// ---- Arrays (arrays.cpp): the module's one convention ----

// An array_like argument (a NumPy array, a list, a scalar, an ml_dtypes array, a torch CPU tensor
// or another host array that speaks DLPack) as a NumPy array. Arrays and tensors come through
// without a copy (bfloat16 and float8 tensors as ml_dtypes' arrays over the same bits); anything
// but numbers is a TypeError. `writeable`: for `out`, which the call writes.
py::array as_array(const py::object& x, const std::string& name, bool writeable = false);
bool is_torch_tensor(const py::object& x);
// The dtypes torch has and NumPy lacks (bfloat16, float8_*): ml_dtypes' arrays carry them.
bool torch_has_no_numpy_dtype(const std::string& torch_dtype);
bool torch_has_dtype(const std::string& name);
// A NumPy array as a torch CPU tensor over the same bits (typed where torch has the dtype; codes
// of more than 8 bits widen to int32/int64, as torch lacks uint16 and uint32 before 2.3).
py::object to_torch(const py::array& a);
// NumPy's broadcast shape of the arguments, or a ValueError naming each (name, shape).
std::vector<py::ssize_t> broadcast_shape(const std::vector<std::pair<py::array, std::string>>& args);
// to_codes, checked in a's own shape (messages name the caller's index), then broadcast to `shape`.
std::vector<std::uint32_t> codes_in_shape(const format& f, const py::array& a, const std::string& name,
                                          const std::vector<py::ssize_t>& shape);

// Where results in format f go, by the same convention read from the target's dtype: an integer
// dtype takes codes (it must hold every code of f), the dtype that stores f (float16 for fp16,
// ml_dtypes' types) takes them in its bits, float64 and the dtype of another format (float32,
// float16, bfloat16...) take the values, each of which must be exact there. The target is `out`
// (a preallocated array or tensor of the result's shape, written in place and returned) or else a
// new array of `dtype`, of `default_dtype` when dtype is None, and when both are None: codes at
// storage width (uint8, uint16, uint32), or for `torch` the tensor of f's dtype where torch has one.
class result_array {
 public:
  result_array(const format& f, const py::object& out, const py::object& dtype, std::vector<py::ssize_t> shape,
               const py::object& default_dtype = py::none(), bool torch = false);
  // The target's memory as codes of width C, where it holds them so (C-contiguous, unsigned or f's
  // own dtype): the library writes there directly, and store() is not needed. Empty otherwise.
  template <class C>
  std::span<C> direct();
  // Writes codes of f (C order; 8, 16 or 32 bits each) into the target, converting as its dtype
  // asks: decoded or converted by the library straight into the target's memory where it is
  // C-contiguous, else through a buffer. After an error (a value the target's format lacks) the
  // target may hold some results.
  template <class C>
  void store(std::span<const C> codes);
  void store(std::span<const std::uint32_t> codes) { store<std::uint32_t>(codes); }
  // Whether a's memory may overlap the target's (NumPy's bounds test): the library must not write
  // results where it still reads operands.
  bool may_share_memory(const py::array& a) const;
  // out, or the new array (a NumPy scalar for a 0-d result; a tensor for torch).
  py::object get() const;

 private:
  // The target's memory as elements of type T, where it is C-contiguous with T's size and
  // alignment; empty otherwise.
  template <class T>
  std::span<T> memory();
  enum class result_kind : std::uint8_t { codes, bits, values, doubles };
  format f_;
  py::object out_;
  std::vector<py::ssize_t> shape_;
  bool torch_;
  py::array target_;
  std::optional<format> typed_;
  result_kind kind_ = result_kind::codes;
};

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
// The values of codes of f as float32, exactly (decoded through float64): a ValueError names a
// value float32 lacks, element `name`[i].
std::vector<float> float_values(const format& f, std::span<const std::uint32_t> codes, const std::string& name);
// Copies into a new numpy array.
py::array_t<double> doubles_array(const std::vector<double>& v);
py::array_t<float> floats_array(const std::vector<float>& v);
// `flat` (one dimension) in the shape of `like`, or in `shape`.
py::object reshaped(const py::array& flat, const py::array& like);
py::object reshaped(const py::array& flat, const std::vector<py::ssize_t>& shape);
// Whether a's elements lie in C order without gaps.
bool c_contiguous(const py::array& a);
// Whether a's elements can be read or written in place as T: C-contiguous, T's size and alignment.
template <class T>
bool holds_as(const py::array& a) {
  return a.dtype().itemsize() == static_cast<py::ssize_t>(sizeof(T)) && c_contiguous(a) &&
         reinterpret_cast<std::uintptr_t>(a.data()) % alignof(T) == 0;
}
// The shape of a numpy array, and a 2-D array's (rows, cols) with a message naming it otherwise.
std::vector<py::ssize_t> shape_of(const py::array& a);
std::pair<int, int> matrix_shape(const py::array& a, const std::string& name);

// A call's `threads` argument: >= 1 as given, 0 for fpemu.get_num_threads() (set_num_threads or
// $FPEMU_NUM_THREADS, else every hardware thread); ValueError below 0.
int thread_count(int threads);

// An accumulator: acc = a format spec ('fp32', 'bf16', ...), 'exact', or a tensor-core preset
// name (fpemu.presets()); acc_mode and sr_bits apply to a format accumulator; promote = products
// per promotion into an fp32 register (0: the preset's, or never).
accumulator_model to_accumulator(const std::string& acc, const std::string& acc_mode, int sr_bits, int promote);

// ---- Long calls (interrupt.cpp) ----

// While alive, in a thread that holds the GIL: a SIGINT also asks the library's loops to stop
// (fpemu/interrupt.hpp) before Python's own handler runs as always. Installed over a Python-level
// handler only (SIG_IGN means the user wants no interrupt; SIG_DFL ends the process anyway), and
// restored when the last scope ends.
class sigint_scope {
 public:
  sigint_scope();
  ~sigint_scope();
  sigint_scope(const sigint_scope&) = delete;
  sigint_scope& operator=(const sigint_scope&) = delete;
  // With the GIL held: if a SIGINT came while the scope was alive, the call's results are
  // unspecified, so this raises what Python's handler raises (KeyboardInterrupt by default).
  void raise_if_interrupted() const;

 private:
  unsigned start_;
};

// Runs `work` (C++ only: it touches no Python object, or takes the GIL for it) with the GIL
// released, so other Python threads run meanwhile, and with Ctrl-C stopping it within a slice of
// the library's loops instead of after the call.
template <class Work>
auto without_gil(Work&& work) {
  const sigint_scope scope;
  if constexpr (std::is_void_v<std::invoke_result_t<Work&>>) {
    {
      py::gil_scoped_release unlocked;
      work();
    }
    scope.raise_if_interrupted();
  } else {
    auto result = [&] {
      py::gil_scoped_release unlocked;
      return work();
    }();
    scope.raise_if_interrupted();
    return result;
  }
}

void bind_accumulation(py::module_& m);
void bind_bounds(py::module_& m);
void bind_training(py::module_& m);
void bind_casgd(py::module_& m);

}  // namespace fpemu::python
