// Computed dot products and GEMMs next to their exact values and the a-priori bounds that apply:
// what `fpemu dot` and `fpemu gemm` report and the tensor-core fuzzer checks, composed once here.
//
// The problem: a and b (K floats each) quantised into a_format and b_format with a scaling
// (quantise()), their dot product computed by dot() under an accumulator model, rounded into
// `out`. Two references, both exact (exact_accumulator):
//  - exact: sum_i (a^_i s_a,i)(b^_i s_b,i) of the quantised codes with their scales applied;
//    the error against it is the accumulation error;
//  - original: sum_i a_i b_i of the float data before quantisation; the error against it adds
//    the quantisation error.
//
// The accumulation bound, c * sum_i |a^_i s_a,i b^_i s_b,i| (bounds.hpp):
//  - format accumulator, no promotion: gamma_K(u_acc) (Higham eq. (3.5): K roundings, the first
//    being the product's rounding into the accumulator), u_acc = effective_unit_roundoff;
//  - a block-FMA model: block_model_bound (truncating_block_dot(K, b, F, u_acc) for NVIDIA's);
//  - exact accumulator: no accumulation error;
//  - promotion every Nc products (the model's promote_every; a group scaling folds each group of
//    128 or 32 into the fp32 register scaled by s_a s_b): (1 + c_chunk)(1 + gamma_q(u_fp32)) - 1,
//    c_chunk the bound above for Nc products, q = ceil(K/Nc) roundings of the register, plus one
//    when the product of two fp32 group scales is rounded to fp32 (q + 1);
//  - (1 + c)(1 + u_out) - 1 when a final rounding may be inexact: per-tensor scales applied in
//    the epilogue, the exact accumulator rounded into its format, an output narrower than the sum.
// A bound is not valid, with the reason, when the data break its model: overflow, underflow or
// an invalid operation in the accumulator (from a replica of the computation with
// dot_accumulator), a block whose largest exponent belongs only to products below it (subnormal
// inputs), a group scale outside fp32's range.
//
// The bound against the original data (bounds::dot_lowprec_inputs generalised): with u_in the
// quantisation's unit roundoff (max over A and B; plus 2^-53 for the double rounding of x/scale
// with fp32 scales), |computed - sum a_i b_i| <= (2u_in + u_in^2 + c (1+u_in)^2) sum|a_i b_i|
// + (1 + c) T, where T = sum_i (1+u_in)(|a_i| eta_b,i + |b_i| eta_a,i) + eta_a,i eta_b,i covers
// inputs quantised below the normal range (eta = half the subnormal spacing times the scale,
// 0 for the others). With T = 0 and c = gamma_K(u_acc) this is exactly dot_lowprec_inputs.
// Inputs that saturate (|x|/scale above the largest finite value; OCP MX scales allow it) raise
// u_in to their largest relative error (|x|/scale - max) / (|x|/scale).
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "analysis/reference/bounds.hpp"
#include "analysis/reference/gemm.hpp"
#include "fpemu/accumulator.hpp"
#include "fpemu/block_fma.hpp"
#include "fpemu/format.hpp"
#include "fpemu/random.hpp"
#include "fpemu/rounding.hpp"

