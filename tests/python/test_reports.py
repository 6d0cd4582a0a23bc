"""dot and gemm report as sum does (result, exact reference, error, the bound with its validity),
from the analysis the command line prints; mma reads its operands by the module's convention, and
the block scales of the MX and NVFP4 presets, checked against the exactly scaled product; presets()
names each preset's instruction, source, inputs and scales. The exact references are recomputed
here with Python's fractions. Run by pytest in the venvs of ./dev test."""
from fractions import Fraction

import numpy as np
import pytest

import fpemu

RNG = np.random.default_rng(21)


def exact_dot(a, b, fa, fb):
    va, vb = fpemu.decode(a, fa), fpemu.decode(b, fb)
    return sum(Fraction(float(x)) * Fraction(float(y)) for x, y in zip(va, vb))


@pytest.mark.parametrize("acc", ["bf16", "fp32", "exact", "h100-e4m3-fastaccum"])
def test_dot_reports_the_result_the_exact_value_and_a_bound_that_holds(acc):
    fa = "e4m3fn"
    a = fpemu.round(RNG.normal(size=100), fa)  # K u < 1 for every accumulator here: each bound applies
    b = fpemu.round(RNG.normal(size=100), fa)
    r = fpemu.dot(a, b, a_fmt=fa, acc=acc)
    exact = exact_dot(a, b, fa, fa)
    assert r["value"] == fpemu.decode(np.array([r["code"]], np.uint32), "fp32")[0]
    assert r["format"] == fpemu.format("fp32")
    assert r["exact"] == float(exact)
    assert r["error"] == r["value"] - r["exact"]
    assert r["abs_sum"] == pytest.approx(float(sum(abs(Fraction(float(x)) * Fraction(float(y)))
                                                   for x, y in zip(fpemu.decode(a, fa), fpemu.decode(b, fa)))))
    (bound,) = r["bounds"]
    assert bound["valid"], bound["condition"]
    assert abs(Fraction(r["value"]) - exact) <= Fraction(bound["absolute"])
    if acc == "exact":
        assert bound["coefficient"] <= 2.0 ** -24  # one rounding of the exact sum into fp32


def test_dot_result_is_gemms_one_output():
    a = fpemu.round(RNG.normal(size=256), "bf16")
    b = fpemu.round(RNG.normal(size=256), "bf16")
    g = fpemu.gemm(a.reshape(1, -1), b.reshape(-1, 1), a_fmt="bf16", acc="bf16")
    assert fpemu.dot(a, b, a_fmt="bf16", acc="bf16")["code"] == g[0, 0]


def test_a_bound_whose_condition_fails_says_so():
    a = fpemu.round(RNG.normal(size=1000), "bf16")
    (bound,) = fpemu.dot(a, a, a_fmt="bf16", acc="bf16")["bounds"]
    assert not bound["valid"] and "n*u = 3.90625 >= 1" in bound["condition"]


def test_gemm_report_gives_errors_against_the_exact_product_and_a_normwise_bound():
    A = fpemu.round(RNG.normal(size=(6, 60)), "bf16")  # K u = 60 / 256 < 1
    B = fpemu.round(RNG.normal(size=(60, 5)), "bf16")
    r = fpemu.gemm(A, B, a_fmt="bf16", acc="bf16", report=True)
    D = r["result"]
    np.testing.assert_array_equal(D, fpemu.gemm(A, B, a_fmt="bf16", acc="bf16"))
    d = fpemu.decode(D, "fp32")
    exact = np.array([[float(exact_dot(A[i], B[:, j], "bf16", "bf16")) for j in range(5)] for i in range(6)])
    np.testing.assert_allclose(r["relative_error"], np.abs(d - exact) / np.abs(exact), rtol=1e-12)
    assert r["exact_norm"] == pytest.approx(np.linalg.norm(exact), rel=1e-12)
    assert r["error_norm"] == pytest.approx(np.linalg.norm(d - exact), rel=1e-9)
    assert r["normwise_error"] == pytest.approx(r["error_norm"] / r["exact_norm"], rel=1e-12)
    (bound,) = r["bounds"]
    assert bound["valid"] and r["error_norm"] <= bound["absolute"]
    assert r["normwise_bound"] == pytest.approx(bound["absolute"] / r["exact_norm"], rel=1e-12)


