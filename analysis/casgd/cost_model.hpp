// The alpha-beta-gamma cost model of CA-SGD: Table 2 and the crossover s* of Devarakonda et al.,
// "Mixed-Precision Communication-Avoiding SGD for Generalized Linear Models on GPUs" (2026,
// Section 4.2). Per rank, T = gamma F + beta W + alpha L (flops, words, messages). Under 1D
// block-column partitioning one AllReduce of W words costs (their Equation 2)
//     L_AR(W) = 2 alpha log2 P + beta W 2(P-1)/P,
// so each of Table 2's messages costs 2 alpha log2 P. Table 2 compares s mini-batch SGD steps
// with one outer CA-SGD iteration:
//                 SGD (s steps)     CA-SGD (one outer iteration)
//     flops F     4 s b n_loc       2 (sb)^2 n_loc + b^2 s(s-1) + 4 s b n_loc
//     words W     s b               s b + (sb)^2
//     messages L  s                 1
// T_SGD - T_CA = alpha (s-1) 2 log2 P - gamma_G 2 (sb)^2 n_loc - gamma b^2 s(s-1)
//                - beta_G (sb)^2 2(P-1)/P,
// the paper's crossover equation, in which mixed precision enters twice: the Gram GEMM runs at
// gamma_G = gamma / (its throughput over fp32) and a Gram word costs beta_G = beta x (bytes of
// the u_AR_G datatype). The margin words (u_AR_r, the same datatype on both sides) and the
// 4 s b n_loc GEMV flops appear on both sides and cancel; the inner correction's b^2 s(s-1)
// flops are charged at the fp32 gamma, as the paper keeps that kernel in fp32 (GEMVs, not on
// tensor cores, are charged at gamma in every recipe).
//
// T_SGD - T_CA = f(s) = la (s - 1) - A s^2 - B s (s - 1) with la = 2 alpha log2 P,
// A = b^2 (2 n_loc gamma_G + beta_G 2(P-1)/P), B = gamma b^2: a concave quadratic, -A at s = 1.
// CA-SGD is cheaper where f > 0, between the two real solutions of the paper's crossover
// equation f = 0. For s >= 2, f(s) / (s - 1) = la - B s - A s^2 / (s - 1) is decreasing
// (s^2 / (s - 1) grows from s = 2 on), so the integers s >= 2 where CA-SGD is cheaper are
// {2, ..., s_max} or none: s* (the smallest) is 2 or does not exist, and what the constants and
// the precisions move is the upper end s_max and the lower real root (in (1, 2] when s* = 2).
#pragma once

#include <cstdint>
#include <optional>

#include "analysis/casgd/precision.hpp"

namespace fpemu::casgd {

// The machine constants. The defaults are A100-on-Perlmutter values taken from the paper:
//   alpha  7e-6 s per message: its Table 7 gives fp32 SGD's time per iteration (b = 32, s = 1)
//          as 0.027 ms (SUSY, P = 4), 0.028 ms (HIGGS, P = 4), 0.055 ms (epsilon, P = 16) and
//          0.085 ms (synth, P = 64); flops and words of those steps take under 0.1 us, so each
//          time is one AllReduce's 2 alpha log2 P: alpha = 6.8, 7.0, 6.9, 7.1 us (launch
//          overheads included, which alpha absorbs).
//   beta   4e-11 s per byte: one 200 Gb/s Slingshot-11 NIC per A100 (Section 6: four NICs per
//          four-GPU node), 25 GB/s, the link a multi-node ring is limited by.
//   gamma  1/19.5e12 s per flop: the A100's fp32 peak, 19.5 TFLOP/s; the bf16 tensor-core peak,
//          312 TFLOP/s (Section 2.3), is the paper's "up to 16x" (Section 4.2).
struct machine_costs {
  double alpha = 7e-6;
  double beta = 4e-11;
  double gamma = 1 / 19.5e12;
};

// The word sizes and Gram throughput a recipe implies.
struct cost_precisions {
  double margin_bytes = 4;  // a word of the margin AllReduce (u_AR_r)
  double gram_bytes = 4;    // a word of the Gram AllReduce (u_AR_G)
  double gram_speedup = 1;  // Gram GEMM throughput over fp32 (gamma_G = gamma / gram_speedup)
};
// Bytes of a word in the precision: 8 for binary64, else the format's width rounded up to a
// power-of-two number of bytes (tf32 travels in 4 bytes, e4m3fn in 1).
double word_bytes(const precision& p);
// The Gram GEMM's throughput over fp32 from the A100's dense peaks (NVIDIA A100 datasheet):
// binary64 inputs or accumulation 9.7 TFLOP/s (0.5); inputs wider than 19 bits (fp32) 19.5 (1);
// 17..19 bits (tf32) 156 (8); 16 bits or fewer 312 (16). The A100 has no fp8 path: narrower
// inputs are charged as 16-bit ones.
double gram_speedup(const kernel_precision& k);
cost_precisions cost_precisions_of(const slots& s);

struct side_cost {
  double flops_gemv = 0, flops_gram = 0, flops_correction = 0;  // the three parts of F
  double words_margin = 0, words_gram = 0;                      // the two parts of W
  double messages = 0;                                          // L
  double time_gamma = 0, time_beta = 0, time_alpha = 0, total = 0;  // seconds
};
struct table_2_costs {
  side_cost sgd, ca;  // s SGD steps; one outer CA-SGD iteration
};
// Table 2 for b, s, P, n_loc (all >= 1; asserted).
table_2_costs table_2(std::int64_t b, std::int64_t s, std::int64_t P, std::int64_t n_loc, const machine_costs& m,
                      const cost_precisions& p);

struct crossover {
  std::optional<std::int64_t> s_star;  // the smallest s >= 2 with T_CA < T_SGD; nothing if none
  double s_max = 0;  // the largest such s (infinity when A + B = 0); 0 if none
  // The real solutions of T_SGD = T_CA (NaN when there are none; root_hi is infinity when A + B = 0).
  double root_lo = 0, root_hi = 0;
};
crossover crossover_of(std::int64_t b, std::int64_t P, std::int64_t n_loc, const machine_costs& m,
                       const cost_precisions& p);

}  // namespace fpemu::casgd
