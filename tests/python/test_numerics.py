"""The Python module's numerical functions against independent references:

- arithmetic on code arrays: every pair of e4m3fn and e5m2 codes (and random fp16/bf16 pairs),
  +, -, *, / and sqrt in rne/rz/ru/rd, against the float64 result rounded once by fpemu.round.
  Double rounding through binary64 is innocuous here: for nearest-even because 53 >= 2p + 2
  (Figueroa 1995) and for directed modes always (the format's grid is a subset of binary64's);
- sum, dot and GEMM: recursive fp32 accumulation of bf16 products (exact in binary32, so fused
  and unfused steps agree) against a float32 loop in numpy, in the given K order; the exact sum
  against Python's exact rational arithmetic;
- mma: the V100/A100/H100 hardware vectors (tests/data/tensor-core-vectors) bit for bit, fp32 and
  fp16 outputs;
- optimizers: fp32 SGD (momentum, nesterov, dampening), Adam and AdamW against torch.optim bit for
  bit over 25 steps;
- bounds against their closed forms; CA-SGD and training determinism; every error path.
"""
import os
from fractions import Fraction

import numpy as np

# torch's AVX2/AVX512 CPU kernels contract multiply-adds into FMAs; its portable kernels round
# every operation, as the single-tensor algorithms are written and as fpemu models them (see
# test_torch_peer.py). Set before torch is imported.
os.environ.setdefault("ATEN_CPU_CAPABILITY", "default")
import torch  # noqa: E402

import fpemu
from checks import check, raises

DATA = __file__.rsplit("/", 3)[0] + "/tests/data/tensor-core-vectors"


def all_pairs(width):
    codes = np.arange(2 ** width, dtype=np.uint32)
    return np.repeat(codes, codes.size), np.tile(codes, codes.size)


