#!/usr/bin/env python3
"""Runs bench_round (once per SIMD target the CPU can run) and bench_gemm, and reports every figure
as a ratio against the physical limit measured in the same run (memcpy of the same elements;
Eigen's FP32 GEMM built for the host CPU), checked against the targets docs/performance.md states.

    python3 scripts/bench_report.py BUILD_DIR [--out FILE] [--repetitions N] [--only gemm|round|ops]
                                    [--targets AVX3,AVX2,SSE4] [--min-time S]

Each benchmark runs N times (default 3) in random interleaving, so a slow spell of the machine
hits the limits and the emulated paths alike; ratios use the medians. The array kernels are run
with the dispatch forced to each target in turn (default: every target bench_round lists but
SSSE3 and the scalar ones); every table names its target and the CPU model. Exit status 1 when a
target is missed. The report (markdown) goes to stdout and, with --out, to FILE.
"""
import argparse
import collections
import datetime
import json
import os
import platform
import subprocess
import sys

# The array kernels' targets (docs/performance.md): one thread against memcpy's element rate,
# two threads against one.
DIRECTED = ("rne", "rz", "ru", "rd", "rto")
STOCHASTIC = ("sr16", "sr-exact")
FORMATS = ("bf16", "fp16", "e4m3fn", "e5m2", "e3m2fn", "e2m3fn", "e2m1fn")
TARGET_DIRECTED, TARGET_STOCHASTIC, TARGET_DECODE, TARGET_THREADS = 0.8, 0.5, 1.0, 1.7
TARGET_BF16_IN_PLACE = 1.2  # round in place to bf16, rne: what a peer's one-buffer bf16 path reaches
# Element-wise arithmetic on storage-width codes, one thread, against memcpy's element rate.
OP_FORMATS, OP_MODES = ("bf16", "fp16", "e4m3fn", "e5m2"), ("rne", "rd", "sr16")
OPS = ("add", "mul", "div", "fma", "sqrt")
TARGET_OPS = 0.5


def run(binary, repetitions, extra=()):
    """Medians of items_per_second by benchmark name, and the run's JSON context."""
    cmd = [binary, "--benchmark_format=json", f"--benchmark_repetitions={repetitions}",
           "--benchmark_enable_random_interleaving=true", "--benchmark_report_aggregates_only=true", *extra]
    data = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)
    medians = {}
    for b in data["benchmarks"]:  # one repetition has no aggregates: its single run is the median
        if b.get("aggregate_name") == "median" or (repetitions == 1 and b.get("run_type") == "iteration"):
            name = b["run_name"].replace("/real_time", "").replace("/min_time:2.000", "")
            medians[name] = b["items_per_second"]
    return medians, data.get("context", {})


def cpu_model():
    """The model name, with its family and model numbers: a virtual machine may show only
    "Intel(R) Xeon(R) Processor", and the numbers still tell one generation from another."""
    fields = {}
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                key, _, value = line.partition(":")
                if not line.strip():
                    break  # the first CPU's fields only
                fields.setdefault(key.strip(), value.strip())
    except OSError:
        pass
    name = fields.get("model name") or platform.processor() or "unknown CPU"
    if "cpu family" in fields and "model" in fields:
        name += f" (family {fields['cpu family']}, model {fields['model']})"
    return name


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("build_dir")
    ap.add_argument("--out")
    ap.add_argument("--repetitions", type=int, default=3)
    ap.add_argument("--only", choices=["gemm", "round", "ops"],
                    help="run bench_gemm or bench_round alone, or bench_round's element-wise arithmetic alone")
    ap.add_argument("--targets", help="comma-separated SIMD targets for bench_round (default: all but SSSE3, scalar)")
    ap.add_argument("--min-time", type=float, default=0.2, help="bench_round's seconds per benchmark and repetition")
    args = ap.parse_args()

    lines, failed = [], []

    def row(name, value, ratio, target, note=""):
        ok = ratio >= target
        if not ok:
            failed.append(name)
        lines.append(f"| {name} | {value / 1e9:.3f} G/s | {ratio:.2f} | >= {target:g} | {'yes' if ok else 'NO'} | {note} |")

    if args.only != "gemm":
        binary = os.path.join(args.build_dir, "bench", "bench_round")
        listed = subprocess.run([binary, "--list-targets"], check=True, capture_output=True, text=True).stdout.split()
        targets = args.targets.split(",") if args.targets else [t for t in listed if t not in ("SSSE3", "SCALAR", "EMU128")]
        only_ops = ["--benchmark_filter=^(memcpy|apply|op_traffic)/"] if args.only == "ops" else []
        for target in targets:
            rnd, context = run(binary, args.repetitions,
                               [f"--target={target}", f"--benchmark_min_time={args.min_time}", *only_ops])
            if args.only != "ops":
                array_rows(rnd, context.get("fpemu_target", target), lines, failed)
            op_rows(rnd, context.get("fpemu_target", target), lines, failed)
    if args.only not in ("round", "ops"):
        gemm_rows(run(os.path.join(args.build_dir, "bench", "bench_gemm"), args.repetitions)[0], lines, row)
    return publish("Benchmark report", datetime.date.today().isoformat(),
                   f"python3 scripts/bench_report.py {' '.join(sys.argv[1:])} ({build_flags(args.build_dir)}), "
                   f"medians of {args.repetitions} interleaved repetitions",
                   lines, failed, "All targets met.", args.out)


