// The FP8 accumulation experiment of the "High-Precision Accumulation" chapter on FP8 training,
// after the DeepSeek-V3 Technical Report (DeepSeek-AI, 2024), done with faithful
// models: dot products of K e4m3fn inputs drawn from N(0, 0.5^2), accumulated
//   - in an FP8 (e4m3fn) register, rounded to nearest after every product (saturating),
//   - on the H100 tensor core without promotion (h100-e4m3-fastaccum: blocks of 32, 13 kept
//     fraction bits, the 14-bit e8m13 register truncated between blocks),
//   - with DeepSeek-V3 promotion every 128 products into an fp32 register (h100-e4m3-deepseek;
//     reported before its bf16 epilogue, and after it),
//   - in fp32 with round-to-nearest after every product,
// each against the exact sum, with the deterministic and probabilistic bounds next to it.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace fpemu::analysis {

struct accumulation_row {
  std::string method;
  int k = 0;
  int samples = 0;
  double mean_relative_error = 0;  // mean over samples of |computed - exact| / |exact|
  // The median and the 95th percentile of the same (the nearest rank): a few samples whose exact
  // sum nearly cancels dominate the mean, not these.
  double median_relative_error = 0, p95_relative_error = 0;
  double max_relative_error = 0;
  double max_normalised_error = 0;  // max of |computed - exact| / sum |a_i b_i|
  double deterministic_bound = 0;   // coefficient of sum |a_i b_i|; +inf when not valid
  double probabilistic_bound = 0;   // coefficient (lambda = 6) where one applies, else NaN
};

// One row per method and K. `progress(done, total)` is called after every sample if set.
std::vector<accumulation_row> accumulation_experiment(const std::vector<int>& ks, int samples, std::uint64_t seed,
                                                      const std::function<void(int, int)>& progress = {});

}  // namespace fpemu::analysis