def test_arithmetic():
    ops = [("add", np.add), ("sub", np.subtract), ("mul", np.multiply), ("div", np.divide)]
    cases = 0
    rng = np.random.default_rng(7)
    for name in ("e4m3fn", "e5m2", "fp16", "bf16"):
        f = fpemu.format(name)
        if f.width == 8:
            a, b = all_pairs(8)
        elif name == "fp16":  # every fp16 sum is exact in binary64 (2^16 down to 2^-24)
            a = rng.integers(0, 2 ** 16, 200000).astype(np.uint16)
            b = rng.integers(0, 2 ** 16, 200000).astype(np.uint16)
        else:  # bf16 over 2^-16..2^16, so that sums are exact in binary64 for the directed modes
            a, b = (fpemu.round(rng.normal(size=200000) * 2.0 ** rng.integers(-16, 16, 200000), name)
                    for _ in range(2))
        va, vb = fpemu.decode(a, name), fpemu.decode(b, name)
        with np.errstate(all="ignore"):
            for mode in ("rne", "rz", "ru", "rd"):
                for op, ref in ops:
                    got = getattr(fpemu, op)(a, b, name, mode=mode)
                    exact = ref(va, vb)
                    want = fpemu.round(exact, name, mode=mode)
                    if mode == "rd" and op in ("add", "sub"):
                        # An exact zero sum is -0 toward -inf unless both addends are +0; numpy's
                        # binary64 sum (nearest-even) gives +0.
                        vb_signed = vb if op == "add" else -vb
                        both_plus = (va == 0) & (vb_signed == 0) & ~np.signbit(va) & ~np.signbit(vb_signed)
                        want = np.where((exact == 0) & ~both_plus, fpemu.round(np.array([-0.0]), name, mode="rd")[0], want)
                    nan = np.isnan(exact)
                    same = (got == want) | (nan & np.isnan(fpemu.decode(got, name)))
                    check(bool(same.all()), "%s %s %s: %d of %d differ (first at %s)" % (
                        name, op, mode, int((~same).sum()), same.size, np.argmax(~same)))
                    cases += same.size
                sq = fpemu.sqrt(a, name, mode=mode)
                exact = np.sqrt(va)
                want = fpemu.round(exact, name, mode=mode)
                same = (sq == want) | np.isnan(exact)
                check(bool(same.all()), "%s sqrt %s" % (name, mode))
                cases += same.size
    # fma rounds once: a*b + c with a*b exact in binary64 for fp16 (22 bits), one rounding.
    a = rng.integers(0, 2 ** 16, 100000).astype(np.uint16)
    b = rng.integers(0, 2 ** 16, 100000).astype(np.uint16)
    c = rng.integers(0, 2 ** 16, 100000).astype(np.uint16)
    va, vb, vc = (fpemu.decode(x, "fp16") for x in (a, b, c))
    with np.errstate(all="ignore"):
        exact = va * vb + vc  # fp16 products and sums stay within 2^15..2^-48: exact in binary64
        got = fpemu.fma(a, b, c, "fp16")
    ok = ~np.isnan(exact) & (np.abs(va * vb) < 2.0 ** 20)
    check(bool((got[ok] == fpemu.round(exact[ok], "fp16")).all()), "fp16 fma, one rounding")
    # Flags: inexact exactly when the rounded value differs from the exact one.
    a, b = all_pairs(8)
    codes, flags = fpemu.add(a, b, "e4m3fn", flags=True)
    exact = fpemu.decode(a, "e4m3fn") + fpemu.decode(b, "e4m3fn")
    finite = np.isfinite(exact) & (np.abs(exact) <= 448)
    inexact = (flags & fpemu.INEXACT) != 0
    check(bool((inexact[finite] == (fpemu.decode(codes, "e4m3fn")[finite] != exact[finite])).all()),
          "e4m3fn add: the inexact flag")
    check(codes.dtype == np.uint8 and flags.dtype == np.uint8, "flags come as uint8")
    # saturate clamps infinities too (PTX .satfinite), flagging invalid; ieee keeps them.
    codes, flags = fpemu.round(np.array([np.inf, -np.inf]), "e5m2", overflow="saturate", flags=True)
    check(list(codes) == [0x7b, 0xfb] and all(flags == fpemu.INVALID), "e5m2 saturate: inf -> 57344")
    check(list(fpemu.round(np.array([np.inf]), "bf16")) == [0x7f80], "bf16 ieee: inf stays inf")
    # Shapes survive, convert rounds once.
    m = fpemu.round(np.linspace(-3, 3, 12).reshape(3, 4), "bf16")
    check(fpemu.mul(m, m, "bf16").shape == (3, 4), "shape kept")
    to8 = fpemu.convert(m, "bf16", "e4m3fn")
    check(bool((to8 == fpemu.round(fpemu.decode(m, "bf16"), "e4m3fn")).all()), "convert bf16 -> e4m3fn")
    assert cases == 10621440  # every case above ran


def f32_loop(a, b, order):
    s = np.float32(0)
    for k in order:
        s = np.float32(s + np.float32(a[k]) * np.float32(b[k]))
    return s


