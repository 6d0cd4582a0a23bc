// How a model's matmuls compute: the operand format, the block scaling and the accumulator, as an
// FP8 training recipe fixes them (DeepSeek-AI, "DeepSeek-V3 Technical Report" (2024), 3.3: e4m3
// operands in every forward and backward GEMM, one scale per 1x128 tile of activations and
// gradients and per 128x128 block of weights, the tensor core's partial sums promoted into fp32
// every 128 products).
//
// A recipe is named, or spelled FORMAT/SCALING/ACCUMULATOR:
//   FORMAT       a format spec, or "weights": the policy's weight format (model.hpp's default);
//   SCALING      analysis::parse_scaling's names (none tensor tile128 block128 mx32 nvfp4);
//   ACCUMULATOR  parse_accumulator's grammar: a format, exact, or a tensor-core preset.
// The named recipes are rows of gemm_recipes() written in that grammar.
//
// In a GEMM A B the first operand takes SCALING's layout along K for A (tile128: one scale per
// row per 128 of K) and the second B's (tile128: one per 128 x 128 block). The model puts
// activations and back-propagated errors first and weights second wherever a weight takes part,
// as DeepSeek-V3 scales them; in the weight gradients G^T X both operands are activations, and X
// takes B's 128 x 128 blocks where DeepSeek-V3 uses 128 x 1 tiles.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "analysis/reference/gemm.hpp"
#include "analysis/training/model.hpp"
#include "fpemu/expected.hpp"
#include "fpemu/format.hpp"
#include "fpemu/presets.hpp"

namespace fpemu::training {

struct named_gemm_recipe {
  std::string_view name, spec, what;
};
std::span<const named_gemm_recipe> gemm_recipes();

struct gemm_recipe {
  std::string name = "weights";     // as the user spelled it
  std::optional<format> inputs;     // the operands' format; nullopt: the policy's weight format
  analysis::scaling scaling = analysis::scaling::none;
  // What gemm() runs for that scaling (analysis::model_for_scaling); nullopt: fp32 with
  // nearest-even and no promotion, which model.cpp computes with the fp32 FMA kernel.
  std::optional<accumulator_model> acc;
  std::optional<tensor_core_preset> preset;  // the accumulator, when it is a preset
};

// A named recipe or FORMAT/SCALING/ACCUMULATOR; an error names the part that is wrong and what
// would do (a preset that does not take the format lists the formats it takes).
expected<gemm_recipe> parse_gemm_recipe(std::string_view spec);

// The model's compute precision under a recipe whose "weights" operands are `weights`; an error
// names a preset that does not take that format.
expected<compute_precision> compute_precision_for(const gemm_recipe& r, const format& weights, int threads);

}  // namespace fpemu::training
