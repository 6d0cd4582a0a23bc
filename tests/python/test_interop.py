"""The module's one convention for arrays, and formats named by dtype: an integer array holds
codes, a typed array (float32 for fp32, float16, ml_dtypes' types) holds its format's codes in
its bits, any other float array holds values that must be exact in the format; a format argument
takes a spec, an fpemu.format, a dtype or a dtype's name. Checked against ml_dtypes' own casts and
against the same call on plain codes. Run by pytest in the venvs of ./dev test."""
import numpy as np
import pytest

import fpemu

ml_dtypes = pytest.importorskip("ml_dtypes")

# What each dtype stores, as the peers' documentation names it (test_peers.py checks the values).
TYPED = {
    np.float32: "fp32", np.float16: "fp16", ml_dtypes.bfloat16: "bf16",
    ml_dtypes.float8_e5m2: "e5m2", ml_dtypes.float8_e4m3fn: "e4m3fn", ml_dtypes.float8_e4m3fnuz: "e4m3fnuz",
    ml_dtypes.float8_e5m2fnuz: "e5m2fnuz", ml_dtypes.float8_e4m3b11fnuz: "e4m3:bias=11:fnuz",
    ml_dtypes.float8_e4m3: "e4m3", ml_dtypes.float8_e3m4: "e3m4", ml_dtypes.float8_e8m0fnu: "e8m0fnu",
    ml_dtypes.float6_e3m2fn: "e3m2fn", ml_dtypes.float6_e2m3fn: "e2m3fn", ml_dtypes.float4_e2m1fn: "e2m1fn",
}
NARROW = [t for t in TYPED if t not in (np.float32,)]


@pytest.mark.parametrize("dtype", list(TYPED), ids=lambda t: np.dtype(t).name)
def test_a_format_is_named_by_its_dtype_the_dtype_object_or_the_dtypes_name(dtype):
    want = fpemu.format(TYPED[dtype])
    assert fpemu.format(dtype) == want
    assert fpemu.format(np.dtype(dtype)) == want
    assert fpemu.format(np.dtype(dtype).name) == want


@pytest.mark.parametrize("bad", [np.int8, np.float64, np.complex64, ml_dtypes.int4])
def test_a_dtype_that_stores_no_format_is_refused_by_name(bad):
    with pytest.raises(ValueError, match="dtype %s stores no format of fpemu" % np.dtype(bad).name):
        fpemu.format(bad)


def every_code(dtype):
    spec = TYPED[dtype]
    storage = {1: np.uint8, 2: np.uint16, 4: np.uint32}[np.dtype(dtype).itemsize]
    codes = np.arange(min(2 ** fpemu.format(spec).width, 1 << 16), dtype=storage)
    return spec, codes, codes.view(dtype)


@pytest.mark.parametrize("dtype", NARROW, ids=lambda t: np.dtype(t).name)
def test_a_typed_array_is_read_as_the_codes_in_its_bits(dtype):
    spec, codes, typed = every_code(dtype)
    np.testing.assert_array_equal(fpemu.decode(typed, spec), fpemu.decode(codes, spec))
    np.testing.assert_array_equal(fpemu.decode(typed, dtype), fpemu.decode(codes, spec))
    # Arithmetic on the typed array is arithmetic on its codes.
    rolled = np.roll(typed, 7)
    np.testing.assert_array_equal(fpemu.add(typed, rolled, spec), fpemu.add(codes, np.roll(codes, 7), spec))


@pytest.mark.parametrize("dtype", NARROW, ids=lambda t: np.dtype(t).name)
def test_a_typed_array_of_another_format_holds_values(dtype):
    spec, codes, typed = every_code(dtype)
    values = fpemu.decode(codes, spec)
    wide = "fp32"  # holds every value of every narrower format
    finite = np.isfinite(values)
    got = fpemu.round(typed[finite], wide)
    np.testing.assert_array_equal(got, fpemu.round(values[finite], wide))
    # As codes of fp32 too: each value is exact there, so it passes where codes are asked for.
    np.testing.assert_array_equal(fpemu.decode(typed[finite], wide), values[finite])


def test_float_arrays_are_values_that_must_be_exact_in_the_format():
    np.testing.assert_array_equal(fpemu.decode(np.array([1.5, -448.0]), "e4m3fn"), [1.5, -448.0])
    codes = fpemu.round(np.array([1.5, -448.0]), "e4m3fn")
    np.testing.assert_array_equal(fpemu.add(np.array([1.5, -448.0]), codes, "e4m3fn"), fpemu.add(codes, codes, "e4m3fn"))
    with pytest.raises(ValueError, match=r"^a\[1\] = 0\.3 is not a value of e4m3fn \(nearest: 0\.3125\); round it "):
        fpemu.add(np.array([1.0, 0.3]), codes, "e4m3fn")
    with pytest.raises(ValueError, match=r"^codes\[0\] = 1000 is not a value of e4m3fn; round it"):
        fpemu.decode(np.array([1000.0]), "e4m3fn")


@pytest.mark.parametrize("dtype", NARROW, ids=lambda t: np.dtype(t).name)
def test_round_takes_typed_arrays_as_their_values(dtype):
    spec, codes, typed = every_code(dtype)
    values = fpemu.decode(codes, spec)
    for target in ("e4m3fn", "bf16", "e2m1fn"):
        keep = np.isfinite(values) if not fpemu.format(target).has_nan else slice(None)
        np.testing.assert_array_equal(fpemu.round(typed[keep], target, overflow="saturate"),
                                      fpemu.round(values[keep], target, overflow="saturate"))


def test_results_match_ml_dtypes_casts_when_read_back_as_typed_arrays():
    x = np.random.default_rng(3).normal(size=4096).astype(np.float32)
    for dtype in (ml_dtypes.bfloat16, ml_dtypes.float8_e4m3fn, ml_dtypes.float8_e5m2, np.float16):
        codes = fpemu.round(x, dtype)
        np.testing.assert_array_equal(codes.view(dtype), x.astype(dtype))