def test_accumulation():
    rng = np.random.default_rng(3)
    A = fpemu.round(rng.normal(size=(5, 64)), "bf16")
    B = fpemu.round(rng.normal(size=(64, 6)), "bf16")
    va, vb = fpemu.decode(A, "bf16"), fpemu.decode(B, "bf16")
    order = list(rng.permutation(64))
    D = fpemu.gemm(A, B, a_fmt="bf16", acc="fp32", k_order=order, threads=2)
    check(D.shape == (5, 6) and D.dtype == np.uint32, "gemm shape and dtype")
    want = np.array([[f32_loop(va[i], vb[:, j], order) for j in range(6)] for i in range(5)], dtype=np.float32)
    check(bool((fpemu.decode(D, "fp32") == want).all()), "gemm = float32 loop in k_order")
    natural = np.float32(f32_loop(va[0], vb[:, 0], range(64)))
    check(fpemu.dot(A[0], B[:, 0].copy(), a_fmt="bf16")["code"] == int(natural.view(np.uint32)), "dot = float32 loop")
    # Exact accumulation rounded once: the exact rational sum of products, rounded by the core.
    E = fpemu.gemm(A, B, a_fmt="bf16", acc="exact", out_fmt="fp32")
    exact = sum(Fraction(float(x)) * Fraction(float(y)) for x, y in zip(va[2], vb[:, 3]))
    # 64 products of 16 bits over a few binades: the exact sum is a binary64 number.
    check(Fraction(float(exact)) == exact, "the exact dot product is a binary64 value")
    check(int(E[2, 3]) == int(fpemu.round(np.array([float(exact)]), "fp32")[0]), "exact accumulator rounded once")
    # beta * C with C in the output format.
    C = fpemu.round(np.ones((5, 6)), "fp32")
    D2 = fpemu.gemm(A, B, C, a_fmt="bf16", beta=1.0)
    check(D2.shape == (5, 6), "gemm with C")

    # Summation: recursive fp32 against a float32 loop, exact against fractions.
    x = fpemu.round(rng.uniform(0, 1, 3000), "fp32")
    vx = fpemu.decode(x, "fp32").astype(np.float32)
    r = fpemu.sum(x, "fp32", method="recursive", acc="fp32")
    s = vx[0]
    for v in vx[1:]:
        s = np.float32(s + v)
    check(r["value"] == float(s), "recursive fp32 sum = float32 loop (%r vs %r)" % (r["value"], float(s)))
    exact = sum(Fraction(float(v)) for v in vx)
    check(r["exact"] == float(exact), "exact sum = rational sum")
    check(r["error"] == float(Fraction(r["value"]) - exact), "error = computed - exact")
    for method in ("recursive", "pairwise", "blocked", "kahan", "neumaier", "promoted", "stochastic"):
        xb = fpemu.round(rng.uniform(0, 1, 2000), "bf16")
        out = fpemu.sum(xb, "bf16", method=method, acc="bf16", seed=5)
        b0 = out["bounds"][0]
        check(not b0["valid"] or abs(out["error"]) <= b0["absolute"], "%s: |error| <= deterministic bound" % method)
    ones = fpemu.round(np.ones(1000), "bf16")
    check(fpemu.sum(ones, "bf16", acc="bf16")["value"] == 256.0, "bf16 recursive sum of ones stalls at 256")
    check(fpemu.sum(ones, "bf16", acc="bf16", method="kahan")["value"] == 1000.0, "Kahan sums ones to 1000")

    # The DeepSeek-V3 2024 experiment: promotion helps, the FP8 register is worst.
    rows = {r["method"]: r for r in fpemu.accumulation_experiment([4096], 4, 1)}
    check(len(rows) >= 4, "accumulation_experiment rows: %s" % list(rows))
    errs = sorted((r["mean_relative_error"], m) for m, r in rows.items())
    check(errs[-1][1].startswith("fp8"), "the FP8 register errs most: %s" % errs)
    check(rows["h100-e4m3-deepseek (fp32 register)"]["mean_relative_error"] < rows["h100-e4m3-fastaccum"]["mean_relative_error"],
          "promotion every 128 beats the 14-bit register")


def read_hex(path):
    with open(path) as f:
        return [[int(t, 16) for t in line.split()] for line in f if line.strip()]


def read_bin(path):
    with open(path) as f:
        return [int(line.strip(), 2) for line in f if line.strip()]


