#!/usr/bin/env python3
"""Peer check of fpemu against PyTorch: optimizer trajectories and bf16 / fp16 casts.

Usage: python3 tests/python/test_torch_peer.py PATH-TO-FPEMU

Python 3 with torch and numpy. Without torch the check is skipped: it prints
"torch_peer: 0 passed, 0 failed, 1 skipped" and exits 77 (meson's skip code).

Trajectories. `fpemu optim --json - --policy fp32` prints its problem (A, b, w0: binary32 values,
printed exactly), the hyper-parameters and the weights after every step. The same run is made
here with torch.optim's single-tensor implementations (foreach=False, CPU, torch's portable
kernels unless ATEN_CPU_CAPABILITY is set: see the comment at the import): a float32 parameter
initialised to w0, and before each step p.grad set to the gradient that fpemu computes, from the
current float32 parameters, in float64 in the same order (r_i = sum_j A_ij w_j - b_i, then
g_j = sum_i A_ij r_i / R, Python floats are IEEE doubles), rounded to float32. Every step's weights
must agree within a relative difference of 1e-6 (max over the elements of
|fpemu - torch| / max(|torch|, 1e-30)). The worst difference and how many values are
bit-identical are printed per configuration. Lion has no implementation in torch.optim, so it is
not compared here.

Casts. Binary32 values (random bit patterns over all exponents, values drawn inside the target's
range, exact ties, subnormals, +-0, +-inf, NaN, the values around the overflow threshold) are
rounded by `fpemu round --format bf16|fp16` (input: C99 hex floats, exact) and by
tensor.to(torch.bfloat16|torch.float16); the 16-bit codes must be equal bit for bit, except that
for NaN only NaN-ness is compared (torch keeps or canonicalises payloads, `fpemu round` reads
"nan" without one).

Prints one line per check and "torch_peer: N passed, N failed" (test functions); exits 0 when all
passed, else 1.
"""

import inspect
import json
import os
import random
import struct
import subprocess
import sys

# torch's CPU kernels are dispatched by CPU capability. The AVX2/AVX512 builds contract
# multiply-add pairs into FMAs (add_(x, alpha=a) is vec::fmadd, and GCC contracts the other
# vector expressions), i.e. one rounding where the single-tensor algorithm, written as separate
# binary32 tensor operations, has two; the portable kernels (ATEN_CPU_CAPABILITY=default) round
# every operation. fpemu models the latter ("binary32, no contraction"), so the peer is torch
# with its portable kernels unless the caller sets ATEN_CPU_CAPABILITY. (With the AVX2 kernels
# the SGD runs below differ by ~1e-7 of max|w|, up to ~1e-4 relative on weights passing near 0.)
os.environ.setdefault("ATEN_CPU_CAPABILITY", "default")

try:
    import numpy as np
    import torch
except ImportError:
    print("torch_peer: 0 passed, 0 failed, 1 skipped")
    sys.exit(77)

EXE = None
TOLERANCE = 1e-6
TESTS = []


def test(fn):
    TESTS.append(fn)
    return fn


def fpemu(*args, stdin=None):
    p = subprocess.run([EXE, *args], input=stdin, capture_output=True, text=True, timeout=120)
    if p.returncode != 0:
        raise RuntimeError("fpemu %s: exit %d: %s" % (" ".join(args), p.returncode, p.stderr.strip()))
    return p.stdout


# ---- Trajectories -------------------------------------------------------------------------------


def f32(x):
    return float(np.float32(x))


def gradient(A, b, w, rows, cols):
    """fpemu optim's gradient: float64 in fpemu's order, rounded to float32 (as Python floats)."""
    r = []
    for i in range(rows):
        row = A[i * cols:(i + 1) * cols]
        s = 0.0
        for j in range(cols):
            s += row[j] * w[j]
        r.append(s - b[i])
    g = []
    for j in range(cols):
        s = 0.0
        for i in range(rows):
            s += A[i * cols + j] * r[i]
        g.append(f32(s / rows))
    return g


def make_torch_optimizer(name, hyper, params):
    h = hyper
    if name == "sgd":
        cls, kw = torch.optim.SGD, dict(lr=h["lr"], momentum=h["momentum"], dampening=h["dampening"],
                                         nesterov=h["nesterov"], weight_decay=h["weight_decay"])
    elif name in ("adam", "adamw"):
        cls = torch.optim.Adam if name == "adam" else torch.optim.AdamW
        kw = dict(lr=h["lr"], betas=(h["beta1"], h["beta2"]), eps=h["eps"], weight_decay=h["weight_decay"])
    else:
        raise ValueError(name)
    accepted = inspect.signature(cls).parameters
    if "foreach" in accepted:
        kw["foreach"] = False  # the single-tensor implementation, which fpemu follows op by op
    for off in ("fused", "capturable", "differentiable", "maximize", "amsgrad"):
        if off in accepted:
            kw[off] = False
    return cls(params, **kw)