def build_flags(build_dir):
    """The build type and C++ flags of a Meson build directory."""
    try:
        with open(os.path.join(build_dir, "meson-info", "intro-buildoptions.json")) as f:
            options = {o["name"]: o["value"] for o in json.load(f)}
    except OSError:
        return "build options unknown"
    return f"buildtype {options.get('buildtype')}, cpp_args {' '.join(options.get('cpp_args') or []) or 'none'}"


def array_rows(rnd, target, lines, failed):
    """The array tables of one target: per data set, each kernel and mode against memcpy (one
    thread) and two threads against one, formats as columns. A missed target is marked with *."""
    memcpy1, memcpy2 = rnd["memcpy/threads:1"], rnd["memcpy/threads:2"]

    def cell(name, ratio, target_ratio):
        if ratio >= target_ratio:
            return f"{ratio:.2f}"
        failed.append(name)
        return f"{ratio:.2f}*"

    lines += ["", f"### Array kernels dispatched to {target}", "",
              f"2^24 binary32 inputs; elements per second against memcpy of the same elements in the same run "
              f"({memcpy1 / 1e9:.3f} G/s on one thread, {memcpy2 / 1e9:.3f} G/s on two). encode writes "
              "storage-width codes (uint8 up to 8 bits, uint16 for bf16/fp16), and decode reads them. "
              f"Targets: one thread >= {TARGET_DIRECTED:g} of memcpy in {', '.join(DIRECTED)}, >= "
              f"{TARGET_STOCHASTIC:g} in {', '.join(STOCHASTIC)}, decode >= {TARGET_DECODE:g}, round in place "
              f"to bf16 (rne) >= {TARGET_BF16_IN_PLACE:g}; two threads >= {TARGET_THREADS:g} x one thread. "
              "\\* marks a miss.", ""]
    header = "| kernel, mode | " + " | ".join(FORMATS) + " |"

    def matrix(title, ratio, want, suffix):
        """One table: a row per kernel and mode and one for decode, a column per format; ratio(name)
        and want(kind, fmt, mode) of the benchmark name without its thread count."""
        lines.extend([title, "", header, "|---" * (len(FORMATS) + 1) + "|"])
        rows = [(kind, mode) for kind in ("encode", "in_place") for mode in DIRECTED + STOCHASTIC] + [("decode", None)]
        for kind, mode in rows:
            names = [f"{kind}/{data}/{fmt}_{mode}" if mode else f"decode/{data}/{fmt}" for fmt in FORMATS]
            cells = [cell(f"{target} {name}{suffix}", ratio(name), want(kind, fmt, mode))
                     for name, fmt in zip(names, FORMATS)]
            lines.append(f"| {kind if mode is None else f'{kind} {mode}'} | " + " | ".join(cells) + " |")
        lines.append("")

    def one_thread_target(kind, fmt, mode):
        if mode is None:
            return TARGET_DECODE
        if kind == "in_place" and fmt == "bf16" and mode == "rne":
            return TARGET_BF16_IN_PLACE
        return TARGET_DIRECTED if mode in DIRECTED else TARGET_STOCHASTIC

    if "keystream/width:64" in rnd:  # the words sr16 (16 bits an element) and sr-exact (its high 32) read
        bits = ", ".join(f"{rnd[f'keystream/width:{w}'] / memcpy1:.2f} for {mode}"
                         for w, mode in ((16, "sr16"), (64, "sr-exact")))
        lines += ["The random bits alone (keystream: the Philox words the stochastic modes read, made in the "
                  f"kernels' chunks, no rounding), against memcpy's element rate: {bits}; encode and round in "
                  "place in those modes run below these.", ""]
    for data in ("normal", "wide"):
        matrix(f"{data} data, one thread, x memcpy:", lambda name: rnd[f"{name}/threads:1"] / memcpy1,
               one_thread_target, "")
        matrix(f"{data} data, two threads, x one thread:",
               lambda name: rnd[f"{name}/threads:2"] / rnd[f"{name}/threads:1"], lambda *_: TARGET_THREADS,
               " 2 threads")
    sizes = sorted({int(k.split("/n:")[1].split("/")[0]) for k in rnd if k.startswith("encode_first/")})
    lines += ["Where the thread pool pays: round_array to bf16 (rne, normal data) on the first n elements, "
              "two threads against one (no target; the pool starts at the size array.cpp states):", "",
              "| n | " + " | ".join(f"2^{n.bit_length() - 1}" for n in sizes) + " |", "|---" * (len(sizes) + 1) + "|",
              "| two threads / one | " + " | ".join(
                  f"{rnd[f'encode_first/bf16_rne/n:{n}/threads:2'] / rnd[f'encode_first/bf16_rne/n:{n}/threads:1']:.2f}"
                  for n in sizes) + " |", ""]


