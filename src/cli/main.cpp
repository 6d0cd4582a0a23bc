// The fpemu command: bit-exact emulation of floating-point formats from the shell.
//
//   fpemu formats                    the named formats and their derived quantities
//   fpemu round -f FMT [VALUE...]    round exact decimal/hex values into a format
//   fpemu decode -f FMT CODE...      the value, fields and class of codes
//   fpemu op OP --format FMT         arithmetic on codes read from stdin
//   fpemu mma --preset NAME          tensor-core dot products read from stdin
//   fpemu sum -f FMT --n N           summation methods on random data: error next to the bounds
//   fpemu dot --k K                  a random dot product: error against exact, bounds
//   fpemu gemm --m M --n N --k K     a random GEMM: max/mean relative error, speed
//   fpemu optim --optimizer NAME     an optimizer on a fixed problem: trajectory, memory table
//   fpemu train --data NAME          training runs under precision policies
//   fpemu casgd --loss L --data D    CA-SGD for GLMs with nine precision slots (also under mpirun)
//   fpemu allreduce                  the AllReduce constant C(P) of each algorithm and datatype
//   fpemu gpu-check                  every CUDA kernel against the emulator on this GPU
//   fpemu demo                       a short tour
//
// Commands that print a table take --csv FILE and --json FILE ('-': standard output).
//
// Exit status: 0 on success and for --help/--version; 2 for any bad input, after one line
// "fpemu: <message>" on stderr that names the bad value and what is valid. gpu-check also exits
// 1 when a kernel disagrees with the emulator and 77 when there is no GPU to check.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <exception>
#include <iostream>
#include <string>
#include <string_view>
#include <vector>

#include "common.hpp"
#include "fpemu/version.hpp"

// Declared here rather than in common.hpp, with the same shape as the other add_* functions.
namespace fpemu::cli {
command add_mma(CLI::App& parent);
command add_sum(CLI::App& parent);
command add_dot(CLI::App& parent);
command add_gemm(CLI::App& parent);
command add_optim(CLI::App& parent);
command add_train(CLI::App& parent);
command add_casgd(CLI::App& parent);
command add_allreduce(CLI::App& parent);
command add_gpu_check(CLI::App& parent);
}

namespace {

int report(const std::string& message) {
  std::cout.flush();
  std::fputs(("fpemu: " + fpemu::cli::one_line(message) + "\n").c_str(), stderr);
  return 2;
}

int run(int argc, char** argv) {
  std::ios::sync_with_stdio(false);  // round, op and mma stream stdin to stdout; stderr is written with fputs
  CLI::App app{"fpemu: bit-exact software emulation of floating-point formats "
               "(FP8, FP6, FP4, bf16, fp16, tf32, fp32, eXmY).",
               "fpemu"};
  app.set_version_flag("--version", "fpemu " FPEMU_VERSION_STRING);
  app.footer("Run 'fpemu SUBCOMMAND --help' for the options of a subcommand.");

  std::vector<fpemu::cli::command> commands{
      fpemu::cli::add_formats(app), fpemu::cli::add_round(app), fpemu::cli::add_decode(app),
      fpemu::cli::add_op(app),      fpemu::cli::add_mma(app),    fpemu::cli::add_sum(app),
      fpemu::cli::add_dot(app),     fpemu::cli::add_gemm(app),   fpemu::cli::add_optim(app),
      fpemu::cli::add_train(app),   fpemu::cli::add_casgd(app),  fpemu::cli::add_allreduce(app),
      fpemu::cli::add_gpu_check(app), fpemu::cli::add_demo(app),
  };

  // The messages that list the subcommands take their names from the registered ones.
  std::string names;
  for (std::size_t i = 0; i < commands.size(); ++i)
    names += (i == 0 ? "" : i + 1 == commands.size() ? " or " : ", ") + commands[i].app->get_name();

  // CLI11 sees the arguments before the first "--"; the rest go to the subcommand as they are.
  std::vector<char*> head(argv, argv + argc);
  std::vector<std::string> after_dashes;
  for (std::size_t i = 1; i < head.size(); ++i) {
    if (std::string_view(head[i]) == "--") {
      after_dashes.assign(head.begin() + static_cast<std::ptrdiff_t>(i) + 1, head.end());
      head.resize(i);
      break;
    }
  }
  try {
    app.parse(static_cast<int>(head.size()), head.data());
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help, --help-all, --version
    // A bad value: the option's check names the option, the value and what is valid.
    if (dynamic_cast<const CLI::ValidationError*>(&e) != nullptr) return report(e.what());
    // Point to the help of the subcommand that was being parsed, or list the subcommands.
    const auto selected = app.get_subcommands();
    if (!selected.empty())
      return report(std::string(e.what()) + " (see fpemu " + selected.front()->get_name() + " --help)");
    return report(std::string(e.what()) + " (subcommands: " + names + "; see fpemu --help)");
  }

  for (const auto& c : commands) {
    if (c.app->parsed()) {
      c.run(after_dashes);
      std::cout.flush();
      return std::cout ? 0 : report("cannot write to standard output");
    }
  }
  if (!after_dashes.empty()) return report("unexpected arguments after '--': " + after_dashes.front());
  return report("a subcommand is required: " + names + " (see fpemu --help)");
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const fpemu::cli::usage_error& e) {
    return report(e.what());
  } catch (const fpemu::cli::exit_status& e) {
    std::cout.flush();
    return e.code;
  } catch (const std::exception& e) {
    return report(std::string("internal error: ") + e.what());
  } catch (...) {
    return report("internal error: unknown exception");
  }
}
