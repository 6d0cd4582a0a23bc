// The module's one array convention (bindings.hpp): array_like arguments in, codes and values
// read by dtype, and results written where the caller asks, by the same rule.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>

#include "bindings.hpp"
#include "fpemu/array.hpp"
#include "fpemu/convert.hpp"
#include "fpemu/spec.hpp"

namespace fpemu::python {

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
    std::vector<std::uint8_t> flags(values.size());
    constexpr std::uint8_t not_a_value = flag::inexact | flag::overflow | flag::invalid;
    const std::uint8_t raised =
        value_or_raise(round_array(f, std::span<const double>(values), std::span<std::uint32_t>(codes), {}, {}, flags));
    if ((raised & not_a_value) != 0) {
      const auto bad = std::find_if(flags.begin(), flags.end(), [](std::uint8_t fl) { return (fl & not_a_value) != 0; });
      const auto i = static_cast<std::size_t>(bad - flags.begin());
      const double nearest = to_double(f, codes[i]);
      throw py::value_error(element(name, a, i) + " = " + number(values[i]) + " is not a value of " + to_string(f) +
                            (std::isfinite(nearest) ? " (nearest: " + number(nearest) + ")" : std::string()) +
                            "; round it with fpemu.round first");
    }
    return codes;
  }
  // Unsigned arrays are read as unsigned, so that a value of 2^63 or more is named as it is rather
  // than wrapped to a negative one; signed ones as int64.
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
  if (a.dtype().kind() == 'u') {  // read in its own width where that is a C++ type's (no copy)
    if (a.dtype().itemsize() == 1) return checked(std::uint8_t{});
    if (a.dtype().itemsize() == 2) return checked(std::uint16_t{});
    if (a.dtype().itemsize() == 4) return checked(std::uint32_t{});
    return checked(std::uint64_t{});
  }
  return checked(std::int64_t{});
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

std::vector<float> float_values(const format& f, std::span<const std::uint32_t> codes, const std::string& name) {
  std::vector<double> wide(codes.size());
  value_or_raise(decode_array(f, codes, std::span<double>(wide)));
  std::vector<float> out(codes.size());
  for (std::size_t i = 0; i < out.size(); ++i) {
    out[i] = static_cast<float>(wide[i]);
    if (static_cast<double>(out[i]) != wide[i] && !std::isnan(wide[i]))
      throw py::value_error(name + "[" + std::to_string(i) + "] = " + number(wide[i]) + " (" + to_string(f) +
                            ") is not a float32 value");
  }
  return out;
}

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


// ---- Arguments: array_like and torch tensors ----------------------------------------------------

namespace {
const char* unsigned_of(py::ssize_t bytes) { return bytes == 1 ? "uint8" : bytes == 2 ? "uint16" : "uint32"; }
py::dtype storage_codes(const format& f) { return py::dtype(unsigned_of(width(f) <= 8 ? 1 : width(f) <= 16 ? 2 : 4)); }
std::string text_of(const py::object& o) { return py::str(o).cast<std::string>(); }
std::string shape_text(const std::vector<py::ssize_t>& shape) { return text_of(py::tuple(py::cast(shape))); }

bool from_module(const py::object& x, const char* module) {
  const auto name = py::str(py::type::of(x).attr("__module__")).cast<std::string>();
  return name == module || name.rfind(std::string(module) + ".", 0) == 0;
}

py::module_ numpy() { return py::module_::import("numpy"); }

// A dtype name NumPy lacks (bfloat16, float8_*) is ml_dtypes' to give: importing it registers them.
py::dtype named_dtype(const std::string& name, const std::string& why) {
  if (!torch_has_no_numpy_dtype(name)) return py::dtype(name);
  try {
    py::module_::import("ml_dtypes");
  } catch (const py::error_already_set&) {
    throw py::type_error(why + " needs ml_dtypes for its dtype " + name + " (pip install ml_dtypes)");
  }
  return py::dtype(name);
}

}  // namespace

