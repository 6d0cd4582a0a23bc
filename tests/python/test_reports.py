"""dot and gemm report as sum does (result, exact reference, error, the bound with its validity),
from the analysis the command line prints; mma reads its operands by the module's convention.
The exact references are recomputed here with Python's fractions. Run by pytest in the venvs of
./dev test."""
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
