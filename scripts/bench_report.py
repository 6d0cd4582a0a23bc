#!/usr/bin/env python3
"""Runs bench_round and bench_gemm once each and reports every figure as a ratio against the
physical limit measured in the same run (memcpy of the same elements; Eigen's native FP32 GEMM),
checked against the targets docs/performance.md states.

    python3 scripts/bench_report.py BUILD_DIR [--out FILE] [--repetitions N] [--only gemm]

Each benchmark runs N times (default 5) in random interleaving, so a slow spell of the machine
hits the limits and the emulated paths alike; ratios use the medians. Exit status 1 when a target
is missed. The report (markdown) goes to stdout and, with --out, to FILE.
"""
import argparse
import datetime
import json
import os
import platform
import subprocess
import sys


def run(binary, repetitions):
    cmd = [binary, "--benchmark_format=json", f"--benchmark_repetitions={repetitions}",
           "--benchmark_enable_random_interleaving=true", "--benchmark_report_aggregates_only=true"]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    medians = {}
    for b in json.loads(out)["benchmarks"]:
        if b.get("aggregate_name") == "median":
            medians[b["run_name"].replace("/real_time", "").replace("/min_time:2.000", "")] = b["items_per_second"]
    return medians


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("build_dir")
    ap.add_argument("--out")
    ap.add_argument("--repetitions", type=int, default=5)
    ap.add_argument("--only", choices=["gemm"], help="run bench_gemm alone")
    args = ap.parse_args()

    gemm = run(os.path.join(args.build_dir, "bench", "bench_gemm"), args.repetitions)
    lines, failed = [], []

    def row(name, value, ratio, target, note=""):
        ok = ratio >= target
        if not ok:
            failed.append(name)
        lines.append(f"| {name} | {value / 1e9:.3f} G/s | {ratio:.2f} | >= {target:g} | {'yes' if ok else 'NO'} | {note} |")

    if not args.only:
        array_rows(run(os.path.join(args.build_dir, "bench", "bench_round"), args.repetitions), lines, row)
    gemm_rows(gemm, lines, row)
    return publish("Benchmark report", datetime.date.today().isoformat(),
                   f"python3 scripts/bench_report.py {' '.join(sys.argv[1:])} ({build_flags(args.build_dir)}), "
                   f"medians of {args.repetitions} interleaved repetitions",
                   lines, failed, "All targets met.", args.out)


def build_flags(build_dir):
    """The build type and C++ flags of a Meson build directory (./dev bench: release, -march=native)."""
    try:
        with open(os.path.join(build_dir, "meson-info", "intro-buildoptions.json")) as f:
            options = {o["name"]: o["value"] for o in json.load(f)}
    except OSError:
        return "build options unknown"
    return f"buildtype {options.get('buildtype')}, cpp_args {' '.join(options.get('cpp_args') or []) or 'none'}"


def array_rows(rnd, lines, row):
    """The array-rounding table: each kernel against memcpy, two threads against one."""
    memcpy1 = rnd["memcpy/threads:1"]
    lines += ["Array rounding, 2^24 binary32 inputs from N(0,1), elements per second (encode writes "
              "storage-width codes: uint16 for bf16/fp16, uint8 for FP8), against memcpy of the same "
              f"elements in the same run ({memcpy1 / 1e9:.3f} G/s on one thread, "
              f"{rnd['memcpy/threads:2'] / 1e9:.3f} G/s on two):", "",
              "| benchmark | rate | ratio | target | met | |", "|---|---|---|---|---|---|"]
    for kind in ("encode", "in_place"):
        for fmt in ("bf16", "fp16", "e4m3fn", "e5m2"):
            for mode in ("rne", "rz", "sr16"):
                name = f"{kind}/{fmt}_{mode}"
                one, two = rnd[f"{name}/threads:1"], rnd[f"{name}/threads:2"]
                row(f"{name}, 1 thread", one, one / memcpy1, 0.4 if mode == "sr16" else 0.7, "vs memcpy")
                row(f"{name}, 2 threads", two, two / one, 1.6, "vs 1 thread")
    for fmt in ("bf16", "e4m3fn"):
        for threads in (1, 2):
            name = f"encode_u32/{fmt}_rne/threads:{threads}"
            lines.append(f"| {name} (uint32 codes) | {rnd[name] / 1e9:.3f} G/s | {rnd[name] / memcpy1:.2f} | | | "
                         "vs memcpy (1 thread) |")
    for fmt in ("bf16", "e4m3fn"):
        name = f"decode/{fmt}/threads:1"
        lines.append(f"| {name} | {rnd[name] / 1e9:.3f} G/s | {rnd[name] / memcpy1:.2f} | | | vs memcpy |")



def gemm_rows(gemm, lines, row):
    """The GEMM table: each emulated GEMM against Eigen's FP32 GEMM; every tensor-core preset that
    has a fast kernel also against h100_e4m3 of the same run; the exact reference of an error
    report against h100_e4m3."""
    native = gemm["native_fp32_eigen"]
    lines += ["", f"Emulated GEMM, M = N = 512, K = 4096, one thread, products per second, against Eigen's FP32 "
              f"GEMM in the same run ({native / 1e9:.2f} G products/s):", "",
              "| benchmark | rate | ratio | target | met | |", "|---|---|---|---|---|---|"]
    row("h100_e4m3 (tensor-core preset)", gemm["h100_e4m3"], gemm["h100_e4m3"] / native, 1 / 15, "vs Eigen FP32")
    row("bf16 in, fp32 RNE accumulation", gemm["bf16_fp32_rne"], gemm["bf16_fp32_rne"] / native, 0.5,
        "vs Eigen FP32")
    for name, value in sorted(gemm.items()):
        if name.startswith("preset/"):
            row(name, value, value / native, 0.15, f"vs Eigen FP32; {value / gemm['h100_e4m3']:.2f} of h100_e4m3")
        elif name.startswith("exact_reference/"):  # an error report's exact products, against the emulation
            row(name, value, value / gemm["h100_e4m3"], 0.1, "vs h100_e4m3, the GEMM it checks")
        elif name not in ("native_fp32_eigen", "h100_e4m3", "bf16_fp32_rne"):
            lines.append(f"| {name} | {value / 1e9:.3f} G/s | {value / native:.3f} | | | vs Eigen FP32 |")


def publish(title, date, command, lines, failed, met, out):
    """Writes a report (the machine, date and command above the table `lines`, the missed targets
    below) to stdout and to the file `out`, if any; returns the exit status, 1 when one is missed."""
    header = [f"# {title}", "", f"- machine: {cpu_model()}, {os.cpu_count()} logical CPUs", f"- date: {date}",
              f"- command: {command}", ""]
    footer = ["", met if not failed else "Missed: " + ", ".join(failed)]
    report = "\n".join(header + lines + footer) + "\n"
    sys.stdout.write(report)
    if out:
        with open(out, "w") as f:
            f.write(report)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
