// GPU parity: every CUDA kernel against the emulator on the current device, bit for bit. Used by
// `fpemu gpu-check` and the `gpu` test suite. Each check reports the cases it ran, the mismatches
// and the first mismatch (index, both bit patterns, both values); a similarity threshold is never
// accepted.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace fpemu::cuda {

struct parity_check {
  std::string kernel;          // what ran, e.g. "convert f32->e4m3fn rne/saturate"
  long long cases = 0;
  long long mismatches = 0;
  std::string first_mismatch;  // "index 17: gpu 0x7e (448) emulator 0x7f (NaN)"
  std::string error;           // set when the check could not run to the end
  bool passed() const { return error.empty() && mismatches == 0 && cases > 0; }
};

struct gpu_check_options {
  bool quick = false;        // fewer random cases per check (the exhaustive ones stay exhaustive)
  std::string vectors_dir;   // the published tensor-core vectors (tests/data/tensor-core-vectors)
  std::string only;          // run only the checks whose kernel name contains this text
};

// Runs every check on the current device, calling `done` after each. The caller has made sure
// that a device is present (current_device()).
std::vector<parity_check> run_gpu_checks(const gpu_check_options& o, const std::function<void(const parity_check&)>& done);

}  // namespace fpemu::cuda
