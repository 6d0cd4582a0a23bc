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
    # Arithmetic on the typed array is arithmetic on its codes, and its result is typed too.
    rolled = np.roll(typed, 7)
    got = fpemu.add(typed, rolled, spec)
    assert got.dtype == typed.dtype
    np.testing.assert_array_equal(got.view(codes.dtype), fpemu.add(codes, np.roll(codes, 7), spec))


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


# ---- torch CPU tensors, through DLPack (Debian's torch 1.13 in the numpy1 venv) -----------------

def torch_or_skip():
    return pytest.importorskip("torch")


def test_a_float32_tensor_rounds_to_the_tensor_torch_casts_to():
    torch = torch_or_skip()
    t = torch.from_numpy(np.random.default_rng(5).normal(size=4096).astype(np.float32))
    got = fpemu.round(t, "bf16")
    assert isinstance(got, torch.Tensor) and got.dtype == torch.bfloat16
    assert torch.equal(got.view(torch.int16), t.to(torch.bfloat16).view(torch.int16))
    half = fpemu.round(t, torch.float16)  # the format named by torch's dtype
    assert half.dtype == torch.float16 and torch.equal(half, t.to(torch.float16))


def test_a_format_torch_lacks_comes_back_as_codes_or_its_float8_dtype():
    torch = torch_or_skip()
    x = np.random.default_rng(6).normal(size=512).astype(np.float32)
    got = fpemu.round(torch.from_numpy(x), "e4m3fn")
    if hasattr(torch, "float8_e4m3fn"):
        assert got.dtype == torch.float8_e4m3fn
        got = got.view(torch.uint8)
    assert got.dtype == torch.uint8
    np.testing.assert_array_equal(got.numpy(), fpemu.round(x, "e4m3fn"))
    # Codes wider than a byte in wider signed integers, since torch has no uint16 or uint32 before 2.3.
    for spec, dtype in (("e5m7", torch.int32), ("tf32", torch.int64)):
        codes = fpemu.round(torch.from_numpy(x), spec)
        assert codes.dtype == dtype
        np.testing.assert_array_equal(codes.numpy(), fpemu.round(x, spec))


def test_bf16_tensors_are_typed_arrays_in_and_out():
    torch = torch_or_skip()
    a = torch.from_numpy(np.random.default_rng(7).normal(size=256).astype(np.float32)).to(torch.bfloat16)
    b = a.flip(0)
    total = fpemu.add(a, b, "bf16")
    assert total.dtype == torch.bfloat16
    np.testing.assert_array_equal(total.view(torch.int16).numpy().view(np.uint16),
                                  fpemu.add(a.view(torch.int16).numpy().view(np.uint16),
                                            b.view(torch.int16).numpy().view(np.uint16), "bf16"))
    values = fpemu.decode(a, "bf16")
    assert values.dtype == torch.float64 and torch.equal(values, a.double())
    # A tensor that requires grad is read through detach(), which copies nothing.
    np.testing.assert_array_equal(fpemu.round(a.float().requires_grad_(), "bf16").view(torch.int16).numpy(),
                                  a.view(torch.int16).numpy())


def test_out_may_be_a_tensor_written_in_place():
    torch = torch_or_skip()
    t = torch.from_numpy(np.random.default_rng(8).normal(size=1000).astype(np.float32))
    out = torch.empty(1000, dtype=torch.bfloat16)
    assert fpemu.round(t, "bf16", out=out) is out
    assert torch.equal(out.view(torch.int16), t.to(torch.bfloat16).view(torch.int16))
    codes = torch.zeros(1000, dtype=torch.int32)
    fpemu.round(t, "bf16", out=codes)
    np.testing.assert_array_equal(codes.numpy(), fpemu.round(t.numpy(), "bf16"))


def test_torch_dtypes_name_formats():
    torch = torch_or_skip()
    assert fpemu.format(torch.bfloat16) == fpemu.format("bf16")
    assert fpemu.format(torch.float16) == fpemu.format("fp16")
    with pytest.raises(ValueError, match="torch.int8 stores no format of fpemu"):
        fpemu.format(torch.int8)
