// Bulk conversion on the GPU: argument checks, the choice of a hardware instruction, and the
// once-per-process proof that the instruction gives the core's bits before it is used.
#include <bit>
#include <map>
#include <mutex>
#include <string>
#include <tuple>

#include "convert.hpp"
#include "device.hpp"
#include "fpemu/spec.hpp"

namespace fpemu::cuda {

const char* instruction_name(hardware_cvt h) {
  switch (h) {
    case hardware_cvt::none: return "";
    case hardware_cvt::e4m3_rn_satfinite: return "cvt.rn.satfinite.e4m3x2.f32";
    case hardware_cvt::e5m2_rn_satfinite: return "cvt.rn.satfinite.e5m2x2.f32";
    case hardware_cvt::bf16_rn: return "cvt.rn.bf16.f32";
    case hardware_cvt::bf16_rz: return "cvt.rz.bf16.f32";
    case hardware_cvt::f16_rn: return "cvt.rn.f16.f32";
    case hardware_cvt::f16_rz: return "cvt.rz.f16.f32";
  }
  return "";
}

std::string hardware_instruction(source_type from, const convert_options& o, int major, int minor) {
  if (!o.hardware) return "";
  return instruction_name(select_hardware(from, o.to, o.r, major, minor));
}

namespace {

std::optional<error> check_options(const convert_options& o) {
  if (auto bad = check(o.to)) return error{"target format: " + *bad};
  if (auto bad = check(o.to, o.r)) return error{"rounding: " + *bad};
  return std::nullopt;
}

// True once the exhaustive check has shown `h` equal to the core on this device for (to, r).
// Proved at most once per process and instruction; a failed proof turns the instruction off.
expected<bool> proven(hardware_cvt h, const format& to, const rounding& r) {
  static std::mutex m;
  static std::map<hardware_cvt, bool> results;
  const std::lock_guard lock(m);
  if (auto it = results.find(h); it != results.end()) return it->second;
  auto report = detail::launch_exhaustive_check(h, to, r);
  if (!report) return error{report.message()};
  return results[h] = report->mismatches == 0;
}

expected<hardware_cvt> pick_instruction(source_type from, const convert_options& o) {
  if (!o.hardware || from != source_type::f32) return hardware_cvt::none;
  return detail::proven_instruction(o.to, o.r);
}

expected<std::vector<std::uint32_t>> run(source_type from, std::span<const std::uint32_t> in, const convert_options& o,
                                         bool values) {
  if (auto e = check_options(o)) return *e;
  if (from != source_type::f32) {
    for (std::size_t i = 0; i < in.size(); ++i)
      if (in[i] > 0xffffu)
        return error{"input " + std::to_string(i) + " is " + detail::hex(in[i]) + ", not a 16-bit " +
                     (from == source_type::bf16 ? "bf16" : "fp16") + " code (valid: 0x0..0xffff)"};
  }
  auto hw = pick_instruction(from, o);
  if (!hw) return error{hw.message()};
  return detail::launch_convert_copies(from, in, o, *hw, values);
}

}  // namespace

expected<hardware_cvt> detail::proven_instruction(const format& to, const rounding& r) {
  auto device = query_device();
  if (!device) return error{device.message()};
  const hardware_cvt hw = select_hardware(source_type::f32, to, r, device->major, device->minor);
  if (hw == hardware_cvt::none) return hw;
  auto ok = proven(hw, to, r);
  if (!ok) return error{ok.message()};
  return *ok ? hw : hardware_cvt::none;
}

std::size_t code_bytes(const format& f) { return width(f) <= 8 ? 1 : width(f) <= 16 ? 2 : 4; }

expected<void> convert_on_device(source_type from, const void* in, void* out, std::size_t n, const convert_options& o,
                                 void* stream) {
  if (auto e = check_options(o)) return *e;
  if (from != source_type::f32 && from != source_type::bf16 && from != source_type::fp16)
    return error{"convert_on_device: source type " + std::to_string(static_cast<int>(from)) +
                 " is not f32, bf16 or fp16"};
  if (n != 0 && (in == nullptr || out == nullptr))
    return error{std::string("convert_on_device: ") + (in == nullptr ? "in" : "out") + " is null for n = " +
                 std::to_string(n) + " elements"};
  auto hw = pick_instruction(from, o);
  if (!hw) return error{hw.message()};
  return detail::launch_convert(from, in, out, n, o, *hw, false, stream);
}

expected<std::vector<std::uint32_t>> convert_codes(source_type from, std::span<const std::uint32_t> in,
                                                   const convert_options& o) {
  return run(from, in, o, false);
}

expected<std::vector<float>> round_values(std::span<const float> in, const convert_options& o) {
  if (auto e = check_options(o)) return *e;
  // Every value must be a binary32 value: at most 24 significant bits, within binary32's range.
  if (precision(o.to) > 24 || emax(o.to) > 127 || emin(o.to) - o.to.frac_bits < -149)
    return error{"round_values: format " + to_string(o.to) +
                 " has values that are not binary32 values (valid: at most 23 fraction bits and exponents "
                 "within binary32's range); use convert_codes"};
  std::vector<std::uint32_t> bits(in.size());
  for (std::size_t i = 0; i < in.size(); ++i) bits[i] = std::bit_cast<std::uint32_t>(in[i]);
  auto out = run(source_type::f32, bits, o, true);
  if (!out) return error{out.message()};
  std::vector<float> values(out->size());
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = std::bit_cast<float>((*out)[i]);
  return values;
}

expected<fast_path_report> check_hardware_conversion(const format& to, const rounding& r) {
  if (auto e = check_options({to, r})) return *e;
  auto device = detail::query_device();
  if (!device) return error{device.message()};
  const hardware_cvt hw = select_hardware(source_type::f32, to, r, device->major, device->minor);
  if (hw == hardware_cvt::none)
    return error{"no hardware conversion instruction into " + to_string(to) + " with " +
                 std::string(to_string(r.mode)) + "/" + std::string(to_string(r.overflow)) + " on " + device->name};
  return detail::launch_exhaustive_check(hw, to, r);
}

#ifndef FPEMU_HAVE_CUDA
namespace detail {
expected<void> launch_convert(source_type, const void*, void*, std::size_t, const convert_options&, hardware_cvt, bool,
                              void*) {
  return no_cuda();
}
expected<std::vector<std::uint32_t>> launch_convert_copies(source_type, std::span<const std::uint32_t>,
                                                           const convert_options&, hardware_cvt, bool) {
  return no_cuda();
}
expected<fast_path_report> launch_exhaustive_check(hardware_cvt, const format&, const rounding&) { return no_cuda(); }
}  // namespace detail
#endif

}  // namespace fpemu::cuda