def compare_trajectory(label, args):
    out = json.loads(fpemu("optim", "--json", "-", "--steps", "100", "--policy", "fp32", *args))
    rows, cols = out["rows"], out["cols"]
    A, b, w0 = out["A"], out["b"], out["w0"]
    ok = len(A) == rows * cols and len(b) == rows and len(w0) == cols and len(out["trajectory"]) == 100
    ok = ok and all(x == f32(x) and -1 <= x <= 1 for x in A + b + w0)
    if not ok:
        print("FAIL: %s: malformed fpemu optim --json output" % label)
        return False
    p = torch.nn.Parameter(torch.tensor(w0, dtype=torch.float32))
    opt = make_torch_optimizer(out["optimizer"], out["hyper"], [p])
    worst, normwise, identical, total = 0.0, 0.0, 0, 0
    for step, expected in enumerate(out["trajectory"], start=1):
        w = p.detach().tolist()
        p.grad = torch.tensor(gradient(A, b, w, rows, cols), dtype=torch.float32)
        opt.step()
        got = p.detach().tolist()
        scale = max(max(abs(t) for t in got), 1e-30)
        for e, t in zip(expected, got):
            total += 1
            identical += struct.pack("<f", e) == struct.pack("<f", t)
            d = abs(e - t) / max(abs(t), 1e-30)
            if not d <= worst:  # NaN counts as the worst
                worst = d
            normwise = max(normwise, abs(e - t) / scale)
    passed = worst <= TOLERANCE
    print("%s trajectory %-34s worst relative difference %.3g (normwise %.3g), %d of %d values bit-identical" %
          ("ok  " if passed else "FAIL", label, worst, normwise, identical, total))
    return passed


@test
def trajectories_sgd():
    configs = [
        ("sgd lr 0.1", ["--optimizer", "sgd", "--lr", "0.1"]),
        ("sgd momentum 0.9", ["--optimizer", "sgd", "--lr", "0.1", "--momentum", "0.9"]),
        ("sgd nesterov 0.9", ["--optimizer", "sgd", "--lr", "0.1", "--momentum", "0.9", "--nesterov"]),
        ("sgd momentum 0.9 weight_decay 0.01",
         ["--optimizer", "sgd", "--lr", "0.1", "--momentum", "0.9", "--weight-decay", "0.01"]),
    ]
    return all([compare_trajectory(label, args) for label, args in configs])


@test
def trajectories_adam():
    configs = [
        ("adam default", ["--optimizer", "adam"]),
        ("adam weight_decay 0.01", ["--optimizer", "adam", "--weight-decay", "0.01"]),
    ]
    return all([compare_trajectory(label, args) for label, args in configs])


@test
def trajectories_adamw():
    configs = [
        ("adamw weight_decay 0.01", ["--optimizer", "adamw", "--weight-decay", "0.01"]),
        ("adamw weight_decay 0.1", ["--optimizer", "adamw", "--weight-decay", "0.1"]),
    ]
    return all([compare_trajectory(label, args) for label, args in configs])


# Lion: torch.optim has no Lion, so there is no peer to compare with.


# ---- Casts --------------------------------------------------------------------------------------


def f32_from_bits(bits):
    return np.array(bits, dtype=np.uint32).view(np.float32)


