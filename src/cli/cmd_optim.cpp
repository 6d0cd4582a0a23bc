// fpemu optim --optimizer NAME [--policy P] [hyper-parameters] [--steps N] [--rows R --cols C]
// [--seed S] [--csv FILE] [--json FILE]: one optimizer (analysis/training/optimizer.hpp) under one precision policy
// on a fixed, seeded least-squares problem, and its trajectory. fpemu optim --memory: the
// bytes-per-parameter table (training::bytes_per_parameter) instead.
//
// The problem: minimise L(w) = 0.5/R ||A w - b||^2 over w in R^C, A of R x C. The entries of A,
// b and the initial point w0 are uniform in [-1, 1]: entry i (row-major for A) of stream s is
// u = (random_bits(seed, s, i) >> 11) * 2^-53 * 2 - 1, exact in double, rounded to the nearest
// binary32; A is stream 1, b stream 2, w0 stream 3 (Philox, fpemu/random.hpp), so the problem is
// the same on every platform. Stream 0 under the same seed is the optimizer's: the stochastic
// rounding of the weights (tensor 0) takes element (step - 1) * C + i of stream 0's array
// keystream (keystream_bits), bits that share nothing with the data.
//
// Each step takes the gradient at the model's weights (optimizer::weights(0): the stored weights,
// or under mixed precision the low-precision model copy), computed in double from those binary32
// values in a fixed order:
//     r_i = (sum_{j ascending} A_ij w_j) - b_i,   g_j = (sum_{i ascending} A_ij r_i) / R,
// rounded to binary32, stored into the policy's gradient format with nearest-even (the only
// rounding of the gradient besides the cast) and passed to optimizer::step(). The loss after k
// steps is (0.5 * sum_i r_i^2) / R in double at the model's weights (k = 0: the initial weights
// as stored, i.e. w0 rounded into the policy's weight format).
//
// Output: a short table (steps 0..10, then every steps/10, and the last), or --csv (every
// step), or --json (the problem, the hyper-parameters, the whole trajectory). Numbers that
// others compare are printed exactly: every binary32 and double value as the shortest decimal
// that reads back as the same double (std::to_chars of the value as a double), so any
// double-reading parser gets the exact value. Non-finite values are written null in JSON and
// inf / -inf / nan in CSV.
//
// The hyper-parameters are checked with training::check(); an option that the chosen optimizer
// does not use (--momentum with adam, --eps with sgd, ...) is an error, not silently ignored.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "analysis/training/optimizer.hpp"
#include "analysis/training/stored_tensor.hpp"
#include "common.hpp"
#include "fpemu/random.hpp"
#include "fpemu/spec.hpp"
#include "workload.hpp"

namespace fpemu::cli {
namespace {

using training::optimizer_kind;

constexpr std::int64_t kMaxSteps = 10'000'000;
constexpr std::int64_t kMaxOptimDim = 10'000;
constexpr std::size_t kShownWeights = 4;  // weights in the default table

// The policies of the memory table: the columns of Warner's optimi table (2023) and their Kahan
// and SR variants.
constexpr std::array<const char*, 8> kMemoryPolicies{"fp32", "mixed", "mixed-fp16", "bf16",
                                                     "bf16-kahan", "bf16-sr", "fp16", "fp16-kahan"};

struct optim_options {
  std::string optimizer;  // required unless --memory
  std::string policy;     // empty: fp32 (--memory: all of kMemoryPolicies)
  std::string lr, momentum, dampening, weight_decay, beta1, beta2, eps;  // empty: not given
  bool nesterov = false;
  std::string steps, rows, cols, seed;  // empty: not given
  bool memory = false;
  output_options output;
};

// ---- Output helpers ---------------------------------------------------------------------------


template <class T>
void json_array(std::ostream& out, const std::vector<T>& v) {
  out << '[';
  for (std::size_t i = 0; i < v.size(); ++i) out << (i ? "," : "") << json_number(static_cast<double>(v[i]));
  out << ']';
}

// ---- The problem ------------------------------------------------------------------------------

struct problem {
  std::size_t rows = 32, cols = 16;
  std::vector<float> a, b, w0;  // a row-major