def test_mma_hardware():
    cases, total = 600, 0  # the first 600 vectors of each recorded set
    for gpu, fmt, preset, out in (("H100", "bf16", "h100-bf16", "fp32"), ("H100", "fp16", "h100-fp16", "fp32"),
                                  ("A100", "tf32", "a100-tf32", "fp32"), ("H100", "E4M3", "h100-e4m3", "fp32"),
                                  ("V100", "fp16", "v100-fp16", "fp16"), ("H100", "fp16", "h100-fp16", "fp16")):
        base = "%s/%s/%s/" % (DATA, gpu, fmt)
        try:
            a = np.array(read_hex(base + "a_%s_%s.txt" % (gpu, fmt))[:cases], dtype=np.uint32).view(np.float32)
            b = np.array(read_hex(base + "b_%s_%s.txt" % (gpu, fmt))[:cases], dtype=np.uint32).view(np.float32)
            c = np.array(read_bin(base + "c_%s_fp32.txt" % gpu)[:cases], dtype=np.uint32).view(np.float32)
            d = np.array(read_bin(base + "d_%s_%s.txt" % (gpu, out))[:cases], dtype=np.uint32)
        except FileNotFoundError as e:
            check(False, "hardware vectors: %s" % e)
            continue
        if fmt == "E4M3":
            c = np.zeros_like(c)  # recorded with wgmma from a zero accumulator (the data's README)
        if out == "fp16":  # the hardware's C is binary16 here: the recorded fp32 C holds an fp16 value
            c = fpemu.decode(fpemu.round(c, "fp16"), "fp16").astype(np.float32)
        matches = 0
        for i in range(len(d)):
            D = fpemu.mma(a[i:i + 1], b[i].reshape(-1, 1).copy(), c[i].reshape(1, 1), preset=preset, out_fmt=out)
            matches += int(D.astype(np.float32).view(np.uint32)[0, 0] == d[i])
        check(matches == len(d), "%s %s with %s: %d of %d bit for bit" % (gpu, fmt, preset, matches, len(d)))
        total += len(d)
    assert total == 3600


def torch_run(opt_cls, params, grads, **kw):
    ps = [torch.nn.Parameter(torch.tensor(p)) for p in params]
    opt = opt_cls(ps, foreach=False, **kw)
    for g in grads:
        for p, gi in zip(ps, g):
            p.grad = torch.tensor(gi)
        opt.step()
    return [p.detach().numpy() for p in ps]


def fpemu_run(kind, params, grads, policy="fp32", **kw):
    opt = fpemu.optimizer(kind, params, policy, **kw)
    for g in grads:
        opt.step(g)
    return [opt.weights(i) for i in range(len(params))], opt


def test_optimizers():
    rng = np.random.default_rng(11)
    params = [rng.normal(size=(7, 5)).astype(np.float32), rng.normal(size=13).astype(np.float32)]
    grads = [[rng.normal(size=p.shape).astype(np.float32) for p in params] for _ in range(25)]
    runs = [
        ("adamw", torch.optim.AdamW, dict(lr=1e-2, weight_decay=0.1), dict(lr=1e-2, weight_decay=0.1)),
        ("adam", torch.optim.Adam, dict(lr=3e-3, weight_decay=0.01, betas=(0.8, 0.99)),
         dict(lr=3e-3, weight_decay=0.01, beta1=0.8, beta2=0.99)),
        ("sgd", torch.optim.SGD, dict(lr=0.05, momentum=0.9, nesterov=True, weight_decay=1e-3),
         dict(lr=0.05, momentum=0.9, nesterov=True, weight_decay=1e-3)),
        ("sgd", torch.optim.SGD, dict(lr=0.05, momentum=0.5, dampening=0.1), dict(lr=0.05, momentum=0.5, dampening=0.1)),
    ]
    for kind, cls, tkw, fkw in runs:
        want = torch_run(cls, params, grads, **tkw)
        got, _ = fpemu_run(kind, params, grads, **fkw)
        same = all(np.array_equal(w.view(np.uint32), g.view(np.uint32)) for w, g in zip(want, got))
        check(same, "%s %s: fp32 policy = torch.optim bit for bit over 25 steps" % (kind, fkw))
    _, o = fpemu_run("adamw", params, grads[:3], "bf16", lr=1e-2, weight_decay=0.1)
    check(o.state(0, 1).shape == (7, 5) and o.state(0, 2) is None and o.compensation(0) is None, "states and shapes")
    _, k = fpemu_run("adamw", params, grads[:2], "bf16-kahan", lr=1e-2)
    check(k.compensation(1).shape == (13,) and k.steps == 2, "kahan compensation buffer")
    check(fpemu.bytes_per_parameter("adamw", "bf16-kahan")["min"] == 10, "bf16-kahan adamw: 10 bytes per parameter")
    check(fpemu.policy("mixed").master and fpemu.policy("bf16-sr8").sr_bits == 8, "policy fields")
    raises(lambda: fpemu.optimizer("adamw", params, lr=float("nan")), "learning rate nan")
    raises(lambda: fpemu.optimizer("adamw", params, beta1=1.5), "beta1")
    raises(lambda: fpemu.optimizer("adagrad", params), "adagrad")
    raises(lambda: fpemu.optimizer("sgd", params, "bf17"), "bf17")
    raises(lambda: fpemu.optimizer("sgd", []), "params is empty")
    sgd = fpemu.optimizer("sgd", params)
    raises(lambda: sgd.step(grads[0][:1]), "1 gradients for 2")
    raises(lambda: sgd.step([grads[0][1], grads[0][0]]), "shape")
    raises(lambda: sgd.weights(2), "tensor 2")
    raises(lambda: setattr(sgd, "lr", -1.0), "lr")


