"""The Python module fpemu: formats, round/decode on numpy arrays (dtypes, shapes, round trips),
bf16 and fp16 rounding against torch's casts bit for bit, stochastic rounding reproducibility,
and every error path raising ValueError with the library's message. Run by pytest in the venvs of
./dev test."""
import numpy as np
import pytest

import fpemu
from checks import check, raises

def test_formats():
    names = fpemu.formats()
    for n in ("e4m3fn", "e5m2", "e4m3fnuz", "e5m2fnuz", "bf16", "fp16", "tf32", "fp32", "e8m13", "e2m1fn"):
        check(n in names, "formats() lists %s" % n)
    f = fpemu.format("e4m3fn")
    check((f.max_finite, f.width, f.precision, f.encoding) == (448.0, 8, 4, "fn"), "e4m3fn quantities")
    check(f.min_positive == 2.0 ** -9 and f.unit_roundoff == 2.0 ** -4, "e4m3fn min_positive and u")
    check(fpemu.format("e5m2").max_finite == 57344.0 and fpemu.format("e5m2").has_inf, "e5m2")
    check(fpemu.format("e4m3fnuz").max_finite == 240.0, "e4m3fnuz max 240")
    check(fpemu.format("bf16") == fpemu.format("e8m7"), "bf16 == e8m7")
    check(repr(fpemu.format("e3m4")) == "fpemu.format('e3m4')", repr(fpemu.format("e3m4")))
    raises(lambda: fpemu.format("e9m99"), "e9m99")
    raises(lambda: fpemu.format("bogus"), "bogus")


def test_dtypes_and_round_trips():
    for name in fpemu.formats():
        f = fpemu.format(name)
        if f.width > 16:
            continue
        codes = np.arange(2 ** f.width, dtype=np.uint32)
        values = fpemu.decode(codes, name)
        check(values.dtype == np.float64 and values.shape == codes.shape, "decode gives float64 of the same shape")
        ok = ~np.isnan(values)
        back = fpemu.round(values[ok], name)
        want_dtype = np.uint8 if f.width <= 8 else np.uint16
        check(back.dtype == want_dtype, "%s codes are %s, got %s" % (name, want_dtype, back.dtype))
        same = back.astype(np.uint32) == codes[ok]
        # Negative zero of a format without it, and codes flushed to zero, come back as +0.
        zero = values[ok] == 0
        check(bool(np.all(same | zero)), "%s: every non-NaN, non-zero code round-trips" % name)
        back32 = fpemu.round(values[ok].astype(np.float32), name)
        check(bool(np.array_equal(back32, back)), "%s: float32 input gives the same codes as float64" % name)
    check(fpemu.round(np.array([1.0]), "fp32").dtype == np.uint32, "fp32 codes are uint32")
    x = np.linspace(-3, 3, 12, dtype=np.float32).reshape(3, 4)
    c = fpemu.round(x, "e4m3fn")
    check(c.shape == (3, 4), "shape kept: %r" % (c.shape,))
    v = fpemu.round(x, "e4m3fn", dtype="float64")
    check(bool(np.array_equal(v, fpemu.decode(c, "e4m3fn"))), "dtype='float64' == decode(codes)")
    check(fpemu.round(np.array([500.0]), "e4m3fn", overflow="saturate")[0] == 0x7E, "saturate to 448 (0x7e)")
    check(fpemu.round(np.array([500.0]), "e4m3fn")[0] == 0x7F, "e4m3fn overflow is NaN (0x7f)")
    check(fpemu.round(np.array([1.0 + 2 ** -4]), "e4m3fn", mode="ru")[0] == 0x39, "ru rounds 1+2^-4 up to 1.125")


def test_against_torch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(1)
    with np.errstate(over="ignore", invalid="ignore"):  # some scaled normals overflow to inf: wanted
        x = np.concatenate([rng.standard_normal(200000).astype(np.float32) * np.float32(2.0) ** rng.integers(-40, 40, 200000),
                            rng.integers(0, 2 ** 32, 100000, dtype=np.uint64).astype(np.uint32).view(np.float32),
                            np.array([0.0, -0.0, np.inf, -np.inf, 65504, 65520, 3.4e38, 1e-45], dtype=np.float32)])
    x = x[~np.isnan(x)]
    t = torch.from_numpy(x)
    for name, dtype in (("bf16", torch.bfloat16), ("fp16", torch.float16)):
        want = t.to(dtype).view(torch.int16).numpy().view(np.uint16)
        got = fpemu.round(x, name)
        bad = np.flatnonzero(got != want)
        check(bad.size == 0, "%s == torch cast on %d values; first mismatch %s" %
              (name, x.size, (x[bad[0]], got[bad[0]], want[bad[0]]) if bad.size else None))
    assert x.size == 299614


def test_stochastic():
    x = np.full(100000, 1.0 + 2 ** -10, dtype=np.float32)  # an eighth of the way from 1 to 1 + 2^-7 in bf16
    a = fpemu.round(x, "bf16", mode="sr", seed=7)
    b = fpemu.round(x, "bf16", mode="sr", seed=7)
    c = fpemu.round(x, "bf16", mode="sr", seed=8)
    check(bool(np.array_equal(a, b)), "same seed, same codes")
    check(not np.array_equal(a, c), "another seed, other codes")
    up = np.mean(a == 0x3F81)
    check(abs(up - 0.125) < 0.006, "round-up frequency %.4f is about 1/8 (4 sigma: 0.0042)" % up)
    check(bool(np.all((a == 0x3F80) | (a == 0x3F81))), "only the two neighbours")


def test_errors():
    x = np.array([1.0], dtype=np.float32)
    raises(lambda: fpemu.round(x, "e4m3fn", mode="nearest"), "nearest")
    raises(lambda: fpemu.round(x, "e4m3fn", overflow="wrap"), "wrap")
    raises(lambda: fpemu.round(x, "e4m3fn", mode="sr", sr_bits=40), "40")
    raises(lambda: fpemu.round(x, "e2m1fn", overflow="nan"), "rounding")
    raises(lambda: fpemu.round(x, "nope"), "nope")
    raises(lambda: fpemu.round(x, 3), "spec string")
    raises(lambda: fpemu.round(np.array(["a"]), "bf16"), "float32 or float64")
    raises(lambda: fpemu.decode(np.array([256]), "e4m3fn"), "codes[0] = 256")
    raises(lambda: fpemu.decode(np.array([-1]), "e4m3fn"), "codes[0] = -1")
    raises(lambda: fpemu.decode(np.array([0.1]), "e4m3fn"), "codes[0] = 0.1 is not a value of e4m3fn")
    check(fpemu.decode(np.array([1.5, -448.0]), "e4m3fn").tolist() == [1.5, -448.0], "float arrays are values")
    check(fpemu.__doc__ is not None and "ValueError" in fpemu.__doc__, "the module has a docstring")
    check(fpemu.round.__doc__ is not None and "Philox" in fpemu.round.__doc__, "round has a docstring")