  // Residual r = A w - b and loss 0.5 * sum r_i^2 / R, in double.
  double residual(const std::vector<float>& w, std::vector<double>& r) const {
    double sq = 0;
    for (std::size_t i = 0; i < rows; ++i) {
      const float* row = &a[i * cols];
      double s = 0;
      for (std::size_t j = 0; j < cols; ++j) s += static_cast<double>(row[j]) * static_cast<double>(w[j]);
      r[i] = s - static_cast<double>(b[i]);
      sq += r[i] * r[i];
    }
    return 0.5 * sq / static_cast<double>(rows);
  }

  // g = A^T r / R, rounded to binary32.
  void gradient(const std::vector<double>& r, std::vector<float>& g) const {
    for (std::size_t j = 0; j < cols; ++j) {
      double s = 0;
      for (std::size_t i = 0; i < rows; ++i) s += static_cast<double>(a[i * cols + j]) * r[i];
      g[j] = static_cast<float>(s / static_cast<double>(rows));
    }
  }
};

std::vector<float> uniform_floats(std::uint64_t seed, std::uint32_t stream, std::size_t n) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) {
    const double u = static_cast<double>(random_bits(seed, stream, i) >> 11) * 0x1p-53;  // [0, 1), exact
    v[i] = static_cast<float>(u * 2 - 1);                                                // exact, then rounded
  }
  return v;
}

problem make_problem(std::size_t rows, std::size_t cols, std::uint64_t seed) {
  problem p;
  p.rows = rows;
  p.cols = cols;
  p.a = uniform_floats(seed, 1, rows * cols);
  p.b = uniform_floats(seed, 2, rows);
  p.w0 = uniform_floats(seed, 3, cols);
  return p;
}

// ---- Options ----------------------------------------------------------------------------------

// The hyper-parameters that each optimizer takes (the others are errors when given).
bool uses(optimizer_kind k, std::string_view option) {
  if (option == "--lr" || option == "--weight-decay") return true;
  if (option == "--momentum" || option == "--dampening" || option == "--nesterov") return k == optimizer_kind::sgd;
  if (option == "--beta1" || option == "--beta2") return k != optimizer_kind::sgd;
  if (option == "--eps") return k == optimizer_kind::adam || k == optimizer_kind::adamw;
  return false;
}

training::hyperparameters resolve_hyper(optimizer_kind k, const optim_options& o) {
  training::hyperparameters h;
  if (k == optimizer_kind::lion) h.beta2 = 0.99;
  const auto real = [&](const std::string& text, std::string_view option, double& into) {
    if (text.empty()) return;
    if (!uses(k, option))
      fail(std::string(option) + " " + quote(text) + " does not apply to --optimizer " +
           std::string(training::to_string(k)));
    into = parse_real(text, option);
  };
  real(o.lr, "--lr", h.lr);
  real(o.momentum, "--momentum", h.momentum);
  real(o.dampening, "--dampening", h.dampening);
  real(o.weight_decay, "--weight-decay", h.weight_decay);
  real(o.beta1, "--beta1", h.beta1);
  real(o.beta2, "--beta2", h.beta2);
  real(o.eps, "--eps", h.eps);
  if (o.nesterov) {
    if (!uses(k, "--nesterov"))
      fail("--nesterov does not apply to --optimizer " + std::string(training::to_string(k)));
    h.nesterov = true;
  }
  if (auto bad = training::check(k, h)) {
    if (h.nesterov && bad->find("nesterov") != std::string::npos)
      *bad += " (given --momentum " + num(h.momentum, 9) + ", --dampening " + num(h.dampening, 9) + ")";
    fail("optim --optimizer " + std::string(training::to_string(k)) + ": " + *bad);
  }
  return h;
}

training::precision_policy require_policy(const std::string& name) {
  return value_or_fail(training::parse_policy(name), "--policy");
}

// One line per policy: where its tensors live and how the update is stored.
std::string describe_policy(const training::precision_policy& p) {
  std::string s = p.master ? "model weights " + to_string(p.weights) + " (copy of fp32 master weights)"
                           : "weights " + to_string(p.weights);
  s += ", states " + to_string(p.states) + ", gradients " + to_string(p.grads) + ", update ";
  switch (p.rule) {
    case training::update_rule::nearest: s += "nearest"; break;
    case training::update_rule::kahan: s += "Kahan-compensated"; break;
    case training::update_rule::kahan_zamirai: s += "Kahan-compensated (Zamirai)"; break;
    case training::update_rule::stochastic: s += "stochastic rounding (" + std::to_string(p.sr_bits) + " bits)"; break;
  }
  s += p.math == training::update_math::per_op ? ", math per operation" : ", math fused";
  return s;
}

