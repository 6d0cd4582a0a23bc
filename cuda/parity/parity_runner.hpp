// Internal to cuda/parity*.cpp: what the GPU parity checks share (parity.hpp is the interface).
#pragma once

#include <cstdint>
#include <cstdio>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "fpemu/cuda.hpp"
#include "fpemu/spec.hpp"
#include "fpemu/text.hpp"
#include "parity.hpp"

namespace fpemu::cuda::parity_detail {

inline parity_check named(std::string kernel) {
  parity_check c;
  c.kernel = std::move(kernel);
  return c;
}

inline std::string show(const format& f, std::uint32_t code) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%x (", code);
  return buf + to_decimal(f, code) + ")";
}

// Compares element by element; `f` formats the values of both sides in the message.
inline parity_check compare(std::string kernel, const format& f, const expected<std::vector<std::uint32_t>>& gpu,
                     const std::vector<std::uint32_t>& emulator) {
  parity_check c = named(std::move(kernel));
  if (!gpu) {
    c.error = gpu.message();
    return c;
  }
  if (gpu->size() != emulator.size()) {
    c.error = "the GPU returned " + std::to_string(gpu->size()) + " values, the emulator " + std::to_string(emulator.size());
    return c;
  }
  c.cases = static_cast<long long>(emulator.size());
  for (std::size_t i = 0; i < emulator.size(); ++i)
    if ((*gpu)[i] != emulator[i] && c.mismatches++ == 0)
      c.first_mismatch = "index " + std::to_string(i) + ": gpu " + show(f, (*gpu)[i]) + " emulator " + show(f, emulator[i]);
  return c;
}

inline void merge(parity_check& total, const parity_check& part) {
  if (!part.error.empty() && total.error.empty()) total.error = part.error;
  if (part.mismatches != 0 && total.mismatches == 0) total.first_mismatch = part.first_mismatch;
  total.cases += part.cases;
  total.mismatches += part.mismatches;
}

inline std::string rounding_name(const rounding& r) {
  std::string s(to_string(r.mode));
  if (r.mode == round_mode::stochastic) s += std::to_string(r.sr_bits);
  return s + "/" + std::string(to_string(r.overflow));
}

// The state every check shares: options, device, random source, and the results so far.
class runner {
 public:
  runner(const gpu_check_options& o, const std::function<void(const parity_check&)>& done, const device_info& d)
      : o_(o), done_(done), device_(d), rng_(20261121) {}

  void add(parity_check c) {
    if (!wanted(c.kernel)) return;
    done_(c);
    results_.push_back(std::move(c));
  }
  bool wanted(const std::string& kernel) const { return o_.only.empty() || kernel.find(o_.only) != std::string::npos; }
  std::vector<parity_check> results() { return std::move(results_); }

  bool quick() const { return o_.quick; }
  std::size_t random_count() const { return o_.quick ? 4096 : 1u << 16; }
  const std::string& vectors_dir() const { return o_.vectors_dir; }
  const device_info& device() const { return device_; }
  std::mt19937_64& rng() { return rng_; }

 private:
  gpu_check_options o_;
  std::function<void(const parity_check&)> done_;
  device_info device_;
  std::mt19937_64 rng_;
  std::vector<parity_check> results_;
};

// The checks, by area (parity.cpp: conversions and training kernels; parity_tensor_core.cpp:
// tensor-core GEMMs, single instructions and the emulated GEMM).
void hardware_conversions(runner& run);
void conversions(runner& run);
void optimizers(runner& run);
void gradient_accumulation(runner& run);
void tensor_core_gemms(runner& run);
void promoted_fp8_gemms(runner& run);
void published_vectors(runner& run);
void directed_vectors(runner& run);
void emulated_gemms(runner& run);

}  // namespace fpemu::cuda::parity_detail
