// What fine-grained scaling buys (docs/accumulation.md, "What scaling buys"): GEMMs of
// N(0, sigma^2) data quantised with five scalings (none, per tensor, DeepSeek-V3's 1x128 / 128x128
// tiles, OCP MX with 32 per E8M0 scale, NVIDIA's NVFP4), each scored against the exact GEMM of
// the data before quantisation (compare_with_original: quantisation and accumulation together)
// and of the quantised inputs (analyse_gemm: accumulation alone), with the fractions of the
// non-zero inputs that quantise() lost (quantisation_loss_of).
//
// One cell is what `fpemu gemm --m M --n N --k K --sigma SIGMA --seed SEED` with the setup's
// options reports for its one sample: A (M x K), then B (K x N), drawn row-major from
// std::mt19937_64(SEED) through std::normal_distribution<double>(0, SIGMA), each value rounded to
// the nearest binary32, as the command draws its random data (src/cli/workload.hpp); quantised
// with quantise() (nearest-even, saturating), multiplied with gemm() (alpha 1, beta 0) into the
// preset's output, else fp32 nearest-even. The standard library's normal distribution is not
// specified bit for bit, so the cells equal the command's within one build.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "analysis/reference/gemm.hpp"
#include "fpemu/expected.hpp"
#include "fpemu/format.hpp"

namespace fpemu::analysis {

// One row of the table: the inputs' formats, the scaling and the accumulator.
struct scaling_setup {
  std::string name;         // the table's label, e.g. "1x128 A, 128x128 B (e4m3fn)"
  std::string accumulator;  // parse_accumulator's name: "fp32", or the block-scaled preset
  format a_format = formats::e4m3fn, b_format = formats::e4m3fn;
  scaling how = scaling::none;
};

// The five rows, in the table's order: e4m3fn inputs accumulated in fp32 (a group scaling folds
// each group into it) unscaled, per tensor, tile_1x128 and mx32; NVFP4's e2m1fn inputs on its
// MMA (b200-mxf4nvf4), which applies the scales inside its blocks.
const std::vector<scaling_setup>& scaling_setups();

struct scaling_experiment_options {
  std::vector<int> ks{128, 4096};
  std::vector<double> sigmas{1e-6, 1e-4, 1e-2, 1, 1e2, 1e4};
  int m = 8, n = 8;
  std::uint64_t seed = 0;
  int threads = 0;  // 0: every hardware thread; the results do not depend on it
};

struct scaling_cell {
  scaling_setup setup;
  int k = 0;
  double sigma = 0;
  double normwise_error_original = 0;  // ||D - X||_F / ||X||_F, X the exact GEMM of the data
  double max_rel_error_original = 0;   // the largest |d_ij - x_ij| / |x_ij| against the same
  double normwise_error = 0;           // against the exact GEMM of the quantised inputs
  double max_rel_error = 0;
  double underflowed = 0, saturated = 0;  // fractions of the non-zero inputs of A and B
};

// One cell per setup, K and sigma, in that nesting (the table's rows are setup x K, its columns
// sigma). Errors name a K outside 1..65536, an M x K or K x N matrix beyond 2^24 elements, M or
// N outside 1..65536, an M x N output beyond 2^24 elements, a sigma outside (0, 1e30], or an empty
// list. `progress(done, total)`, when set, is called after each cell.
expected<std::vector<scaling_cell>> scaling_experiment(const scaling_experiment_options& o,
                                                      const std::function<void(int, int)>& progress = {});

}  // namespace fpemu::analysis
