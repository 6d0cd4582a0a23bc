// fpemu gpu-check [--quick] [--only TEXT] [--vectors DIR] [--csv FILE] [--json FILE]: every CUDA kernel against the
// emulator on the current GPU (cuda/parity.hpp), one line per check as it completes: the cases
// run, the mismatches and the first mismatch (index, both bit patterns, both values).
//
// Exit status: 0 when every check ran and matched bit for bit; 1 on any mismatch or a check that
// could not run; 77 (the test harnesses' "skipped") when fpemu was built without CUDA or no GPU
// is present, after one line saying which.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>

#include "common.hpp"
#include "cuda/parity/parity.hpp"
#include "fpemu/cuda.hpp"

#ifndef FPEMU_TENSOR_CORE_VECTORS
#define FPEMU_TENSOR_CORE_VECTORS "tests/data/tensor-core-vectors"
#endif

namespace fpemu::cli {
namespace {

struct gpu_check_cli_options {
  cuda::gpu_check_options check;
  output_options output;
};

void run_checks(const gpu_check_cli_options& o) {
  output_sinks sinks(o.output);
  table_writer table(sinks, {"kernel", "cases", "mismatches", "first_mismatch", "error"});
  const bool text = sinks.text();
  const auto device = cuda::current_device();
  if (!device) {
    if (text) std::printf("fpemu gpu-check: skipped: %s\n", device.message().c_str());
    table.finish();
    sinks.commit();
    throw exit_status{77};
  }
  if (text) {
    std::printf("fpemu gpu-check on %s (compute capability %d.%d, %d SMs, %.0f GiB), CUDA driver %d, runtime %d, "
                "kernels built for %s\n",
                device->name.c_str(), device->major, device->minor, device->multiprocessors,
                static_cast<double>(device->memory_bytes) / (1u << 30), device->driver_version,
                device->runtime_version, cuda::compiled_targets().c_str());
    std::printf("%-72s %11s %10s  %s\n", "kernel", "cases", "mismatches", "first mismatch");
  }
  const auto results = cuda::run_gpu_checks(o.check, [&](const cuda::parity_check& c) {
    table.row({c.kernel, c.cases, c.mismatches, c.first_mismatch, c.error});
    if (!text) return;
    std::printf("%-72s %11lld %10lld  %s\n", c.kernel.c_str(), c.cases, c.mismatches,
                !c.error.empty() ? ("ERROR: " + c.error).c_str() : c.first_mismatch.c_str());
    std::fflush(stdout);
  });
  table.finish();
  long long passed = 0, failed = 0, cases = 0;
  for (const auto& c : results) {
    (c.passed() ? passed : failed) += 1;
    cases += c.cases;
  }
  if (text) std::printf("%zu checks, %lld cases: %lld passed, %lld failed\n", results.size(), cases, passed, failed);
  if (results.empty()) fail("--only " + quote(o.check.only) + " matches no check");
  sinks.commit();
  if (failed != 0) throw exit_status{1};
}

}  // namespace

command add_gpu_check(CLI::App& parent) {
  auto o = std::make_shared<gpu_check_cli_options>();
  o->check.vectors_dir = FPEMU_TENSOR_CORE_VECTORS;
  CLI::App* app = parent.add_subcommand("gpu-check", "Check every CUDA kernel against the emulator on this GPU, bit for bit");
  app->add_flag("--quick", o->check.quick, "Fewer random cases per check (the exhaustive checks stay exhaustive)");
  app->add_option("--only", o->check.only, "Run only the checks whose name contains TEXT")->type_name("TEXT");
  app->add_option("--vectors", o->check.vectors_dir, "Folder of the published tensor-core vectors")
      ->capture_default_str()
      ->type_name("DIR");
  add_output_options(*app, o->output);
  app->footer(
      "Kernels: bulk conversion (every target format and rounding, f32/bf16/fp16 sources), the hardware\n"
      "cvt fast paths (all 2^32 binary32 inputs against the core), fused AdamW/SGD steps (bf16 nearest,\n"
      "Kahan, stochastic, fp32 master), gradient accumulation, tensor-core GEMMs (mma.sync, wgmma) with\n"
      "and without promotion against the device's preset, single instructions against the published\n"
      "hardware vectors, and the emulated block-FMA GEMM. Exit status: 0 all matched, 1 a mismatch or\n"
      "a check that could not run, 77 no GPU (or fpemu built without CUDA), 2 bad options.");
  return {app, [o, app](const std::vector<std::string>& rest) {
            no_trailing("gpu-check", rest);
            // A folder given by hand is checked before the device query, so that a typo is
            // reported on any machine (the built-in default is only needed by the vector checks).
            std::error_code ec;
            if (app->count("--vectors") != 0 && !std::filesystem::is_directory(o->check.vectors_dir, ec))
              fail("--vectors " + quote(o->check.vectors_dir) +
                   " is not a folder: expected the folder of the published tensor-core vectors");
            run_checks(*o);
          }};
}

}  // namespace fpemu::cli