// (name, value) of the hyper-parameters the optimizer uses, in a fixed order.
std::vector<std::pair<std::string, std::string>> hyper_fields(optimizer_kind k, const training::hyperparameters& h,
                                                              bool json) {
  const auto n = [json](double x) { return json ? json_number(x) : num(x, 9); };
  std::vector<std::pair<std::string, std::string>> f{{"lr", n(h.lr)}};
  if (k == optimizer_kind::sgd) {
    f.emplace_back("momentum", n(h.momentum));
    f.emplace_back("dampening", n(h.dampening));
    f.emplace_back("nesterov", h.nesterov ? "true" : "false");
  } else {
    f.emplace_back("beta1", n(h.beta1));
    f.emplace_back("beta2", n(h.beta2));
    if (k != optimizer_kind::lion) f.emplace_back("eps", n(h.eps));
  }
  f.emplace_back("weight_decay", n(h.weight_decay));
  return f;
}

// ---- The run ----------------------------------------------------------------------------------

void run_trajectory(const optim_options& o) {
  if (o.optimizer.empty()) fail("optim: --optimizer is required: sgd, adam, adamw or lion (or give --memory)");
  const optimizer_kind k = value_or_fail(training::parse_optimizer(o.optimizer), "--optimizer");
  const training::precision_policy policy = require_policy(o.policy.empty() ? "fp32" : o.policy);
  const training::hyperparameters h = resolve_hyper(k, o);
  const auto steps = o.steps.empty() ? 100 : parse_integer(o.steps, "--steps", 1, kMaxSteps);
  const auto rows = static_cast<std::size_t>(o.rows.empty() ? 32 : parse_integer(o.rows, "--rows", 1, kMaxOptimDim));
  const auto cols = static_cast<std::size_t>(o.cols.empty() ? 16 : parse_integer(o.cols, "--cols", 1, kMaxOptimDim));
  const std::uint64_t seed = o.seed.empty() ? 0 : parse_unsigned(o.seed, "--seed", ~std::uint64_t{0});

  const problem prob = make_problem(rows, cols, seed);
  const std::vector<std::vector<float>> initial{prob.w0};
  output_sinks sinks(o.output);
  std::ostream* const csv = sinks.csv();
  std::ostream* const json = sinks.json();
  const bool text = sinks.text();
  training::optimizer opt = value_or_fail(training::optimizer::create(k, h, policy, initial, seed), "optim");

  std::vector<double> r(rows);
  std::vector<float> w = opt.weights(0).values(), g(cols);
  std::vector<double> losses;
  if (json) losses.reserve(static_cast<std::size_t>(steps) + 1);
  double loss = prob.residual(w, r);

  const auto print_csv_row = [&](std::int64_t step) {
    *csv << step << ',' << exact_num(loss);
    for (const float x : w) *csv << ',' << exact_num(static_cast<double>(x));
    *csv << '\n';
  };
  const std::size_t shown = std::min(cols, kShownWeights);
  const std::int64_t stride = steps > 10 ? steps / 10 : 1;
  const auto print_table_row = [&](std::int64_t step) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%9lld  %-16s", static_cast<long long>(step), num(loss, 9).c_str());
    std::string line = buf;
    for (std::size_t j = 0; j < shown; ++j) {
      std::snprintf(buf, sizeof buf, "  %-14s", num(static_cast<double>(w[j]), 8).c_str());
      line += buf;
    }
    line.erase(line.find_last_not_of(' ') + 1);
    std::cout << line << '\n';
  };

  if (csv) {
    *csv << "step,loss";
    for (std::size_t j = 0; j < cols; ++j) *csv << ",w" << j;
    *csv << '\n';
    print_csv_row(0);
  }
  if (json) {  // everything but the trajectory and the losses; the weights are streamed
    losses.push_back(loss);
    *json << "{\"optimizer\": " << json_string(training::to_string(k)) << ", \"policy\": " << json_string(policy.name)
              << ", \"policy_description\": " << json_string(describe_policy(policy)) << ",\n \"hyper\": {";
    bool first = true;
    for (const auto& [name, value] : hyper_fields(k, h, true)) {
      *json << (first ? "" : ", ") << json_string(name) << ": " << value;
      first = false;
    }
    *json << "},\n \"rows\": " << rows << ", \"cols\": " << cols << ", \"seed\": " << seed << ", \"steps\": " << steps
              << ",\n \"A\": ";
    json_array(*json, prob.a);
    *json << ",\n \"b\": ";
    json_array(*json, prob.b);
    *json << ",\n \"w0\": ";
    json_array(*json, prob.w0);
    *json << ",\n \"trajectory\": [";
  }
  if (text) {
    std::cout << "fpemu optim: " << training::to_string(k) << ", policy " << policy.name << " ("
              << describe_policy(policy) << ")\n";
    std::cout << "hyper-parameters:";
    for (const auto& [name, value] : hyper_fields(k, h, false)) std::cout << ' ' << name << ' ' << value;
    std::cout << "\nproblem: least squares 0.5/R ||A w - b||^2, R = " << rows << " rows, C = " << cols
              << " cols, seed " << seed << "; " << steps << " steps\n";
    std::string header = "     step  loss            ";
    for (std::size_t j = 0; j < shown; ++j) {
      char buf[32];
      std::snprintf(buf, sizeof buf, "  %-14s", ("w" + std::to_string(j)).c_str());
      header += buf;
    }
    if (shown < cols) header += "  ...";
    header.erase(header.find_last_not_of(' ') + 1);
    std::cout << header << '\n';
    print_table_row(0);
  }

  training::stored_tensor grad(policy.grads, cols);
  const double initial_loss = loss;
  progress bar("optim", static_cast<std::uint64_t>(steps));
  for (std::int64_t step = 1; step <= steps; ++step) {
    prob.gradient(r, g);
    grad.store(0, g);  // nearest-even into the policy's gradient format
    opt.step({&grad, 1});
    w = opt.weights(0).values();
    loss = prob.residual(w, r);
    bar.set(static_cast<std::uint64_t>(step));
    if (csv) print_csv_row(step);
    if (json) {
      losses.push_back(loss);
      *json << (step > 1 ? ",\n  " : "\n  ");
      json_array(*json, w);
    }
    if (text && (step <= 10 || step % stride == 0 || step == steps)) {
      bar.finish();  // the row replaces the progress line
      print_table_row(step);
    }
  }
  bar.finish();

  if (json) {
    *json << "],\n \"loss\": ";
    json_array(*json, losses);
    *json << "}\n";
  }
  sinks.commit();
  if (text) {
    std::cout << "loss " << num(initial_loss, 9) << " -> " << num(loss, 9) << " after " << steps << " steps\n";
  }
}