py::dtype dtype_named(const py::object& d) {
  if (is_torch_dtype(d)) return named_dtype(torch_dtype_name(d), "dtype " + py::str(d).cast<std::string>());
  if (py::isinstance<py::str>(d)) return named_dtype(d.cast<std::string>(), "dtype '" + d.cast<std::string>() + "'");
  return py::dtype::from_args(d);
}

namespace {
// A CPU tensor as a NumPy array over the same memory: by DLPack for arguments, and by torch's
// own bridge for an `out` tensor (NumPy marks DLPack imports read-only). Dtypes NumPy lacks
// travel as their bits and come out as ml_dtypes' array of the same name.
py::array from_torch(const py::object& t, const std::string& name, bool writeable) {
  const auto device = py::str(t.attr("device").attr("type")).cast<std::string>();
  if (device != "cpu")
    throw py::type_error(name + " is a torch tensor on " + device + "; fpemu reads CPU tensors (use .cpu())");
  const py::object plain = t.attr("detach")();  // a tensor that requires grad refuses both bridges
  const auto dtype = py::str(plain.attr("dtype")).cast<std::string>().substr(std::string("torch.").size());
  const auto numpy_of = [&](const py::object& x) -> py::array {
    return writeable ? x.attr("numpy")() : numpy().attr("from_dlpack")(x);
  };
  if (!torch_has_no_numpy_dtype(dtype)) return numpy_of(plain);
  const py::module_ torch = py::module_::import("torch");
  const auto bytes = plain.attr("element_size")().cast<int>();
  const py::array bits = numpy_of(plain.attr("view")(torch.attr(bytes == 1 ? "uint8" : "int16")));
  return bits.attr("view")(named_dtype(dtype, name + " (a torch." + dtype + " tensor)"));
}
}  // namespace

bool torch_has_no_numpy_dtype(const std::string& torch_dtype) {
  return torch_dtype == "bfloat16" || torch_dtype.rfind("float8_", 0) == 0;
}

bool is_torch_tensor(const py::object& x) { return from_module(x, "torch") && py::hasattr(x, "__dlpack__"); }

py::array as_array(const py::object& x, const std::string& name, bool writeable) {
  if (py::isinstance<py::array>(x)) return py::reinterpret_borrow<py::array>(x);
  if (is_torch_tensor(x)) return from_torch(x, name, writeable);
  if (!writeable && py::hasattr(x, "__dlpack__")) return numpy().attr("from_dlpack")(x);  // JAX, CuPy on the host...
  const py::array a = numpy().attr("asarray")(x);
  const char kind = a.dtype().kind();
  if (kind != 'f' && kind != 'i' && kind != 'u' && kind != 'V')
    throw py::type_error(name + " must be an array_like of numbers; got " + std::string(py::str(py::repr(x))));
  return a;
}

std::vector<py::ssize_t> broadcast_shape(const std::vector<std::pair<py::array, std::string>>& args) {
  std::vector<py::ssize_t> shape;
  for (const auto& [a, name] : args) {
    const std::vector<py::ssize_t> s = shape_of(a);
    if (s.size() > shape.size()) shape.insert(shape.begin(), s.size() - shape.size(), 1);
    for (std::size_t k = 0; k < s.size(); ++k) {
      py::ssize_t& d = shape[shape.size() - s.size() + k];
      const py::ssize_t e = s[k];
      if (d != e && d != 1 && e != 1) {
        std::string shapes;
        for (const auto& [b, other] : args)
          shapes += (shapes.empty() ? "" : ", ") + other + " " + shape_text(shape_of(b));
        throw py::value_error("shapes do not broadcast: " + shapes);
      }
      if (d == 1) d = e;
    }
  }
  return shape;
}

