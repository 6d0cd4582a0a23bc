"""Markdown table of a bench_cuda JSON run: each kernel's rate, its reference's (measured in the
same iteration on the same GPU), their ratio, and the target where one applies (docs/cuda.md).

    python3 scripts/gpu_bench_report.py RUN.json
"""
import json
import sys

# name prefix -> (target ratio, what the reference is)
TARGETS = {
    "convert/": (0.85, "device-to-device copy of the same bytes"),
    "adamw/bf16-kahan": (0.85, "copy of the bytes the step moves"),
    "adamw/": (None, "copy of the bytes the step moves"),
    "fp8_gemm/": (0.70, "cuBLASLt FP8 GEMM, default (promoting) accumulation"),
    "fp8_gemm_vs_fast_accum/": (None, "cuBLASLt FP8 GEMM, FAST_ACCUM"),
}


def target(name):
    for prefix, t in TARGETS.items():
        if name.startswith(prefix):
            return t
    return (None, "")


def main(path):
    run = json.load(open(path))
    rows = []
    for b in run["benchmarks"]:
        if b.get("run_type") == "aggregate":
            continue
        name = b["name"].split("/min_time:")[0].replace("/manual_time", "")
        if b.get("error_occurred"):
            rows.append(f"| {name} | failed: {b.get('error_message', '')} | | | | |")
            continue
        goal, reference = target(name)
        if "TFLOP/s" in b:
            rate, ref = f"{b['TFLOP/s']:.0f} TFLOP/s", f"{b['cublas_TFLOP/s']:.0f} TFLOP/s"
        else:
            rate, ref = f"{b['GB/s']:.0f} GB/s", f"{b['copy_GB/s']:.0f} GB/s"
        ratio = b["ratio"]
        met = "" if goal is None else ("yes" if ratio >= goal else "no")
        rows.append(f"| {name} | {rate} | {ref} | {ratio:.2f} | {'' if goal is None else f'>= {goal}'} | {met} |")
    ctx = run.get("context", {})
    print(f"bench_cuda run of {ctx.get('date', '?')}. Rates count every byte read "
          "and written (conversions, AdamW) or 2MNK floating-point operations (GEMM); ratio = reference "
          "time / kernel time. References: conversions against a device-to-device copy of the same bytes, "
          "AdamW against a copy of the bytes the step moves, the FP8 GEMM against cuBLASLt's FP8 GEMM of "
          "the same shape (fp32 output; its default accumulation, and FAST_ACCUM).")
    print()
    print("| benchmark | kernel | reference | ratio | target | met |")
    print("|---|---|---|---|---|---|")
    print("\n".join(rows))


if __name__ == "__main__":
    main(sys.argv[1])