def op_rows(rnd, target, lines, failed):
    """Element-wise arithmetic of one target: per data set, a row per op and mode, formats as
    columns, one thread against memcpy's element rate. A missed target is marked with *."""
    memcpy1 = rnd["memcpy/threads:1"]
    lines += ["", f"### Element-wise arithmetic dispatched to {target}", "",
              f"apply, apply_fma, apply_sqrt on 2^24 storage-width codes (uint16 for bf16 and fp16, uint8 for "
              f"the FP8 formats, timed once their table of results is made; the data set rounded to the format; "
              f"sqrt of magnitudes), one thread, elements per second against memcpy of 2^24 floats in the same run "
              f"({memcpy1 / 1e9:.3f} G/s). Target >= {TARGET_OPS:g}; \\* marks a miss.", ""]
    if "op_traffic/bytes:2/operands:2" in rnd:
        lines += ["The bytes alone (op_traffic: out = a ^ b (^ c) on arrays of the same width, no arithmetic), "
                  "against memcpy's element rate: no apply on such arrays exceeds these.", "",
                  "| code width | one operand (sqrt) | two (add, mul, div) | three (fma) |", "|---|---|---|---|"]
        for width in (1, 2, 4):
            lines.append(f"| {8 * width} bits | " + " | ".join(
                f"{rnd[f'op_traffic/bytes:{width}/operands:{k}'] / memcpy1:.2f}" for k in (1, 2, 3)) + " |")
        lines.append("")
    for data in ("normal", "wide"):
        lines += [f"{data} data:", "", "| op, mode | " + " | ".join(OP_FORMATS) + " |",
                  "|---" * (len(OP_FORMATS) + 1) + "|"]
        for mode in OP_MODES:
            for op in OPS:
                cells = []
                for fmt in OP_FORMATS:
                    name = f"apply/{data}/{fmt}_{mode}/{op}"
                    ratio = rnd[name] / memcpy1
                    if ratio < TARGET_OPS:
                        failed.append(f"{target} {name}")
                    cells.append(f"{ratio:.2f}" + ("" if ratio >= TARGET_OPS else "*"))
                lines.append(f"| {op} {mode} | " + " | ".join(cells) + " |")
        lines.append("")


def gemm_rows(gemm, lines, row):
    """The GEMM table: each emulated GEMM against Eigen's FP32 GEMM; every tensor-core preset that
    has a fast kernel also against h100_e4m3 of the same run; the exact reference of an error
    report against h100_e4m3."""
    native = gemm["native_fp32_eigen"]
    lines += ["", f"Emulated GEMM, M = N = 512, K = 4096, one thread, products per second, against Eigen's FP32 "
              f"GEMM in the same run ({native / 1e9:.2f} G products/s):", "",
              "| benchmark | rate | ratio | target | met | |", "|---|---|---|---|---|---|"]
    row("h100_e4m3 (tensor-core preset)", gemm["h100_e4m3"], gemm["h100_e4m3"] / native, 0.15, "vs Eigen FP32")
    row("bf16 in, fp32 RNE accumulation", gemm["bf16_fp32_rne"], gemm["bf16_fp32_rne"] / native, 0.6,
        "vs Eigen FP32")
    for name, value in sorted(gemm.items()):
        if name.startswith("preset/"):
            row(name, value, value / native, 0.15, f"vs Eigen FP32; {value / gemm['h100_e4m3']:.2f} of h100_e4m3")
        elif name.startswith("exact_reference/"):  # an error report's exact products, against the emulation
            row(name, value, value / gemm["h100_e4m3"], 0.1, "vs h100_e4m3, the GEMM it checks")
        elif name not in ("native_fp32_eigen", "h100_e4m3", "bf16_fp32_rne"):
            lines.append(f"| {name} | {value / 1e9:.3f} G/s | {value / native:.3f} | | | vs Eigen FP32 |")


def missed_line(failed):
    """The missed targets: the cells of a SIMD target ("AVX3 encode/...") counted by target, as
    the tables mark each with *, the others (GEMM rows) by name."""
    by_target = collections.Counter(name.split(" ", 1)[0] for name in failed if " " in name)
    others = [name for name in failed if " " not in name]
    return f"Missed ({len(failed)}): " + ", ".join([f"{n} cells on {t}" for t, n in by_target.items()] + others)


def publish(title, date, command, lines, failed, met, out):
    """Writes a report (the machine, date and command above the table `lines`, the missed targets
    below) to stdout and to the file `out`, if any; returns the exit status, 1 when one is missed."""
    header = [f"# {title}", "", f"- machine: {cpu_model()}, {os.cpu_count()} logical CPUs", f"- date: {date}",
              f"- command: {command}", ""]
    footer = ["", met if not failed else missed_line(failed)]
    report = "\n".join(header + lines + footer) + "\n"
    sys.stdout.write(report)
    if out:
        with open(out, "w") as f:
            f.write(report)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
