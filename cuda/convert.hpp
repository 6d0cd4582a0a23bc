// Bulk conversion into any format: the element function the kernel runs (host and device), and
// the hardware instructions that may stand in for it.
//
// Element i of the input is decoded exactly into binary32 (bf16 and fp16 values are binary32
// values) and rounded once by round_float, the emulator's core; stochastic rounding takes
// keystream_bits(seed, stream, first_index + i, width), the bits round_array() uses on the CPU. So the
// kernel's output equals round_array()/convert_array() bit for bit by construction, and
// tests/test_cuda_convert.cpp checks the element function against them on the host.
#pragma once

#include <cstdint>

#include "fpemu/array.hpp"
#include "fpemu/cuda.hpp"
#include "fpemu/random.hpp"
#include "fpemu/round_float.hpp"

#if defined(__CUDACC__)
#include "arch/sm89_cvt.cuh"
#endif

namespace fpemu::cuda {

// A hardware conversion that gives the core's bits for every non-NaN binary32 input, once the
// exhaustive check has shown it on the device (see convert.cu).
enum class hardware_cvt : std::uint8_t {
  none,
  e4m3_rn_satfinite,  // cvt.rn.satfinite.e4m3x2.f32 (sm_89+)
  e5m2_rn_satfinite,  // cvt.rn.satfinite.e5m2x2.f32 (sm_89+)
  bf16_rn,            // cvt.rn.bf16.f32 (sm_80+)
  bf16_rz,            // cvt.rz.bf16.f32 (sm_80+)
  f16_rn,             // cvt.rn.f16.f32
  f16_rz,             // cvt.rz.f16.f32
};

// Which instruction matches (source, target, rounding) on compute capability major.minor. The
// FP8 instructions always saturate (.satfinite is mandatory for them), so they stand in only for
// overflow_policy::saturate; the 16-bit ones for the IEEE policy, whose overflow they implement.
FPEMU_HD constexpr hardware_cvt select_hardware(source_type from, const format& to, const rounding& r, int major,
                                                int minor) {
  if (from != source_type::f32) return hardware_cvt::none;
  const int cc = major * 10 + minor;
  const bool rn = r.mode == round_mode::nearest_even, rz = r.mode == round_mode::toward_zero;
  if (cc >= 89 && rn && r.overflow == overflow_policy::saturate) {
    if (to == formats::e4m3fn) return hardware_cvt::e4m3_rn_satfinite;
    if (to == formats::e5m2) return hardware_cvt::e5m2_rn_satfinite;
  }
  if (cc >= 80 && r.overflow == overflow_policy::ieee) {
    if (to == formats::bf16) return rn ? hardware_cvt::bf16_rn : rz ? hardware_cvt::bf16_rz : hardware_cvt::none;
    if (to == formats::fp16) return rn ? hardware_cvt::f16_rn : rz ? hardware_cvt::f16_rz : hardware_cvt::none;
  }
  return hardware_cvt::none;
}

const char* instruction_name(hardware_cvt h);

#if defined(__CUDACC__)
// The instruction h on x (device code). A compilation pass whose target lacks h sets
// *unavailable (when not null) and returns 0: the proof below then reports it.
__device__ inline std::uint32_t hardware_convert(hardware_cvt h, float x, int* unavailable) {
  switch (h) {
    case hardware_cvt::e4m3_rn_satfinite: return arch::sm89_cvt_rn_satfinite_e4m3_f32(x, unavailable);
    case hardware_cvt::e5m2_rn_satfinite: return arch::sm89_cvt_rn_satfinite_e5m2_f32(x, unavailable);
    case hardware_cvt::bf16_rn: return arch::sm80_cvt_rn_bf16_f32(x, unavailable);
    case hardware_cvt::bf16_rz: return arch::sm80_cvt_rz_bf16_f32(x, unavailable);
    case hardware_cvt::f16_rn: return arch::cvt_rn_f16_f32(x);
    case hardware_cvt::f16_rz: return arch::cvt_rz_f16_f32(x);
    case hardware_cvt::none: break;
  }
  if (unavailable != nullptr) *unavailable = 1;
  return 0;
}
#endif

// The exact binary32 value of an input element.
FPEMU_HD constexpr float source_value(source_type from, std::uint32_t bits) {
  switch (from) {
    case source_type::f32: return std::bit_cast<float>(bits);
    case source_type::bf16: return std::bit_cast<float>(bits << 16);
    case source_type::fp16: {
      constexpr format binary16 = formats::fp16;
      return code_to_float(binary16, bits);
    }
  }
  return 0.0f;
}

// Element i through the core: the kernel's general path. The kernel computes each Philox block
// once for the elements sharing it and passes their bits in `random`; this form draws them itself.
FPEMU_HD constexpr std::uint32_t convert_element(source_type from, std::uint32_t bits, const format& to,
                                                 const rounding& r, std::uint64_t random) {
  return round_float(to, source_value(from, bits), r, random).code;
}
FPEMU_HD constexpr std::uint32_t convert_element(source_type from, std::uint32_t bits, const format& to,
                                                 const rounding& r, const sr_stream& sr, std::uint64_t i) {
  const std::uint64_t random =
      is_stochastic(r.mode) ? keystream_bits(sr.seed, sr.stream, sr.first_index + i, array_random_width(r)) : 0;
  return convert_element(from, bits, to, r, random);
}

namespace detail {

// Launchers (convert.cu; "built without CUDA" errors otherwise). Arguments are validated by
// the callers in convert_api.cpp. `hw` is used for non-NaN inputs when not none. The kernel
// reads n elements of 4 bytes (f32) or 2 (bf16, fp16) at `in` and writes n codes at storage
// width (code_bytes) at `out`, or with `values` the binary32 bit patterns of the rounded values;
// it is queued on `stream` and not waited for.
expected<void> launch_convert(source_type from, const void* in, void* out, std::size_t n, const convert_options& o,
                              hardware_cvt hw, bool values, void* stream);
// The same for host vectors: uploads `in` (codes in the low 16 bits for bf16/fp16), runs the
// kernel, waits, and returns the codes (or value bit patterns) widened to uint32.
expected<std::vector<std::uint32_t>> launch_convert_copies(source_type from, std::span<const std::uint32_t> in,
                                                           const convert_options& o, hardware_cvt hw, bool values);
expected<fast_path_report> launch_exhaustive_check(hardware_cvt hw, const format& to, const rounding& r);

// The instruction that may stand in for the core converting binary32 into `to` with r on the
// current device: one that launch_exhaustive_check has proven (once per process), or none.
expected<hardware_cvt> proven_instruction(const format& to, const rounding& r);

}  // namespace detail
}  // namespace fpemu::cuda