def test_bounds_casgd_training():
    u = 2.0 ** -8
    for n in (1, 10, 100, 255):
        g = fpemu.bounds.gamma(n, u)
        exact = Fraction(n) * Fraction(u) / (1 - Fraction(n) * Fraction(u))
        check(g.valid and Fraction(g.value) >= exact and g.value <= float(exact) * (1 + 2 ** -50), "gamma_%d" % n)
    check(not fpemu.bounds.gamma(256, u).valid, "gamma_256(2^-8) is not valid")
    p = fpemu.bounds.dot_probabilistic(1000, 2.0 ** -24, 6.0)
    check(0 < p.probability < 1 and p.valid and float(p) < fpemu.bounds.dot(1000, 2.0 ** -24).value, "probabilistic")
    check(fpemu.effective_unit_roundoff("bf16", "rz") == 2.0 ** -7, "effective u for rz")

    r1 = fpemu.casgd("synth:512,32", recipe="C", b=8, s=4, outer=12, P=4, eval_every=4, budget_at=6)
    r2 = fpemu.casgd("synth:512,32", recipe="C", b=8, s=4, outer=12, P=4, eval_every=4, threads=1)
    check(np.array_equal(r1["loss"], r2["loss"]) and np.array_equal(r1["x"], r2["x"]), "casgd: same bits for any threads")
    check(list(r1["outer"]) == [0, 4, 8, 12] and r1["x"].shape == (32,), "casgd evaluations")
    bud = r1["budget"]
    check(len(bud["E"]) == 9 and (not bud["valid"] or bud["measured"] <= bud["bound"]), "Theorem 5.7 budget holds")
    check(fpemu.allreduce_cp(8, "ring", "bf16", 256, 2)["c_max"] <= 2.4 * 8, "C(8) <= 2.4 P")
    fit = fpemu.casgd("synth:512,32", recipe="C", b=8, s=4, outer=8, P=4, budget_at=6, cp="nccl-fit")["budget"]
    check(abs(fit["C_P"] - 4.62 * 4 ** 0.56) < 1e-12 and bud["C_P"] == 2.4 * 4, "cp='nccl-fit' is 4.62 P^0.56")
    check(sorted(fpemu.casgd_recipes()) == list("ABCDEFGHI"), "recipes A..I")
    raises(lambda: fpemu.casgd("synth:512,32", recipe="Z"), "Z")
    raises(lambda: fpemu.casgd("synth:512,32", slots=["u_q=fp32"]), "u_q")
    raises(lambda: fpemu.casgd("synth:512,32", b=0), "b")
    raises(lambda: fpemu.casgd("synth:512,32", outer=4, budget_at=9), "budget_at = 9")
    raises(lambda: fpemu.casgd("nosuchfile.svm"), "nosuchfile")
    raises(lambda: fpemu.allreduce_cp(0), "P = 0")
    raises(lambda: fpemu.casgd("synth:512,32", cp=[1]), "cp = [1]")

    x, y = fpemu.load_libsvm()
    check(x.shape == (270, 13) and set(np.unique(y)) == {-1.0, 1.0}, "heart_scale: 270 x 13, labels -1/+1")
    kw = dict(model="logreg", optimizer="sgd", lr=0.5, epochs=3, batch=32, policy="bf16-kahan")
    t1 = fpemu.train(x[:200], y[:200], x[200:], y[200:], **kw)
    t2 = fpemu.train(x[:200], y[:200], x[200:], y[200:], **kw)
    check(np.array_equal(t1["step_losses"], t2["step_losses"]), "train is deterministic")
    check(t1["epochs"][-1]["train_loss"] < t1["epochs"][0]["train_loss"] < 0.7, "logreg loss decreases")
    seen = []
    fpemu.train(x[:200], y[:200], x[200:], y[200:], model="logreg", epochs=2, progress=seen.append)
    check([e["epoch"] for e in seen] == [1, 2], "progress once per epoch: %s" % [e["epoch"] for e in seen])
    raises(lambda: fpemu.train(x, y[:10], x, y, model="logreg"), "one label per row")
    raises(lambda: fpemu.train(x, y, x, y, model="mlp"), "label")
    raises(lambda: fpemu.train(x, y, x, y, model="logreg", epochs=0), "epochs = 0")
    bad = x.copy()
    bad[3, 2] = np.nan
    raises(lambda: fpemu.train(bad, y, x, y, model="logreg"), "row 3, column 2")
    raises(lambda: fpemu.load_fashion_mnist(dir="no/such/dir"), "no/such/dir")
    raises(lambda: fpemu.theorem1_floor("bf16", [1.5]), "lr = 1.5")
    raises(lambda: fpemu.theorem1_floor("e4m3fnuz:unsigned", [0.1]), "e4m3fnuz")


