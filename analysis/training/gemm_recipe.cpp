#include "analysis/training/gemm_recipe.hpp"

#include <array>

#include "fpemu/spec.hpp"

namespace fpemu::training {
namespace {

constexpr std::array<named_gemm_recipe, 6> kRecipes{{
    {"weights", "weights/none/fp32", "the policy's weight format, fp32 nearest-even accumulation (the default)"},
    {"bf16", "bf16/none/fp32", "bf16 operands, fp32 nearest-even accumulation"},
    {"fp8-fastaccum", "e4m3fn/tensor/h100-e4m3",
     "e4m3fn, one scale per tensor, H100's block chain over all of K (cuBLASLt fast accumulation)"},
    {"fp8-deepseek", "e4m3fn/tile128/h100-e4m3-deepseek",
     "DeepSeek-V3: e4m3fn, 1x128 tiles and 128x128 blocks, promoted into fp32 every 128 products"},
    {"fp8-tensor", "e4m3fn/tensor/h100-e4m3-deepseek",
     "e4m3fn, one scale per tensor (no fine-grained scaling), promoted every 128"},
    {"fp8-unscaled", "e4m3fn/none/h100-e4m3-deepseek", "e4m3fn without scales, promoted every 128"},
}};

std::string recipe_names() {
  std::string s;
  for (const auto& r : kRecipes) s += (s.empty() ? "" : ", ") + std::string(r.name);
  return s;
}

}  // namespace

std::span<const named_gemm_recipe> gemm_recipes() { return kRecipes; }

expected<gemm_recipe> parse_gemm_recipe(std::string_view spec) {
  std::string_view grammar = spec;
  for (const auto& r : kRecipes)
    if (r.name == spec) grammar = r.spec;
  const std::size_t s1 = grammar.find('/'), s2 = s1 == std::string_view::npos ? s1 : grammar.find('/', s1 + 1);
  const std::string head = "gemm recipe '" + std::string(spec) + "'";
  if (s2 == std::string_view::npos || grammar.find('/', s2 + 1) != std::string_view::npos)
    return error{head + ": expected a name (" + recipe_names() + ") or FORMAT/SCALING/ACCUMULATOR, e.g. " +
                 std::string(kRecipes[3].spec)};
  const std::string_view fmt = grammar.substr(0, s1), how = grammar.substr(s1 + 1, s2 - s1 - 1),
                         acc = grammar.substr(s2 + 1);
  gemm_recipe r;
  r.name = std::string(spec);
  if (fmt != "weights") {
    const expected<format> f = parse_format(fmt);
    if (!f) return error{head + ": " + f.message()};
    r.inputs = *f;
  }
  const expected<analysis::scaling> s = analysis::parse_scaling(how);
  if (!s) return error{head + ": " + s.message()};
  r.scaling = *s;
  const expected<accumulator_choice> choice = parse_accumulator(acc);
  if (!choice) return error{head + ": " + choice.message()};
  if (choice->preset && r.inputs) {
    if (auto ok = with_inputs(*choice->preset, *r.inputs, *r.inputs); !ok) return error{head + ": " + ok.message()};
  }
  analysis::scaling_request request;
  request.how = r.scaling;
  request.preset = choice->preset ? &*choice->preset : nullptr;
  request.acc = acc;
  const expected<accumulator_model> m = analysis::model_for_scaling(choice->model, request);
  if (!m) return error{head + ": " + m.message()};
  const bool fp32_chain = m->kind == accumulator_kind::format && m->acc == formats::fp32 &&
                          m->acc_rounding == rounding{} && m->promote_every == 0;
  if (!fp32_chain) r.acc = *m;
  r.preset = choice->preset;
  return r;
}

expected<compute_precision> compute_precision_for(const gemm_recipe& r, const format& weights, int threads) {
  compute_precision p;
  p.matmul_inputs = r.inputs.value_or(weights);
  p.threads = threads;
  p.scaling = r.scaling;
  p.acc = r.acc;
  if (r.preset && !r.inputs) {
    if (auto ok = with_inputs(*r.preset, weights, weights); !ok)
      return error{"gemm recipe '" + r.name + "' with the policy's weights: " + ok.message()};
  }
  return p;
}

}  // namespace fpemu::training
