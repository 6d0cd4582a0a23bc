"""dot and gemm scored against the data before quantisation (a_original=, b_original=), as `fpemu
dot` and `fpemu gemm` score it: the errors against exact references computed here (products of
float32 values are exact in float64, and math.fsum rounds their sum once), the fractions of the
inputs that quantise lost counted here from the scales and the dequantised values, and the
scaling table of docs/accumulation.md (fpemu.scaling_table) against the page's generated table
and, where FPEMU_EXE names the command, against `fpemu gemm --json -` number for number. Run by
pytest in the venvs of ./dev test."""
import json
import math
import os
import re
import subprocess

import numpy as np
import pytest

import fpemu

RNG = np.random.default_rng(27)
ROOT = os.environ.get("FPEMU_SOURCE_ROOT", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
E4M3_MAX = 448.0


def spread(shape):
    """float32 data over ten binades either side of e4m3fn's range: some of it underflows unscaled,
    some saturates."""
    x = RNG.normal(size=shape) * 10.0 ** RNG.uniform(-5, 3.5, size=shape)
    x[RNG.random(size=shape) < 0.05] = 0.0  # zeros count as neither
    return x.astype(np.float32)


def exact_gemm(X, Y, alpha=1.0, beta=0.0, C=None):
    """alpha X Y + beta C of float32 X, Y (and float64 C) as float64, each output one rounding
    (math.fsum of exact float64 products; alpha and beta powers of two keep them exact)."""
    M, K = X.shape
    N = Y.shape[1]
    out = np.empty((M, N))
    for i in range(M):
        for j in range(N):
            terms = [alpha * float(X[i, k]) * float(Y[k, j]) for k in range(K)]
            if beta != 0:
                terms.append(beta * float(C[i, j]))
            out[i, j] = math.fsum(terms)
    return out


def lost_counts(x, codes, scales, fmt, scaling, k_axis, tensor_scale=1.0):
    """(non-zero, underflowed, saturated) of x as quantised: saturated beyond max * its scale (the
    dequantised value of a code of 1.0 at that position), underflowed where the value became 0."""
    ones = fpemu.round(np.ones(x.shape), fmt)
    scale = fpemu.dequantise(ones, scales, fmt, scaling=scaling, k_axis=k_axis, tensor_scale=tensor_scale)
    value = fpemu.dequantise(codes, scales, fmt, scaling=scaling, k_axis=k_axis, tensor_scale=tensor_scale)
    nonzero = x != 0
    saturated = nonzero & (np.abs(x.astype(np.float64)) > E4M3_MAX * scale)
    underflowed = nonzero & ~saturated & (value == 0)
    return int(nonzero.sum()), int(underflowed.sum()), int(saturated.sum())


@pytest.mark.parametrize("scaling", ["none", "tensor", "tile128", "mx32"])
def test_gemm_against_the_original_data_is_an_fsum_reference(scaling):
    M, K, N = 5, 200, 4
    X, Y = spread((M, K)), spread((K, N))
    C = fpemu.round(RNG.normal(size=(M, N)), "fp32")
    A, sa, _ = fpemu.quantise(X, "e4m3fn", scaling=scaling, k_axis=1)
    B, sb, _ = fpemu.quantise(Y, "e4m3fn", scaling=scaling, k_axis=0)
    scales = {} if scaling == "none" else {"scale_a": sa, "scale_b": sb}
    r = fpemu.gemm(A, B, C, a_fmt="e4m3fn", acc="fp32", scaling=scaling, alpha=2.0, beta=0.5, report=True,
                   a_original=X, b_original=Y, **scales)
    d = fpemu.decode(r["result"], "fp32")
    x = exact_gemm(X, Y, 2.0, 0.5, fpemu.decode(C, "fp32"))
    rel = np.abs(d - x) / np.abs(x)
    np.testing.assert_allclose(r["relative_error_original"], rel, rtol=1e-9, atol=0)
    assert r["max_rel_error_original"] == pytest.approx(rel.max(), rel=1e-9)
    assert r["error_norm_original"] == pytest.approx(np.linalg.norm(d - x), rel=1e-9)
    assert r["exact_norm_original"] == pytest.approx(np.linalg.norm(x), rel=1e-12)
    assert r["normwise_error_original"] == pytest.approx(np.linalg.norm(d - x) / np.linalg.norm(x), rel=1e-9)
    # What quantise lost, over A and B together.
    na, ua, sa_ = lost_counts(X, A, sa, "e4m3fn", scaling, 1)
    nb, ub, sb_ = lost_counts(Y, B, sb, "e4m3fn", scaling, 0)
    assert r["underflowed"] == (ua + ub) / (na + nb)
    assert r["saturated"] == (sa_ + sb_) / (na + nb)
    if scaling == "none":  # the data span e4m3fn's range and beyond on both sides
        assert r["underflowed"] > 0.05 and r["saturated"] > 0.05
    if scaling in ("tensor", "tile128"):  # amax maps onto 448 or below: nothing saturates
        assert r["saturated"] == 0
    # The report against the quantised inputs is unchanged by the originals.
    plain = fpemu.gemm(A, B, C, a_fmt="e4m3fn", acc="fp32", scaling=scaling, alpha=2.0, beta=0.5, report=True,
                       **scales)
    np.testing.assert_array_equal(r["relative_error"], plain["relative_error"])
    assert "normwise_error_original" not in plain and "underflowed" not in plain


def test_gemm_of_data_that_all_underflow_is_exact_against_the_codes_and_wrong_by_all_against_the_data():
    """Unscaled e4m3fn inputs of N(0, 1e-8) all quantise to zero: the error against the data is 1."""
    X = (RNG.normal(size=(8, 256)) * 1e-4).astype(np.float32)
    Y = (RNG.normal(size=(256, 8)) * 1e-4).astype(np.float32)
    A, _, _ = fpemu.quantise(X, "e4m3fn", scaling="none", k_axis=1)
    B, _, _ = fpemu.quantise(Y, "e4m3fn", scaling="none", k_axis=0)
    r = fpemu.gemm(A, B, a_fmt="e4m3fn", acc="h100-e4m3-deepseek", report=True, a_original=X, b_original=Y)
    assert np.all(fpemu.decode(r["result"], "bf16") == 0)
    assert np.all(r["relative_error"] == 0) and r["normwise_error"] == 0
    assert r["max_rel_error_original"] == 1 and r["normwise_error_original"] == 1
    assert r["underflowed"] == 1 and r["saturated"] == 0


def test_gemm_of_fp32_data_loses_nothing():
    X = RNG.normal(size=(3, 50)).astype(np.float32)
    Y = RNG.normal(size=(50, 2)).astype(np.float32)
    r = fpemu.gemm(X, Y, a_fmt="fp32", acc="bf16", report=True, a_original=X, b_original=Y)
    np.testing.assert_array_equal(r["relative_error_original"], r["relative_error"])
    assert r["normwise_error_original"] == r["normwise_error"]
    assert r["underflowed"] == 0 and r["saturated"] == 0


def test_dot_against_the_original_data_and_what_quantisation_lost():
    a = np.array([1e-5, 1000.0, 1.0, 0.0, -3.0], np.float32)
    b = np.array([1.0, 1.0, 2.0 ** -12, 5.0, 0.5], np.float32)
    ca, _, _ = fpemu.quantise(a.reshape(1, -1), "e4m3fn", scaling="none", k_axis=1)
    cb, _, _ = fpemu.quantise(b.reshape(-1, 1), "e4m3fn", scaling="none", k_axis=0)
    assert fpemu.decode(ca, "e4m3fn").tolist() == [[0.0, 448.0, 1.0, 0.0, -3.0]]  # 1e-5 < 2^-10; 1000 > 448
    r = fpemu.dot(ca[0], cb[:, 0], a_fmt="e4m3fn", acc="fp32", a_original=a, b_original=b)
    exact = math.fsum(float(x) * float(y) for x, y in zip(a, b))
    assert r["exact"] == 448.0 - 1.5 and r["value"] == 446.5  # 1 * 2^-12 underflowed too
    assert r["exact_original"] == exact
    assert r["error_original"] == r["value"] - exact
    assert r["relative_error_original"] == pytest.approx(abs(r["value"] - exact) / abs(exact), rel=1e-15)
    assert r["abs_sum_original"] == pytest.approx(math.fsum(abs(float(x) * float(y)) for x, y in zip(a, b)), rel=1e-15)
    # Non-zero: four of a, five of b; underflowed: a[0] and b[2]; saturated: a[1].
    assert r["underflowed"] == 2 / 9 and r["saturated"] == 1 / 9
    (bound,) = r["bounds_original"]
    assert {"name", "coefficient", "absolute", "valid", "condition"} <= set(bound)
    assert "exact_original" not in fpemu.dot(ca[0], cb[:, 0], a_fmt="e4m3fn", acc="fp32")


def test_dot_of_unquantised_data_loses_nothing():
    x = RNG.normal(size=64).astype(np.float32)
    r = fpemu.dot(x, x, a_fmt="fp32", acc="fp32", a_original=x, b_original=x)
    assert r["exact_original"] == r["exact"] and r["underflowed"] == 0 and r["saturated"] == 0


def test_originals_are_checked():
    X = np.ones((2, 3), np.float32)
    A = fpemu.round(X, "bf16")
    with pytest.raises(ValueError, match=r"a_original is \(3, 2\) but A is \(2, 3\): give the data A was quantised "
                                         r"from, in its shape"):
        fpemu.gemm(A, A.T.copy(), a_fmt="bf16", report=True, a_original=X.T, b_original=X.T)
    with pytest.raises(ValueError, match="b_original given without a_original"):
        fpemu.gemm(A, A.T.copy(), a_fmt="bf16", report=True, b_original=X.T)
    with pytest.raises(ValueError, match="pass report=True with them"):
        fpemu.gemm(A, A.T.copy(), a_fmt="bf16", a_original=X, b_original=X.T)
    bad = X.copy()
    bad[1, 2] = np.inf
    with pytest.raises(ValueError, match=r"a_original\[1, 2\] = inf is not finite"):
        fpemu.gemm(A, A.T.copy(), a_fmt="bf16", report=True, a_original=bad, b_original=X.T)
    with pytest.raises(ValueError, match="is not a float32 value"):
        fpemu.gemm(A, A.T.copy(), a_fmt="bf16", report=True, a_original=X.astype(np.float64) + 1e-12, b_original=X.T)
    with pytest.raises(ValueError, match=r"b_original has shape \(2,\); b has length 3"):
        fpemu.dot(A[0], A[1], a_fmt="bf16", a_original=X[0], b_original=X[1][:2])


# ---- The scaling table -------------------------------------------------------------------------

def docs_table():
    """{(row label, K): [cell text per sigma]} and the sigmas, from docs/accumulation.md."""
    text = open(os.path.join(ROOT, "docs", "accumulation.md"), encoding="utf-8").read()
    block = text.split("<!-- table:scaling -->")[1].split("<!-- /table:scaling -->")[0].strip().splitlines()
    header = [c.strip() for c in block[0].strip("|").split("|")]
    rows = {}
    for line in block[2:]:
        cells = [c.strip() for c in line.strip("|").split("|")]
        rows[cells[0], int(cells[1])] = cells[2:]
    return rows, [float(h.split()[1]) for h in header[2:]]


def cell_text(c):
    """A cell as scripts/docs_tables.py writes it from `fpemu gemm --json -`."""
    lost = ["%s %.3g%%" % (what, 100 * c[key]) for what, key in (("U", "underflowed"), ("S", "saturated"))
            if c[key] > 0]
    return "%.2g" % c["normwise_error_original"] + (" (%s)" % ", ".join(lost) if lost else "")


def test_scaling_table_is_the_docs_table():
    rows, sigmas = docs_table()
    cells = fpemu.scaling_table()
    assert len(cells) == len(rows) * len(sigmas) == 60
    # The table's order: scaling, then K, then sigma.
    labels = list(dict.fromkeys(c["name"] for c in cells))
    assert labels == list(dict.fromkeys(name for name, _ in rows))
    assert [c["sigma"] for c in cells[:len(sigmas)]] == sigmas
    for c in cells:
        assert (c["m"], c["n"], c["seed"]) == (8, 8, 0)
        assert cell_text(c) == rows[c["name"], c["k"]][sigmas.index(c["sigma"])], c
        assert 0 <= c["normwise_error"] <= c["normwise_error_original"] or c["underflowed"] == 1
    by = {(c["scaling"], c["k"], c["sigma"]): c for c in cells}
    assert by["none", 128, 1e-6]["underflowed"] == 1 and by["none", 128, 1e-6]["normwise_error_original"] == 1
    assert by["tile128", 4096, 1e-6]["underflowed"] == 0 and by["tile128", 4096, 1e-6]["saturated"] == 0
    assert {c["scaling"] for c in cells} == {"none", "tensor", "tile128", "mx32", "nvfp4"}
    assert {(c["a_format"], c["accumulator"]) for c in cells if c["scaling"] == "nvfp4"} == {("e2m1fn", "b200-mxf4nvf4")}


def test_scaling_table_equals_the_command_number_for_number():
    exe = os.environ.get("FPEMU_EXE")
    if not exe or not os.path.exists(exe):
        pytest.skip("FPEMU_EXE does not name the fpemu command")
    cells = fpemu.scaling_table(ks=[256], sigmas=[1e-5, 3.0], m=4, n=6, seed=9)
    options = {"none": ["--acc", "fp32", "--a-format", "e4m3fn", "--b-format", "e4m3fn"],
               "tensor": ["--acc", "fp32", "--a-format", "e4m3fn", "--b-format", "e4m3fn"],
               "tile128": ["--acc", "fp32", "--a-format", "e4m3fn", "--b-format", "e4m3fn"],
               "mx32": ["--acc", "fp32", "--a-format", "e4m3fn", "--b-format", "e4m3fn"],
               "nvfp4": ["--preset", "b200-mxf4nvf4"]}
    assert len(cells) == 10
    for c in cells:
        out = subprocess.run([exe, "gemm", "--m", "4", "--n", "6", "--k", "256", "--sigma", repr(c["sigma"]),
                              "--seed", "9", "--scaling", c["scaling"], *options[c["scaling"]], "--json", "-"],
                             capture_output=True, text=True, check=True, timeout=120).stdout
        g = json.loads(out)[0]
        for key in ("normwise_error_original", "max_rel_error_original", "normwise_error", "max_rel_error",
                    "underflowed", "saturated"):
            assert c[key] == g[key], (c["name"], c["sigma"], key, c[key], g[key])


def test_scaling_table_arguments_are_checked():
    with pytest.raises(ValueError, match=r"K = 0 is out of range \(valid: 1..65536\)"):
        fpemu.scaling_table(ks=[0])
    with pytest.raises(ValueError, match=r"sigma = -1 is out of range \(valid: > 0 and <= 1e30\)"):
        fpemu.scaling_table(sigmas=[-1.0])
    with pytest.raises(ValueError, match="no K given"):
        fpemu.scaling_table(ks=[])
    with pytest.raises(ValueError, match=r"M = 0 is out of range"):
        fpemu.scaling_table(m=0)
