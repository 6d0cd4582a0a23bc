// fpemu casgd --loss logistic|linear|poisson --data FILE|heart_scale|synth:M,N --recipe A..I[,..]
//             [--slot NAME=PRECISION ...] --b B --s S --P P --eta ETA --outer H --seed S[,S..]
//             [--allreduce ring|rd|tree|seq] [--bound] [--csv FILE] [--json FILE] [--weights FILE]
//
// Runs CA-SGD (analysis/casgd/run.hpp, Algorithm 1 of Devarakonda et al. 2026) for each recipe and seed on the same
// samples, and prints the final loss of each run with its relative gap |L - L_first| / |L_first|
// to the first recipe listed (Table 5 uses --recipe A,C). --s 1 is mini-batch SGD.
//
// Ranks: --P P simulates P ranks in this process. Started by mpirun (mpirun -np P fpemu casgd
// ...), each process is one rank holding only its column block, the AllReduces run over MPI in
// the same order, and the results are bit-identical to the simulated run with --P P.
//
// --bound prints Theorem 5.7's budget for outer iteration --bound-at (default: the last) next to
// the measured local error against a binary64 run from the same x and samples (simulated only);
// after each run, Theorem 5.9's radius with that budget as rho next to the run's final distance
// to x* (analysis/casgd/convergence.hpp; --mu-F, --L-F, --sigma-g2 replace computed constants);
// and once per recipe, Table 2's alpha-beta-gamma costs and the crossover s*
// (analysis/casgd/cost_model.hpp; --cost-alpha, --cost-beta, --cost-gamma, --cost-gram-speedup).
// --csv FILE / --json FILE: one row per recipe, seed and evaluation (every --eval-every outer
// iterations), written to FILE.tmp and renamed when complete. --weights FILE: the final weights of a single
// run as binary64 bit patterns (hex) and values, one per line.
#include <CLI/CLI.hpp>
#include <bit>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "analysis/casgd/allreduce.hpp"
#include "analysis/casgd/allreduce_mpi.hpp"
#include "analysis/casgd/convergence.hpp"
#include "analysis/casgd/cost_model.hpp"
#include "analysis/casgd/run.hpp"
#include "common.hpp"
#include "workload.hpp"

