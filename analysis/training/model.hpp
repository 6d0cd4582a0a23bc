// The models of the low-precision training runs: a one-hidden-layer MLP classifier, binary
// logistic regression and linear least squares, with every matmul of the forward and backward
// passes emulated by analysis::gemm.
//
// Numerics (the "compute precision"; what the parameters are stored in is the policy's business):
//  - matmul inputs (weights, activations, back-propagated errors) are rounded into
//    compute_precision::matmul_inputs with round_float (nearest-even, IEEE overflow to inf or,
//    in formats without one, NaN), or with a block scaling quantise()'d (gemm.hpp: the scaling's
//    layout, each element x / scale rounded to nearest-even, saturating), the operand before
//    the weight in A's layout and the weight in B's (gemm_recipe.hpp);
//  - every matmul accumulates its products in fp32 with nearest-even, each output a sequential
//    chain over k = 0..K-1 starting at +0: s = round(s + a*b), results fp32. That is
//    analysis::gemm with a format accumulator of fp32 (no promotion, fp32 out, alpha 1, beta 0);
//    model.cpp calls gemm's fp32 FMA kernel (analysis::fast_accumulate) directly and skips gemm's
//    per-output epilogue, which is the identity here (see matmul() there), and calls gemm itself
//    whenever the kernel declines. With compute_precision::acc (a tensor-core preset, promotion)
//    every matmul is analysis::gemm under that model, fp32 out, nearest-even;
//  - element-wise work (bias add, ReLU, softmax, loss derivatives, bias gradients) is done in
//    float, in the order written below; the loss *value* is computed in double from those floats.
//
// Notation: R rows (the batch), X (R x I) the inputs, q(.) rounding into the compute format,
// "mm(A, B)" the fp32-accumulated product of two rounded operands, sums over r in float from +0
// in order r = 0..R-1. Every division by R is a float division by float(R).
//
//  mlp (I -> H ReLU -> C, softmax cross-entropy; labels are class indices held in floats):
//    Z1 = mm(q(X), q(W1)^T) + b1          (float add, per element)             GEMM "fprop1"
//    H  = relu(Z1),  relu(z) = z > 0 ? z : 0 (a NaN passes through)
//    Z2 = mm(q(H), q(W2)^T) + b2                                               GEMM "fprop2"
//    per row: m = max_c z_c (first maximum, scanning c = 0..C-1), e_c = expf(z_c - m),
//             s = sum_c e_c (float, c in order), p_c = e_c / s,
//             G2_c = (p_c - [c == y]) / R
//             loss_r = (m + log(sum_c exp(z_c - m)) - z_y) computed in double from the float z
//    db2 = sum_r G2,  dW2 = mm(q(G2)^T, q(H))                                  GEMM "wgrad2"
//    dH  = mm(q(G2), q(W2)),  G1 = Z1 > 0 ? dH : 0,  db1 = sum_r G1,          GEMM "dgrad2"
//    dW1 = mm(q(G1)^T, q(X))                                                   GEMM "wgrad1"
//    (no gradient with respect to X is formed).
//  logreg (labels -1/+1): z = mm(q(X), q(w)) + b, t = -y z (float),            GEMM "fprop1"
//    sigma = t >= 0 ? 1 / (1 + expf(-t)) : expf(t) / (1 + expf(t))   (= 1 / (1 + exp(-t)), stably)
//    G = (-y * sigma) / R,  db = sum_r G,  dw = mm(q(G)^T, q(X));              GEMM "wgrad1"
//    loss_r = log(1 + exp(t)) in double, stably: t > 0 ? t + log1p(exp(-t)) : log1p(exp(t)).
//  linreg: z = mm(q(X), q(w)) + b, G = (z - y) / R, db = sum_r G, dw = mm(q(G)^T, q(X));
//    loss_r = 0.5 (z - y)^2 in double.
// The returned loss is (sum_r loss_r) / R in double, r in order.
// A block scaling needs finite operands (its scales come from their largest magnitudes): a matmul
// with a non-finite operand under one returns NaN throughout.
//
// Caller contract (assertions, not returned errors: the training front end validates its data and
// sizes first): params and grads have param_sizes() entries of the listed sizes, x has
// rows * inputs values, y has rows labels, rows >= 1. Labels: check_labels() says whether a label
// vector suits the model (mlp: integers 0..classes-1; logreg: -1 or +1; linreg: finite). An
// invalid label is an assertion failure where assertions are on; without them it never reads out
// of bounds: the loss comes back NaN, and an mlp row with an invalid label has no target term.
//
// Performance: the fast fp32 FMA kernel applies whenever every matmul input is finite; a
// non-finite weight or activation (say an fp16 overflow) sends that matmul down gemm's exact
// reference loop, which is correct but orders of magnitude slower; stop on a non-finite loss.
// Results are bit-identical for any thread count.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/reference/gemm.hpp"
#include "fpemu/accumulator.hpp"
#include "fpemu/expected.hpp"
#include "fpemu/format.hpp"

