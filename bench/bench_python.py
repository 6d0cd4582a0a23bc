#!/usr/bin/env python3
"""fpemu.round from Python against the C++ array path, in the same run: 2^24 float32 values from
N(0,1) rounded to bf16 (nearest-even) into a preallocated uint16 array, from Python
(`fpemu.round(x, 'bf16', out=buf)`) and by bench_round's `encode/normal/bf16_rne` (round_array into
storage-width codes), with one and with two threads; beside ml_dtypes' `astype(bfloat16)` and
torch's `.to(torch.bfloat16)` on the same data, and memcpy of the same elements as the limit.
Then element-wise arithmetic: `fpemu.add(a, b, fmt, out=c)` and div on 2^24 storage-width codes
(N(0,1) rounded to fmt) with one thread, against bench_round's `apply/normal/<fmt>_rne/<op>`; and
`fpemu.decode(codes, fmt, out=v)` of the same codes into float32, one thread, against
bench_round's `decode/normal/<fmt>`.

    python bench/bench_python.py BUILD_DIR [--out FILE] [--repetitions N]

Run with the interpreter of a venv where fpemu is installed (`./dev bench` uses build-venv/numpy1,
which has ml_dtypes and Debian's torch); BUILD_DIR holds bench/bench_round. The C++ benchmark and
the Python timings alternate N times (default 5); rates are medians. Exit status 1 when Python
reaches less than 0.9 of the C++ path's element rate (the target of docs/performance.md).
"""
import argparse
import datetime
import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np

import fpemu

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts"))
from bench_report import publish  # noqa: E402 - the one report layout

N = 1 << 24
TARGET = 0.9


OPS = [(fmt, op) for fmt in ("e4m3fn", "e5m2", "bf16", "fp16") for op in ("add", "div")]
DECODES = ("e4m3fn", "bf16")


def cpp_rates(build_dir):
    """One run of bench_round's memcpy, encode/normal/bf16_rne, the apply cells of OPS and the
    one-thread decode cells of DECODES, elements per second by name."""
    cells = "|".join([f"apply/normal/{fmt}_rne/{op}" for fmt, op in OPS] +
                     [f"decode/normal/{fmt}/threads:1" for fmt in DECODES])
    cmd = [os.path.join(build_dir, "bench", "bench_round"), "--benchmark_format=json",
           f"--benchmark_filter=^((memcpy|encode/normal/bf16_rne)/threads:[12]|{cells})/"]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return {b["run_name"].replace("/real_time", ""): b["items_per_second"] for b in json.loads(out)["benchmarks"]}


def python_rate(call, min_time=0.5):
    """Elements per second over as many calls as take min_time seconds (at least 5), after one
    warm-up call: their mean time, as Google Benchmark reports an iteration over its default
    minimum time. (Five calls, about 10 ms, had the two-thread round at 0.57-0.70 of the C++ path
    in three runs, while 300 calls ran at the C++ loop's rate, 8.3-8.5 G/s on the Zen 5.)"""
    call()
    runs, start = 0, time.perf_counter()
    while runs < 5 or time.perf_counter() - start < min_time:
        call()
        runs += 1
    return N * runs / (time.perf_counter() - start)