namespace fpemu::analysis {

struct dot_problem {
  format a_format = formats::fp32, b_format = formats::fp32;
  std::uint64_t k = 0;
  scaling scale_kind = scaling::none;
  accumulator_model model{};  // what dot() runs (a group scaling promotes every group)
  format out = formats::fp32;
  rounding out_rounding{};
  bool scaled_epilogue = false;  // a GEMM's alpha != 1 or beta != 0: its epilogue rounds once more
};

// The coefficient c of the accumulation bound above; `scale_rounded`: some group's product of
// fp32 scales was rounded into fp32 (one more rounding of the promoted register).
bounds::coefficient accumulation_bound(const dot_problem& p, bool scale_rounded);

// The accumulation bound of a block-FMA model over len products of fa x fb, chunk by chunk as
// above: truncating_block_dot for NVIDIA's datapath (per-product block scales included),
// staged_block_dot with the w derived in dot_analysis.cpp for the two-stage sums (AMD CDNA3) and
// the exactly summed groups (NVFP4, MXFP4), one rounding per block for the exact sum (CDNA1),
// gamma_{q + ceil(log2 b) + 1}(u) for the pairwise chains (CDNA2).
bounds::coefficient block_model_bound(const block_fma_model& m, std::uint64_t len, const format& fa, const format& fb);

// The premise of truncating_block_dot that data can break, for one block: C (in fc) and the
// products a_i b_i, i < n. Its reference exponent E (the largest lead e_a + e_b, or the model's
// clamp min_reference_exp) must belong to a term of magnitude >= 2^E: products are not
// normalised, so a product of subnormal inputs, or a subnormal C, can lie below its lead; and a
// model without subnormal inputs reads them as zero. Returns why it fails, or "".
std::string block_premise(const block_fma_model& m, const format& fa, const std::uint32_t* a, const format& fb,
                          const std::uint32_t* b, int n, const format& fc, std::uint32_t c);

struct dot_report {
  double value = 0;                    // the computed dot product
  double exact = 0, error = 0, relative = 0;
  double abs_sum = 0;                  // sum |a^_i s_a,i b^_i s_b,i|
  bounds::bound_line bound;            // accumulation bound
  double exact_original = 0, error_original = 0, relative_original = 0;
  double abs_sum_original = 0;         // sum |a_i b_i|
  bounds::bound_line bound_original;   // bound against the original data
  std::uint8_t flags = 0;              // raised by the accumulator and the final rounding
};

// The report for `computed`, the code dot() returned for a and b (quantised from xa and xb)
// with stochastic bits from `sr`.
dot_report analyse_dot(const dot_problem& p, std::span<const float> xa, std::span<const float> xb,
                       const scaled_matrix& a, const scaled_matrix& b, std::uint32_t computed, const sr_stream& sr);

// A GEMM D = alpha A B + beta C against the exact one (every output an exact dot product of the
// quantised values, scales applied). The bound is componentwise, |d_ij - x_ij| <= c S_ij with
// S_ij = |alpha| sum_k |a_ik s b_kj s| + |beta c_ij| and c = accumulation_bound (the final
// rounding of the epilogue included), so normwise ||D - X||_F <= c ||S||_F (Higham, section 3.5).
struct gemm_report {
  std::vector<double> relative;        // per output, row-major: |d_ij - x_ij| / |x_ij|
  double normwise = 0;                 // ||D - X||_F / ||X||_F
  double error_norm = 0;               // ||D - X||_F
  double exact_norm = 0;               // ||X||_F
  bounds::bound_line normwise_bound;   // coefficient c; absolute c ||S||_F, a bound on ||D - X||_F
  double normwise_bound_relative = 0;  // c ||S||_F / ||X||_F (+inf when not valid or X = 0)
};

// `d` is what gemm(a, b, c, o) returned. `rows_done(i, M)`, when given, is called from the
// calling thread as its rows complete (the other threads' rows run alongside). With
// o.fast_kernels the flags come from gemm_elements_for_bound and the premise is checked only in
// the blocks that hold a subnormal input (where no other block can break it); without, from
// gemm_elements and in every block: the same report, bit for bit (tests/test_gemm_report.cpp).
gemm_report analyse_gemm(const scaled_matrix& a, const scaled_matrix& b, std::span<const std::uint32_t> c,
                         const gemm_options& o, std::span<const std::uint32_t> d,
                         const std::function<void(int, int)>& rows_done = {});

// The same D against the exact alpha A B + beta C of A and B as given to quantise (M x K and
// K x N binary32, row-major): what quantisation and accumulation cost together, where
// analyse_gemm measures the accumulation alone. Errors and norms as analyse_gemm has them; no
// bound (normwise_bound invalid).
gemm_report compare_with_original(std::span<const float> a, std::span<const float> b, int M, int N, int K,
                                  std::span<const std::uint32_t> c, const gemm_options& o,
                                  std::span<const std::uint32_t> d, const std::function<void(int, int)>& rows_done = {});

// The largest of a report's relative errors, -1 for none, as `fpemu gemm` reduces them: with
// keep_nan (against the quantised inputs) an output that is not finite makes it NaN; without
// (against the data before quantisation) NaN is passed over.
double largest_relative(std::span<const double> relative, bool keep_nan);

}  // namespace fpemu::analysis