def test_fp8_training_recipes():
    # train(gemm=...), fpemu train --gemm's recipes (the C++ tests check the arithmetic): probes at
    # steps 1, 3, ... with both errors, deterministic, and a different trajectory from fp32's.
    recipes = fpemu.gemm_recipes()
    check(recipes["fp8-deepseek"] == "e4m3fn/tile128/h100-e4m3-deepseek" and recipes["weights"] == "weights/none/fp32",
          "named recipes: %r" % recipes)
    x, y = fpemu.load_libsvm()
    kw = dict(model="logreg", optimizer="sgd", lr=0.05, epochs=2, batch=54, seed=1, gemm="fp8-deepseek",
              gemm_error_every=2, gemm_error_rows=4)
    r = fpemu.train(x, y, x, y, **kw)
    check(len(r["step_losses"]) == 10, "270 rows in batches of 54: 5 steps an epoch")
    layers = [(e["step"], e["layer"]) for e in r["gemm_errors"]]
    check(layers == [(s, l) for s in (1, 3, 5, 7, 9) for l in ("fprop1", "wgrad1")], "probes: %r" % layers)
    for e in r["gemm_errors"][2:]:
        check(0 < e["error_quantised"] < e["error_original"] / 50 and e["error_original"] < 0.2,
              "e4m3fn rounding dominates the promoted accumulation: %r" % e)
    check(fpemu.train(x, y, x, y, **kw)["step_losses"].tolist() == r["step_losses"].tolist(), "deterministic")
    fp32 = fpemu.train(x, y, x, y, **dict(kw, gemm="weights"))
    check(fp32["step_losses"].tolist() != r["step_losses"].tolist(), "the recipe changes the arithmetic")
    check(all(e["error_original"] == e["error_quantised"] for e in fp32["gemm_errors"]), "fp32: nothing rounded")
    raises(lambda: fpemu.train(x, y, x, y, model="logreg", gemm="e4m3fn/tile64/fp32"), "unknown scaling 'tile64'")


