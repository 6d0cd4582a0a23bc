// fpemu allreduce [--P LIST] [--algorithm LIST] [--datatype LIST] [--length L] [--trials T]
//                 [--seed S] [--csv FILE] [--json FILE]
//
// The AllReduce constant C(P) of Devarakonda et al. 2026 (Assumption 5.4, Figure 2), measured on the simulated
// collectives of analysis/casgd/allreduce.hpp: one row per P, algorithm and datatype, next to the
// paper's worst-case trace bound 2.4P and its empirical NCCL fit 4.62 P^0.56. --csv FILE and
// --json FILE write the same rows to FILE.tmp and rename it to FILE when complete.
#include <CLI/CLI.hpp>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "analysis/casgd/allreduce.hpp"
#include "common.hpp"
#include "fpemu/spec.hpp"
#include "workload.hpp"

namespace fpemu::cli {
namespace {


constexpr std::int64_t kMaxP = 4096;
constexpr std::int64_t kMaxLength = std::int64_t{1} << 24;
constexpr std::int64_t kMaxTrials = 1'000'000;
// P x length doubles are held at once (and copied once for the reduction): 2^27 is 1 GiB.
constexpr std::int64_t kMaxAllreduceElements = std::int64_t{1} << 27;

struct allreduce_cli_options {
  std::string P = "4,8,16,32,64,128,256";
  std::string algorithm = "ring,rd,tree,seq";
  std::string datatype = "fp32,bf16,fp16";
  int length = 4096;
  int trials = 4;
  std::uint64_t seed = 1;
  output_options output;
};

casgd::precision require_datatype(const std::string& spec) {
  const expected<casgd::precision> p = casgd::parse_precision(spec);
  if (!p) fail("--datatype " + quote(spec) + ": " + p.message() + " (or fp64)");
  return *p;
}

void run_allreduce(const allreduce_cli_options& o) {
  std::vector<int> Ps;
  for (const std::string& s : split_list(o.P, "--P")) Ps.push_back(std::stoi(s));  // checked by list_check
  std::vector<casgd::allreduce_algorithm> algorithms;
  for (const std::string& s : split_list(o.algorithm, "--algorithm"))
    algorithms.push_back(value_or_fail(casgd::parse_allreduce(s), "--algorithm"));
  std::vector<casgd::precision> datatypes;
  for (const std::string& s : split_list(o.datatype, "--datatype")) datatypes.push_back(require_datatype(s));
  const int length = o.length;
  const int trials = o.trials;
  const std::uint64_t seed = o.seed;
  for (const int P : Ps)
    if (std::int64_t{P} * length > kMaxAllreduceElements)
      fail("--P " + std::to_string(P) + " with --length " + std::to_string(length) + " holds " +
           std::to_string(std::int64_t{P} * length) + " elements: valid P x length <= " +
           std::to_string(kMaxAllreduceElements));

  output_sinks sinks(o.output);
  table_writer table(sinks, {"P", "algorithm", "datatype", "c_max", "c_max_times_u", "u", "elements", "length",
                             "trials", "seed", "worst_case_2_4P", "paper_fit_4_62P0_56"});
  const auto text = [&sinks](auto... args) {
    if (sinks.text()) print(args...);
  };

  text("fpemu allreduce: C(P) = max over elements of |v_hat - v| / (u * sum_p |v_p|)\n");
  text("rank vectors: %d elements of N(0,1) rounded into the datatype, %d trial%s, seed %llu\n", length, trials,
        trials == 1 ? "" : "s", static_cast<unsigned long long>(seed));
  text("%6s  %-9s  %-10s  %10s  %10s  %9s  %8s  %10s\n", "P", "algorithm", "datatype", "C(P)", "C(P)*u",
        "elements", "2.4P", "4.62P^0.56");

  const std::uint64_t rows = Ps.size() * algorithms.size() * datatypes.size();
  progress bar("allreduce", rows);
  std::uint64_t row = 0;
  for (const int P : Ps) {
    for (const casgd::allreduce_algorithm a : algorithms) {
      for (const casgd::precision& d : datatypes) {
        bar.relabel("P = " + std::to_string(P) + " " + std::string(casgd::to_string(a)) + " " + d.name());
        bar.set(row++);
        const casgd::cp_measurement m = casgd::measure_cp(P, a, d, length, trials, seed);
        const double u = d.unit_roundoff();
        bar.finish();  // the row replaces the progress line
        text("%6d  %-9s  %-10s  %10.4f  %10.3e  %9ld  %8.1f  %10.1f\n", P, std::string(casgd::to_string(a)).c_str(),
              m.datatype.c_str(), m.c_max, m.c_max * u, m.elements, casgd::cp_worst_case(P), casgd::cp_nccl_fit(P));
        std::cout.flush();
        table.row({P, std::string(casgd::to_string(a)), m.datatype, m.c_max, m.c_max * u, u, m.elements, length,
                   trials, seed, casgd::cp_worst_case(P), casgd::cp_nccl_fit(P)});
      }
    }
  }
  bar.finish();
  table.finish();
  sinks.commit();
}

}  // namespace

command add_allreduce(CLI::App& parent) {
  auto o = std::make_shared<allreduce_cli_options>();
  CLI::App* app =
      parent.add_subcommand("allreduce", "The AllReduce constant C(P) of each algorithm and datatype (Devarakonda et al. 2026)");
  app->add_option("--P", o->P, "Rank counts")
      ->transform(list_check(integer_check(1, kMaxP)))
      ->capture_default_str()
      ->type_name("LIST");
  app->add_option("--algorithm", o->algorithm, "Algorithms")
      ->transform(list_check(choice_check({"ring", "rd", "tree", "seq"})))
      ->capture_default_str()
      ->type_name("LIST");
  app->add_option("--datatype", o->datatype, "Collective datatypes, comma-separated: format specs or fp64")
      ->transform(list_check(parser_check(
          [](const std::string& spec) {
            const expected<casgd::precision> p = casgd::parse_precision(spec);
            return p ? std::string{} : p.message() + " (or fp64)";
          },
          "")))
      ->capture_default_str()
      ->type_name("LIST");
  app->add_option("--length", o->length, "Elements per rank vector (P x length <= 2^27)")
      ->transform(integer_check(1, kMaxLength))
      ->capture_default_str()
      ->type_name("L");
  app->add_option("--trials", o->trials, "Sets of random rank vectors per row")
      ->transform(integer_check(1, kMaxTrials))
      ->capture_default_str()
      ->type_name("T");
  add_seed_option(*app, o->seed, "Philox seed of the rank vectors");
  add_output_options(*app, o->output);
  app->footer(
      "C(P) is the constant of Assumption 5.4 of Devarakonda et al. 2026: an AllReduce of P rank\n"
      "vectors v_p into a datatype of unit roundoff u returns v_hat with\n"
      "|v_hat - v| <= C(P) u sum_p |v_p| (+ O(u^2)), v = sum_p v_p. This command measures it on simulated collectives, as Figure 2 does on NCCL\n"
      "(there against an FP64 reference, here against the exact sum): every rank vector is L\n"
      "(--length) N(0,1) values rounded into the datatype; the vectors are reduced in the datatype by\n"
      "the algorithm (every addition rounded to nearest-even, in the algorithm's grouping) and\n"
      "compared, element by element, with the exact sum of the rounded vectors; C(P) is the largest\n"
      "|v_hat - v| / (u sum_p |v_p|) over all elements of all --trials (elements with sum |v_p| = 0\n"
      "are skipped). Algorithms (analysis/casgd/allreduce.hpp):\n"
      "  ring  reduce-scatter + all-gather: chunk c is summed from rank c round the ring (NCCL/MPICH)\n"
      "  rd    recursive doubling (butterfly), extra ranks folded in first\n"
      "  tree  binary tree in heap order, node p = (v_p + left subtree) + right subtree\n"
      "  seq   ((v_0 + v_1) + v_2) + ... in rank order\n"
      "The deterministic bound of the grouping is gamma_n(u)/u with n the most roundings any term\n"
      "sees (P - 1 for ring and seq, about log2 P for rd and 2 log2 P for tree); random signs make the\n"
      "measured C(P) far smaller. For reference each row also shows the paper's worst-case trace\n"
      "bound 2.4P, used when no measurement is given, and its empirical fit 4.62 P^0.56 to NCCL\n"
      "measurements on Perlmutter. The rank vectors depend only on --seed (Philox, Box-Muller).\n"
      "Columns: P, algorithm, datatype, C(P), C(P)*u (the relative error bound it gives), elements\n"
      "checked, 2.4P, 4.62P^0.56. --csv FILE writes the header 'P,algorithm,datatype,c_max,\n"
      "c_max_times_u,u,elements,length,trials,seed,worst_case_2_4P,paper_fit_4_62P0_56' and one row\n"
      "each (--json FILE: the same rows as an array of objects). On a terminal, stderr shows the\n"
      "progress with an ETA.");
  return {app, [o](const std::vector<std::string>& rest) {
            no_trailing("allreduce", rest);
            run_allreduce(*o);
          }};
}

}  // namespace fpemu::cli
