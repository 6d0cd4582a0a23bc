// fpemu train --data fashion-mnist|heart_scale|quadratic [--model mlp|logreg|linreg]
//             [--optimizer sgd|adam|adamw|lion] [--policy P[,P...]] [--epochs E] [--lr X] ...
//
// Trains a model under one or more precision policies (analysis/training/train.hpp) and prints one
// progress line per epoch (training loss, test loss and accuracy, seconds), then a summary per
// policy over the seeds (--seeds N runs seeds S..S+N-1). --csv FILE / --json FILE write the loss
// curves: one row per optimizer step and one per epoch, written to FILE.tmp and renamed when
// complete.
//
// Data: fashion-mnist (Debian's dataset-fashion-mnist: 60000 training, 10000 test images),
// heart_scale (Debian's liblinear-tools: 270 rows, split 80/20 by the seed), or a LIBSVM file
// path (split likewise). --data quadratic prints the table of Theorem 1 of Zamirai et al. 2020 instead: the
// predicted nearest-rounding floor next to the measured distance to the optimum for nearest,
// Kahan, stochastic rounding and fp32, per step size.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "analysis/reference/measured_error.hpp"
#include "analysis/training/datasets.hpp"
#include "analysis/training/gemm_recipe.hpp"
#include "analysis/training/train.hpp"
#include "common.hpp"
#include "fpemu/spec.hpp"
#include "workload.hpp"