def test_casgd_cost_and_radius():
    # Table 2 and Equation 2 of Devarakonda et al. 2026 by hand: b=2 s=3 P=4 n_loc=5, Recipe C
    # (bf16 margin words, fp32 Gram words, Gram at 16x): 2 log2 P = 4, 2(P-1)/P = 1.5, sb = 6.
    c = fpemu.casgd_cost(2, 3, 4, 5, recipe="C", alpha=1e-6, beta=1e-9, gamma=1e-12)
    check(c["sgd"]["flops_gemv"] == 120 and c["ca"]["flops_gram"] == 360 and c["ca"]["flops_correction"] == 24,
          "Table 2 flops")
    check(c["sgd"]["words_margin"] == 6 and c["ca"]["words_gram"] == 36 and c["sgd"]["messages"] == 3, "Table 2 words")
    check(abs(c["sgd"]["total"] / 1.201812e-5 - 1) < 1e-14 and abs(c["ca"]["total"] / 4.2341665e-6 - 1) < 1e-14,
          "Table 2 times: %r" % c)
    # The crossover against a search with the paper's equation, Recipe A at P = 64, n_loc = 4096.
    for recipe, gram_bytes, speed in (("A", 4, 1), ("D", 2, 16)):
        c = fpemu.casgd_cost(8, 2, 64, 4096, recipe=recipe)
        f = [7e-6 * (s - 1) * 12 - (1 / 19.5e12) / speed * 2 * (8 * s) ** 2 * 4096 - (1 / 19.5e12) * 64 * s * (s - 1)
             - 4e-11 * gram_bytes * (8 * s) ** 2 * 2 * 63 / 64 for s in range(2, 20000)]
        cheaper = [s for s, v in zip(range(2, 20000), f) if v > 0]
        check(c["s_star"] == cheaper[0] == 2 and c["s_max"] == cheaper[-1], "crossover %s: %r %r" % (recipe, c, cheaper[-1]))
    check(fpemu.casgd_cost(8, 2, 64, 4096, alpha=0)["s_star"] is None, "no latency: never cheaper")
    # Theorem 5.9: Equation 9 with a given chi, and the free chi at least as good as a grid.
    eta, b, s, mu, L, sig2, rho = 0.5, 8, 8, 0.1, 1.0, 2.0, 0.05
    a = (1 - mu * eta) ** s
    nu = eta * sig2 * (1 - a) / (mu * b)
    for chi in (0.01, 0.2, 0.9 * (1 / a - 1)):
        t = fpemu.casgd_radius(eta, b, s, mu, L, sig2, rho, chi=chi, M=7, dist0=3.0)
        q, N = (1 + chi) * a, (1 + chi) * nu + (1 + 1 / chi) * rho ** 2
        check(abs(t["radius"] / np.sqrt(N / (1 - q)) - 1) < 1e-12, "radius at chi=%g" % chi)
        check(abs(t["rhs_at_M"] ** 2 / (q ** 7 * 9 + (1 - q ** 7) / (1 - q) * N) - 1) < 1e-12, "Equation 9 at M=7")
    best = fpemu.casgd_radius(eta, b, s, mu, L, sig2, rho)
    grid = [(1 / a - 1) * 10.0 ** (-8 + 8 * i / 2000) for i in range(1, 2000)]
    check(best["radius"] <= min(np.sqrt(((1 + c) * nu + (1 + 1 / c) * rho ** 2) / (1 - (1 + c) * a)) for c in grid) * (1 + 1e-12),
          "the chosen chi minimises the radius")
    check(not fpemu.casgd_radius(4.0, b, s, mu, L, sig2, rho)["step_ok"], "eta L_F > 1 fails Assumption 5.6")
    # On a run: linear regression, constants computed on the data, the final distance inside Equation 9's bound.
    r = fpemu.casgd("synth:2000,64", loss="linear", b=8, s=8, P=4, outer=50, budget_at=49)["budget"]["convergence"]
    check(r["computed"] and r["complete"] and r["valid"] and 0 < r["measured"] <= r["rhs_at_M"], "convergence: %r" % r)
    check(r["radius"] >= r["radius_exact"] and r["at_x_star"]["hessian_min"] == r["mu_F"], "linear: mu_F exact")
    g = fpemu.casgd("synth:2000,64", loss="linear", b=8, s=8, P=4, outer=5, budget_at=4, mu_F=0.01, L_F=0.05,
                    sigma_g2=2)["budget"]["convergence"]
    check(g["given"] == (True, True, True) and g["mu_F"] == 0.01 and g["sigma_g2"] == 2, "given constants")
    raises(lambda: fpemu.casgd_cost(8, 2, 4, 16, alpha=-1), "alpha = -1")
    raises(lambda: fpemu.casgd_cost(8, 2, 4, 16, gram_speedup=0), "gram_speedup = 0")
    raises(lambda: fpemu.casgd_cost(0, 2, 4, 16), "b = 0")
    raises(lambda: fpemu.casgd_radius(0.5, 8, 8, 0, 1, 2, 0.1), "mu_F = 0")
    raises(lambda: fpemu.casgd("synth:512,32", mu_F=0.1), "budget_at")


