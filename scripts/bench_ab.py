#!/usr/bin/env python3
"""Compares two builds of a Google Benchmark binary (bench_round, say) run by run: the two binaries
alternate, ROUNDS times for each SIMD target, so that a slow or fast spell of the machine (memcpy's
rate moves by a third between runs on a shared VM) falls on both. Prints a markdown table of the
medians per run (G elements/s) and the ratio of the medians of those medians, new / base.

    python3 scripts/bench_ab.py BASE_BINARY NEW_BINARY --filter REGEX [--targets AVX3,AVX2,SSE4]
                                [--rounds 2] [--repetitions 3] [--min-time SECONDS] [--labels BASE,NEW]

Run it from the build folder the binaries were built in (their shared libraries are looked up
there and in its src/). Copy the base binary aside before rebuilding: ninja replaces it in place.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys


def run(binary, target, args):
    cmd = [binary, f"--benchmark_filter={args.filter}", f"--benchmark_repetitions={args.repetitions}",
           "--benchmark_report_aggregates_only=true", "--benchmark_format=json"]
    if args.min_time is not None:
        cmd.append(f"--benchmark_min_time={args.min_time}")
    if target:
        cmd.insert(1, f"--target={target}")
    env = dict(os.environ, LD_LIBRARY_PATH=os.pathsep.join([".", "src", os.environ.get("LD_LIBRARY_PATH", "")]))
    done = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if done.returncode != 0 or not done.stdout.strip():
        sys.exit(f"bench_ab: {' '.join(cmd)} exited {done.returncode}: {done.stderr.strip() or 'no output'}")
    # One repetition has no aggregates: its run is its median.
    wanted = "median" if args.repetitions > 1 else None
    return {b["run_name"]: b["items_per_second"] / 1e9 for b in json.loads(done.stdout)["benchmarks"]
            if b.get("aggregate_name") == wanted and "items_per_second" in b}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("base")
    ap.add_argument("new")
    ap.add_argument("--filter", required=True, help="a --benchmark_filter regex")
    ap.add_argument("--targets", default="", help="comma-separated --target values (bench_round); none: one run")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--repetitions", type=int, default=3)
    ap.add_argument("--min-time", type=float, help="seconds each repetition runs at least (Google Benchmark's "
                    "--benchmark_min_time; its default 0.5 makes an A/B of 90 cells take about 17 minutes)")
    ap.add_argument("--labels", default="base,new")
    args = ap.parse_args()
    if args.rounds < 1 or args.repetitions < 1:
        ap.error(f"--rounds and --repetitions must be at least 1; got {args.rounds} and {args.repetitions}")
    if args.min_time is not None and not args.min_time > 0:
        ap.error(f"--min-time must be a positive number of seconds; got {args.min_time}")
    labels = args.labels.split(",")
    if len(labels) != 2:
        ap.error(f"--labels takes two names, base and new; got {args.labels!r}")
    targets = [t for t in args.targets.split(",") if t] or [""]
    rates = {}  # (target, name) -> ([base rates], [new rates])
    for _ in range(args.rounds):
        for target in targets:
            for side, binary in enumerate((args.base, args.new)):
                for name, rate in run(binary, target, args).items():
                    rates.setdefault((target, name), ([], []))[side].append(rate)
    if not rates:
        sys.exit(f"bench_ab: no benchmark matched {args.filter!r}")
    print(f"| target | benchmark | {labels[0]}, G/s per run | {labels[1]}, G/s per run | {labels[1]} / {labels[0]} |")
    print("|---|---|---|---|---|")
    for (target, name), (base, new) in rates.items():
        ratio = statistics.median(new) / statistics.median(base)
        print(f"| {target or '-'} | {name} | {' / '.join(f'{r:.2f}' for r in base)} | "
              f"{' / '.join(f'{r:.2f}' for r in new)} | {ratio:.2f} |")


if __name__ == "__main__":
    main()
