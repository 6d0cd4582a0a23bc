// Shared pieces of the workload commands (see workload.hpp).
#include "workload.hpp"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>

#include "fpemu/convert.hpp"
#include "fpemu/spec.hpp"


namespace fpemu::cli {

// ---- Numeric options ----------------------------------------------------------------------------

double parse_real(const std::string& text, std::string_view option) {
  const char* begin = text.c_str();
  char* end = nullptr;
  const double v = text.empty() || std::isspace(static_cast<unsigned char>(text.front())) ? 0.0
                                                                                          : std::strtod(begin, &end);
  if (text.empty() || end != begin + text.size() || std::isspace(static_cast<unsigned char>(text.front())))
    fail(std::string(option) + " " + quote(text) + " is not a number: expected a finite decimal such as 0.5 or 1e-3");
  if (!std::isfinite(v)) fail(std::string(option) + " " + quote(text) + " is not finite: expected a finite number");
  return v;
}

std::int64_t parse_integer(const std::string& text, std::string_view option, std::int64_t lo, std::int64_t hi) {
  const std::string range = "valid " + std::to_string(lo) + ".." + std::to_string(hi);
  std::int64_t v = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, v);
  if (text.empty() || ptr != end || (ec != std::errc{} && ec != std::errc::result_out_of_range))
    fail(std::string(option) + " " + quote(text) + " is not an integer: " + range);
  if (ec == std::errc::result_out_of_range || v < lo || v > hi)
    fail(std::string(option) + " " + quote(text) + " is out of range: " + range);
  return v;
}

// ---- Workload -----------------------------------------------------------------------------------

void add_workload_options(CLI::App& app, workload_options& o) {
  app.add_option("--dist", o.dist, "Data: normal N(mu, sigma), uniform U(-1,1)*scale, positive U(0,1)*scale")
      ->transform(choice_check({"normal", "uniform", "positive"}))
      ->capture_default_str()
      ->type_name("DIST")
      ->group("Workload");
  // mu, sigma and scale stay text, empty when not given: each applies to some --dist only.
  app.add_option("--mu", o.mu, "Mean of --dist normal")
      ->transform(real_check(-kInf, kInf))
      ->default_str("0")
      ->type_name("X")
      ->group("Workload");
  app.add_option("--sigma", o.sigma, "Standard deviation of --dist normal")
      ->transform(real_check(0, kInf, true))
      ->default_str("1")
      ->type_name("X")
      ->group("Workload");
  app.add_option("--scale", o.scale, "Scale of --dist uniform and positive")
      ->transform(real_check(0, kInf, true))
      ->default_str("1")
      ->type_name("X")
      ->group("Workload");
  add_seed_option(app, o.seed,
                  "Seed S: data from std::mt19937_64(S), stochastic rounding from the Philox stream keyed by S "
                  "(sample s uses S+s)")
      ->group("Workload");
  add_samples_option(app, o.samples,
                     "Repeat with consecutive seeds S, S+1, ...; report mean and max relative error")
      ->group("Workload");
  add_output_options(app, o.output);
}

void refuse_random_options(const CLI::App& app, const std::string& data_option, const std::vector<std::string>& more) {
  std::vector<std::string> options = more;
  for (const char* name : {"--samples", "--dist", "--mu", "--sigma", "--scale"}) options.emplace_back(name);
  for (const std::string& name : options)
    if (app.count(name) != 0)
      fail(name + " shapes random data, but " + data_option + " gives the data: leave " + name + " out");
}

std::string workload::describe() const {
  switch (dist) {
    case distribution::normal: return "normal(mu = " + num(mu) + ", sigma = " + num(sigma) + ")";
    case distribution::uniform: return "uniform U(-1,1) * " + num(scale);
    case distribution::positive: return "positive U(0,1) * " + num(scale);
  }
  return "?";
}

std::string workload::seeds() const {
  if (samples == 1) return "seed " + std::to_string(seed);
  return "seeds " + std::to_string(seed) + ".." + std::to_string(sample_seed(samples - 1));
}

workload resolve_workload(const workload_options& o) {
  workload w;
  if (o.dist == "normal") {
    w.dist = distribution::normal;
  } else if (o.dist == "uniform") {
    w.dist = distribution::uniform;
  } else if (o.dist == "positive") {
    w.dist = distribution::positive;
  } else {
    fail("--dist " + quote(o.dist) + " is not valid: expected normal, uniform or positive");
  }
  if (w.dist != distribution::normal && (!o.mu.empty() || !o.sigma.empty()))
    fail(std::string(!o.mu.empty() ? "--mu" : "--sigma") + " applies to --dist normal, not --dist " + o.dist +
         " (use --scale)");
  if (w.dist == distribution::normal && !o.scale.empty())
    fail("--scale applies to --dist uniform and positive, not --dist normal (use --mu and --sigma)");
  if (!o.mu.empty()) w.mu = parse_real(o.mu, "--mu");
  if (!o.sigma.empty()) {
    w.sigma = parse_real(o.sigma, "--sigma");
    if (!(w.sigma > 0)) fail("--sigma " + quote(o.sigma) + " is out of range: valid > 0 and finite");
  }
  if (!o.scale.empty()) {
    w.scale = parse_real(o.scale, "--scale");
    if (!(w.scale > 0)) fail("--scale " + quote(o.scale) + " is out of range: valid > 0 and finite");
  }
  w.seed = o.seed;
  w.samples = o.samples;
  return w;
}