def test_errors():
    a = np.zeros(4, np.uint8)
    raises(lambda: fpemu.add(a, np.zeros(5, np.uint8), "e4m3fn"), "shape")
    raises(lambda: fpemu.mul(a, np.full(4, 300), "e4m3fn"), "b[0] = 300")
    raises(lambda: fpemu.fma(a, a, np.zeros(3, np.uint8), "e4m3fn"), "c (3,)")
    raises(lambda: fpemu.sqrt(a, "e4m3fn", mode="up"), "up")
    raises(lambda: fpemu.convert(a, "e4m3fn", "fp99"), "fp99")
    m = np.zeros((2, 3), np.uint16)
    raises(lambda: fpemu.gemm(m, m, a_fmt="bf16"), "B")
    raises(lambda: fpemu.gemm(m, m.T.copy(), a_fmt="bf16", acc="fp33"), "fp33")
    raises(lambda: fpemu.gemm(m, m.T.copy(), a_fmt="bf16", acc="h100-bf16", acc_mode="rz"), "acc_mode")
    raises(lambda: fpemu.gemm(m, m.T.copy(), a_fmt="bf16", acc="exact", acc_mode="rz"), "out_mode")
    raises(lambda: fpemu.gemm(m, m.T.copy(), a_fmt="bf16", k_order=[0, 0, 1]), "permutation")
    raises(lambda: fpemu.gemm(m, m.T.copy(), a_fmt="bf16", promote=-1), "promote = -1")
    raises(lambda: fpemu.gemm(m, m.T.copy(), np.zeros((3, 3), np.uint32), a_fmt="bf16", beta=1.0), "C has shape")
    raises(lambda: fpemu.gemm(np.zeros(3, np.uint16), m, a_fmt="bf16"), "2-D")
    raises(lambda: fpemu.gemm(m, m.T.copy(), a_fmt="bf16", alpha=float("nan")), "alpha")
    raises(lambda: fpemu.dot(np.zeros(3, np.uint16), np.zeros(4, np.uint16), a_fmt="bf16"), "3")
    raises(lambda: fpemu.sum(a, "e4m3fn", method="fast"), "fast")
    raises(lambda: fpemu.sum(a, "e4m3fn", method="kahan", acc="exact"), "kahan")
    raises(lambda: fpemu.sum(a, "e4m3fn", block=0), "block = 0")
    raises(lambda: fpemu.sum(a, "e4m3fn", lam=float("nan")), "lam")
    f = np.ones((2, 16), np.float32)
    raises(lambda: fpemu.mma(f, f, preset="h100-bf16"), "inner sizes")
    raises(lambda: fpemu.mma(f, f.T.copy(), preset="no-such-gpu"), "no-such-gpu")
    raises(lambda: fpemu.mma(f * np.float32(1.0001), f.T.copy(), preset="h100-bf16"), "is not a bf16 value")
    raises(lambda: fpemu.mma(f, f.T.copy(), preset="h100-bf16", out_fmt="fp8"), "fp8")
    raises(lambda: fpemu.accumulation_experiment([0]), "K = 0")
    raises(lambda: fpemu.bytes_per_parameter("adamw", "bf16", eps=-1.0), "eps")
    check(fpemu.bounds.__doc__ and "Higham" in fpemu.bounds.__doc__, "fpemu.bounds has a docstring")
    for name in dir(fpemu):
        obj = getattr(fpemu, name)
        if callable(obj) and not name.startswith("_"):
            check(bool(getattr(obj, "__doc__", None)), "fpemu.%s has a docstring" % name)

