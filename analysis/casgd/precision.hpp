// The nine precision slots of one CA-SGD outer iteration (Devarakonda et al. 2026, Section 3.3,
// Table 1) and the recipes A-I of its Table 3.
//
// A `precision` is either binary64 arithmetic (the reference; nothing is emulated) or an fpemu
// format with a rounding. Values of every slot are held as doubles: every value of a format of
// at most 32 bits is a binary64 value, so a double carries an emulated value exactly, and each
// rounding is one call to the core (from() on the exact result), never a rounding through a
// wider float.
//
// A `kernel_precision` describes a GEMM/GEMV slot (u_G, u_r, u_g): both operands are rounded into
// the input precision, products are accumulated under an accumulator model of the accumulation
// module (or in binary64), and the result is rounded into the output precision. Table 3's kernel
// symbols are:   f  fp32 in, fp32 accumulation        b  bf16 in, fp32 accumulation
//                h  fp16 in, fp32 accumulation        ha fp16 in, fp16 accumulation, fp16 out
//                t  tf32 in, fp32 accumulation (the TF32 tensor-core mode)
// and for the other six slots f, t, h, b are the formats fp32, tf32, fp16, bf16.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "fpemu/accumulator.hpp"
#include "fpemu/expected.hpp"
#include "fpemu/format.hpp"
#include "fpemu/rounding.hpp"

namespace fpemu::casgd {

struct precision {
  std::optional<format> fmt;  // nothing: binary64
  rounding r{};

  bool is_binary64() const { return !fmt.has_value(); }
  // binary32 with nearest-even and IEEE overflow: the host's float arithmetic rounds this way.
  bool is_host_fp32() const;
  double unit_roundoff() const;  // 2^-53 for binary64
  std::string name() const;      // "fp64", "bf16", ...
  friend bool operator==(const precision&, const precision&) = default;
};

inline const precision binary64{};
precision of(const format& f);
// "fp64" (or "binary64"), or a format spec (spec.hpp) with nearest-even rounding.
expected<precision> parse_precision(std::string_view spec);

// x rounded once into p (x itself for binary64). `random` feeds stochastic rounding.
double round_to(const precision& p, double x, std::uint64_t random = 0);
// round_p(a*b + c) with the product exact and one rounding (std::fma for binary64).
double fma_in(const precision& p, double a, double b, double c, std::uint64_t random = 0);
inline double add_in(const precision& p, double a, double b) { return fma_in(p, a, 1.0, b); }
// acc[i] = add_in(p, acc[i], v[i]) for every i, with the dispatch on p done once (the hot loop
// of simulated AllReduces). Both operands must already be values of p.
void add_into(const precision& p, std::span<double> acc, std::span<const double> v);

struct kernel_precision {
  precision input;                           // both operands are rounded into this first
  std::optional<accumulator_model> acc;      // nothing: binary64 accumulation
  precision output;                          // the stored result
  std::string label;                         // "b", "ha", or the spec it was parsed from
};

// The Higham factor of a length-q reduction in this kernel (Theorem 5.7, Equation 8):
//   single-format kernel (inputs no coarser than the accumulator)  gamma_q(u_acc)
//   low-precision inputs, finer accumulator                        2 u_in + gamma_q(u_acc)
// where u_acc is doubled for accumulators that truncate (tensor-core block FMA, toward zero),
// whose per-addition error is below 2u rather than u. Infinity when q u_acc >= 1.
double higham_factor(const kernel_precision& k, long q);
double gamma(long q, double u);  // q u / (1 - q u), infinity when q u >= 1

enum class slot : int { A, G, r, c, sigma, g, AR_r, AR_G, x };
inline constexpr int slot_count = 9;
std::string_view to_string(slot s);  // "u_A", "u_G", ..., "u_AR_r", "u_AR_G", "u_x"
expected<slot> parse_slot(std::string_view name);  // with or without the "u_" prefix

struct slots {
  precision A, c, sigma, AR_r, AR_G, x;
  kernel_precision G, r, g;

  std::string describe() const;  // one line: "u_A=bf16 u_G=b ..."
};

// Table 3's recipes. Letters A..I (case-insensitive); anything else is an error naming the set.
expected<slots> recipe(char letter);
expected<slots> parse_recipe(std::string_view name);
inline constexpr std::string_view recipe_letters = "ABCDEFGHI";
// "binary64 everywhere": the exact reference of the error analysis.
slots all_binary64();

// Overrides one slot from text. Storage/elementwise slots take a format spec or "fp64".
// Kernel slots take a Table 3 symbol (f b h ha t), "fp64", a single format ("fp16": inputs and
// accumulation in fp16), "IN,ACC[,OUT]" with ACC a format, "fp64" or a tensor-core preset name
// (for example "bf16,fp32" or "e4m3fn,h100-e4m3"). OUT defaults to the accumulator's format.
expected<slots> with_slot(slots s, std::string_view assignment);  // "NAME=SPEC"

}  // namespace fpemu::casgd
