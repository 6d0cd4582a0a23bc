"""Block quantisation from Python (fpemu.quantise / dequantise, the library's analysis::quantise).
MX against gfloat's reference block encoding (quantize_block with compute_scale_amax: OCP MX v1.0,
blocks of 32, an E8M0 scale of 2^(floor(log2 amax) - emax), elements rounded to nearest-even and
saturated), on every MX element type; NVFP4 against gfloat's encode_block of a block format with
e2m1 elements, 16 per block and an e4m3 scale (the element and scale encodings), with the two
scale levels recomputed here in exact rational arithmetic; the layout and errors of the other
scalings. Run by pytest in the venvs of ./dev test."""
from fractions import Fraction
import numpy as np
import pytest

import fpemu

gfloat = pytest.importorskip("gfloat")
import gfloat.formats  # noqa: E402 - after the skip

MX = {
    "e4m3fn": gfloat.formats.format_info_mxfp8_e4m3,
    "e5m2": gfloat.formats.format_info_mxfp8_e5m2,
    "e3m2fn": gfloat.formats.format_info_mxfp6_e3m2,
    "e2m3fn": gfloat.formats.format_info_mxfp6_e2m3,
    "e2m1fn": gfloat.formats.format_info_mxfp4_e2m1,
}


def blocks_of_every_kind(seed):
    """8 rows x 320 columns (10 blocks of 32 per row): normal data at magnitudes 2^-140..2^120 per
    block (scales at both clamps of e8m0), blocks whose amax is a power of two or just below one,
    an all-zero block, a block with one nonzero element, and subnormal float32 inputs."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(8, 320))
    x *= np.exp2(rng.integers(-140, 120, size=(8, 10))).repeat(32, axis=1)
    x[0, 0:32] = 0.0
    x[0, 32:64] = 0.0
    x[0, 40] = -3.0
    x[1, 0:32] = np.linspace(-1, 1, 32) * 2.0 ** 8
    x[1, 32:64] = np.linspace(-1, 1, 32) * np.nextafter(np.float32(2.0 ** 8), np.float32(0))
    x[2, 0:32] = rng.normal(size=32) * 2.0 ** -140
    return x.astype(np.float32)


@pytest.mark.parametrize("fmt", sorted(MX))
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_mx_blocks_equal_gfloats_quantize_block(fmt, seed):
    x = blocks_of_every_kind(seed)
    codes, scales, tensor_scale = fpemu.quantise(x, fmt, scaling="mx32")
    assert tensor_scale == 1.0
    assert codes.shape == x.shape and scales.shape == (8 * 10,) and scales.dtype == np.uint8
    got = fpemu.dequantise(codes, scales, fmt, scaling="mx32")
    fi = MX[fmt]
    for r in range(x.shape[0]):
        for b in range(x.shape[1] // 32):
            block = x[r, 32 * b:32 * (b + 1)].astype(np.float64)
            want = gfloat.block.quantize_block(fi, block, gfloat.block.compute_scale_amax)
            assert np.array_equal(got[r, 32 * b:32 * (b + 1)], want), (fmt, r, b)
            scale = fpemu.decode(scales[r * 10 + b:r * 10 + b + 1], "e8m0fnu")[0]
            if np.any(block != 0):
                assert scale == gfloat.block.compute_scale_amax(fi.etype.emax, block), (fmt, r, b)
            else:
                # gfloat gives an all-zero block the smallest scale, 2^-127; fpemu 2^0 (any scale
                # represents zeros).
                assert scale == 1.0


def test_mx_blocks_run_along_k_for_a_and_b():
    x = blocks_of_every_kind(4)
    a_codes, a_scales, _ = fpemu.quantise(x, "e4m3fn", k_axis=1)
    b_codes, b_scales, _ = fpemu.quantise(x.T.copy(), "e4m3fn", k_axis=0)
    assert np.array_equal(b_codes, a_codes.T)
    np.testing.assert_array_equal(fpemu.dequantise(b_codes, b_scales, "e4m3fn", k_axis=0),
                                  fpemu.dequantise(a_codes, a_scales, "e4m3fn").T)


@pytest.mark.parametrize("scaling, count", [("none", 1), ("tensor", 1), ("tile128", 8 * 3), ("block128", 3)])
def test_fp32_scalings_map_amax_onto_the_largest_value(scaling, count):
    x = blocks_of_every_kind(5)[:, :300]
    codes, scales, _ = fpemu.quantise(x, "e4m3fn", scaling=scaling)
    assert scales.shape == (count,) and scales.dtype == np.uint32
    values = fpemu.dequantise(codes, scales, "e4m3fn", scaling=scaling)
    if scaling != "none":
        # Each group's largest magnitude lands within one e4m3fn rounding of itself.
        assert np.all(np.abs(values - x) <= np.abs(x) * 2.0 ** -4 + np.max(np.abs(values)) * 2.0 ** -9)


def test_bad_block_arguments_name_the_value():
    x = np.ones((2, 64), np.float32)
    with pytest.raises(ValueError, match="unknown scaling 'mx64'"):
        fpemu.quantise(x, "e4m3fn", scaling="mx64")
    with pytest.raises(ValueError, match=r"k_axis = 2 \(valid: 1"):
        fpemu.quantise(x, "e4m3fn", k_axis=2)
    with pytest.raises(ValueError, match=r"element \(0, 1\) is NaN"):
        fpemu.quantise(np.array([[1.0, np.nan]], np.float32), "e4m3fn")
    codes, scales, _ = fpemu.quantise(x, "e4m3fn")
    with pytest.raises(ValueError, match="dequantise: 3 scales; a 2x64 matrix scaled mx32 with K along its columns has 4"):
        fpemu.dequantise(codes, scales[:3], "e4m3fn")
    with pytest.raises(ValueError, match=r"only nvfp4 has a tensor scale"):
        fpemu.dequantise(codes, scales, "e4m3fn", tensor_scale=2.0)
    with pytest.raises(ValueError, match=r"nvfp4 scaling takes element formats of at most 9 significant bits"):
        fpemu.quantise(x, "fp16", scaling="nvfp4")


NVFP4 = gfloat.block.BlockFormatInfo("nvfp4", gfloat.formats.format_info_ocp_e2m1, 16,
                                     gfloat.formats.format_info_ocp_e4m3)


def nvfp4_data(seed):
    """6 rows x 160 columns (10 blocks of 16 per row): blocks at magnitudes 2^-12..2^12 of the
    tensor's largest (some block scales underflow e4m3fn to zero), an all-zero block, a block
    holding the tensor's amax, and blocks at e4m3 rounding boundaries."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(6, 160)) * np.exp2(rng.integers(-12, 1, size=(6, 10))).repeat(16, axis=1)
    x[0, 0:16] = 0.0
    x[1, 16:32] *= 2.0 ** -20
    x[2, 0] = 40.0
    return x.astype(np.float32)