// ---- The memory table -------------------------------------------------------------------------

struct memory_row {
  std::string label;  // optimizer name; "sgd+momentum" for SGD with a momentum buffer
  optimizer_kind kind;
  training::hyperparameters h;
};

std::string components_text(const training::memory_account& m) {
  std::string s;
  for (const auto& c : m.components) {
    if (!s.empty()) s += " + ";
    const std::string item = c.name + " " + std::to_string(c.bytes);
    s += c.optional ? "[" + item + "]" : item;
  }
  return s;
}

void run_memory(const optim_options& o) {
  using given = std::pair<const std::string*, const char*>;
  for (const auto& [text, option] : std::array<given, 4>{{{&o.steps, "--steps"}, {&o.rows, "--rows"},
                                                          {&o.cols, "--cols"}, {&o.seed, "--seed"}}})
    if (!text->empty()) fail(std::string(option) + " " + quote(*text) + " does not apply to --memory (no run is made)");

  std::vector<memory_row> rows;
  if (!o.optimizer.empty()) {
    const optimizer_kind k = value_or_fail(training::parse_optimizer(o.optimizer), "--optimizer");
    const training::hyperparameters h = resolve_hyper(k, o);
    rows.push_back({k == optimizer_kind::sgd && h.momentum != 0 ? "sgd+momentum" : std::string(training::to_string(k)),
                    k, h});
  } else {
    for (const auto* text : {&o.lr, &o.momentum, &o.dampening, &o.weight_decay, &o.beta1, &o.beta2, &o.eps})
      if (!text->empty()) fail("optim --memory: hyper-parameters need --optimizer (the table covers every optimizer)");
    if (o.nesterov) fail("optim --memory: --nesterov needs --optimizer sgd");
    training::hyperparameters momentum;
    momentum.momentum = 0.9;
    rows.push_back({"sgd", optimizer_kind::sgd, {}});
    rows.push_back({"sgd+momentum", optimizer_kind::sgd, momentum});
    for (const optimizer_kind k : {optimizer_kind::adam, optimizer_kind::adamw, optimizer_kind::lion})
      rows.push_back({std::string(training::to_string(k)), k, {}});
  }
  std::vector<training::precision_policy> policies;
  if (!o.policy.empty()) {
    policies.push_back(require_policy(o.policy));
  } else {
    for (const char* name : kMemoryPolicies) policies.push_back(require_policy(name));
  }

  output_sinks sinks(o.output);
  if (std::ostream* json = sinks.json()) {
    *json << "[";
    bool first = true;
    for (const memory_row& r : rows) {
      for (const auto& p : policies) {
        const training::memory_account m = training::bytes_per_parameter(r.kind, r.h, p);
        *json << (first ? "\n" : ",\n") << "  {\"optimizer\": " << json_string(training::to_string(r.kind));
        if (r.kind == optimizer_kind::sgd) *json << ", \"momentum\": " << (r.h.momentum != 0 ? "true" : "false");
        *json << ", \"policy\": " << json_string(p.name) << ", \"min\": " << m.min << ", \"max\": " << m.max
              << ", \"components\": [";
        for (std::size_t i = 0; i < m.components.size(); ++i) {
          const auto& c = m.components[i];
          *json << (i ? ", " : "") << "{\"name\": " << json_string(c.name) << ", \"bytes\": " << c.bytes
                << ", \"optional\": " << (c.optional ? "true" : "false") << '}';
        }
        *json << "]}";
        first = false;
      }
    }
    *json << "\n]\n";
  }
  {
    table_writer table(sinks, {"optimizer", "policy", "min", "max", "components"}, false);
    for (const memory_row& r : rows)
      for (const auto& p : policies) {
        const training::memory_account m = training::bytes_per_parameter(r.kind, r.h, p);
        table.row({r.label, p.name, m.min, m.max, components_text(m)});
      }
  }
  sinks.commit();
  if (!sinks.text()) return;
  std::cout << "Bytes per parameter (min: required buffers; max: with the optional ones, in brackets)\n";
  char buf[96];
  std::snprintf(buf, sizeof buf, "%-13s %-11s %3s %3s  %s\n", "optimizer", "policy", "min", "max", "components");
  std::cout << buf;
  for (const memory_row& r : rows)
    for (const auto& p : policies) {
      const training::memory_account m = training::bytes_per_parameter(r.kind, r.h, p);
      std::snprintf(buf, sizeof buf, "%-13s %-11s %3d %3d  ", r.label.c_str(), p.name.c_str(), m.min, m.max);
      std::cout << buf << components_text(m) << '\n';
    }
}