namespace fpemu::cli {
namespace {

using namespace fpemu::training;

struct train_cli_options {
  std::string data = "fashion-mnist";
  std::string model = "logreg";  // fashion-mnist: mlp unless given
  std::string optimizer = "sgd";
  std::string policy = "fp32";
  int epochs = 50;  // fashion-mnist: 3 unless given
  std::string lr;   // empty: per optimizer (quadratic: a list)
  double momentum = 0, dampening = 0, weight_decay = 0, beta1 = 0.9, beta2 = 0.999, eps = 1e-8;
  bool nesterov = false;
  int batch = 32;  // fashion-mnist: 128 unless given
  int grad_accum = 1, hidden = 256, threads = 0, seeds = 1;
  double clip = 0, test_fraction = 0.2;
  std::uint64_t seed = 1;
  std::string format = "bf16";  // quadratic: the low-precision format
  std::string gemm = "weights";
  int gemm_error_every = 0, gemm_error_rows = 8;
  output_options output;
  // Which of the options whose default depends on another were given.
  bool model_given = false, epochs_given = false, batch_given = false, beta2_given = false;
};

hyperparameters resolve_hyper(const train_cli_options& o, optimizer_kind k) {
  hyperparameters h;
  const double default_lr = k == optimizer_kind::sgd ? 0.05 : (k == optimizer_kind::lion ? 1e-4 : 1e-3);
  if (!o.lr.empty() && split_list(o.lr, "--lr").size() != 1)
    fail("--lr " + quote(o.lr) + ": training takes one learning rate (a list is for --data quadratic)");
  h.lr = o.lr.empty() ? default_lr : std::stod(o.lr);  // checked by real_check
  h.momentum = o.momentum;
  h.dampening = o.dampening;
  h.nesterov = o.nesterov;
  h.weight_decay = o.weight_decay;
  h.beta1 = o.beta1;
  h.beta2 = o.beta2_given || k != optimizer_kind::lion ? o.beta2 : 0.99;
  h.eps = o.eps;
  if (auto bad = check(k, h)) fail(*bad);
  return h;
}

void run_quadratic(const train_cli_options& o) {
  const format f = value_or_fail(parse_format(o.format), "--format");
  if (auto ok = storage_format(f); !ok) fail("--format: " + ok.message());
  std::vector<double> lrs{0.5, 0.2, 0.1, 0.05, 0.02, 0.01};
  if (!o.lr.empty()) {
    lrs.clear();
    for (const auto& item : split_list(o.lr, "--lr")) {
      const double lr = std::stod(item);  // checked by real_check
      if (!(lr > 0 && lr < 1)) fail("--lr " + item + ": a step size for the quadratic must lie in (0, 1)");
      lrs.push_back(lr);
    }
  }
  const auto seed = o.seed;
  if (!o.output.csv.empty() || !o.output.json.empty()) fail("--csv and --json write training curves, not --data quadratic's table");
  std::cout << "Theorem 1 (Zamirai et al. 2020): gradient descent on f(w) = 1/2 sum lambda_j (w_j - w*_j)^2, 64 weights,\n"
               "lambda_j in [0.5, 1], w*_j in [1, 2] on the "
            << to_string(f) << " grid, w0 = 0; distance ||w - w*|| after 80/lr steps.\n"
            << "predicted: the theorem's floor for nearest rounding, min(u (1 - lr L)/(lr L + u) min|w*|, ||w0 - w*||)"
               ", u = "
            << num(unit_roundoff(f)) << "\n\n";
  print("%8s %8s %12s %12s %12s %12s %12s\n", "lr", "steps", "predicted", "nearest", "kahan", "sr16", "fp32");
  for (const auto& r : theorem1_floor(f, lrs, 64, seed))
    print("%8g %8ld %12.4e %12.4e %12.4e %12.4e %12.4e\n", r.lr, r.steps, r.predicted, r.nearest, r.kahan,
                r.stochastic, r.fp32);
  std::cout.flush();
}

struct loaded_data {
  dataset train, test;
  std::string name;
  int classes = 2;  // mlp: the largest label + 1, at least 2
};

// An mlp's output layer has one unit per class up to the largest label, so a label is bounded
// before it sizes the model (a stray 3e9 would ask for gigabytes).
constexpr int kMaxClasses = 1 << 16;

// Where row r of d comes from, for messages: its line in a text file, else its index.
std::string row_of(const dataset& d, std::size_t r) {
  return r < d.lines.size() ? "line " + std::to_string(d.lines[r]) : "row " + std::to_string(r) + " (0-based)";
}

// The labels the model takes, checked on whole files (before the split, so that a message can
// give the line). Returns the mlp's class count.
int check_model_labels(const dataset& d, model_kind kind) {
  static constexpr std::array<float, 2> kPlusMinusOne{-1.0f, 1.0f};
  if (kind == model_kind::logreg) {
    if (auto bad = check_labels(d, kPlusMinusOne, "the logreg model")) fail(*bad);
  }
  int classes = 2;
  if (kind != model_kind::mlp) return classes;
  for (std::size_t r = 0; r < d.y.size(); ++r) {
    const float y = d.y[r];
    if (!(y >= 0 && y < kMaxClasses && y == std::floor(y)))
      fail(d.source + ": label " + exact_num(y) + " on " + row_of(d, r) +
           " is not valid for the mlp model (allowed: class indices 0.." + std::to_string(kMaxClasses - 1) +
           "; a LIBSVM label -1 is class 0)");
    classes = std::max(classes, static_cast<int>(y) + 1);
  }
  return classes;
}

loaded_data load(const train_cli_options& o, std::uint64_t seed, model_kind kind) {
  loaded_data d;
  d.name = o.data;
  if (o.data == "fashion-mnist") {
    const std::string dir = default_fashion_mnist_dir();
    d.train = value_or_fail(read_fashion_mnist(dir, true));
    d.test = value_or_fail(read_fashion_mnist(dir, false));
    // The reader keeps any byte as a class index; Fashion-MNIST has ten classes.
    static constexpr std::array<float, 10> kClasses{0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
    for (const dataset* part : {&d.train, &d.test}) {
      if (part->cols < 1) fail(part->source + ": no features (the images have no pixels)");
      if (auto bad = check_labels(*part, kClasses, "Fashion-MNIST")) fail(*bad);
      d.classes = std::max(d.classes, check_model_labels(*part, kind));
    }
    return d;
  }
  const std::string path = o.data == "heart_scale" ? default_heart_scale_path() : o.data;
  if (o.data != "heart_scale" && !std::filesystem::exists(path))
    fail("--data " + quote(o.data) + ": not fashion-mnist, heart_scale, quadratic or an existing LIBSVM file");
  const dataset all = value_or_fail(read_libsvm(path));
  if (all.cols < 1) fail(all.source + ": no features (every row has only a label)");
  const double fraction = o.test_fraction;
  dataset labelled = all;
  if (kind == model_kind::mlp) map_labels(labelled, -1.0f, 0.0f);  // +-1 labels become the classes 0 and 1
  d.classes = check_model_labels(labelled, kind);
  auto parts = split(labelled, fraction, seed);
  d.train = std::move(parts.first);
  d.test = std::move(parts.second);
  return d;
}


struct summary {
  std::string run;  // the policy, and the GEMM recipe when one is given
  std::vector<double> loss, accuracy, seconds;
};

std::string mean_sd(const std::vector<double>& v, double scale, int digits) {
  double mean = 0, var = 0;
  for (double x : v) mean += x;
  mean /= static_cast<double>(v.size());
  for (double x : v) var += (x - mean) * (x - mean);
  char buf[64];
  if (v.size() > 1)
    std::snprintf(buf, sizeof buf, "%.*f +- %.*f", digits, mean * scale, digits,
                  std::sqrt(var / static_cast<double>(v.size() - 1)) * scale);
  else
    std::snprintf(buf, sizeof buf, "%.*f", digits, mean * scale);
  return buf;
}

// Per GEMM of the model, its measured normwise errors at the first and the last probed step and
// their median over all probes.
void print_gemm_errors(const std::vector<gemm_error_record>& records) {
  std::vector<std::string> layers;
  for (const auto& r : records)
    if (std::find(layers.begin(), layers.end(), r.error.layer) == layers.end()) layers.push_back(r.error.layer);
  std::cout << "  GEMM error ||D - AB||_F / ||AB||_F on the first rows of each output, at " << records.front().step
            << ".." << records.back().step << " steps: against the operands before rounding (quantised: against "
            << "the exact product of the rounded operands)\n";
  print("  %-7s %6s %6s %6s  %-24s %-24s %-24s\n", "GEMM", "M", "N", "K", "first", "median", "last");
  for (const auto& layer : layers) {
    std::vector<const gemm_error*> e;
    for (const auto& r : records)
      if (r.error.layer == layer) e.push_back(&r.error);
    auto pair = [](double original, double quantised) { return num(original, 3) + " (" + num(quantised, 3) + ")"; };
    std::vector<double> orig, quant;
    for (const gemm_error* x : e) {
      orig.push_back(x->normwise_original);
      quant.push_back(x->normwise_quantised);
    }
    print("  %-7s %6d %6d %6d  %-24s %-24s %-24s\n", layer.c_str(), e.front()->M, e.front()->N, e.front()->K,
          pair(orig.front(), quant.front()).c_str(),
          pair(analysis::quantile(orig, 0.5), analysis::quantile(quant, 0.5)).c_str(),
          pair(orig.back(), quant.back()).c_str());
  }
  std::cout.flush();
}

void run_training(const train_cli_options& o) {
  const optimizer_kind kind = value_or_fail(parse_optimizer(o.optimizer), "--optimizer");
  const hyperparameters h = resolve_hyper(o, kind);
  std::vector<precision_policy> policies;
  for (const auto& name : split_list(o.policy == "all" ? "fp32,mixed,bf16,bf16-ops,bf16-kahan,bf16-sr,fp16,fp16-kahan"
                                                        : o.policy,
                                      "--policy"))
    policies.push_back(value_or_fail(parse_policy(name), "--policy"));
  std::vector<gemm_recipe> recipes;
  for (const auto& name : split_list(o.gemm, "--gemm")) recipes.push_back(value_or_fail(parse_gemm_recipe(name), "--gemm"));
  const bool name_recipe = recipes.size() > 1 || recipes.front().name != "weights";
  const bool fashion = o.data == "fashion-mnist";
  train_options base;
  base.optimizer = kind;
  base.hyper = h;
  base.shape.kind = value_or_fail(parse_model_kind(fashion && !o.model_given ? "mlp" : o.model), "--model");
  base.epochs = fashion && !o.epochs_given ? 3 : o.epochs;
  base.batch = fashion && !o.batch_given ? 128 : o.batch;
  base.grad_accum = o.grad_accum;
  base.clip_norm = o.clip;
  base.threads = o.threads;
  base.shape.hidden = o.hidden;
  base.probe_every = o.gemm_error_every;
  base.probe_rows = o.gemm_error_rows;
  const std::uint64_t first_seed = o.seed;
  const std::int64_t seeds = o.seeds;

  output_sinks sinks(o.output);
  table_writer table(sinks, {"kind", "policy", "gemm", "seed", "epoch", "step", "loss", "test_loss", "test_accuracy",
                             "seconds", "layer", "M", "N", "K", "rows", "error_original", "error_quantised"});
  const bool text = sinks.text();
  progress bar("train", policies.size() * recipes.size() * static_cast<std::uint64_t>(seeds) *
                            static_cast<std::uint64_t>(base.epochs));
  std::uint64_t epochs_done = 0;
  std::vector<summary> summaries;
  std::vector<std::pair<precision_policy, gemm_recipe>> runs_of;  // every policy under every recipe
  for (const auto& p : policies)
    for (const auto& g : recipes) runs_of.emplace_back(p, g);
  for (const auto& [p, g] : runs_of) {
    summary s{name_recipe ? p.name + " " + g.name : p.name, {}, {}, {}};
    for (std::int64_t k = 0; k < seeds; ++k) {
      const std::uint64_t seed = first_seed + static_cast<std::uint64_t>(k);
      const loaded_data data = load(o, seed, base.shape.kind);
      train_options t = base;
      t.policy = p;
      t.gemm = g;
      t.seed = seed;
      t.shape.inputs = data.train.cols;
      if (t.shape.kind == model_kind::mlp) t.shape.classes = data.classes;
      // The run's header comes with its first epoch, so that a run rejected by train() prints
      // nothing on stdout.
      const auto result = value_or_fail(train(data.train, data.test, t, [&](const epoch_record& r) {
        bar.set(++epochs_done);
        if (!text) return;
        bar.finish();  // the line replaces the progress line
        if (r.epoch == 1)
          std::cout << data.name << ", " << to_string(t.shape.kind) << ", " << o.optimizer << " lr " << num(h.lr)
                    << ", policy " << p.name << (name_recipe ? ", gemm " + g.name : std::string()) << ", seed " << seed
                    << ", batch " << t.batch
                    << (t.grad_accum > 1 ? " x " + std::to_string(t.grad_accum) + " micro-batches" : std::string())
                    << ", " << data.train.rows << " training rows, " << data.test.rows << " test rows\n";
        print("  epoch %3d/%d  loss %.5f  test loss %.5f  accuracy %6.2f%%  %6.2f s\n", r.epoch, t.epochs,
              r.train_loss, r.test_loss, 100 * r.test_accuracy, r.seconds);
        std::cout.flush();
      }));
      const epoch_record& last = result.epochs.back();
      s.loss.push_back(last.train_loss);
      s.accuracy.push_back(last.test_accuracy);
      double seconds = 0;
      for (const auto& r : result.epochs) seconds += r.seconds;
      s.seconds.push_back(seconds / static_cast<double>(result.epochs.size()));
      const std::size_t per_epoch = result.step_losses.size() / result.epochs.size();
      for (std::size_t i = 0; i < result.step_losses.size(); ++i)
        // A step row has no test loss, accuracy or time: empty in CSV, null in JSON.
        table.row({"step", p.name, g.name, seed, per_epoch ? i / per_epoch + 1 : 1, i + 1, result.step_losses[i], cell(),
                   cell(), cell(), cell(), cell(), cell(), cell(), cell(), cell(), cell()});
      for (const auto& r : result.epochs)
        table.row({"epoch", p.name, g.name, seed, r.epoch, r.steps, r.train_loss, r.test_loss, r.test_accuracy, r.seconds,
                   cell(), cell(), cell(), cell(), cell(), cell(), cell()});
      for (const auto& [step, e] : result.gemm_errors)
        table.row({"gemm_error", p.name, g.name, seed, per_epoch ? (step - 1) / static_cast<long>(per_epoch) + 1 : 1,
                   step, cell(), cell(), cell(), cell(), e.layer, e.M, e.N, e.K, e.rows, e.normwise_original,
                   e.normwise_quantised});
      if (text && !result.gemm_errors.empty()) print_gemm_errors(result.gemm_errors);
    }
    summaries.push_back(std::move(s));
  }
  bar.finish();
  table.finish();
  sinks.commit();
  if (!text) return;
  std::cout << "\nsummary over " << seeds << (seeds == 1 ? " seed" : " seeds") << " (final epoch; mean +- sd)\n";
  print("%-30s %-22s %-22s %s\n", "policy", "training loss", "test accuracy %", "s/epoch");
  for (const auto& s : summaries)
    print("%-30s %-22s %-22s %s\n", s.run.c_str(), mean_sd(s.loss, 1, 4).c_str(),
                mean_sd(s.accuracy, 100, 2).c_str(), mean_sd(s.seconds, 1, 2).c_str());
  std::cout.flush();
}

}  // namespace

command add_train(CLI::App& parent) {
  auto o = std::make_shared<train_cli_options>();
  command c;
  c.app = parent.add_subcommand("train", "training runs under precision policies (SGD, Adam, AdamW, Lion; Kahan, SR)");
  CLI::App& a = *c.app;
  const auto choice = [](std::vector<std::string> valid) { return choice_check(std::move(valid)); };
  a.add_option("--data", o->data, "fashion-mnist, heart_scale, quadratic (Theorem 1 table) or a LIBSVM file")
      ->capture_default_str()
      ->type_name("NAME|FILE");
  a.add_option("--model", o->model, "Model")
      ->transform(choice({"mlp", "logreg", "linreg"}))
      ->default_str("mlp for fashion-mnist, else logreg")
      ->type_name("NAME");
  a.add_option("--optimizer", o->optimizer, "Optimizer")
      ->transform(choice({"sgd", "adam", "adamw", "lion"}))
      ->capture_default_str()
      ->type_name("NAME");
  a.add_option("--policy", o->policy,
               "Precision policies, comma-separated: fp32, mixed, mixed-fp16, FMT[-kahan|-zamirai|-sr[K]][-ops] "
               "(e.g. bf16, bf16-kahan, bf16-sr, fp16-kahan, bf16-ops), or 'all'")
      ->check(parser_check(
          [policies = list_check(parser_check(problem_of(parse_policy), "a policy"))](const std::string& in) {
            std::string list = in;
            return in == "all" ? std::string{} : policies(list);
          },
          "comma-separated"))
      ->capture_default_str()
      ->type_name("LIST");
  a.add_option("--epochs", o->epochs, "Epochs")
      ->transform(integer_check(1, 100000))
      ->default_str("3 for fashion-mnist, else 50")
      ->type_name("E");
  a.add_option("--lr", o->lr, "Learning rate; --data quadratic: a comma-separated list, each in (0, 1)")
      ->transform(list_check(real_check(0, kInf, true)))
      ->default_str("sgd 0.05, adam/adamw 1e-3, lion 1e-4; quadratic 0.5,0.2,0.1,0.05,0.02,0.01")
      ->type_name("X");
  a.add_option("--momentum", o->momentum, "sgd momentum")->transform(real_check(0, kInf))->capture_default_str();
  a.add_option("--dampening", o->dampening, "sgd dampening")->transform(real_check(0, 1))->capture_default_str();
  a.add_flag("--nesterov", o->nesterov, "sgd Nesterov momentum");
  a.add_option("--weight-decay", o->weight_decay, "L2 (sgd, adam) or decoupled (adamw, lion) weight decay")
      ->transform(real_check(0, kInf))
      ->capture_default_str();
  a.add_option("--beta1", o->beta1, "adam, adamw, lion: beta1")->transform(real_check(0, 1, false, true))->capture_default_str();
  a.add_option("--beta2", o->beta2, "adam, adamw, lion: beta2")
      ->transform(real_check(0, 1, false, true))
      ->default_str("0.999, lion 0.99");
  a.add_option("--eps", o->eps, "adam, adamw: epsilon")->transform(real_check(0, kInf, true))->capture_default_str();
  a.add_option("--batch", o->batch, "Rows per micro-batch")
      ->transform(integer_check(1, 1 << 20))
      ->default_str("128 for fashion-mnist, else 32");
  a.add_option("--grad-accum", o->grad_accum, "Micro-batches per optimizer step")
      ->transform(integer_check(1, 1 << 20))
      ->capture_default_str();
  a.add_option("--clip", o->clip, "Clip the accumulated gradient to this global l2 norm; 0: off")
      ->transform(real_check(0, kInf))
      ->capture_default_str();
  add_seed_option(a, o->seed, "First seed (data split, initial weights, batches, stochastic rounding)");
  a.add_option("--seeds", o->seeds, "Seeds per policy: S, S+1, ...")->transform(integer_check(1, 1000))->capture_default_str();
  a.add_option("--hidden", o->hidden, "mlp hidden units")->transform(integer_check(1, 1 << 16))->capture_default_str();
  add_threads_option(a, o->threads, "Threads of the matmuls");
  a.add_option("--test-fraction", o->test_fraction, "Held-out fraction of a LIBSVM dataset")
      ->transform(real_check(0, 1, true, true))
      ->capture_default_str();
  add_format_option(a, o->format, "--data quadratic: the low-precision format")->capture_default_str();
  {
    std::string names;
    for (const auto& r : gemm_recipes()) names += std::string(names.empty() ? "" : "; ") + std::string(r.name) + " = " + std::string(r.spec);
    a.add_option("--gemm", o->gemm,
                 "How the model's GEMMs compute, comma-separated: FORMAT/SCALING/ACCUMULATOR (FORMAT 'weights': the "
                 "policy's weight format; SCALING none|tensor|tile128|block128|mx32|nvfp4; ACCUMULATOR a format, exact "
                 "or a preset) or a name: " + names)
        ->check(list_check(parser_check(problem_of(parse_gemm_recipe), "a recipe")))
        ->capture_default_str()
        ->type_name("LIST");
  }
  a.add_option("--gemm-error-every", o->gemm_error_every,
               "Measure every GEMM's error against exact products every N optimizer steps (the first included); 0: off")
      ->transform(integer_check(0, 1 << 30))
      ->capture_default_str()
      ->type_name("N");
  a.add_option("--gemm-error-rows", o->gemm_error_rows, "Rows of each GEMM output the errors are measured on")
      ->transform(integer_check(1, 1 << 20))
      ->capture_default_str()
      ->type_name("R");
  add_output_options(a, o->output);
  c.run = [o, &a](const std::vector<std::string>& after) {
    no_trailing("train", after);
    o->model_given = a.count("--model") != 0;
    o->epochs_given = a.count("--epochs") != 0;
    o->batch_given = a.count("--batch") != 0;
    o->beta2_given = a.count("--beta2") != 0;
    if (o->data == "quadratic")
      run_quadratic(*o);
    else
      run_training(*o);
  };
  return c;
}

}  // namespace fpemu::cli
