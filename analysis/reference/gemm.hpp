// Reference dot products and GEMM: C = alpha * A*B + beta * C with A and B in any formats (they
// may differ), optional block scaling, any accumulator model, a promotion interval, an output
// format and rounding, and an explicit order over K. Multithreaded over output tiles; each output
// is computed by one thread in the given K order, so results are bit-identical for any thread
// count, and stochastic rounding draws its bits from (seed, output index, rounding index).
//
// Semantics of one output d_ij:
//   acc = accumulator_model over k in `k_order` of a_ik * b_kj, starting at zero; with group
//   scaling the partial of each group of K is folded into the promoted register as
//   R = round(partial * (sa * sb) + R)                        (DeepSeek-V3 / MX style)
//   d_ij = round_out(alpha * acc + beta * c_ij)               (exactly, then one rounding)
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "fpemu/accumulator.hpp"
#include "fpemu/expected.hpp"
#include "fpemu/format.hpp"
#include "fpemu/presets.hpp"

namespace fpemu::analysis {

// Block scaling of the inputs (quantise() produces codes and scales; gemm() consumes them).
enum class scaling : std::uint8_t {
  none,        // scales all 1
  per_tensor,  // one fp32 scale per matrix
  tile_1x128,  // A: one scale per row per 128 columns of K; B: one per 128x128 block (DeepSeek-V3)
  block_128,   // A and B: one scale per 128x128 block
  mx32,        // OCP MX: one e8m0 scale per 32 consecutive elements along K
  nvfp4,       // NVIDIA NVFP4: one e4m3fn scale per 16 along K, under one fp32 scale per matrix
};
std::string_view to_string(scaling s);
expected<scaling> parse_scaling(std::string_view name);  // none tensor tile128 block128 mx32 nvfp4

// The group size along K of a scaling (tile128 and block128: 128; mx32: 32), 0 without groups.
// gemm() folds each group into the promoted register, so it is also the promotion interval.
int group_along_k(scaling s);

// A matrix of codes with its scales. rows x cols, row-major. `scales` layout: per_tensor 1;
// tile_1x128/block_128/mx32/nvfp4: see scale_index(). Scale codes are fp32, e8m0fnu for mx32,
// e4m3fn for nvfp4, whose block scales are in units of the fp32 `tensor_scale`.
struct scaled_matrix {
  int rows = 0, cols = 0;
  format fmt = formats::fp32;
  std::vector<std::uint32_t> codes;
  scaling scale_kind = scaling::none;
  format scale_format = formats::fp32;
  std::vector<std::uint32_t> scales;
  std::uint32_t tensor_scale = 0x3f800000;  // fp32 code; 1 but for nvfp4
};

// The format of a scaling's scale codes: e8m0fnu for mx32, e4m3fn for nvfp4, else fp32.
format scale_format_of(scaling s);
// The scaling whose scales a block-scaled preset applies inside its blocks: mx32 for E8M0 per 32,
// nvfp4 for UE4M3 per 16; none for the others (E8M0 per 16, or no block scales). The command's
// --scaling and Python's scaling= default to it and accept it or none (scales of 1).
scaling own_scaling(const tensor_core_preset& p);
// The number of scales a rows x cols matrix takes (one past scale_index's largest).
std::size_t scale_count(scaling s, int rows, int cols, bool along_k_is_cols);

// How model_for_scaling's messages name the options they refer to: the command line's flags
// ("--scaling mx32", "--promote 64"), Python's keyword arguments ("scaling = 'mx32'",
// "promote = 64"), or gemm()'s own inputs (the operands' scaling, acc.promote_every).
enum class option_syntax : std::uint8_t { command_line, keyword, library };

// What the caller asks model_for_scaling to run, and how its messages name it.
struct scaling_request {
  scaling how = scaling::none;                 // how A and B were scaled
  const tensor_core_preset* preset = nullptr;  // the preset the model is, if it is one
  std::string_view acc;                        // the accumulator as named ("fp32", a preset)
  std::string_view acc_option = "acc";         // the option that named it ("acc", "preset")
  bool promote_given = false;                  // the model's promote_every is the caller's
  option_syntax syntax = option_syntax::library;
};

// The accumulator model gemm() runs for operands scaled r.how, from the model m the accumulator
// names. A block-scaled MMA applies its own scaling's scales inside its blocks (own_scaling; a
// model without its preset: mx32 or nvfp4, whichever groups K by its scale_block), or none for
// scales of 1, and is not promoted. nvfp4 is applied by such an MMA only. Any other model folds
// each group of a group scaling (group_along_k), scaled, into the promoted fp32 register, so the
// promotion interval becomes the group size; a different interval (the caller's or the preset's)
// is an error, which names the interval that would do. The CLI and Python call this with their
// option syntax, and gemm() itself for each operand's scaling.
expected<accumulator_model> model_for_scaling(accumulator_model m, const scaling_request& r);

// The index in `scales` of element (r, c)'s scale, K running along columns (A) or rows (B):
// tile_1x128 gives A one scale per row per 128 columns and B one per 128 x 128 block, as
// DeepSeek-V3 scales activations and weights.
std::size_t scale_index(const scaled_matrix& m, int r, int c, bool along_k_is_cols);
// The value of element (r, c)'s scale (1 for scaling none); exact in double.
double scale_of(const scaled_matrix& m, int r, int c, bool along_k_is_cols);

// Quantises a row-major float matrix: for each scaling group, scale = amax / max_finite(fmt)
// rounded up into fp32, or for mx32 the e8m0 code 2^(floor(log2 amax) - emax(fmt)) of the OCP MX
// spec 6.3 (amax / scale lies in [2^emax, 2^(emax+1)), so elements above max_finite(fmt), e4m3fn's
// (448, 512), saturate), then each element is x / scale rounded into fmt with `r` (saturating). `along_k_is_cols`: true for A
// (K runs along columns), false for B (K runs along rows).
// nvfp4 scales in two levels, as NVIDIA defines NVFP4 (e2m1fn elements; any fmt is taken): the
// tensor scale s_t = amax / (448 max_finite(fmt)) rounded up into fp32, so that no block scale
// exceeds e4m3fn's 448; each block of 16 along K takes s_b = amax_b / (max_finite(fmt) s_t)
// rounded to nearest-even into e4m3fn; each element x / (s_b s_t) is rounded into fmt with `r`
// (saturating). All three are single roundings of exact quotients. A block whose scale rounds to
// zero quantises to zeros of x's sign.
expected<scaled_matrix> quantise(std::span<const float> x, int rows, int cols, const format& fmt, scaling s,
                                 bool along_k_is_cols, const rounding& r = {});
// Each element's value, its code's value times its scale(s), row-major; exact in double (at most
// 24 + 24 significant bits). An error names a scale count that does not fit the layout.
expected<std::vector<double>> dequantise(const scaled_matrix& m, bool along_k_is_cols);

// What quantise() lost of x (row-major, as given to it) in q: of the non-zero inputs, those that
// became zero (underflow), and those beyond the format's largest finite magnitude times their
// scale, clipped to it (saturation). Inputs that are not finite count as saturated.
struct quantisation_loss {
  std::size_t nonzero = 0, underflowed = 0, saturated = 0;
  quantisation_loss& operator+=(const quantisation_loss& o) {
    nonzero += o.nonzero;
    underflowed += o.underflowed;
    saturated += o.saturated;
    return *this;
  }
  // The fraction of the non-zero inputs that `count` of them make (0 when every input is 0).
  double fraction(std::size_t count) const {
    return nonzero > 0 ? static_cast<double>(count) / static_cast<double>(nonzero) : 0.0;
  }
};
quantisation_loss quantisation_loss_of(std::span<const float> x, const scaled_matrix& q, bool along_k_is_cols);
// Of both operands of a GEMM: A (xa quantised into a, K along its columns) and B (K along rows).
quantisation_loss quantisation_loss_of(std::span<const float> xa, const scaled_matrix& a, std::span<const float> xb,
                                       const scaled_matrix& b);

struct gemm_options {
  accumulator_model acc{};     // the accumulator (a preset's model, or a format accumulator)
  format out = formats::fp32;  // D's format
  rounding out_rounding{};
  double alpha = 1.0, beta = 0.0;
  std::vector<int> k_order;    // empty: 0..K-1
  int threads = 0;             // 0: std::thread::hardware_concurrency()
  sr_stream sr{};
  bool fast_kernels = true;    // false: always the reference loop (the fast kernels' oracle);
                               // analyse_gemm then takes its slow path too
};

// D (M x N codes of options.out). A is M x K, B is K x N; C (M x N codes of options.out) may be
// empty when beta == 0. Errors name mismatched shapes, scalings, a k_order that is not a
// permutation of 0..K-1, or a group scaling whose group size disagrees with acc.promote_every.
expected<std::vector<std::uint32_t>> gemm(const scaled_matrix& a, const scaled_matrix& b,
                                          std::span<const std::uint32_t> c, const gemm_options& options);

// One output of gemm() computed by its reference loop, with what a bound needs to know of it.
struct gemm_element {
  std::uint32_t code = 0;
  std::uint8_t flags = 0;        // IEEE flags of the accumulator chain and the final rounding
  std::uint8_t scale_flags = 0;  // of rounding the group scales' products s_a s_b into fp32
};
// gemm() with every output computed by the reference loop (never the fast kernels, which keep
// no flags); the codes equal gemm()'s.
expected<std::vector<gemm_element>> gemm_elements(const scaled_matrix& a, const scaled_matrix& b,
                                                  std::span<const std::uint32_t> c, const gemm_options& options);

// gemm_elements with each output's flags reduced to model_breaking_flags (measured_error.hpp),
// equal to gemm_elements(...)[ij] with flags & model_breaking_flags, at about gemm()'s speed: the
// codes are gemm()'s, scale_flags are computed as the reference loop computes them, and the
// reference loop runs only for the outputs whose operands do not rule those flags out (bounds on
// their magnitudes and on their last bits, gemm.cpp: cannot_break_model).
expected<std::vector<gemm_element>> gemm_elements_for_bound(const scaled_matrix& a, const scaled_matrix& b,
                                                            std::span<const std::uint32_t> c,
                                                            const gemm_options& options);

// A dot product is a 1 x K by K x 1 GEMM.
expected<std::uint32_t> dot(const scaled_matrix& a, const scaled_matrix& b, const gemm_options& options);

}  // namespace fpemu::analysis