def peers(x):
    """The peers' casts of the same data, where the peer is installed."""
    calls = {}
    try:
        import ml_dtypes
        calls["ml_dtypes x.astype(bfloat16)"] = lambda: x.astype(ml_dtypes.bfloat16)
    except ImportError:
        pass
    try:
        import torch
        t = torch.from_numpy(x)
        calls["torch t.to(torch.bfloat16)"] = lambda: t.to(torch.bfloat16)
    except ImportError:
        pass
    return calls


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("build_dir")
    ap.add_argument("--out")
    ap.add_argument("--repetitions", type=int, default=5)
    args = ap.parse_args()

    x = np.random.default_rng(1).standard_normal(N, dtype=np.float32)
    buf = np.empty(N, np.uint16)
    codes = {fmt: (fpemu.round(x, fmt), fpemu.round(x[::-1].copy(), fmt)) for fmt in ("e4m3fn", "e5m2", "bf16", "fp16")}
    results = {fmt: np.empty_like(a) for fmt, (a, _) in codes.items()}
    values = np.empty(N, np.float32)
    np.testing.assert_array_equal(fpemu.round(x, "bf16", out=buf).view(np.int16),
                                  fpemu.round(x.astype(np.float64), "bf16").view(np.int16))
    samples = {}

    def add(name, rate):
        samples.setdefault(name, []).append(rate)

    for _ in range(args.repetitions):
        for name, rate in cpp_rates(args.build_dir).items():
            add(name, rate)
        for threads in (1, 2):
            fpemu.set_num_threads(threads)
            add(f"python/threads:{threads}", python_rate(lambda: fpemu.round(x, "bf16", out=buf)))
        fpemu.set_num_threads(1)
        for fmt, op in OPS:
            a, b = codes[fmt]
            add(f"python/{fmt}/{op}", python_rate(lambda: getattr(fpemu, op)(a, b, fmt, out=results[fmt])))
        for fmt in DECODES:
            add(f"python/{fmt}/decode", python_rate(lambda: fpemu.decode(codes[fmt][0], fmt, out=values)))
        fpemu.set_num_threads(0)
        for name, call in peers(x).items():
            add(name, python_rate(call))
    rate = {name: statistics.median(v) for name, v in samples.items()}

    memcpy1, failed, lines = rate["memcpy/threads:1"], [], []

    def met(name, py, cpp):
        """The target's cell for Python's rate against the C++ path's; a miss is listed by name."""
        if py / cpp >= TARGET:
            return "yes"
        failed.append(name)
        return "NO"

    lines += ["| path | threads | rate | vs C++ path | vs memcpy | target | met |", "|---|---|---|---|---|---|---|"]
    for threads in (1, 2):
        py, cpp = rate[f"python/threads:{threads}"], rate[f"encode/normal/bf16_rne/threads:{threads}"]
        lines.append(f"| fpemu.round(x, 'bf16', out=buf) | {threads} | {py / 1e9:.3f} G/s | {py / cpp:.2f} | "
                     f"{py / memcpy1:.2f} | >= {TARGET} of C++ | {met(f'python/threads:{threads}', py, cpp)} |")
        lines.append(f"| C++ round_array (bench_round encode/normal/bf16_rne) | {threads} | {cpp / 1e9:.3f} G/s | "
                     f"1.00 | {cpp / memcpy1:.2f} | | |")
    cpp2 = rate["encode/normal/bf16_rne/threads:2"]
    for name in peers(x):
        lines.append(f"| {name} (allocates its result) | the peer's | {rate[name] / 1e9:.3f} G/s | "
                     f"{rate[name] / cpp2:.2f} of 2 threads | {rate[name] / memcpy1:.2f} | | |")
    lines.append(f"| memcpy of the same elements | 1 | {memcpy1 / 1e9:.3f} G/s | | 1.00 | | |")
    lines += ["", "| fpemu.<op>(a, b, fmt, out=c), one thread | rate | C++ apply (bench_round) | vs C++ path | target "
              "| met |", "|---|---|---|---|---|---|"]
    for fmt, op in OPS:
        py, cpp = rate[f"python/{fmt}/{op}"], rate[f"apply/normal/{fmt}_rne/{op}"]
        lines.append(f"| {op} {fmt} | {py / 1e9:.3f} G/s | {cpp / 1e9:.3f} G/s | {py / cpp:.2f} | >= {TARGET} of C++ | "
                     f"{met(f'python/{fmt}/{op}', py, cpp)} |")
    lines += ["", "| fpemu.decode(codes, fmt, out=v), float32, one thread | rate | C++ decode_array (bench_round) | "
              "vs C++ path | target | met |", "|---|---|---|---|---|---|"]
    for fmt in DECODES:
        py, cpp = rate[f"python/{fmt}/decode"], rate[f"decode/normal/{fmt}/threads:1"]
        lines.append(f"| {fmt} | {py / 1e9:.3f} G/s | {cpp / 1e9:.3f} G/s | {py / cpp:.2f} | >= {TARGET} of C++ | "
                     f"{met(f'python/{fmt}/decode', py, cpp)} |")

    return publish("fpemu.round, element-wise arithmetic and decode from Python against the C++ array path",
                   f"{datetime.date.today().isoformat()}; NumPy {np.__version__}, fpemu {fpemu.__version__}",
                   f"python bench/bench_python.py {args.build_dir} (`./dev bench`), medians of {args.repetitions} "
                   "alternating runs; 2^24 float32 from N(0,1) to bf16, nearest-even; arithmetic and decode on "
                   "2^24 codes",
                   lines, failed, "Target met.",
                   args.out)

if __name__ == "__main__":
    sys.exit(main())
