// Python bindings: the a-priori error bounds (analysis/reference/bounds.hpp) as the submodule fpemu.bounds.
#include "analysis/reference/bounds.hpp"
#include "bindings.hpp"

namespace fpemu::python {

void bind_bounds(py::module_& parent) {
  py::module_ m = parent.def_submodule(
      "bounds",
      "A-priori rounding error bounds (Higham; Higham & Mary; Connolly, Higham & Mary; Blanchard et al.).\n"
      "Each returns a coefficient c with |computed - exact| <= c * S, S = sum |x_i| (sums) or sum |a_i b_i|\n"
      "(dot products), rounded outward so that it bounds the exact expression. u is the bound on one\n"
      "operation's relative error: 2^-p for nearest, 2^(1-p) for directed and stochastic rounding\n"
      "(fpemu.effective_unit_roundoff), except stochastic_sum_*, which take 2^-p and double it.\n"
      "A bound whose hypothesis fails is returned with valid=False, value=inf and the reason.");
  using namespace fpemu::bounds;

  py::class_<coefficient>(m, "coefficient", "A bound's coefficient, its validity and the condition evaluated.")
      .def_readonly("value", &coefficient::value)
      .def_readonly("valid", &coefficient::valid)
      .def_readonly("condition", &coefficient::condition)
      .def_readonly("name", &coefficient::name)
      .def("__float__", [](const coefficient& c) { return c.value; })
      .def("__repr__", [](const coefficient& c) {
        return "fpemu.bounds.coefficient(" + c.name + " = " + std::to_string(c.value) + ", " +
               (c.valid ? "valid" : "not valid") + ": " + c.condition + ")";
      });
  py::class_<probabilistic>(m, "probabilistic", "A bound that holds with at least `probability`.")
      .def_readonly("coefficient", &probabilistic::c)
      .def_readonly("probability", &probabilistic::probability)
      .def_readonly("lam", &probabilistic::lambda)
      .def_property_readonly("value", [](const probabilistic& p) { return p.c.value; })
      .def_property_readonly("valid", [](const probabilistic& p) { return p.c.valid; })
      .def("__float__", [](const probabilistic& p) { return p.c.value; })
      .def("__repr__", [](const probabilistic& p) {
        return "fpemu.bounds.probabilistic(" + p.c.name + " = " + std::to_string(p.c.value) +
               ", probability >= " + std::to_string(p.probability) + ")";
      });

  const auto n = py::arg("n"), u = py::arg("u"), lam = py::arg("lam");
  m.def("gamma", &gamma, n, u, "gamma_n(u) = n u / (1 - n u), valid iff n u < 1 (Higham, Lemma 3.1).");
  m.def("gamma_probabilistic", &gamma_probabilistic, n, u, lam,
        "gamma~_n(lam) = exp(lam sqrt(n) u + n u^2/(1-u)) - 1 with probability 1 - 2 exp(-lam^2 (1-u)^2 / 2)\n"
        "(Higham & Mary 2019, Theorem 2.4).");
  m.def("recursive_sum", &recursive_sum, n, u, "gamma_{n-1}(u).");
  m.def("pairwise_sum", &pairwise_sum, n, u, "gamma_{ceil(log2 n)}(u).");
  m.def("blocked_sum", &blocked_sum, n, py::arg("b"), u, "gamma_{b-1 + ceil(n/b)-1}(u) (Blanchard, Higham & Mary 2020).");
  m.def("kahan_sum", &kahan_sum, n, u, "Compensated summation: 3u + 6 n u^2 + O(u^2), from the standard model alone.");
  m.def("neumaier_sum", &neumaier_sum, n, u, "u + gamma_{n-1}(u)^2 (Ogita, Rump & Oishi 2005), round to nearest.");
  m.def("promoted_sum", &promoted_sum, n, py::arg("nc"), py::arg("u_low"), py::arg("u_high"),
        "(1 + gamma_{nc-1}(u_low)) (1 + gamma_{ceil(n/nc)}(u_high)) - 1: chunks of nc promoted to a high register.");
  m.def("stochastic_sum_deterministic", &stochastic_sum_deterministic, n, u, "gamma_{n-1}(2u), u = 2^-p.");
  m.def("stochastic_sum_probabilistic", &stochastic_sum_probabilistic, n, u, lam,
        "lam sqrt(v gamma_{2n}(v)), v = 2u, with probability 1 - 2 exp(-lam^2/2) (Connolly, Higham & Mary 2021).");
  m.def("recursive_sum_probabilistic", &recursive_sum_probabilistic, n, u, lam,
        "gamma~_{n-1}(lam) with probability 1 - (n-1)(1 - P(lam)) (Higham & Mary 2019).");
  m.def("dot", &dot, n, u, "gamma_n(u) (Higham, eq. (3.5)).");
  m.def("dot_probabilistic", &dot_probabilistic, n, u, lam, "gamma~_n(lam) (Higham & Mary 2019, Theorem 3.1).");
  m.def("dot_lowprec_inputs", &dot_lowprec_inputs, n, py::arg("u_in"), py::arg("u_acc"),
        "2 u_in + u_in^2 + gamma_n(u_acc) (1 + u_in)^2: inputs rounded to u_in, accumulated with u_acc.");
  m.def("block_fma_dot", &block_fma_dot, n, py::arg("b"), py::arg("u_int"), py::arg("u_acc"),
        "(1 + gamma_n(u_int)) (1 + gamma_{ceil(n/b)}(u_acc)) - 1: a chain of mixed-precision block FMAs.");
  m.def("truncating_block_dot", &truncating_block_dot, n, py::arg("b"), py::arg("frac_bits"), py::arg("u_acc"),
        "The tensor-core model with alignment by truncation to frac_bits below the block's largest exponent.");
}

}  // namespace fpemu::python