def cast_inputs(rng, fmt):
    """binary32 bit patterns for the cast check of bf16 or fp16."""
    bits = [rng.getrandbits(32) for _ in range(60000)]  # every exponent, NaNs included
    if fmt == "bf16":
        lo, hi, drop = -133 - 2, 127, 16  # exponents of bf16's subnormals .. max
    else:
        lo, hi, drop = -24 - 2, 15, 13
    # Inside the target's range, and ties: the bits below the kept ones are exactly one half.
    for _ in range(30000):
        e = rng.randint(lo, hi + 1)
        if e < -126:
            continue
        bits.append(rng.getrandbits(1) << 31 | (e + 127) << 23 | rng.getrandbits(23))
    for _ in range(10000):
        e = rng.randint(max(lo, -126), hi)
        m = (rng.getrandbits(23 - drop) << drop) | (1 << (drop - 1))
        bits.append(rng.getrandbits(1) << 31 | (e + 127) << 23 | m)
    # binary32 subnormals (bf16 keeps them; fp16 flushes them to zero by rounding)
    bits += [rng.getrandbits(1) << 31 | rng.getrandbits(23) for _ in range(2000)]
    bits += [0x00000001, 0x80000001, 0x007fffff, 0x00400000, 0x00008000, 0x00018000]
    # fp16's subnormal range: exact ties (k + 1/2) * 2^-24 and their neighbours
    for k in range(0, 2048):
        t = struct.unpack("<I", struct.pack("<f", (k + 0.5) * 2.0 ** -24))[0]
        bits += [t, t - 1, t + 1, t | 0x80000000]
    # Exact ties around 1 (1 + 2^-8 for bf16, 1 + 2^-11 for fp16) and odd-kept ties
    for v in (1 + 2.0 ** -8, 1 + 3 * 2.0 ** -8, 1 + 2.0 ** -11, 1 + 3 * 2.0 ** -11, -(1 + 2.0 ** -8), 2.0 ** -14,
              2.0 ** -24, 2.0 ** -25, 3 * 2.0 ** -26, 65504.0, 65519.0, 65520.0, 65536.0, 2.0 ** -133, 2.0 ** -134):
        t = struct.unpack("<I", struct.pack("<f", v))[0]
        bits += [t, t - 1, t + 1, t ^ 0x80000000]
    # Around the overflow thresholds: bf16 max 0x7f7f (0x7f7f8000 ties to inf), binary32 max
    bits += [0x7f7f7fff, 0x7f7f8000, 0x7f7f8001, 0x7f7fffff, 0x7f7f0000, 0x7f7effff,
             0x477fefff, 0x477ff000, 0x477ff001, 0x477fe000]  # fp16: 65519.996, 65520 (ties to inf), 65504
    bits += [b | 0x80000000 for b in bits[-10:]]
    # Zeros, infinities, NaNs (quiet, signalling, negative)
    bits += [0x00000000, 0x80000000, 0x7f800000, 0xff800000, 0x7fc00000, 0xffc00000, 0x7f800001, 0x7fbfffff,
             0xff800001, 0x7fffffff]
    return [b & 0xFFFFFFFF for b in bits]


def float_text(x):
    """The exact C99 hex float of a binary32 value (inf, -inf, nan as such)."""
    return float(x).hex()


def is_nan16(code, fmt):
    exp_mask, frac_mask = (0x7f80, 0x007f) if fmt == "bf16" else (0x7c00, 0x03ff)
    return (code & exp_mask) == exp_mask and (code & frac_mask) != 0


def compare_casts(fmt, dtype, seed):
    rng = random.Random(seed)
    bits = cast_inputs(rng, fmt)
    values = f32_from_bits(bits)
    text = "\n".join(float_text(v) for v in values) + "\n"
    out = fpemu("round", "--format", fmt, stdin=text).splitlines()
    if len(out) != len(values):
        print("FAIL cast %s: fpemu printed %d lines for %d values" % (fmt, len(out), len(values)))
        return False
    ours = [int(line.split()[0], 16) for line in out]
    theirs = (torch.from_numpy(values.copy()).to(dtype).view(torch.int16).numpy().astype(np.int64) & 0xFFFF).tolist()
    mismatches, nans = [], 0
    for b, o, t in zip(bits, ours, theirs):
        if np.isnan(f32_from_bits([b])[0]):
            nans += 1
            same = is_nan16(o, fmt) and is_nan16(t, fmt)
        else:
            same = o == t
        if not same:
            mismatches.append((b, o, t))
    passed = not mismatches
    print("%s cast %-5s %d binary32 values (%d distinct, %d NaN), %d mismatches against tensor.to(%s)" %
          ("ok  " if passed else "FAIL", fmt, len(bits), len(set(bits)), nans, len(mismatches), dtype))
    for b, o, t in mismatches[:5]:
        print("     0x%08x: fpemu 0x%04x, torch 0x%04x" % (b, o, t))
    return passed


@test
def casts_bf16():
    return compare_casts("bf16", torch.bfloat16, 1)


@test
def casts_fp16():
    return compare_casts("fp16", torch.float16, 2)


def main():
    global EXE
    if len(sys.argv) != 2:
        print("usage: test_torch_peer.py PATH-TO-FPEMU", file=sys.stderr)
        return 2
    EXE = sys.argv[1]
    torch.set_num_threads(1)
    capability = [line.strip(" -") for line in torch.__config__.show().splitlines() if "CPU capability" in line]
    print("torch %s, %s (ATEN_CPU_CAPABILITY=%s)" %
          (torch.__version__, capability[0] if capability else "CPU capability unknown", os.environ["ATEN_CPU_CAPABILITY"]))
    failed = 0
    for t in TESTS:
        try:
            ok = t()
        except Exception as e:  # a crash in a test is a failure of that test, not of the run
            print("FAIL %s raised %r" % (t.__name__, e))
            ok = False
        failed += not ok
    print("torch_peer: %d passed, %d failed" % (len(TESTS) - failed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
