// Python bindings: communication-avoiding SGD for GLMs (Devarakonda et al., "Mixed-Precision
// Communication-Avoiding SGD for Generalized Linear Models on GPUs", 2026) with its nine precision
// slots, Table 3's recipes, Theorem 5.7's budget, Theorem 5.9's radius, Table 2's cost model and the
// AllReduce constant C(P). Ranks are simulated in this process (the MPI mode is the CLI's, under
// mpirun).
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "analysis/casgd/allreduce.hpp"
#include "analysis/casgd/convergence.hpp"
#include "analysis/casgd/cost_model.hpp"
#include "analysis/casgd/run.hpp"
#include "bindings.hpp"

namespace fpemu::python {
namespace {

using namespace fpemu::casgd;

py::dict budget_dict(const local_error& e) {
  const bound_terms& t = e.terms;
  py::dict E;
  for (int i = 0; i < slot_count; ++i) E[py::str(std::string(to_string(static_cast<slot>(i))))] = t.E[static_cast<std::size_t>(i)];
  py::dict d;
  d["E"] = E;
  d["K_s"] = t.K_s;
  d["T_g"] = t.T_g;
  d["T_r"] = t.T_r;
  d["T_G"] = t.T_G;
  d["T_c"] = t.T_c;
  d["norm_Y"] = t.norm_Y;
  d["norm_H_L"] = t.norm_H_L;
  d["omega"] = t.omega;
  d["tau_G"] = t.tau_G;
  d["Omega"] = t.Omega;
  d["sum"] = t.sum;
  d["bound"] = t.bound;
  d["valid"] = t.valid;
  d["measured"] = e.measured;
  d["C_P"] = e.C_P;
  d["D_delta"] = e.D_delta;
  d["h"] = e.h;
  return d;
}

py::dict terms_dict(const convergence_terms& t) {
  py::dict d;
  d["a"] = t.a;
  d["nu_s"] = t.nu_s;
  d["chi"] = t.chi;
  d["q"] = t.q;
  d["rho"] = t.rho;
  d["N"] = t.N;
  d["radius"] = t.radius;
  d["radius_exact"] = t.radius_exact;
  d["step_ok"] = t.step_ok;
  d["valid"] = t.valid;
  return d;
}

py::dict convergence_dict(const convergence_report& r) {
  py::dict d;
  d["computed"] = !r.no_curvature.has_value();
  d["why_not_computed"] = r.no_curvature ? py::object(py::str(*r.no_curvature)) : py::object(py::none());
  d["R"] = r.constants.R;
  d["mu_F"] = r.constants.mu_F;
  d["L_F"] = r.constants.L_F;
  d["sigma_g2"] = r.constants.sigma_g2;
  d["given"] = py::make_tuple(r.mu_given, r.L_given, r.sigma_given);
  d["complete"] = r.complete;
  if (r.complete) d.attr("update")(terms_dict(r.terms));
  d["M"] = r.M;
  d["x_star_norm"] = r.x_star_norm;
  d["rhs_at_M"] = r.rhs_at_M;
  d["measured"] = r.measured;
  if (r.have_local) {
    py::dict local;
    local["hessian_min"] = r.hessian_min;
    local["sigma2_at_x_star"] = r.sigma2_at_x_star;
    local["radius"] = r.local.radius;
    local["radius_measured_rho"] = r.local_measured.radius;
    local["radius_exact"] = r.local.radius_exact;
    d["at_x_star"] = local;
  }
  return d;
}

// A finite value >= lo (> lo when open), or ValueError naming it.
double checked(const char* name, double v, double lo, bool open) {
  if (!std::isfinite(v) || v < lo || (open && v == lo))
    throw py::value_error(std::string(name) + " = " + number(v) + " (valid: finite " + (open ? "> " : ">= ") +
                          number(lo) + ")");
  return v;
}

py::dict casgd_impl(const std::string& data, const std::string& loss, const std::string& recipe,
                    const std::vector<std::string>& slot_overrides, int b, int s, int P, double eta, int outer,
                    std::uint64_t seed, std::uint64_t data_seed, const std::string& allreduce,
                    const std::optional<int>& eval_every, int threads, const std::optional<int>& budget_at,
                    const py::object& cp, const std::optional<double>& mu_F, const std::optional<double>& L_F,
                    const std::optional<double>& sigma_g2) {
  // The library's own messages for these two do not name the value.
  if (!(eta > 0) || !std::isfinite(eta)) throw py::value_error("eta = " + number(eta) + " (valid: finite > 0)");
  run_options o;
  o.loss = value_or_raise(parse_loss(loss));
  o.precision = value_or_raise(parse_recipe(recipe));
  for (const std::string& a : slot_overrides) o.precision = value_or_raise(with_slot(o.precision, a));
  o.b = b;
  o.s = s;
  o.P = P;
  o.eta = eta;
  o.outer = outer;
  o.seed = seed;
  o.algorithm = value_or_raise(parse_allreduce(allreduce));
  o.threads = thread_count(threads);
  const int every = eval_every ? *eval_every : std::max(1, outer / 20);
  if (every < 1) throw py::value_error("eval_every = " + std::to_string(every) + " (valid: >= 1)");
  if (budget_at && (*budget_at < 0 || *budget_at >= outer))
    throw py::value_error("budget_at = " + std::to_string(*budget_at) + " (valid: 0.." + std::to_string(outer - 1) + ")");
  if (budget_at && !std::isfinite(lipschitz(o.loss)))
    throw py::value_error("the budget (Theorem 5.7) covers residuals with a Lipschitz constant (logistic, linear); the " +
                          std::string(to_string(o.loss)) + " residual has none");
  double C_P = cp_worst_case(P);
  const bool is_number = py::isinstance<py::float_>(cp) || py::isinstance<py::int_>(cp);
  const std::string cp_name = py::isinstance<py::str>(cp) ? cp.cast<std::string>() : std::string();
  if (is_number) C_P = cp.cast<double>();
  else if (cp_name == "nccl-fit") C_P = cp_nccl_fit(P);
  else if (cp_name != "worst")
    throw py::value_error("cp = " + std::string(py::str(py::repr(cp))) +
                          " (valid: 'worst' for 2.4 P, 'nccl-fit' for 4.62 P^0.56, or a number >= 0)");
  if (!(C_P >= 0) || !std::isfinite(C_P)) throw py::value_error("cp = " + number(C_P) + " (valid: >= 0, finite)");
  constant_overrides given;
  if (mu_F) given.mu_F = checked("mu_F", *mu_F, 0, true);
  if (L_F) given.L_F = checked("L_F", *L_F, 0, true);
  if (sigma_g2) given.sigma_g2 = checked("sigma_g2", *sigma_g2, 0, false);
  if ((mu_F || L_F || sigma_g2) && !budget_at)
    throw py::value_error("mu_F, L_F and sigma_g2 are constants of Theorem 5.9's radius, which comes with the budget: give budget_at");

  // Everything from here is C++: the data (synthesised or read) and the run, stopped by Ctrl-C.
  glm_data full;
  std::unique_ptr<collective> comm;
  column_blocks blocks;
  std::vector<int> at;
  std::vector<double> losses;
  std::optional<local_error> budget;
  std::optional<expected<glm_curvature>> curvature;
  double max_norm = 0;
  run_hooks hooks;
  hooks.evaluated = [&](int h, double F) {
    at.push_back(h);
    losses.push_back(F);
  };
  hooks.before_outer = [&](int h, const rank_vectors& x) {
    double ss = 0;
    for (const std::vector<double>& block : x)
      for (double v : block) ss += v * v;
    max_norm = std::max(max_norm, std::sqrt(ss));
    if (budget_at && h == *budget_at) budget = value_or_raise(local_error_at(blocks, o, h, x, C_P));
  };
  const rank_vectors x = without_gil([&] {
    full = value_or_raise(load_data(data, o.loss, data_seed));
    raise_if(check(o, full.m, full.n));
    if (budget_at) curvature.emplace(curvature_of(full, o.loss));
    comm = simulated_collective(P);
    blocks = partition(full, P, 0, P);
    return run(blocks, o, every, *comm, hooks);
  });
  py::dict d;
  std::vector<long> steps;
  for (int h : at) steps.push_back(static_cast<long>(h) * s);
  d["outer"] = py::array_t<int>(static_cast<py::ssize_t>(at.size()), at.data());
  d["sgd_steps"] = py::array_t<long>(static_cast<py::ssize_t>(steps.size()), steps.data());
  d["loss"] = doubles_array(losses);
  const std::vector<double> x_final = comm->gather(x);
  d["x"] = doubles_array(x_final);
  d["slots"] = o.precision.describe();
  d["m"] = full.m;
  d["n"] = full.n;
  if (budget) {
    double ss = 0;
    for (double v : x_final) ss += v * v;
    max_norm = std::max(max_norm, std::sqrt(ss));
    py::dict bd = budget_dict(*budget);
    bd["convergence"] = convergence_dict(
        apply_theorem_5_9(*curvature, o.loss, given, eta, o.b, o.s, budget->terms.bound, budget->measured, outer, max_norm,
                          x_final));
    d["budget"] = bd;
  }
  return d;
}

}  // namespace

void bind_casgd(py::module_& m) {
  m.def(
      "casgd_recipes",
      [] {
        py::dict d;
        for (char letter : recipe_letters) d[py::str(std::string(1, letter))] = value_or_raise(recipe(letter)).describe();
        return d;
      },
      "Table 3's recipes A..I: letter -> the nine slots, e.g. 'u_A=bf16 u_G=b u_r=b ...'.");

  m.def("casgd", &casgd_impl, py::arg("data") = "synth:4096,256", py::kw_only(), py::arg("loss") = "logistic",
        py::arg("recipe") = "C", py::arg("slots") = std::vector<std::string>{}, py::arg("b") = 32, py::arg("s") = 16,
        py::arg("P") = 1, py::arg("eta") = 0.5, py::arg("outer") = 200, py::arg("seed") = 42, py::arg("data_seed") = 1,
        py::arg("allreduce") = "ring", py::arg("eval_every") = py::none(), py::arg("threads") = 0,
        py::arg("budget_at") = py::none(), py::arg("cp") = "worst", py::arg("mu_F") = py::none(),
        py::arg("L_F") = py::none(), py::arg("sigma_g2") = py::none(),
        "CA-SGD (Devarakonda et al. 2026, Algorithm 1) on P simulated ranks with a Table 3 recipe (A..I) and slot overrides\n"
        "('u_c=fp32', 'u_G=bf16,fp32', 'u_G=e4m3fn,h100-e4m3', ...). data: 'synth:M,N', 'heart_scale' or a\n"
        "LIBSVM/CSV file; rows are l2-normalised. s=1 is mini-batch SGD. Returns a dict: outer and sgd_steps\n"
        "of each evaluation (every eval_every outer iterations, default outer/20), loss F(x) there, the final\n"
        "weights x, slots, m, n, and with budget_at=h Theorem 5.7's budget at outer iteration h (E per slot,\n"
        "K_s, T_*, omega, tau_G, Omega, sum, bound, valid) next to the measured local error against a\n"
        "binary64 run from the same x and samples; cp: C(P) for it, 'worst' (2.4 P), 'nccl-fit' (4.62 P^0.56) or a number.\n"
        "budget['convergence'] is Theorem 5.9 with that budget as rho: R, mu_F, L_F, sigma_g2 (computed for the GLM\n"
        "on the data, or given as mu_F=, L_F=, sigma_g2=), a, nu_s, chi, q, radius, radius_exact (rho = 0), the\n"
        "square root of Equation 9's right side at M = outer (rhs_at_M) and the run's final ||x - x*|| (measured).");

  m.def(
      "casgd_cost",
      [](long b, long s, long P, long n_loc, const std::string& recipe, const std::vector<std::string>& slot_overrides,
         double alpha, double beta, double gamma, const std::optional<double>& gram_speedup) {
        if (b < 1 || s < 1 || P < 1 || n_loc < 1)
          throw py::value_error("b = " + std::to_string(b) + ", s = " + std::to_string(s) + ", P = " + std::to_string(P) +
                                ", n_loc = " + std::to_string(n_loc) + " (valid: each >= 1)");
        machine_costs costs{checked("alpha", alpha, 0, false), checked("beta", beta, 0, false), checked("gamma", gamma, 0, false)};
        slots sl = value_or_raise(parse_recipe(recipe));
        for (const std::string& a : slot_overrides) sl = value_or_raise(with_slot(sl, a));
        cost_precisions p = cost_precisions_of(sl);
        if (gram_speedup) p.gram_speedup = checked("gram_speedup", *gram_speedup, 0, true);
        const table_2_costs t = table_2(b, s, P, n_loc, costs, p);
        const auto side = [](const side_cost& c) {
          py::dict d;
          d["flops_gemv"] = c.flops_gemv;
          d["flops_gram"] = c.flops_gram;
          d["flops_correction"] = c.flops_correction;
          d["words_margin"] = c.words_margin;
          d["words_gram"] = c.words_gram;
          d["messages"] = c.messages;
          d["time_gamma"] = c.time_gamma;
          d["time_beta"] = c.time_beta;
          d["time_alpha"] = c.time_alpha;
          d["total"] = c.total;
          return d;
        };
        const crossover c = crossover_of(b, P, n_loc, costs, p);
        py::dict d;
        d["sgd"] = side(t.sgd);
        d["ca"] = side(t.ca);
        d["margin_bytes"] = p.margin_bytes;
        d["gram_bytes"] = p.gram_bytes;
        d["gram_speedup"] = p.gram_speedup;
        d["s_star"] = c.s_star ? py::object(py::int_(*c.s_star)) : py::object(py::none());
        d["s_max"] = c.s_max;
        return d;
      },
      py::arg("b"), py::arg("s"), py::arg("P"), py::arg("n_loc"), py::kw_only(), py::arg("recipe") = "C",
      py::arg("slots") = std::vector<std::string>{}, py::arg("alpha") = machine_costs{}.alpha,
      py::arg("beta") = machine_costs{}.beta, py::arg("gamma") = machine_costs{}.gamma,
      py::arg("gram_speedup") = py::none(),
      "Table 2 of Devarakonda et al. 2026: the alpha-beta-gamma costs of s mini-batch SGD steps ('sgd') and of one outer\n"
      "CA-SGD iteration ('ca') under 1D block-column partitioning (flops, words, messages and their times), and the\n"
      "crossover s_star (the smallest s >= 2 where CA-SGD is cheaper; None if none) with s_max (the largest).\n"
      "alpha: s per message, beta: s per byte, gamma: s per fp32 flop (defaults: A100/Perlmutter, see\n"
      "analysis/casgd/cost_model.hpp); the recipe's u_AR_r/u_AR_G set the word sizes and u_G the Gram GEMM's\n"
      "throughput over fp32 (gram_speedup overrides it).");

  m.def(
      "casgd_radius",
      [](double eta, int b, int s, double mu_F, double L_F, double sigma_g2, double rho, const std::optional<double>& chi,
         long M, const std::optional<double>& dist0) {
        if (b < 1 || s < 1) throw py::value_error("b = " + std::to_string(b) + ", s = " + std::to_string(s) + " (valid: each >= 1)");
        if (M < 0) throw py::value_error("M = " + std::to_string(M) + " (valid: >= 0)");
        const convergence_terms t = theorem_5_9({checked("eta", eta, 0, true), b, s, checked("mu_F", mu_F, 0, true),
                                                 checked("L_F", L_F, 0, true), checked("sigma_g2", sigma_g2, 0, false),
                                                 checked("rho", rho, 0, false), chi ? checked("chi", *chi, 0, true) : 0});
        py::dict d = terms_dict(t);
        if (dist0) d["rhs_at_M"] = std::sqrt(theorem_5_9_rhs(t, M, checked("dist0", *dist0, 0, false) * *dist0));
        return d;
      },
      py::arg("eta"), py::arg("b"), py::arg("s"), py::arg("mu_F"), py::arg("L_F"), py::arg("sigma_g2"), py::arg("rho"),
      py::kw_only(), py::arg("chi") = py::none(), py::arg("M") = 0, py::arg("dist0") = py::none(),
      "Theorem 5.9 of Devarakonda et al. 2026: a = (1 - mu_F eta)^s, nu_s = eta sigma_g2 (1 - a) / (mu_F b), chi (the\n"
      "minimiser of the radius unless given), q = (1 + chi) a, N = (1 + chi) nu_s + (1 + 1/chi) rho^2, radius =\n"
      "sqrt(N / (1 - q)), radius_exact (rho = 0), step_ok (eta L_F <= 1), valid; with dist0 = ||x_0 - x*||, rhs_at_M is\n"
      "the square root of Equation 9's right side after M outer iterations.");

  m.def(
      "allreduce_cp",
      [](int P, const std::string& algorithm, const std::string& datatype, int length, int trials, std::uint64_t seed) {
        // The CLI's limits: P x length binary64 values are held at once (2^27 of them are 1 GiB).
        if (P < 1 || P > 4096 || length < 1 || length > (1 << 24) || trials < 1 || trials > 1'000'000 ||
            std::int64_t{P} * length > (std::int64_t{1} << 27))
          throw py::value_error("P = " + std::to_string(P) + ", length = " + std::to_string(length) + ", trials = " +
                                std::to_string(trials) +
                                " (valid: P 1..4096, length 1..2^24, trials 1..10^6, P x length <= 2^27)");
        const allreduce_algorithm how = value_or_raise(parse_allreduce(algorithm));
        const auto datatype_precision = value_or_raise(parse_precision(datatype));
        const cp_measurement c = without_gil([&] { return measure_cp(P, how, datatype_precision, length, trials, seed); });
        py::dict d;
        d["P"] = c.P;
        d["algorithm"] = std::string(to_string(c.algorithm));
        d["datatype"] = c.datatype;
        d["c_max"] = c.c_max;
        d["elements"] = c.elements;
        d["worst_case"] = cp_worst_case(P);
        return d;
      },
      py::arg("P"), py::arg("algorithm") = "ring", py::arg("datatype") = "fp32", py::arg("length") = 4096,
      py::arg("trials") = 4, py::arg("seed") = 1,
      "The AllReduce constant C(P) (Devarakonda et al. 2026, Figure 2): the largest |computed - exact| / (u sum |v_p|) over\n"
      "`trials` sets of P random N(0,1) rank vectors of `length` elements in datatype, for ring, rd\n"
      "(recursive doubling), tree or seq; worst_case is the paper's 2.4 P.");
}

}  // namespace fpemu::python
