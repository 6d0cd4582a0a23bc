// Tensor-core presets: the block-FMA parameters of real GPUs, named after the GPU and the input
// format (docs/architecture.md, the tensor-core model). Each preset that has published hardware
// outputs is tested against them bit for bit (tests/test_block_fma.cpp,
// tests/data/tensor-core-vectors).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "fpemu/accumulator.hpp"
#include "fpemu/expected.hpp"
#include "fpemu/format.hpp"

namespace fpemu {

struct tensor_core_preset {
  std::string name;
  std::string summary;        // one line for `--help` and `fpemu mma --list`
  std::string instruction;    // the instruction modelled, spelled as in PTX or the CDNA ISA
  std::string source;         // who published the parameters, and what they were checked against
  format a, b;                // default input formats
  std::vector<format> inputs;  // the formats A and B may each take; empty: a and b only
  bool truncates_inputs = false;  // tf32/xf32: the hardware ignores the low 13 bits of fp32 operands
  int instruction_k = 0;      // products per instruction (a multiple of the block size)
  accumulator_model model;    // fp32 accumulation (with promotion for the DeepSeek preset)
  format output = formats::fp32;
  rounding output_rounding{};  // nearest-even
  // The fp16-accumulator variant (D and C in binary16), where the hardware has one.
  std::optional<block_fma_model> fp16_accumulator;
  // H100 fp8 with an fp16 accumulator (mma.sync): ptxas for sm_90 converts the fp8 inputs to
  // fp16 and issues two HMMA.16816.F16 steps starting from zero, the first over the products with
  // k mod 4 in {0, 1} and the second over {2, 3}, then adds C with one fp16 add (HADD2).
  bool fp16_via_hmma = false;
  // Block-scaled instructions: the scale codes' format (e8m0fnu; e4m3fn read as UE4M3:
  // scale_format_name), one scale per model.block.scale_block products of A's row and of B's column.
  std::optional<format> scale;
  bool validated = false;     // reproduces published hardware outputs bit for bit
};

const std::vector<tensor_core_preset>& tensor_core_presets();
expected<tensor_core_preset> find_preset(std::string_view name);

// The accumulator a front end names: one grammar for the command line (--acc, --preset) and
// Python (acc=), so that both accept the same names with the same meaning. A name is
//   a format spec  every addition is rounded into that format (nearest-even unless
//                  with_rounding says otherwise);
//   "exact"        the exact sum, rounded once at the end (into fp32 by the rounding given, unless
//                  the caller rounds it into its own output format);
//   a preset name  that tensor core's model (find_preset), which fixes its own rounding.
// Each step's error names its own value, so that a front end can name the option it came from.
struct accumulator_choice {
  accumulator_model model;
  std::optional<tensor_core_preset> preset;  // set when the name is a preset
};
expected<accumulator_choice> parse_accumulator(std::string_view name);
// The rounding of a format or exact accumulator; a preset's is fixed, so giving one is an error.
expected<accumulator_choice> with_rounding(accumulator_choice c, const rounding& r);
// Promotion of the partial sum into an fp32 register (nearest-even) every `every` products,
// 1..max_promote.
inline constexpr int max_promote = 1 << 30;
expected<accumulator_choice> with_promotion(accumulator_choice c, int every);
// One line: "bf16 rne", "exact, rounded once into fp32 rne", "block-FMA: blocks of 32, F=13,
// e8m13 rz; promoted every 128 into fp32 rne"; a preset's description starts with its name.
std::string describe(const accumulator_choice& c);

// The preset with its inputs replaced (p.inputs lists what each operand may take); an error
// names the allowed set.
expected<tensor_core_preset> with_inputs(tensor_core_preset p, const format& a, const format& b);
// The formats A and B may each take: p.inputs, or without that list the preset's own p.a (and p.b
// where it differs). As text, `last` before the final name: "e4m3fn, e5m2 or e2m1fn".
std::vector<format> input_formats(const tensor_core_preset& p);
std::string input_formats_text(const tensor_core_preset& p, std::string_view separator = ", ",
                               std::string_view last = " or ");

// The name of a block-scale format as the MX and NVFP4 specifications write it: e4m3fn codes are
// read as unsigned UE4M3 (block_fma.hpp, block_scales), so e4m3fn is "UE4M3"; any other is its
// format name ("e8m0fnu").
std::string scale_format_name(const format& scale);

// One dot product D = C + sum a_i*b_i as the `mma` command computes it. Inputs are binary32 bit
// patterns converted exactly into the preset's input formats (an error names any value that is
// not representable, except for tf32, whose hardware ignores the low 13 bits); C is binary32,
// rounded to binary16 (nearest-even) for fp16 output. Scales (block-scaled presets only, K /
// scale_block each) are binary32 values exactly representable in the scale format. K may be any
// length (a multiple of scale_block when scaled): blocks are formed in order. Returns D as a
// binary32 pattern, or a binary16 pattern with fp16_out.
expected<std::uint32_t> tensor_core_dot(const tensor_core_preset& p, bool fp16_out, std::span<const std::uint32_t> a,
                                        std::span<const std::uint32_t> b, std::uint32_t c,
                                        std::span<const std::uint32_t> scale_a = {},
                                        std::span<const std::uint32_t> scale_b = {});

// The same on codes: A and B codes of p.a and p.b (tf32 inputs as binary32 patterns, whose low
// 13 bits the hardware ignores), C and D codes of the output format (binary16 with fp16_out),
// scales codes of *p.scale.
expected<std::uint32_t> tensor_core_dot_codes(const tensor_core_preset& p, bool fp16_out,
                                              std::span<const std::uint32_t> a, std::span<const std::uint32_t> b,
                                              std::uint32_t c, std::span<const std::uint32_t> scale_a = {},
                                              std::span<const std::uint32_t> scale_b = {});

}  // namespace fpemu