std::vector<std::uint32_t> codes_in_shape(const format& f, const py::array& a, const std::string& name,
                                          const std::vector<py::ssize_t>& shape) {
  std::vector<std::uint32_t> codes = to_codes(f, a, name);  // checked where the caller's indices hold
  if (shape_of(a) == shape) return codes;
  const py::array own = reshaped(py::array_t<std::uint32_t>(static_cast<py::ssize_t>(codes.size()), codes.data()), a);
  const auto spread = py::array_t<std::uint32_t, py::array::c_style | py::array::forcecast>::ensure(
      numpy().attr("broadcast_to")(own, py::tuple(py::cast(shape))));
  return {spread.data(), spread.data() + spread.size()};
}

// ---- Results -----------------------------------------------------------------------------------

result_array::result_array(const format& f, const py::object& out, const py::object& dtype,
                           std::vector<py::ssize_t> shape, const py::object& default_dtype, bool torch)
    : f_(f), out_(out), shape_(std::move(shape)), torch_(torch && out.is_none()) {
  if (!out.is_none() && !dtype.is_none()) throw py::value_error("give out= or dtype=, not both");
  if (py::isinstance<py::str>(out))  // out='codes'/'values', the keyword's earlier meaning
    throw py::type_error("out = '" + out.cast<std::string>() +
                         "': out takes a preallocated array; ask for values with dtype='float64'");
  if (!out.is_none()) {
    target_ = as_array(out, "out", true);
    if (shape_of(target_) != shape_)
      throw py::value_error("out has shape " + shape_text(shape_of(target_)) + " but the result has shape " +
                            shape_text(shape_));
    if (!target_.writeable()) throw py::value_error("out is read-only");
  } else {
    py::dtype d = storage_codes(f);
    if (!dtype.is_none())
      d = dtype_named(dtype);
    else if (!default_dtype.is_none())
      d = py::dtype::from_args(default_dtype);
    else if (torch_) {
      if (const auto name = dtype_name(f); name && torch_has_dtype(*name)) d = named_dtype(*name, "a torch result");
    }
    target_ = py::array(d, shape_);
  }
  const py::dtype d = target_.dtype();
  const char kind = d.kind();
  const auto bits = static_cast<int>(d.itemsize()) * 8;
  typed_ = dtype_format(d);
  if (kind == 'u' || kind == 'i') {
    if (bits - (kind == 'i' ? 1 : 0) < width(f))
      throw py::value_error(std::string(out.is_none() ? "dtype " : "out's dtype ") + text_of(d) +
                            " cannot hold the codes of " + to_string(f) + " (0.." + std::to_string(code_mask(f)) + ")");
    kind_ = result_kind::codes;
  } else if (typed_) {
    kind_ = *typed_ == f ? result_kind::bits : result_kind::values;
  } else if (kind == 'f' && bits == 64) {
    kind_ = result_kind::doubles;
  } else {
    throw py::value_error(std::string(out.is_none() ? "dtype " : "out's dtype ") + text_of(d) +
                          " cannot hold results in " + to_string(f) +
                          " (valid: an integer dtype for codes, a dtype that stores it, or float64 or another "
                          "format's dtype for its values)");
  }
}

bool c_contiguous(const py::array& a) { return py::detail::check_flags(a.ptr(), py::array::c_style); }

template <class T>
std::span<T> result_array::memory() {
  if (!holds_as<T>(target_)) return {};
  return {static_cast<T*>(target_.mutable_data()), static_cast<std::size_t>(target_.size())};
}

template <class C>
std::span<C> result_array::direct() {
  const bool codes = (kind_ == result_kind::codes && target_.dtype().kind() == 'u') || kind_ == result_kind::bits;
  return codes ? memory<C>() : std::span<C>{};
}
template std::span<std::uint8_t> result_array::direct();
template std::span<std::uint16_t> result_array::direct();
template std::span<std::uint32_t> result_array::direct();

bool result_array::may_share_memory(const py::array& a) const {
  return numpy().attr("may_share_memory")(a, target_).cast<bool>();
}