namespace fpemu::training {

enum class model_kind : std::uint8_t { mlp, logreg, linreg };
expected<model_kind> parse_model_kind(std::string_view name);  // mlp logreg linreg
std::string_view to_string(model_kind k);

struct model_shape {
  model_kind kind = model_kind::mlp;
  int inputs = 784;
  int hidden = 256;  // mlp only
  int classes = 10;  // mlp only
};

struct compute_precision {
  // The format matmul inputs are rounded into: any signed format with a zero whose values are all
  // binary32 values (bf16, fp16, tf32, fp32, the fp8 formats, ...).
  format matmul_inputs = formats::fp32;
  int threads = 0;  // GEMM threads; 0: std::thread::hardware_concurrency()
  analysis::scaling scaling = analysis::scaling::none;  // of every matmul's operands
  // The accumulator every matmul runs (gemm_recipe's); nullopt: fp32 nearest-even, no promotion.
  std::optional<accumulator_model> acc;
};

// The error of a model's GEMMs, measured on the first `rows` rows of each output (the exact
// products cost K exact multiply-adds an output): loss_and_gradient appends one record per GEMM.
struct gemm_error {
  std::string layer;  // fprop1 fprop2 dgrad2 wgrad2 wgrad1 (model.hpp's top)
  int M = 0, N = 0, K = 0;
  int rows = 0;       // the rows of D measured
  // ||D - A B||_F / ||A B||_F over those rows against the operands before rounding (what rounding
  // and accumulation cost together; analysis::compare_with_original) and against the exact
  // product of the rounded, scaled operands (the accumulation alone; analysis::analyse_gemm).
  // NaN where an operand or D is not finite.
  double normwise_original = 0, normwise_quantised = 0;
};
struct gemm_probe {
  int rows = 8;
  std::vector<gemm_error> errors;
};

class model {
 public:
  // Errors name the offending value: a non-positive size (inputs; hidden, classes for the mlp,
  // which also needs classes >= 2), a parameter tensor too large to index with int, or a compute
  // format that is not a signed format with a zero whose values all lie in binary32.
  static expected<model> create(const model_shape& shape, const compute_precision& precision);

  const model_shape& shape() const { return shape_; }
  const compute_precision& precision() const { return precision_; }

  // mlp: W1 (hidden x inputs, row-major), b1 (hidden), W2 (classes x hidden), b2 (classes);
  // logreg / linreg: w (inputs), b (1).
  std::vector<std::size_t> param_sizes() const;
  std::vector<std::string> param_names() const;  // "W1" "b1" "W2" "b2" / "w" "b"

  // Deterministic initial values: mlp W1 Kaiming/He uniform U(-sqrt(6/inputs), +sqrt(6/inputs))
  // (ReLU gain), W2 Glorot uniform U(-sqrt(6/(hidden+classes)), +...), biases zero; logreg and
  // linreg all zeros (convex problems; the seed does not matter). Element i of parameter p is
  // (2u - 1) * bound rounded to float, u = (random_bits(seed, p, i) >> 11) * 2^-53.
  std::vector<std::vector<float>> init(std::uint64_t seed) const;

  // Empty when every label suits the model, else a message naming the first bad one.
  std::optional<std::string> check_labels(std::span<const float> y) const;

  // Mean loss over the rows of x (rows x inputs, row-major) with labels y; the gradient of that
  // mean with respect to every parameter is written into grads (fp32 values). See the top.
  // With a probe, every GEMM's error is measured and appended to probe->errors.
  double loss_and_gradient(std::span<const std::span<const float>> params, std::span<const float> x,
                           std::span<const float> y, int rows, std::span<const std::span<float>> grads,
                           gemm_probe* probe = nullptr) const;

  // The model's outputs for the rows of x, computed as in the forward pass above: the logits Z2
  // (rows x classes, before the softmax) for the mlp, z (rows) for logreg and linreg.
  std::vector<float> outputs(std::span<const std::span<const float>> params, std::span<const float> x, int rows) const;

  struct evaluation {
    double loss = 0;      // mean loss, as loss_and_gradient computes it
    double accuracy = 0;  // fraction of rows classified right: mlp argmax (first maximum) == label;
                          // logreg and linreg (z > 0) == (y > 0)
  };
  // The same forward pass (same compute format, bit for bit per row), in blocks of rows so that a
  // whole test set fits in little memory. rows >= 1.
  evaluation evaluate(std::span<const std::span<const float>> params, std::span<const float> x,
                      std::span<const float> y, int rows) const;

 private:
  model(const model_shape& s, const compute_precision& p) : shape_(s), precision_(p) {}
  int threads() const;  // precision_.threads, 0 resolved to the hardware's
  model_shape shape_;
  compute_precision precision_;
};

}  // namespace fpemu::training