def test_mma_takes_codes_typed_arrays_and_values_alike():
    a = fpemu.round(RNG.normal(size=(4, 16)), "fp16")
    b = fpemu.round(RNG.normal(size=(16, 3)), "fp16")
    by_values = fpemu.mma(fpemu.decode(a, "fp16").astype(np.float32), fpemu.decode(b, "fp16").astype(np.float32),
                          preset="v100-fp16")
    # Integer arrays are codes (once read as values, fp16 codes gave 9.437184e+08).
    np.testing.assert_array_equal(fpemu.mma(a, b, preset="v100-fp16"), by_values)
    np.testing.assert_array_equal(fpemu.mma(a.view(np.float16), b.view(np.float16), preset="v100-fp16"), by_values)
    assert by_values.dtype == np.float32
    half = fpemu.mma(a, b, preset="v100-fp16", out_fmt="fp16")
    assert half.dtype == np.float16
    codes = fpemu.mma(a, b, preset="v100-fp16", out_fmt="fp16", dtype=np.uint16)
    np.testing.assert_array_equal(codes, half.view(np.uint16))


# ---- mma with block scales (the MX and NVFP4 presets) ----

# Values that every operand format of the f8f6f4 kinds holds (e4m3fn, e5m2, e3m2fn, e2m3fn, e2m1fn).
FP4_VALUES = np.array([0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, -0.5, -1.0, -1.5, -2.0, -3.0, -4.0, -6.0])