namespace fpemu::cli {
namespace {

using namespace fpemu::casgd;

struct casgd_cli_options {
  std::string loss = "logistic";
  std::string data = "synth:4096,256";
  std::string recipes = "C";
  std::vector<std::string> slot_overrides;
  int b = 32, s = 16, P = 1, outer = 200, bound_at = 0, eval_every = 1, threads = 0;
  double eta = 0.5;
  std::string seeds = "42";
  std::uint64_t data_seed = 1;
  std::string algorithm = "ring";
  bool bound = false;
  std::string cp = "worst";
  std::string weights;
  output_options output;
  machine_costs costs;
  double gram_speedup = 0;  // 0: from the recipe's u_G
  double mu_F = 0, L_F = 0, sigma_g2 = 0;
  // Options whose default depends on others: given on the command line?
  bool P_given = false, bound_at_given = false, eval_every_given = false;
  bool mu_given = false, L_given = false, sigma_given = false;
};

template <class... Args>
std::string format_line(const char* fmt, Args... args) {
  char buf[512];
  std::snprintf(buf, sizeof buf, fmt, args...);
  return buf;
}


struct named_slots {
  std::string name;
  slots precision;
};

std::vector<named_slots> resolve_recipes(const casgd_cli_options& o) {
  std::vector<named_slots> out;
  for (const std::string& r : split_list(o.recipes, "--recipe")) {
    slots s = value_or_fail(parse_recipe(r), "--recipe");
    for (const std::string& assignment : o.slot_overrides) s = value_or_fail(with_slot(s, assignment), "--slot");
    out.push_back({r, s});
  }
  return out;
}

void print_bound(const local_error& e, const run_options& ro) {
  const bound_terms& t = e.terms;
  std::cout << format_line("\nTheorem 5.7 budget, outer iteration %d (b=%d, s=%d, P=%d, eta=%s, C(P)=%s, D_delta=%s)\n",
                           e.h, ro.b, ro.s, ro.P, num(ro.eta).c_str(), num(e.C_P, 4).c_str(),
                           num(e.D_delta, 4).c_str());
  std::cout << "  " << ro.precision.describe() << "\n";
  for (int i = 0; i < slot_count; ++i)
    std::cout << format_line("  E_%-8s %s\n", std::string(to_string(static_cast<slot>(i))).substr(2).c_str(),
                             num(t.E[static_cast<std::size_t>(i)], 4).c_str());
  std::cout << format_line("  K_s %s  ||Y||_2 %s  ||H_L||_2 %s\n", num(t.K_s, 5).c_str(), num(t.norm_Y, 5).c_str(),
                           num(t.norm_H_L, 5).c_str());
  std::cout << format_line("  T_g %s  T_r %s  T_G %s  T_c %s\n", num(t.T_g, 4).c_str(), num(t.T_r, 4).c_str(),
                           num(t.T_G, 4).c_str(), num(t.T_c, 4).c_str());
  std::cout << format_line("  omega %s  tau_G %s  Omega %s  (hypothesis omega, tau_G <= 1/2: %s)\n",
                           num(t.omega, 4).c_str(), num(t.tau_G, 4).c_str(), num(t.Omega, 4).c_str(),
                           t.valid ? "holds" : "FAILS");
  std::cout << format_line("  sum of E %s   bound (1 + Omega) sum %s   measured ||x_hat - x||_2 %s   ratio %s\n",
                           num(t.sum, 4).c_str(), num(t.bound, 4).c_str(), num(e.measured, 4).c_str(),
                           num(t.bound > 0 ? e.measured / t.bound : 0, 3).c_str());
}

void print_costs(const run_options& ro, int n_loc, const machine_costs& m, const std::optional<double>& speedup) {
  cost_precisions p = cost_precisions_of(ro.precision);
  if (speedup) p.gram_speedup = *speedup;
  const table_2_costs t = table_2(ro.b, ro.s, ro.P, n_loc, m, p);
  std::cout << format_line("\nTable 2 costs (alpha-beta-gamma model), b=%d s=%d P=%d n_loc=%d\n", ro.b, ro.s, ro.P, n_loc);
  std::cout << format_line("  alpha %s s/message  beta %s s/byte  gamma %s s/flop (fp32)\n", num(m.alpha, 4).c_str(),
                           num(m.beta, 4).c_str(), num(m.gamma, 4).c_str());
  std::cout << format_line("  margin word %g bytes (u_AR_r=%s), Gram word %g bytes (u_AR_G=%s), Gram GEMM at %gx fp32 (u_G=%s%s)\n",
                           p.margin_bytes, ro.precision.AR_r.name().c_str(), p.gram_bytes, ro.precision.AR_G.name().c_str(),
                           p.gram_speedup, ro.precision.G.label.c_str(), speedup ? ", given" : "");
  std::cout << format_line("  %-27s %-14s %s\n", "", "s SGD steps", "one CA-SGD outer iteration");
  const auto row = [](const char* name, double a, double b) {
    std::cout << format_line("  %-27s %-14s %s\n", name, num(a, 4).c_str(), num(b, 4).c_str());
  };
  row("flops: GEMVs 4sb n_loc", t.sgd.flops_gemv, t.ca.flops_gemv);
  row("flops: Gram 2(sb)^2 n_loc", t.sgd.flops_gram, t.ca.flops_gram);
  row("flops: inner b^2 s(s-1)", t.sgd.flops_correction, t.ca.flops_correction);
  row("words: margin sb", t.sgd.words_margin, t.ca.words_margin);
  row("words: Gram (sb)^2", t.sgd.words_gram, t.ca.words_gram);
  row("messages", t.sgd.messages, t.ca.messages);
  row("time gamma F (s)", t.sgd.time_gamma, t.ca.time_gamma);
  row("time beta W 2(P-1)/P (s)", t.sgd.time_beta, t.ca.time_beta);
  row("time alpha L 2 log2 P (s)", t.sgd.time_alpha, t.ca.time_alpha);
  row("total (s)", t.sgd.total, t.ca.total);
  const auto describe = [](const crossover& c) {
    const std::string roots = std::isnan(c.root_lo) ? std::string("T_SGD = T_CA has no real solution")
                                                    : "T_SGD = T_CA at s = " + num(c.root_lo, 5) + " and " + num(c.root_hi, 6);
    if (!c.s_star) return "none (CA-SGD is never cheaper; " + roots + ")";
    return std::to_string(*c.s_star) + " (CA-SGD cheaper for " + std::to_string(*c.s_star) + " <= s <= " +
           (std::isinf(c.s_max) ? std::string("any") : num(c.s_max, 15)) + "; " + roots + ")";
  };
  cost_precisions fp32 = p;
  fp32.gram_bytes = 4;
  fp32.gram_speedup = 1;
  std::cout << format_line("  SGD / CA-SGD time at s=%d: %s\n", ro.s, num(t.sgd.total / t.ca.total, 4).c_str());
  std::cout << "  crossover s* = " << describe(crossover_of(ro.b, ro.P, n_loc, m, p)) << "\n";
  std::cout << "  with an fp32 Gram GEMM and fp32 Gram words: s* = " << describe(crossover_of(ro.b, ro.P, n_loc, m, fp32))
            << "\n";
}

void print_convergence(const convergence_report& r, const local_error& budget, const run_options& ro, loss_kind loss,
                       const std::string& recipe, std::uint64_t seed) {
  std::cout << format_line("\nTheorem 5.9 radius, recipe %s seed %llu, after M=%lld outer iterations (eta=%s, b=%d, s=%d)\n",
                           recipe.c_str(), static_cast<unsigned long long>(seed), static_cast<long long>(r.M),
                           num(ro.eta).c_str(), ro.b, ro.s);
  const ball_constants& k = r.constants;
  const bool linear = loss == loss_kind::linear;
  if (r.no_curvature) {
    std::cout << "  x* and the constants not computed: " << *r.no_curvature << "\n";
  } else {
    std::cout << format_line("  ||x*||_2 %s (Newton's method in binary64); R = %s, the smallest ball about 0 holding x* and this run's iterates\n",
                             num(r.x_star_norm, 5).c_str(), num(k.R, 5).c_str());
  }
  const auto source = [&](bool given, const char* computed) {
    return given ? std::string("given") : r.no_curvature ? std::string("not computed") : std::string(computed);
  };
  const bool L_known = r.L_given || !r.no_curvature;
  const auto value = [](bool known, double v) { return known ? num(v, 4) : std::string("?"); };
  std::cout << format_line("  mu_F %s (%s)   L_F %s (%s)   eta L_F %s\n", value(r.mu_given || !r.no_curvature, k.mu_F).c_str(),
                           source(r.mu_given, linear ? "lambda_min(A^T A/m), exact" : "bound sigma'(R) lambda_min(A^T A/m)").c_str(),
                           value(L_known, k.L_F).c_str(),
                           source(r.L_given, linear ? "lambda_max(A^T A/m), exact" : "bound lambda_max(A^T A/m)/4").c_str(),
                           L_known ? (num(ro.eta * k.L_F, 4) + (ro.eta * k.L_F <= 1 ? " (<= 1: holds)" : " (<= 1: FAILS)")).c_str() : "?");
  std::cout << format_line("  sigma_g^2 %s (%s)\n", value(r.sigma_given || !r.no_curvature, k.sigma_g2).c_str(),
                           source(r.sigma_given, linear ? "bound over X_R: mean of (|y_i| + R)^2" : "bound over X_R: sigma(R)^2").c_str());
  std::cout << format_line("  rho %s (Theorem 5.7's bound at outer iteration %d, taken as uniform; its hypothesis %s)\n",
                           num(r.rho, 4).c_str(), budget.h, budget.terms.valid ? "holds" : "FAILS");
  if (!r.complete) {
    std::cout << "  no radius: give --mu-F, --L-F and --sigma-g2\n";
    return;
  }
  const convergence_terms& t = r.terms;
  std::cout << format_line("  a = (1 - mu_F eta)^s: 1 - a %s   nu_s %s   chi %s (minimises the radius)   1 - q %s\n",
                           num(t.one_minus_a, 4).c_str(), num(t.nu_s, 4).c_str(), num(t.chi, 4).c_str(),
                           num(t.one_minus_q, 4).c_str());
  std::cout << format_line("  radius sqrt(N / (1 - q)) %s   with rho = 0 (exact arithmetic) %s   (theorem's hypotheses: %s)\n",
                           num(t.radius, 4).c_str(), num(t.radius_exact, 4).c_str(), t.valid ? "hold" : "FAIL");
  if (!r.no_curvature) {
    std::cout << format_line("  at M: sqrt(Equation 9's right side) %s   measured ||x_hat_M - x*||_2 %s (one run; (9) bounds the mean square)\n",
                             num(r.rhs_at_M, 4).c_str(), num(r.measured, 4).c_str());
    std::cout << format_line("  not the theorem: with the constants at x* alone (Hessian's smallest eigenvalue %s, gradient variance %s):\n"
                             "    radius %s; with rho = the measured local error (%s) %s; with rho = 0 %s\n",
                             num(r.hessian_min, 4).c_str(), num(r.sigma2_at_x_star, 4).c_str(), num(r.local.radius, 4).c_str(),
                             num(budget.measured, 4).c_str(), num(r.local_measured.radius, 4).c_str(),
                             num(r.local.radius_exact, 4).c_str());
  }
}

void run_casgd(const casgd_cli_options& o) {
  const loss_kind loss = value_or_fail(parse_loss(o.loss), "--loss");
  const std::vector<named_slots> recipes = resolve_recipes(o);
  const allreduce_algorithm algorithm = value_or_fail(parse_allreduce(o.algorithm), "--allreduce");
  std::vector<std::uint64_t> seeds;
  for (const std::string& s : split_list(o.seeds, "--seed")) seeds.push_back(std::stoull(s));  // checked by list_check
  const std::uint64_t data_seed = o.data_seed;

  run_options ro;
  ro.loss = loss;
  ro.b = o.b;
  ro.s = o.s;
  ro.eta = o.eta;
  ro.outer = o.outer;
  ro.algorithm = algorithm;
  ro.threads = o.threads;

  // Ranks: real ones under mpirun, else simulated.
  std::unique_ptr<collective> comm;
  if (launched_by_mpirun()) {
#ifdef FPEMU_HAVE_MPI
    comm = value_or_fail(mpi_collective(), "mpirun");
    if (o.P_given && o.P != comm->size())
      fail("--P " + std::to_string(o.P) + " differs from the " + std::to_string(comm->size()) + " ranks mpirun started");
    ro.P = comm->size();
    if (o.bound) fail("--bound runs in the simulated mode (--P P without mpirun)");
#else
    fail("this fpemu was built without MPI; rebuild with Debian's libopenmpi-dev installed, or use --P to simulate ranks");
#endif
  } else {
    ro.P = o.P;
    comm = simulated_collective(ro.P);
  }
  const bool root = comm->is_root();

  column_blocks data;
  std::optional<expected<glm_curvature>> curvature;  // Theorem 5.9's x* and constants, with --bound
  {
    // The reader's messages start with the file name or the synth: spec, which name the value.
    glm_data full = value_or_fail(load_data(o.data, loss, data_seed));
    if (auto bad = check(ro, full.m, full.n)) fail(*bad);
    for (const named_slots& r : recipes) {
      run_options probe = ro;
      probe.precision = r.precision;
      if (auto bad = check(probe, full.m, full.n)) fail("recipe " + r.name + ": " + *bad);
    }
    if (o.bound && std::isfinite(lipschitz(loss))) curvature.emplace(curvature_of(full, loss));
    data = partition(full, ro.P, comm->first_local(), comm->local_count());
  }  // the full matrix is freed here: each process keeps its column blocks only

  const int every = o.eval_every_given ? o.eval_every : std::max(1, ro.outer / 20);
  int bound_at = ro.outer - 1;
  if (o.bound_at_given) {
    if (o.bound_at > std::max(0, ro.outer - 1))
      fail("--bound-at " + std::to_string(o.bound_at) + " is out of range: valid 0.." + std::to_string(std::max(0, ro.outer - 1)) +
           " (outer iterations 0..--outer - 1)");
    bound_at = o.bound_at;
  }
  double C_P = cp_worst_case(ro.P);
  if (o.cp != "worst") {
    if (o.cp == "measured") {
      C_P = 0;
      for (const named_slots& r : recipes)
        for (const casgd::precision& dt : {r.precision.AR_r, r.precision.AR_G})
          C_P = std::max(C_P, measure_cp(ro.P, algorithm, dt, 4096, 4, 1).c_max);
    } else if (o.cp == "nccl-fit") {
      C_P = cp_nccl_fit(ro.P);
    } else {
      C_P = std::stod(o.cp);  // checked by the option's validator
    }
  }
  if (o.bound && !std::isfinite(lipschitz(loss)))
    fail("--bound: Theorem 5.7 covers residuals with a Lipschitz constant (logistic, linear); the " +
         std::string(to_string(loss)) + " residual has none");
  if (!o.weights.empty() && (recipes.size() != 1 || seeds.size() != 1))
    fail("--weights writes one run: give one --recipe and one --seed");

  // The output files are opened before anything is printed, so that a path that cannot be
  // written fails at once, with nothing on stdout.
  output_sinks sinks(root ? o.output : output_options{});
  table_writer table(sinks, {"recipe", "seed", "outer", "sgd_steps", "loss", "gap_to_first"});
  std::unique_ptr<atomic_file> weights;
  if (root && !o.weights.empty()) weights = std::make_unique<atomic_file>("--weights", o.weights);
  const bool text = root && sinks.text();

  if (text) {
    std::cout << "CA-SGD (" << to_string(loss) << ") on " << data.m << " x " << data.n << " " << o.data << ": b=" << ro.b
              << " s=" << ro.s << " P=" << ro.P << (launched_by_mpirun() ? " (MPI ranks)" : " (simulated)")
              << " eta=" << num(ro.eta) << " outer=" << ro.outer << " (" << static_cast<long>(ro.outer) * ro.s
              << " SGD steps) allreduce=" << to_string(algorithm) << "\n";
    for (const named_slots& r : recipes) std::cout << "  recipe " << r.name << ": " << r.precision.describe() << "\n";
  }
  // Only the root rank reports progress (the others would repeat it under mpirun).
  std::optional<progress> bar;
  if (root)
    bar.emplace("casgd", static_cast<std::uint64_t>(recipes.size() * seeds.size()) *
                             static_cast<std::uint64_t>(std::max(1, ro.outer)));
  std::uint64_t done = 0;
  struct result {
    std::string recipe;
    std::uint64_t seed;
    double loss, gap, seconds;
  };
  std::vector<result> results;
  for (const std::uint64_t seed : seeds) {
    std::vector<double> first_losses;  // the first recipe's loss at each evaluation
    for (std::size_t ri = 0; ri < recipes.size(); ++ri) {
      run_options run = ro;
      run.seed = seed;
      run.precision = recipes[ri].precision;
      const auto start = std::chrono::steady_clock::now();
      std::size_t eval = 0;
      double last_loss = 0;
      run_hooks hooks;
      std::optional<local_error> budget;
      double max_norm = 0;  // of the iterates, for Theorem 5.9's R
      hooks.evaluated = [&](int h, double loss) {
        last_loss = loss;
        if (ri == 0) first_losses.push_back(last_loss);
        const double ref = first_losses[std::min(eval, first_losses.size() - 1)];
        const double gap = std::abs(last_loss - ref) / std::abs(ref);
        table.row({recipes[ri].name, seed, h, static_cast<long>(h) * ro.s, last_loss, gap});
        ++eval;
      };
      hooks.before_outer = [&](int h, const rank_vectors& x) {
        if (o.bound && root) {
          double ss = 0;
          for (const std::vector<double>& block : x)
            for (double v : block) ss += v * v;
          max_norm = std::max(max_norm, std::sqrt(ss));
        }
        if (o.bound && h == bound_at && text) {
          if (bar) bar->finish();
          budget = value_or_fail(local_error_at(data, run, h, x, C_P), "--bound");
          print_bound(*budget, run);
        }
        if (bar) {
          bar->relabel("casgd recipe " + recipes[ri].name + " seed " + std::to_string(seed));
          bar->set(done++);
        }
      };
      const rank_vectors x = casgd::run(data, run, every, *comm, hooks);
      const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      if (budget && text) {
        const std::vector<double> w = comm->gather(x);
        double ss = 0;
        for (double v : w) ss += v * v;
        max_norm = std::max(max_norm, std::sqrt(ss));
        constant_overrides given;
        if (o.mu_given) given.mu_F = o.mu_F;
        if (o.L_given) given.L_F = o.L_F;
        if (o.sigma_given) given.sigma_g2 = o.sigma_g2;
        if (bar) bar->finish();
        print_convergence(apply_theorem_5_9(*curvature, loss, given, run.eta, run.b, run.s, budget->terms.bound,
                                            budget->measured, run.outer, max_norm, w),
                          *budget, run, loss, recipes[ri].name, seed);
        if (seed == seeds.front()) {
          int n_loc = 0;
          for (int p = 0; p < data.P; ++p) n_loc = std::max(n_loc, data.width(p));
          print_costs(run, n_loc, o.costs, o.gram_speedup > 0 ? std::optional<double>(o.gram_speedup) : std::nullopt);
        }
      }
      const double gap = std::abs(last_loss - first_losses.back()) / std::abs(first_losses.back());
      results.push_back({recipes[ri].name, seed, last_loss, gap, seconds});
      if (!o.weights.empty()) {
        const std::vector<double> w = comm->gather(x);
        if (weights) {
          for (std::size_t i = 0; i < w.size(); ++i)
            weights->out << i << ' '
                         << format_line("%016llx", static_cast<unsigned long long>(std::bit_cast<std::uint64_t>(w[i])))
                         << ' ' << exact_num(w[i]) << '\n';
          weights->commit();
        }
      }
    }
  }
  if (bar) bar->finish();
  table.finish();
  sinks.commit();
  if (!text) return;
  std::cout << format_line("\n%-7s %-12s %-24s %-12s %s\n", "recipe", "seed", "final loss",
                           ("gap to " + recipes[0].name).c_str(), "seconds");
  for (const result& r : results)
    std::cout << format_line("%-7s %-12llu %-24s %-12s %.2f\n", r.recipe.c_str(), static_cast<unsigned long long>(r.seed),
                             exact_num(r.loss).c_str(), num(r.gap, 3).c_str(), r.seconds);
  if (seeds.size() > 1 && recipes.size() > 1) {
    std::cout << "\nlargest relative final-loss gap to recipe " << recipes[0].name << " over " << seeds.size() << " seeds:\n";
    for (std::size_t ri = 1; ri < recipes.size(); ++ri) {
      double worst = 0;
      for (const result& r : results)
        if (r.recipe == recipes[ri].name) worst = std::max(worst, r.gap);
      std::cout << "  " << recipes[ri].name << "  " << num(worst, 3) << "\n";
    }
  }
}

}  // namespace

command add_casgd(CLI::App& parent) {
  auto o = std::make_shared<casgd_cli_options>();
  command c;
  c.app = parent.add_subcommand("casgd", "communication-avoiding SGD for GLMs with nine precision slots (Devarakonda et al. 2026)");
  CLI::App& a = *c.app;
  a.add_option("--loss", o->loss, "GLM loss")
      ->transform(choice_check({"logistic", "linear", "poisson"}))
      ->capture_default_str()
      ->type_name("NAME");
  a.add_option("--data", o->data,
               "synth:M,N, heart_scale (Debian's liblinear-tools), a LIBSVM file or a .csv "
               "file (label in the first column); rows are l2-normalised")
      ->capture_default_str()
      ->type_name("SPEC|FILE");
  a.add_option("--recipe", o->recipes, "Table 3 recipes A..I, comma-separated; gaps are to the first")
      ->transform(list_check(parser_check(problem_of(parse_recipe), "A..I")))
      ->capture_default_str()
      ->type_name("LIST");
  a.add_option("--slot", o->slot_overrides,
               "override a slot, e.g. u_c=fp32, u_AR_r=fp16, u_G=bf16,fp32 (inputs,accumulator[,output]), "
               "u_G=e4m3fn,h100-e4m3, u_r=ha; repeatable; applies to every recipe")
      ->type_name("SLOT=PRECISION");
  a.add_option("--b", o->b, "Rows per mini-batch")->transform(integer_check(1, 65536))->capture_default_str();
  a.add_option("--s", o->s, "Inner steps per outer iteration (1 is mini-batch SGD)")
      ->transform(integer_check(1, 4096))
      ->capture_default_str();
  a.add_option("--P", o->P, "Simulated ranks (under mpirun: the number of processes)")
      ->transform(integer_check(1, 4096))
      ->capture_default_str();
  a.add_option("--eta", o->eta, "Step size")->transform(real_check(0, kInf, true))->capture_default_str();
  a.add_option("--outer", o->outer, "Outer iterations H")->transform(integer_check(0, 100000000))->capture_default_str();
  a.add_option("--seed", o->seeds, "Sampling seeds, comma-separated")
      ->transform(list_check(integer_check(0, std::numeric_limits<std::int64_t>::max())))
      ->capture_default_str()
      ->type_name("LIST");
  a.add_option("--data-seed", o->data_seed, "Seed of the synthetic data")
      ->transform(unsigned_check(std::numeric_limits<std::int64_t>::max()))
      ->capture_default_str()
      ->type_name("S");
  a.add_option("--allreduce", o->algorithm, "AllReduce algorithm")
      ->transform(choice_check({"ring", "rd", "tree", "seq"}))
      ->capture_default_str()
      ->type_name("NAME");
  a.add_flag("--bound", o->bound, "print Theorem 5.7's budget next to the measured local error");
  a.add_option("--bound-at", o->bound_at, "The outer iteration of --bound, below --outer")
      ->transform(integer_check(0, 100000000))
      ->default_str("the last");
  a.add_option("--cp", o->cp,
               "C(P) for the budget: worst (2.4P, which the paper's NCCL measurements reach), nccl-fit (the "
               "paper's fit 4.62 P^0.56), measured (fpemu's simulated reduction orders), or a number >= 0")
      ->check(parser_check(
          [](const std::string& in) -> std::string {
            if (in == "worst" || in == "measured" || in == "nccl-fit") return {};
            std::string copy = in;
            const std::string why = real_check(0, kInf)(copy);
            return why.empty() ? why : why + ", or worst, nccl-fit or measured";
          },
          "worst|nccl-fit|measured|X"))
      ->capture_default_str()
      ->type_name("C");
  a.add_option("--cost-alpha", o->costs.alpha,
               "--bound's cost model: seconds per message (latency); the default is fitted to the paper's Table 7 (A100, NCCL)")
      ->transform(real_check(0, kInf))
      ->capture_default_str()
      ->type_name("S");
  a.add_option("--cost-beta", o->costs.beta, "--bound's cost model: seconds per byte; the default is one 25 GB/s Slingshot-11 NIC")
      ->transform(real_check(0, kInf))
      ->capture_default_str()
      ->type_name("S");
  a.add_option("--cost-gamma", o->costs.gamma, "--bound's cost model: seconds per fp32 flop; the default is the A100's 19.5 TFLOP/s")
      ->transform(real_check(0, kInf))
      ->capture_default_str()
      ->type_name("S");
  a.add_option("--cost-gram-speedup", o->gram_speedup,
               "--bound's cost model: the Gram GEMM's throughput over fp32; from u_G: 16 for 16-bit inputs, 8 tf32, 1 fp32")
      ->transform(real_check(0, kInf, true))
      ->default_str("from u_G")
      ->type_name("X");
  a.add_option("--mu-F", o->mu_F, "Theorem 5.9: strong convexity of F on X_R, instead of the computed bound")
      ->transform(real_check(0, kInf, true))
      ->default_str("computed")
      ->type_name("X");
  a.add_option("--L-F", o->L_F, "Theorem 5.9: smoothness of F on X_R, instead of the computed bound")
      ->transform(real_check(0, kInf, true))
      ->default_str("computed")
      ->type_name("X");
  a.add_option("--sigma-g2", o->sigma_g2, "Theorem 5.9: per-sample gradient variance on X_R, instead of the computed bound")
      ->transform(real_check(0, kInf))
      ->default_str("computed")
      ->type_name("X");
  a.add_option("--eval-every", o->eval_every, "Outer iterations between loss evaluations")
      ->transform(integer_check(1, 100000000))
      ->default_str("outer/20");
  a.add_option("--weights", o->weights, "Write the final weights (hex bit patterns) of a single run to FILE")
      ->type_name("FILE");
  add_threads_option(a, o->threads, "Threads of the GEMMs");
  add_output_options(a, o->output);
  c.run = [o, &a](const std::vector<std::string>& after_dashes) {
    no_trailing("casgd", after_dashes);
    o->P_given = a.count("--P") != 0;
    o->bound_at_given = a.count("--bound-at") != 0;
    o->eval_every_given = a.count("--eval-every") != 0;
    o->mu_given = a.count("--mu-F") != 0;
    o->L_given = a.count("--L-F") != 0;
    o->sigma_given = a.count("--sigma-g2") != 0;
    if (!o->bound)
      for (const char* name : {"--cost-alpha", "--cost-beta", "--cost-gamma", "--cost-gram-speedup", "--mu-F", "--L-F", "--sigma-g2"})
        if (a.count(name) != 0) fail(std::string(name) + " sets a constant of --bound's output: add --bound");
    run_casgd(*o);
  };
  return c;
}

}  // namespace fpemu::cli
