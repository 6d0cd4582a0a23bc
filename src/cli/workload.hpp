// Pieces shared by the workload commands sum, dot and gemm (cmd_sum.cpp, cmd_dot.cpp,
// cmd_gemm.cpp): random data and its options, the accumulator choice and numeric option parsing.
//
// Random data. Sample s (0-based) of a run with --seed S draws its values from
// std::mt19937_64 seeded with S + s (mod 2^64); stochastic rounding in that sample takes its
// bits from the Philox stream keyed by the same seed S + s (stream 0). The engine is fully
// specified by the C++ standard; the distributions (std::normal_distribution, ...) are the
// standard library's, so the exact values may differ between standard libraries, never between
// runs of one build.
#pragma once

#include <chrono>
#include <cstdint>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/reference/gemm.hpp"
#include "common.hpp"
#include "fpemu/accumulator.hpp"
#include "fpemu/presets.hpp"

namespace fpemu::cli {

// The bound of a quantity that has none (an invalid bound, a ratio to zero).
inline constexpr double kInf = std::numeric_limits<double>::infinity();

// ---- Numeric options ----------------------------------------------------------------------------

// A finite decimal (or C99 hex float); fails naming the option.
double parse_real(const std::string& text, std::string_view option);
// A decimal integer in lo..hi; fails naming the option and the range.
std::int64_t parse_integer(const std::string& text, std::string_view option, std::int64_t lo, std::int64_t hi);


// ---- Workload options: --dist --mu --sigma --scale --seed --samples --csv --json -----------------

struct workload_options {
  std::string dist = "normal";
  std::string mu, sigma, scale;  // empty: not given (defaults 0, 1, 1); checked while parsing
  std::uint64_t seed = 0;
  std::uint64_t samples = 1;
  output_options output;
};
void add_workload_options(CLI::App& app, workload_options& o);

// With the user's data (`data_option`, e.g. --input), the options that shape random data are
// refused, naming the first one given: --samples, --dist, --mu, --sigma, --scale and `more`
// (the sizes, e.g. --n). --seed stays: it also keys stochastic rounding.
void refuse_random_options(const CLI::App& app, const std::string& data_option, const std::vector<std::string>& more);

enum class distribution : std::uint8_t { normal, uniform, positive };

struct workload {
  distribution dist = distribution::normal;
  double mu = 0, sigma = 1, scale = 1;
  std::uint64_t seed = 0;
  std::uint64_t samples = 1;

  std::uint64_t sample_seed(std::uint64_t s) const { return seed + s; }  // wraps mod 2^64
  std::string describe() const;                                          // "normal(mu = 0, sigma = 1)"
  std::string seeds() const;                                             // "seed 0" or "seeds 0..99"
};
workload resolve_workload(const workload_options& o);

// The values of one sample.
class sampler {
 public:
  sampler(const workload& w, std::uint64_t seed)
      : w_(w), rng_(seed), normal_(w.mu, w.sigma), uniform_(-1.0, 1.0), positive_(0.0, 1.0) {}
  double operator()();

 private:
  workload w_;
  std::mt19937_64 rng_;
  std::normal_distribution<double> normal_;
  std::uniform_real_distribution<double> uniform_;
  std::uniform_real_distribution<double> positive_;
};

// ---- Accumulator options: --acc --acc-rounding --sr-bits --preset --promote ---------------------

struct accumulator_options {
  std::string acc;        // FORMAT or "exact"; empty: not given
  std::string acc_round;  // empty: rne
  std::string sr_bits;    // empty: 16
  std::string preset;     // empty: not given
  std::string promote;    // empty: no promotion
};
// `default_name`: the accumulator without --acc and --preset (a format or a preset), shown in --help.
void add_accumulator_options(CLI::App& app, accumulator_options& o, const std::string& default_name);

// The accumulator the options name (parse_accumulator's grammar: --acc FORMAT|exact|PRESET, or
// --preset PRESET). Without --acc and --preset the default name applies. --acc with --preset,
// and --acc-rounding or --sr-bits with a preset, are errors naming both options.
accumulator_choice resolve_accumulator(const accumulator_options& o, const std::string& default_name);

// --scaling NAME (analysis::parse_scaling); empty: none, or a block-scaled preset's own (mx32 for
// E8M0 per 32, nvfp4 for UE4M3 per 16).
analysis::scaling require_scaling(const std::string& name, const accumulator_choice& c);

// The model that analysis::gemm runs for a scaling (analysis::model_for_scaling, whose error names
// --scaling and --promote and ends the command).
accumulator_model model_for_scaling(const accumulator_choice& c, analysis::scaling s, bool promote_given);

// n values of a sample as floats (the "original" data of dot and gemm).
std::vector<float> draw_floats(sampler& draw, std::size_t n);

// ---- Output helpers -----------------------------------------------------------------------------


}  // namespace fpemu::cli
