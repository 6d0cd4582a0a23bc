// Python bindings: communication-avoiding SGD for GLMs (Devarakonda et al., "Mixed-Precision
// Communication-Avoiding SGD for Generalized Linear Models on GPUs", 2026) with its nine precision
// slots, Table 3's recipes, Theorem 5.7's budget and the AllReduce constant C(P). Ranks are simulated
// in this process (the MPI mode is the CLI's, under mpirun).
#include <cmath>
#include <string>
#include <vector>

#include "analysis/casgd/allreduce.hpp"
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

py::dict casgd_impl(const std::string& data, const std::string& loss, const std::string& recipe,
                    const std::vector<std::string>& slot_overrides, int b, int s, int P, double eta, int outer,
                    std::uint64_t seed, std::uint64_t data_seed, const std::string& allreduce,
                    const std::optional<int>& eval_every, int threads, const std::optional<int>& budget_at,
                    const py::object& cp) {
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

  // Everything from here is C++: the data (synthesised or read) and the run, stopped by Ctrl-C.
  glm_data full;
  std::unique_ptr<collective> comm;
  column_blocks blocks;
  std::vector<int> at;
  std::vector<double> losses;
  std::optional<local_error> budget;
  run_hooks hooks;
  hooks.evaluated = [&](int h, double F) {
    at.push_back(h);
    losses.push_back(F);
  };
  hooks.before_outer = [&](int h, const rank_vectors& x) {
    if (budget_at && h == *budget_at) budget = value_or_raise(local_error_at(blocks, o, h, x, C_P));
  };
  const rank_vectors x = without_gil([&] {
    full = value_or_raise(load_data(data, o.loss, data_seed));
    raise_if(check(o, full.m, full.n));
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
  d["x"] = doubles_array(comm->gather(x));
  d["slots"] = o.precision.describe();
  d["m"] = full.m;
  d["n"] = full.n;
  if (budget) d["budget"] = budget_dict(*budget);
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
        py::arg("budget_at") = py::none(), py::arg("cp") = "worst",
        "CA-SGD (Devarakonda et al. 2026, Algorithm 1) on P simulated ranks with a Table 3 recipe (A..I) and slot overrides\n"
        "('u_c=fp32', 'u_G=bf16,fp32', 'u_G=e4m3fn,h100-e4m3', ...). data: 'synth:M,N', 'heart_scale' or a\n"
        "LIBSVM/CSV file; rows are l2-normalised. s=1 is mini-batch SGD. Returns a dict: outer and sgd_steps\n"
        "of each evaluation (every eval_every outer iterations, default outer/20), loss F(x) there, the final\n"
        "weights x, slots, m, n, and with budget_at=h Theorem 5.7's budget at outer iteration h (E per slot,\n"
        "K_s, T_*, omega, tau_G, Omega, sum, bound, valid) next to the measured local error against a\n"
        "binary64 run from the same x and samples; cp: C(P) for it, 'worst' (2.4 P), 'nccl-fit' (4.62 P^0.56) or a number.");

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