def rounded_up_fp32(q):
    f = np.float32(float(q))
    return f if Fraction(float(f)) >= q else np.nextafter(f, np.float32(np.inf))


@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_nvfp4_scales_and_elements_are_gfloats_encodings_of_the_exact_scales(seed):
    x = nvfp4_data(seed)
    codes, scales, tensor_scale = fpemu.quantise(x, "e2m1fn", scaling="nvfp4")
    assert codes.shape == x.shape and codes.dtype == np.uint8 and scales.shape == (6 * 10,)
    # The tensor scale: amax / (448 * 6) rounded up into fp32.
    amax = Fraction(float(np.max(np.abs(x))))
    assert tensor_scale == rounded_up_fp32(amax / (448 * 6))
    e2m1, e4m3 = NVFP4.etype, NVFP4.stype
    values = fpemu.dequantise(codes, scales, "e2m1fn", scaling="nvfp4", tensor_scale=tensor_scale)
    for r in range(x.shape[0]):
        for b in range(10):
            block = x[r, 16 * b:16 * (b + 1)]
            # The block scale, exactly: amax_b / (6 s_t), then one rounding into e4m3fn.
            want_scale = Fraction(float(np.max(np.abs(block)))) / (6 * Fraction(float(tensor_scale)))
            # (gfloat rounds a float64: the exact quotient is first rounded to 53 bits, which moves
            # it across an e4m3 rounding boundary only if it lies within 2^-53 of one.)
            s_b = gfloat.round_float(e4m3, float(want_scale), gfloat.RoundMode.TiesToEven, True)
            assert fpemu.decode(scales[r * 10 + b], "e4m3fn") == s_b, (r, b)
            if s_b == 0:
                assert np.all(codes[r, 16 * b:16 * (b + 1)] % 8 == 0)  # zeros of either sign
                continue
            scale = Fraction(s_b) * Fraction(float(tensor_scale))
            scaled = [float(Fraction(float(v)) / scale) for v in block]
            enc = list(gfloat.block.encode_block(NVFP4, s_b, scaled))
            assert enc[0] == scales[r * 10 + b], (r, b)
            assert enc[1:] == codes[r, 16 * b:16 * (b + 1)].tolist(), (r, b)
            np.testing.assert_array_equal(values[r, 16 * b:16 * (b + 1)],
                                          [float(Fraction(float(e)) * scale) for e in
                                           (gfloat.decode_float(e2m1, c).fval for c in enc[1:])])