def exact_scaled_mma(A, B, C, SA, SB, n):
    """D[i, j] = C[i, j] + sum_k SA[i, k // n] SB[k // n, j] A[i, k] B[k, j], exactly, each of which
    the data are chosen to make a float32 value (checked): so the tensor core's D is that value."""
    F = np.vectorize(lambda x: Fraction(float(x)), otypes=[object])
    A, B, C, SA, SB = F(A), F(B), F(C), F(SA), F(SB)
    M, K = A.shape
    D = np.zeros((M, B.shape[1]), dtype=np.float32)
    for i in range(M):
        for j in range(B.shape[1]):
            d = C[i, j] + sum(SA[i, k // n] * SB[k // n, j] * A[i, k] * B[k, j] for k in range(K))
            assert Fraction(float(np.float32(float(d)))) == d, "the test's exact D[%d, %d] = %s is a float32" % (i, j, d)
            D[i, j] = float(d)
    return D


def scaled_problem(seed, m, k, n, scale_a, scale_b, per):
    rng = np.random.default_rng(seed)
    A = rng.choice(FP4_VALUES, size=(m, k)).astype(np.float32)
    B = rng.choice(FP4_VALUES, size=(k, n)).astype(np.float32)
    C = rng.choice([0.0, 0.75, -5.5, 1024.0], size=(m, n)).astype(np.float32)
    SA = rng.choice(scale_a, size=(m, k // per))
    SB = rng.choice(scale_b, size=(k // per, n))
    return A, B, C, SA, SB


@pytest.mark.parametrize("preset", ["b200-mxf8f6f4", "rtx6000b-mxf8f6f4"])
def test_mma_with_e8m0_scales_is_the_exactly_scaled_product(preset):
    # Per 32 products, scales 2^-2..2^2 for A and 2^-1..2^1 for B: small enough that D is exact.
    A, B, C, SA, SB = scaled_problem(5, 3, 96, 4, [0.25, 0.5, 1.0, 2.0, 4.0], [0.5, 1.0, 2.0], 32)
    want = exact_scaled_mma(A, B, C, SA, SB, 32)
    D = fpemu.mma(A, B, C, preset=preset, scale_a=SA, scale_b=SB)
    assert D.dtype == np.float32 and D.shape == (3, 4)
    np.testing.assert_array_equal(D, want)
    # The scales matter, and they come alike as float32 values and as e8m0fnu codes (127 = 2^0).
    assert not np.array_equal(fpemu.mma(A, B, C, preset=preset, scale_a=np.ones_like(SA), scale_b=np.ones_like(SB)),
                              want)
    np.testing.assert_array_equal(
        fpemu.mma(A, B, C, preset=preset, scale_a=SA.astype(np.float32), scale_b=SB.astype(np.float32)), want)
    codes_a = (127 + np.log2(SA)).astype(np.uint8)
    codes_b = (127 + np.log2(SB)).astype(np.uint8)
    np.testing.assert_array_equal(fpemu.mma(A, B, C, preset=preset, scale_a=codes_a, scale_b=codes_b), want)
    # Other operand formats of the preset's inputs list take the same values.
    np.testing.assert_array_equal(
        fpemu.mma(A, B, C, preset=preset, a_fmt="e2m1fn", b_fmt="e3m2fn", scale_a=SA, scale_b=SB), want)


@pytest.mark.parametrize("preset, per, scales", [
    ("b200-mxf4nvf4", 16, [0.375, 0.75, 1.5, 3.0, 0.8125]),  # UE4M3, not only powers of two
    ("b200-mxf4nvf4-ue8m0", 16, [0.25, 0.5, 1.0, 2.0]),
    ("b200-mxf4", 32, [0.25, 0.5, 1.0, 2.0]),
])
def test_mma_fp4_kinds_with_scales(preset, per, scales):
    A, B, C, SA, SB = scaled_problem(8, 2, 64, 3, scales, [0.5, 1.0, 2.0], per)
    want = exact_scaled_mma(A, B, C, SA, SB, per)
    np.testing.assert_array_equal(fpemu.mma(A, B, C, preset=preset, scale_a=SA, scale_b=SB), want)


def test_mma_takes_torch_scales():
    torch = pytest.importorskip("torch")
    A, B, C, SA, SB = scaled_problem(9, 2, 32, 2, [0.5, 1.0, 4.0], [0.25, 2.0], 32)
    want = exact_scaled_mma(A, B, C, SA, SB, 32)
    D = fpemu.mma(torch.from_numpy(A), torch.from_numpy(B), torch.from_numpy(C), preset="b200-mxf8f6f4",
                  scale_a=torch.from_numpy(SA), scale_b=torch.from_numpy(SB.astype(np.float32)))
    np.testing.assert_array_equal(np.asarray(D), want)


def test_mma_scales_are_required_refused_and_checked():
    A, B, C, SA, SB = scaled_problem(10, 2, 64, 3, [1.0, 2.0], [1.0], 32)
    with pytest.raises(ValueError, match=r"preset b200-mxf8f6f4 is block-scaled .*give scale_a \(M, K/32\) and "
                                         r"scale_b \(K/32, N\)"):
        fpemu.mma(A, B, preset="b200-mxf8f6f4")
    with pytest.raises(ValueError, match="preset b200-mxf8f6f4 is block-scaled"):
        fpemu.mma(A, B, preset="b200-mxf8f6f4", scale_a=SA)
    # Unscaled presets refuse scales, naming the preset and those that take them.
    with pytest.raises(ValueError, match="preset b200-e4m3 takes no block scales: .*b200-mxf8f6f4"):
        fpemu.mma(A, B, preset="b200-e4m3", scale_a=SA, scale_b=SB)
    with pytest.raises(ValueError, match="preset h100-bf16 takes no block scales"):
        fpemu.mma(A, B, preset="h100-bf16", scale_b=SB)
    # Shapes: (M, K/n) and (K/n, N).
    with pytest.raises(ValueError, match=r"scale_a is \(2, 1\); preset b200-mxf8f6f4 needs \(M, K/32\) = \(2, 2\)"):
        fpemu.mma(A, B, preset="b200-mxf8f6f4", scale_a=SA[:, :1], scale_b=SB)
    with pytest.raises(ValueError, match=r"scale_b is \(3, 2\); preset b200-mxf8f6f4 needs \(K/32, N\) = \(2, 3\)"):
        fpemu.mma(A, B, preset="b200-mxf8f6f4", scale_a=SA, scale_b=SB.T)
    with pytest.raises(ValueError, match="scale_a must be a 2-D array"):
        fpemu.mma(A, B, preset="b200-mxf8f6f4", scale_a=SA[0], scale_b=SB)
    with pytest.raises(ValueError, match="K = 48 is not a multiple of 32"):
        fpemu.mma(A[:, :48], B[:48], preset="b200-mxf8f6f4", scale_a=SA, scale_b=SB)
    # Values: E8M0 holds powers of two only (no zero), UE4M3 non-negative e4m3fn values.
    with pytest.raises(ValueError, match=r"scale_a\[1, 0\] = 3 is not a value of e8m0fnu"):
        fpemu.mma(A, B, preset="b200-mxf8f6f4", scale_a=np.array([[1.0, 1.0], [3.0, 1.0]]), scale_b=SB)
    with pytest.raises(ValueError, match=r"scale_b\[0, 2\] = 0 is not a value of e8m0fnu"):
        fpemu.mma(A, B, preset="b200-mxf8f6f4", scale_a=SA, scale_b=np.array([[1.0, 1.0, 0.0], [1.0, 1.0, 1.0]]))
    nv_a, nv_b = np.ones((2, 4)), np.ones((4, 3))
    nv_a[1, 2] = -2.0
    with pytest.raises(ValueError, match=r"scale_a\[1, 2\] = -2 is negative: preset b200-mxf4nvf4 .* unsigned UE4M3"):
        fpemu.mma(A, B, preset="b200-mxf4nvf4", scale_a=nv_a, scale_b=nv_b)
    with pytest.raises(ValueError, match=r"scale_b\[0, 0\] = 0.3 is not a value of e4m3fn"):
        fpemu.mma(A, B, preset="b200-mxf4nvf4", scale_a=np.ones((2, 4)), scale_b=np.full((4, 3), 0.3))


def test_presets_name_their_instruction_source_inputs_and_scales():
    presets = {p["name"]: p for p in fpemu.presets()}
    for name, p in presets.items():
        assert isinstance(p["instruction"], str) and p["instruction"], name
        assert isinstance(p["source"], str) and p["source"], name
        assert isinstance(p["inputs"], list) and all(isinstance(f, str) for f in p["inputs"]), name
        assert p["a"].name in p["inputs"] and p["b"].name in p["inputs"], name
        assert (p["scale"] is None) == (p["scale_block"] == 0), name
        assert p["sum"] in ("aligned", "exact", "pairwise") and isinstance(p["second_frac_bits"], int), name
    scaled = {name: (p["scale"], p["scale_block"]) for name, p in presets.items() if p["scale"] is not None}
    for gpu in ("b200", "rtx6000b"):
        assert scaled.pop(gpu + "-mxf8f6f4") == ("e8m0fnu", 32)
        assert scaled.pop(gpu + "-mxf4") == ("e8m0fnu", 32)
        assert scaled.pop(gpu + "-mxf4nvf4") == ("e4m3fn", 16)
        assert scaled.pop(gpu + "-mxf4nvf4-ue8m0") == ("e8m0fnu", 16)
    assert scaled == {}
    assert presets["b200-mxf8f6f4"]["inputs"] == ["e4m3fn", "e5m2", "e3m2fn", "e2m3fn", "e2m1fn"]
    assert presets["h100-e4m3"]["inputs"] == ["e4m3fn", "e5m2"] and presets["h100-bf16"]["inputs"] == ["bf16"]
    assert "tcgen05.mma" in presets["b200-mxf8f6f4"]["instruction"]
    assert "wgmma" in presets["h100-e4m3"]["instruction"] and "CDNA3" in presets["mi300x-fp16"]["instruction"]
    assert presets["mi100-fp16"]["sum"] == "exact" and presets["mi250-fp16"]["sum"] == "pairwise"
    assert presets["mi300x-fp16"]["second_frac_bits"] == 31 and presets["h100-fp16"]["second_frac_bits"] == 0
    # Each name of inputs is a format a_fmt and b_fmt take for that preset.
    one = np.ones((1, 32), dtype=np.float32)
    for f in presets["b200-e4m3"]["inputs"]:
        assert fpemu.mma(one, one.T, preset="b200-e4m3", a_fmt=f, b_fmt=f)[0, 0] == 32


# ---- gemm on block-scaled codes (fpemu.quantise's codes and scales) ----

def quantised(seed, m, k, n, fmt, scaling):
    """A (m x k) and B (k x n) from N(0, 1), quantised as fpemu gemm's command line does: A with K
    along its columns, B along its rows. Returns (A, scale_a, tensor_scale_a, B, scale_b, tensor_scale_b)."""
    rng = np.random.default_rng(seed)
    A, sa, ta = fpemu.quantise(rng.normal(size=(m, k)).astype(np.float32), fmt, scaling=scaling, k_axis=1)
    B, sb, tb = fpemu.quantise(rng.normal(size=(k, n)).astype(np.float32), fmt, scaling=scaling, k_axis=0)
    return A, sa, ta, B, sb, tb


def round_fp32(x):
    """The rational x rounded to the nearest binary32 value, ties to even (x in fp32's normal range)."""
    if x == 0:
        return 0.0
    sign, x = (-1 if x < 0 else 1), abs(x)
    e = x.numerator.bit_length() - x.denominator.bit_length()  # 2^e <= x < 2^(e+1) after the fix-up
    e += (x >= Fraction(2) ** (e + 1)) - (x < Fraction(2) ** e)
    q = x / Fraction(2) ** (e - 23)  # the significand in units of the last place: 2^23 <= q < 2^24
    n, rest = divmod(q.numerator, q.denominator)
    n += 2 * rest > q.denominator or (2 * rest == q.denominator and n % 2 == 1)
    return sign * float(Fraction(n) * Fraction(2) ** (e - 23))


def exact_scaled_product(A, sa, ta, B, sb, tb, fmt, scaling):
    """The exact product of the dequantised operands, as Fractions (M x N lists)."""
    va = fpemu.dequantise(A, sa, fmt, scaling=scaling, k_axis=1, tensor_scale=ta)
    vb = fpemu.dequantise(B, sb, fmt, scaling=scaling, k_axis=0, tensor_scale=tb)
    F = np.vectorize(lambda x: Fraction(float(x)), otypes=[object])
    return F(va).dot(F(vb))


def check_report(r, exact):
    """report=True's exact reference is the product of the scaled values, and its bound holds."""
    d = np.vectorize(lambda v: Fraction(float(v)), otypes=[object])(fpemu.decode(r["result"], "fp32"))
    relative = np.vectorize(lambda v, w: float(abs(v - w) / abs(w)), otypes=[float])(d, exact)
    np.testing.assert_allclose(r["relative_error"], relative, rtol=1e-12)
    assert r["exact_norm"] == pytest.approx(np.linalg.norm(exact.astype(np.float64)), rel=1e-12)
    (bound,) = r["bounds"]
    assert bound["valid"], bound["condition"]
    err2 = sum((v - w) ** 2 for v, w in zip(d.ravel(), exact.ravel()))
    assert 0 < err2 <= Fraction(bound["absolute"]) ** 2
    assert r["normwise_error"] <= r["normwise_bound"]


@pytest.mark.parametrize("preset", ["b200-mxf8f6f4", "rtx6000b-mxf8f6f4"])
def test_gemm_with_mx32_scales_is_the_block_scaled_mma_output_by_output(preset):
    M, K, N = 3, 160, 4
    A, sa, ta, B, sb, tb = quantised(31, M, K, N, "e4m3fn", "mx32")
    assert sa.dtype == np.uint8 and sa.shape == (M * K // 32,) and sb.shape == (N * K // 32,) and ta == tb == 1.0
    kw = dict(a_fmt="e4m3fn", acc=preset, scaling="mx32", scale_a=sa, scale_b=sb)
    G = fpemu.gemm(A, B, **kw)
    # quantise lays A's scales out (M, K/32) and B's (N, K/32), row-major; mma takes (M, K/32) and (K/32, N).
    D = fpemu.mma(A, B, preset=preset, scale_a=sa.reshape(M, K // 32), scale_b=sb.reshape(N, K // 32).T)
    assert G.dtype == np.uint32 and G.shape == (M, N)
    np.testing.assert_array_equal(G, D.view(np.uint32))
    assert not np.array_equal(G, fpemu.gemm(A, B, a_fmt="e4m3fn", acc=preset))  # the scales matter
    # Scale values (powers of two) read as the codes do; the report is of the same D.
    np.testing.assert_array_equal(fpemu.gemm(A, B, **dict(kw, scale_a=fpemu.decode(sa, "e8m0fnu"))), G)
    r = fpemu.gemm(A, B, **kw, report=True)
    np.testing.assert_array_equal(r["result"], G)
    check_report(r, exact_scaled_product(A, sa, ta, B, sb, tb, "e4m3fn", "mx32"))


def test_gemm_with_nvfp4_scales_is_the_mma_times_both_tensor_scales_rounded_once():
    M, K, N = 3, 128, 5
    A, sa, ta, B, sb, tb = quantised(32, M, K, N, "e2m1fn", "nvfp4")
    assert sa.dtype == np.uint8 and sa.shape == (M * K // 16,) and ta != 1.0 and tb != 1.0
    r = fpemu.gemm(A, B, a_fmt="e2m1fn", acc="b200-mxf4nvf4", scaling="nvfp4", scale_a=sa, scale_b=sb,
                   tensor_scale_a=ta, tensor_scale_b=tb, report=True)
    D = fpemu.mma(A, B, preset="b200-mxf4nvf4", scale_a=sa.reshape(M, K // 16), scale_b=sb.reshape(N, K // 16).T)
    # The MMA's fp32 D times ta tb, exactly, rounded once into fp32 (nearest-even): cuBLASLt's alpha.
    want = np.array([[round_fp32(Fraction(ta) * Fraction(tb) * Fraction(float(D[i, j]))) for j in range(N)]
                     for i in range(M)])
    got = fpemu.decode(r["result"], "fp32")
    np.testing.assert_array_equal(got, want)
    assert not np.array_equal(got, (D * np.float32(ta)) * np.float32(tb))  # two fp32 roundings differ here
    check_report(r, exact_scaled_product(A, sa, ta, B, sb, tb, "e2m1fn", "nvfp4"))


def test_gemm_group_scalings_fold_each_group_into_fp32_and_report_a_bound_that_holds():
    M, K, N = 2, 256, 3
    # DeepSeek-V3: tile128 scales (fp32, one per row per 128 of A, per 128 x 128 block of B) on
    # the H100 chain promoted every 128, which the preset's interval already is.
    A, sa, ta, B, sb, tb = quantised(33, M, K, N, "e4m3fn", "tile128")
    assert sa.dtype == np.uint32 and sa.shape == (M * 2,) and sb.shape == (2,)
    kw = dict(a_fmt="e4m3fn", scaling="tile128", scale_a=sa, scale_b=sb)
    G = fpemu.gemm(A, B, acc="h100-e4m3-deepseek", **kw)
    np.testing.assert_array_equal(G, fpemu.gemm(A, B, acc="h100-e4m3-fastaccum", promote=128, **kw))
    np.testing.assert_array_equal(G, fpemu.gemm(A, B, acc="h100-e4m3-fastaccum", **kw))  # promoted by the groups
    r = fpemu.gemm(A, B, acc="h100-e4m3-deepseek", **kw, report=True)
    np.testing.assert_array_equal(r["result"], G)
    check_report(r, exact_scaled_product(A, sa, ta, B, sb, tb, "e4m3fn", "tile128"))
    # mx32 on a format accumulator: each group of 32 folded, scaled, into fp32.
    A, sa, ta, B, sb, tb = quantised(34, M, K, N, "e4m3fn", "mx32")
    r = fpemu.gemm(A, B, a_fmt="e4m3fn", acc="bf16", scaling="mx32", scale_a=sa, scale_b=sb, report=True)
    check_report(r, exact_scaled_product(A, sa, ta, B, sb, tb, "e4m3fn", "mx32"))
    # One fp32 scale per tensor multiplies alpha: the same D as alpha = s_a s_b (exact in double).
    A, sa, ta, B, sb, tb = quantised(35, M, K, N, "e4m3fn", "tensor")
    s = float(fpemu.decode(sa, "fp32")[0]) * float(fpemu.decode(sb, "fp32")[0])
    np.testing.assert_array_equal(fpemu.gemm(A, B, a_fmt="e4m3fn", acc="b200-e4m3", scaling="tensor", scale_a=sa,
                                             scale_b=sb),
                                  fpemu.gemm(A, B, a_fmt="e4m3fn", acc="b200-e4m3", alpha=s))


def test_gemm_scales_and_scalings_are_checked():
    A, sa, ta, B, sb, tb = quantised(36, 2, 64, 3, "e4m3fn", "mx32")
    kw = dict(a_fmt="e4m3fn", acc="b200-mxf8f6f4")
    with pytest.raises(ValueError, match=r"scale_a has 3 scales; A \(2, 64\) scaled 'mx32' takes 4 "
                                         r"\(M \* ceil\(K/32\), one per 32 along K\), as fpemu.quantise\(A, ..., k_axis=1\)"):
        fpemu.gemm(A, B, **kw, scaling="mx32", scale_a=sa[:3], scale_b=sb)
    with pytest.raises(ValueError, match=r"scale_b has 7 scales; B \(64, 3\) scaled 'mx32' takes 6 \(N \* ceil"):
        fpemu.gemm(A, B, **kw, scaling="mx32", scale_a=sa, scale_b=np.append(sb, sb[0]))
    # B's scales in mma's (K/32, N) layout would be silently transposed: 1-D only, as quantise gives them.
    with pytest.raises(ValueError, match=r"scale_b must be a 1-D array of scale codes, as fpemu.quantise returns "
                                         r"them \(k_axis=0\), not 2-D"):
        fpemu.gemm(A, B, **kw, scaling="mx32", scale_a=sa, scale_b=sb.reshape(3, 2).T)
    # A block-scaled preset takes its own scaling (or none), not another.
    with pytest.raises(ValueError, match=r"scaling = 'nvfp4': preset b200-mxf8f6f4 applies e8m0fnu scales per 32 "
                                         r"products inside its blocks \(valid: 'mx32', or 'none' for scales of 1\)"):
        fpemu.gemm(A, B, **kw, scaling="nvfp4", scale_a=sa, scale_b=sb)
    with pytest.raises(ValueError, match=r"scaling = 'mx32': preset b200-mxf4nvf4 applies UE4M3 scales per 16 "
                                         r"products inside its blocks \(valid: 'nvfp4', or 'none'"):
        fpemu.gemm(A, B, a_fmt="e2m1fn", acc="b200-mxf4nvf4", scaling="mx32", scale_a=sa, scale_b=sb)
    with pytest.raises(ValueError, match=r"preset b200-mxf4nvf4-ue8m0 applies e8m0fnu scales per 16 products inside "
                                         r"its blocks \(valid: 'none' for scales of 1\)"):
        fpemu.gemm(A, B, a_fmt="e2m1fn", acc="b200-mxf4nvf4-ue8m0", scaling="mx32", scale_a=sa, scale_b=sb)
    with pytest.raises(ValueError, match=r"promote = 32: preset b200-mxf8f6f4 is a block-scaled MMA, which is not "
                                         r"promoted \(valid: 0\)"):
        fpemu.gemm(A, B, **kw, promote=32, scaling="mx32", scale_a=sa, scale_b=sb)
    # Scales come with their scaling, and a scaling with both operands' scales.
    with pytest.raises(ValueError, match=r"scale_a given with scaling = 'none' \(valid: .*'mx32'"):
        fpemu.gemm(A, B, **kw, scale_a=sa, scale_b=sb)
    with pytest.raises(ValueError, match=r"scale_b given with scaling = 'none'"):
        fpemu.gemm(A, B, a_fmt="e4m3fn", scale_b=sb)
    with pytest.raises(ValueError, match=r"scaling = 'mx32' needs scale_a and scale_b \(missing: scale_b\): the "
                                         r"scales fpemu.quantise returned for A \(k_axis=1\) and B \(k_axis=0\)"):
        fpemu.gemm(A, B, **kw, scaling="mx32", scale_a=sa)
    with pytest.raises(ValueError, match="unknown scaling 'mx64': valid are none, tensor, tile128, block128, mx32, nvfp4"):
        fpemu.gemm(A, B, **kw, scaling="mx64")
    with pytest.raises(ValueError, match=r"tensor_scale_a = 2: only scaling 'nvfp4' has a tensor scale \(valid: 1\)"):
        fpemu.gemm(A, B, **kw, scaling="mx32", scale_a=sa, scale_b=sb, tensor_scale_a=2.0)
    with pytest.raises(ValueError, match="k_order must be 0..K-1"):
        fpemu.gemm(A, B, **kw, scaling="mx32", scale_a=sa, scale_b=sb, k_order=list(range(63, -1, -1)))
    # Group scalings and promotion intervals must agree; nvfp4 needs an MMA that applies it.
    with pytest.raises(ValueError, match=r"scaling = 'mx32' groups K by 32 and folds each group into fp32, but preset "
                                         r"h100-e4m3-deepseek promotes every 128 \(valid: promote = 32, which "
                                         r"overrides the preset's interval\)"):
        fpemu.gemm(A, B, a_fmt="e4m3fn", acc="h100-e4m3-deepseek", scaling="mx32", scale_a=sa, scale_b=sb)
    with pytest.raises(ValueError, match=r"but promote = 64 \(valid: promote = 0 or 32\)"):
        fpemu.gemm(A, B, a_fmt="e4m3fn", acc="fp32", promote=64, scaling="mx32", scale_a=sa, scale_b=sb)
    with pytest.raises(ValueError, match=r"but promote = 64 \(valid: promote = 32\)"):
        fpemu.gemm(A, B, a_fmt="e4m3fn", acc="h100-e4m3-deepseek", promote=64, scaling="mx32", scale_a=sa, scale_b=sb)
    n4a, nsa, nta, n4b, nsb, ntb = quantised(37, 2, 64, 3, "e2m1fn", "nvfp4")
    nv = dict(a_fmt="e2m1fn", scaling="nvfp4", scale_a=nsa, scale_b=nsb, tensor_scale_a=nta, tensor_scale_b=ntb)
    with pytest.raises(ValueError, match=r"scaling = 'nvfp4' applies its UE4M3 scales inside a block-scaled MMA: acc = "
                                         r"'fp32' is not one \(valid: acc = a preset that takes them: b200-mxf4nvf4, "
                                         r"rtx6000b-mxf4nvf4\)"):
        fpemu.gemm(n4a, n4b, acc="fp32", **nv)
    with pytest.raises(ValueError, match=r"tensor_scale_b = 0 \(valid: a positive finite fp32 value\)"):
        fpemu.gemm(n4a, n4b, acc="b200-mxf4nvf4", **dict(nv, tensor_scale_b=0.0))
    with pytest.raises(ValueError, match=r"tensor_scale_a = 0.1 \(valid: a positive finite fp32 value\)"):
        fpemu.gemm(n4a, n4b, acc="b200-mxf4nvf4", **dict(nv, tensor_scale_a=0.1))
    negative = nsa.copy()
    negative[1] |= 0x80  # the sign bit of an e4m3fn code
    with pytest.raises(ValueError, match=r"scale_a\[1\] = -[0-9.e-]+ is negative: nvfp4's e4m3fn scales are unsigned UE4M3"):
        fpemu.gemm(n4a, n4b, acc="b200-mxf4nvf4", **dict(nv, scale_a=negative))