double sampler::operator()() {
  switch (w_.dist) {
    case distribution::normal: return normal_(rng_);
    case distribution::uniform: return uniform_(rng_) * w_.scale;
    case distribution::positive: return positive_(rng_) * w_.scale;
  }
  return 0.0;
}

// ---- Accumulator --------------------------------------------------------------------------------

void add_accumulator_options(CLI::App& app, accumulator_options& o, const std::string& default_name) {
  app.add_option("--acc", o.acc,
                 "Accumulator format (every addition rounded into it), 'exact' (rounded once, at "
                 "the end) or a tensor-core preset as --preset")
      ->default_str(default_name)
      ->type_name("FMT|exact|PRESET")
      ->group("Accumulator");
  app.add_option("--acc-rounding", o.acc_round, "Rounding of --acc")
      ->transform(choice_check({"rne", "rna", "rz", "ru", "rd", "rto", "sr", "sr-exact"}))
      ->default_str("rne")
      ->type_name("MODE")
      ->group("Accumulator");
  app.add_option("--sr-bits", o.sr_bits, "Random bits of stochastic rounding (--acc-rounding sr)")
      ->transform(integer_check(1, 32))
      ->default_str("16")
      ->type_name("K")
      ->group("Accumulator");
  app.add_option("--preset", o.preset,
                 "Tensor-core accumulator model instead of --acc (fpemu mma --list); its input formats "
                 "become the defaults")
      ->type_name("NAME")
      ->group("Accumulator");
  app.add_option("--promote", o.promote,
                 "Promote the partial sum into an fp32 register (RNE) every N products")
      ->transform(integer_check(1, max_promote))
      ->type_name("N")
      ->group("Accumulator");
}

accumulator_choice resolve_accumulator(const accumulator_options& o, const std::string& default_name) {
  if (!o.acc.empty() && !o.preset.empty())
    fail("--acc " + quote(o.acc) + " and --preset " + quote(o.preset) +
         " both choose the accumulator: give one of them");
  const std::string& name = !o.preset.empty() ? o.preset : !o.acc.empty() ? o.acc : default_name;
  // The option that named it (a default counts as the option the default stands for).
  const std::string option = !o.acc.empty() ? "--acc" : !o.preset.empty() ? "--preset"
                             : find_preset(default_name) ? "--preset" : "--acc";
  // --sr-bits is checked whenever it is given, as in round and op.
  rounding r;
  if (!o.sr_bits.empty()) r.sr_bits = static_cast<int>(parse_integer(o.sr_bits, "--sr-bits", 1, 32));
  accumulator_choice c = value_or_fail(parse_accumulator(name), option);
  if (c.preset) {
    if (!o.acc_round.empty())
      fail("--acc-rounding " + quote(o.acc_round) + " applies to --acc FORMAT, not to " + option + " " + quote(name) +
           " (the preset fixes its rounding)");
    if (!o.sr_bits.empty())
      fail("--sr-bits " + quote(o.sr_bits) + " applies to --acc FORMAT with --acc-rounding sr, not to " + option + " " +
           quote(name));
  } else {
    if (!o.acc_round.empty()) r.mode = value_or_fail(parse_round_mode(o.acc_round), "--acc-rounding");
    c = value_or_fail(with_rounding(c, r), "--acc-rounding");
  }
  if (!o.promote.empty())
    c = value_or_fail(with_promotion(c, static_cast<int>(parse_integer(o.promote, "--promote", 1, max_promote))),
                      "--promote");
  return c;
}

analysis::scaling require_scaling(const std::string& name, const accumulator_choice& c) {
  if (name.empty()) return c.preset && c.preset->scale ? analysis::own_scaling(*c.preset) : analysis::scaling::none;
  return value_or_fail(analysis::parse_scaling(name), "--scaling");
}

accumulator_model model_for_scaling(const accumulator_choice& c, analysis::scaling s, bool promote_given) {
  const std::string name = c.preset                                      ? c.preset->name
                           : c.model.kind == accumulator_kind::exact ? std::string("exact")
                                                                      : to_string(c.model.acc);
  analysis::scaling_request r;
  r.how = s;
  r.preset = c.preset ? &*c.preset : nullptr;
  r.acc = name;
  r.acc_option = c.preset ? "preset" : "acc";
  r.promote_given = promote_given;
  r.syntax = analysis::option_syntax::command_line;
  return value_or_fail(analysis::model_for_scaling(c.model, r));
}

std::vector<float> draw_floats(sampler& draw, std::size_t n) {
  std::vector<float> v(n);
  for (float& x : v) x = static_cast<float>(draw());
  return v;
}

// ---- Output helpers ----------------------------------------------------------------------


}  // namespace fpemu::cli