template <class C>
void result_array::store(std::span<const C> codes) {
  const auto n = static_cast<py::ssize_t>(codes.size());
  py::array from;
  if (kind_ == result_kind::doubles) {
    const auto decode_into = [&](std::span<double> into) {
      value_or_raise(without_gil([&] { return decode_array(f_, codes, into); }));
    };
    if (const auto d = memory<double>(); !d.empty()) return decode_into(d);
    py::array_t<double> buffer(n);
    decode_into({buffer.mutable_data(), codes.size()});
    from = buffer;
  } else if (kind_ == result_kind::values) {  // exactly, or not at all
    const auto convert_into = [&]<class Out>(std::span<Out> into) {
      const std::uint8_t bad = flag::inexact | flag::overflow | flag::underflow;
      const std::uint8_t all = value_or_raise(without_gil([&] { return convert_array(*typed_, f_, codes, into); }));
      if ((all & bad) == 0) return;
      std::size_t i = 0;
      while ((convert(*typed_, f_, codes[i]).flags & bad) == 0) ++i;
      throw py::value_error(element("result", target_, i) + " = " + number(to_double(f_, codes[i])) +
                            " is not a value of " + to_string(*typed_) + ", the format of dtype " +
                            text_of(target_.dtype()) + "; ask for float64 values or for codes");
    };
    // Into the target's memory at its own width (a byte for the FP8 dtypes, two for float16 and
    // bfloat16, four for float32), else 32-bit codes, which copyto narrows.
    if (const auto d = memory<std::uint8_t>(); !d.empty()) return convert_into(d);
    if (const auto d = memory<std::uint16_t>(); !d.empty()) return convert_into(d);
    if (const auto d = memory<std::uint32_t>(); !d.empty()) return convert_into(d);
    py::array_t<std::uint32_t> buffer(n);
    convert_into(std::span<std::uint32_t>(buffer.mutable_data(), codes.size()));
    from = buffer;
  } else if (const auto d = direct<C>(); !d.empty()) {
    std::copy(codes.begin(), codes.end(), d.begin());
    return;
  } else {
    from = py::array_t<C>(n, codes.data());
  }
  // Typed targets take the bits; numpy's copyto handles every layout and integer width.
  const py::object into = kind_ == result_kind::bits || kind_ == result_kind::values
                              ? target_.attr("view")(unsigned_of(target_.dtype().itemsize()))
                              : py::object(target_);
  numpy().attr("copyto")(into, reshaped(from, shape_), py::arg("casting") = "unsafe");
}
template void result_array::store(std::span<const std::uint8_t>);
template void result_array::store(std::span<const std::uint16_t>);
template void result_array::store(std::span<const std::uint32_t>);

py::object result_array::get() const {
  if (!out_.is_none()) return out_;
  if (torch_) return to_torch(target_);
  if (shape_.empty()) return target_[py::tuple()];  // a scalar in, a scalar out, as NumPy's ufuncs do
  return target_;
}

py::object to_torch(const py::array& array) {
  const py::module_ torch = py::module_::import("torch");
  const py::object np = numpy();
  py::array a = np.attr("ascontiguousarray")(array);
  const auto name = text_of(a.dtype().attr("name"));
  if (a.dtype().kind() == 'V') {  // ml_dtypes' types: by name where torch has the dtype, else codes
    if (py::hasattr(torch, name.c_str()))
      return torch.attr("from_dlpack")(a.attr("view")(a.dtype().itemsize() == 1 ? "uint8" : "int16"))
          .attr("view")(torch.attr(name.c_str()));
    a = a.attr("view")(unsigned_of(a.dtype().itemsize()));
  }
  // torch has no uint16 or uint32 before 2.3: wider signed integers hold those codes.
  if (a.dtype().kind() == 'u' && a.dtype().itemsize() > 1)
    a = a.attr("astype")(a.dtype().itemsize() == 2 ? "int32" : "int64");
  return torch.attr("from_dlpack")(a);
}

bool torch_has_dtype(const std::string& name) {
  return py::hasattr(py::module_::import("torch"), name.c_str());
}

}  // namespace fpemu::python
