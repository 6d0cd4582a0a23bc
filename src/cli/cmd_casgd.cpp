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
// the measured local error against a binary64 run from the same x and samples (simulated only).
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
  // Options whose default depends on others: given on the command line?
  bool P_given = false, bound_at_given = false, eval_every_given = false;
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
  {
    // The reader's messages start with the file name or the synth: spec, which name the value.
    glm_data full = value_or_fail(load_data(o.data, loss, data_seed));
    if (auto bad = check(ro, full.m, full.n)) fail(*bad);
    for (const named_slots& r : recipes) {
      run_options probe = ro;
      probe.precision = r.precision;
      if (auto bad = check(probe, full.m, full.n)) fail("recipe " + r.name + ": " + *bad);
    }
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
      hooks.evaluated = [&](int h, double loss) {
        last_loss = loss;
        if (ri == 0) first_losses.push_back(last_loss);
        const double ref = first_losses[std::min(eval, first_losses.size() - 1)];
        const double gap = std::abs(last_loss - ref) / std::abs(ref);
        table.row({recipes[ri].name, seed, h, static_cast<long>(h) * ro.s, last_loss, gap});
        ++eval;
      };
      hooks.before_outer = [&](int h, const rank_vectors& x) {
        if (o.bound && h == bound_at && root) {
          if (bar) bar->finish();
          if (text) print_bound(value_or_fail(local_error_at(data, run, h, x, C_P), "--bound"), run);
        }
        if (bar) {
          bar->relabel("casgd recipe " + recipes[ri].name + " seed " + std::to_string(seed));
          bar->set(done++);
        }
      };
      const rank_vectors x = casgd::run(data, run, every, *comm, hooks);
      const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
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
      ->transform(list_check(parser_check(
          [](const std::string& r) {
            const auto p = parse_recipe(r);
            return p ? std::string{} : p.message();
          },
          "A..I")))
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
    run_casgd(*o);
  };
  return c;
}

}  // namespace fpemu::cli
