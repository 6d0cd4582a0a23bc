// Vector kernels of the training room, compiled for every Highway target and dispatched at run
// time to the best one the CPU has: the element-wise binary32 math of the fused optimizer step,
// and the loads and nearest-even stores of bf16 tensors.
//
// Their only rounding decision into a storage format (stored_tensor makes the others) is bf16's
// nearest-even code of a binary32 value, written once with the argument that it is the core's
// (Bf16Nearest in kernels.cpp). The step is the scalar reference's update_math::fused arithmetic
// (optimizer.cpp: increments() and step_tensor_with<false>) lane by lane: every operation is one
// IEEE binary32 add, sub, mul, div or sqrt, rounded to nearest-even by the hardware exactly as the
// scalar instruction rounds it, in the same order, and never contracted into an FMA (each is its
// own Highway call, and the file is compiled with -ffp-contract=off). tests/test_optimizer.cpp
// compares the fast step with the reference bit for bit on every target.
#pragma once

#include <cstddef>
#include <cstdint>

#include "analysis/training/optimizer.hpp"
#include "analysis/training/optimizer_coefficients.hpp"

namespace fpemu::training::kernels {

// The step runs whole vectors: its arrays hold n elements and have room for n rounded up to a
// multiple of `pad` (the widest vector Highway has, 2048 bits). Lanes past n compute on whatever
// the arrays hold there and must not be stored.
inline constexpr std::size_t pad = 64;

struct step_arrays {
  const float* theta = nullptr;  // the weights the update acts on
  const float* grad = nullptr;
  float* state0 = nullptr;       // states in and out (sgd's momentum / Adam's m / Lion's m);
  float* state1 = nullptr;       // null when the optimizer keeps none
  const float* comp = nullptr;   // kahan: k; kahan_zamirai: c
  float* inc = nullptr;          // out, kahan: u = k + increment; kahan_zamirai: y = increment - c
  float* out = nullptr;          // out: the new weights before they are rounded into storage
};

// One fused step (decoupled decay, when c.has_decay, folded into the update as in_update does).
// `rule` picks the form of `out` (and `inc`); stochastic's `out` is nearest's without the decay
// factor, theta + (inc - lr*wd*theta), as the reference writes it.
void fused_step(optimizer_kind k, const coefficients& c, update_rule rule, std::size_t n, const step_arrays& a);

// The compensation from the stored weights: kahan k = u + (theta - stored), kahan_zamirai
// c = (stored - theta) - y (`inc` holds u or y). Same padding as fused_step.
void compensation(update_rule rule, std::size_t n, const float* inc, const float* theta, const float* stored,
                  float* comp);

// The Kahan step's two stores in one pass, for bf16 weights and compensation (rule kahan or
// kahan_zamirai; `inc`, `theta` and `out` as fused_step leaves them): theta_codes[i] = out[i]
// rounded to nearest-even, then the compensation from that stored value as compensation() forms
// it, rounded into comp_codes[i], for i in [0, n). Returns false at the first vector where an out
// or compensation value is a NaN, having stored part of the codes: the caller then stores them
// through stored_tensor, which rounds NaNs as the core does.
bool kahan_store_bf16(update_rule rule, std::size_t n, const float* out, const float* inc, const float* theta,
                      std::uint16_t* theta_codes, std::uint16_t* comp_codes);

// codes[i] = in[i] rounded to nearest-even in bf16 (as kahan_store_bf16 rounds), for i in
// [0, n), `in` padded as fused_step's arrays. Returns false at the first vector holding a NaN,
// having stored part of the codes, as kahan_store_bf16 does.
bool bf16_nearest(std::size_t n, const float* in, std::uint16_t* codes);

// out[i] = the value of the bf16 code codes[i]: its bits moved up 16 places (exact, and to_float's
// value for every code, NaNs with their payloads). Any n.
void bf16_values(const std::uint16_t* codes, std::size_t n, float* out);

// For tests: the name of the target the kernels dispatch to now.
const char* target_name();

}  // namespace fpemu::training::kernels