void run_optim(const optim_options& o) {
  if (o.memory) {
    run_memory(o);
  } else {
    run_trajectory(o);
  }
}

}  // namespace

command add_optim(CLI::App& parent) {
  auto o = std::make_shared<optim_options>();
  CLI::App* app = parent.add_subcommand(
      "optim", "An optimizer under a precision policy on a fixed least-squares problem; the memory table");
  app->add_option("--optimizer", o->optimizer, "Optimizer (required unless --memory)")
      ->transform(choice_check({"sgd", "adam", "adamw", "lion"}))
      ->type_name("NAME");
  app->add_option("--policy", o->policy,
                  "Precision policy: fp32, mixed, mixed-fp16, or FMT[-kahan|-zamirai|-sr[K]][-ops] "
                  "with FMT such as bf16 or fp16")
      ->check(parser_check(problem_of(training::parse_policy), ""))
      ->default_str("fp32 (--memory: the table's eight)")
      ->type_name("P");
  // The hyper-parameters stay text, empty when not given: an option the optimizer does not use
  // is an error, and defaults depend on the optimizer. The checks run while parsing.
  const auto hyper = [&](const char* name, std::string& target, const char* help, const CLI::Validator& check,
                         const char* def) {
    app->add_option(name, target, help)->transform(check)->default_str(def)->type_name("X")->group("Hyper-parameters");
  };
  hyper("--lr", o->lr, "Learning rate", real_check(0, kInf, true), "0.001");
  hyper("--momentum", o->momentum, "sgd: momentum", real_check(0, kInf), "0");
  hyper("--dampening", o->dampening, "sgd: dampening", real_check(0, 1), "0");
  app->add_flag("--nesterov", o->nesterov, "sgd: Nesterov momentum (needs --momentum > 0 and dampening 0)")
      ->group("Hyper-parameters");
  hyper("--weight-decay", o->weight_decay, "sgd, adam: L2 added to the gradient; adamw, lion: decoupled",
        real_check(0, kInf), "0");
  hyper("--beta1", o->beta1, "adam, adamw, lion: beta1", real_check(0, 1, false, true), "0.9");
  hyper("--beta2", o->beta2, "adam, adamw, lion: beta2", real_check(0, 1, false, true), "0.999, lion 0.99");
  hyper("--eps", o->eps, "adam, adamw: epsilon", real_check(0, kInf, true), "1e-8");
  app->add_option("--steps", o->steps, "Steps")
      ->transform(integer_check(1, kMaxSteps))
      ->default_str("100")
      ->type_name("N")
      ->group("Problem");
  app->add_option("--rows", o->rows, "Rows R of A")
      ->transform(integer_check(1, kMaxOptimDim))
      ->default_str("32")
      ->type_name("R")
      ->group("Problem");
  app->add_option("--cols", o->cols, "Columns C of A (parameters)")
      ->transform(integer_check(1, kMaxOptimDim))
      ->default_str("16")
      ->type_name("C")
      ->group("Problem");
  app->add_option("--seed", o->seed, "Seed of A, b and w0 and of stochastic rounding")
      ->transform(unsigned_check(~std::uint64_t{0}))
      ->default_str("0")
      ->type_name("S")
      ->group("Problem");
  add_output_options(*app, o->output);
  app->add_flag("--memory", o->memory,
                "Print the bytes-per-parameter table of every optimizer under fp32, mixed, mixed-fp16, bf16, "
                "bf16-kahan, bf16-sr, fp16, fp16-kahan instead (--optimizer, --policy: only those)")
      ->group("Output");
  app->footer(
      "Usage: fpemu optim --optimizer sgd|adam|adamw|lion [--policy P] [--lr X] [--momentum X]\n"
      "       [--dampening X] [--nesterov] [--weight-decay X] [--beta1 X] [--beta2 X] [--eps X]\n"
      "       [--steps N] [--rows R] [--cols C] [--seed S] [--csv FILE] [--json FILE]\n"
      "       fpemu optim --memory [--optimizer NAME [hyper-parameters]] [--policy P] [--csv FILE] [--json FILE]\n"
      "Minimises 0.5/R ||A w - b||^2 (A: R x C) with one optimizer of analysis/training/optimizer.hpp, whose\n"
      "binary32 updates follow torch.optim's single-tensor implementations, under a precision policy:\n"
      "fp32; mixed (bf16 model copy of fp32 master weights and states), mixed-fp16; or FMT with\n"
      "weights, states and gradients in FMT and the update stored with nearest rounding, -kahan\n"
      "(compensated), -zamirai (Zamirai et al.'s compensation), -srK (stochastic rounding, K random\n"
      "bits); -ops rounds every tensor operation into FMT as plain low-precision tensor code does.\n"
      "Data: A, b, w0 uniform in [-1, 1] from the Philox streams 1, 2, 3 keyed by --seed\n"
      "((bits >> 11) * 2^-53 * 2 - 1 rounded to binary32); stochastic rounding uses stream 0.\n"
      "Gradient at the model's weights: A^T (A w - b) / R in double, rounded to binary32, then\n"
      "into the policy's gradient format.\n"
      "Prints a table of step, loss and the first weights (steps 0..10, then every steps/10);\n"
      "--csv FILE: 'step,loss,w0,w1,...' and one line per step (step 0: the initial weights as stored);\n"
      "--json FILE: {optimizer, policy, policy_description, hyper, rows, cols, seed, steps, A (row-major),\n"
      "b, w0, trajectory (the model's weights after steps 1..N), loss (steps 0..N)}.\n"
      "Every number is exact: the shortest decimal that reads back as the same double; non-finite\n"
      "values are null in JSON. Options an optimizer does not use are errors.\n"
      "--memory: bytes per parameter as Warner's optimi table (2023) counts them (min: required\n"
      "buffers; max: with the optional low-precision model copy and a distributed gradient buffer, in\n"
      "brackets).");
  return {app, [o](const std::vector<std::string>& rest) {
            no_trailing("optim", rest);
            run_optim(*o);
          }};
}

}  // namespace fpemu::cli
