"""fpemu against two peer libraries on every format they share with it: ml_dtypes (Google's NumPy
dtypes; float32 -> format by round-to-nearest-even with IEEE overflow) and gfloat (Graphcore's
reference model of OCP and IEEE formats, in five rounding modes, saturating or not).

For each shared format: every code decodes to the same value (NaN to NaN, zeros with their sign);
float32 -> format gives the same result on every boundary input (each representable value, each
midpoint between neighbours, and the float32 neighbours of both), on float32 infinities and
NaN, and on 10^6 random float32 inputs (half uniform bit patterns, half log-uniform over the
format's range), in every mode and overflow policy the peer has. Run by pytest in the venvs of
./dev test, where the peers are pinned (tests/python/requirements-*.txt); skipped without them."""
import numpy as np
import pytest

import fpemu

ml_dtypes = pytest.importorskip("ml_dtypes")
gfloat = pytest.importorskip("gfloat")
import gfloat.formats  # noqa: E402 - after the skip

RANDOM = 1_000_000
# The inputs include NaN, infinities and values far out of range: NumPy warns on casting them.
pytestmark = pytest.mark.filterwarnings("ignore:.*encountered in cast:RuntimeWarning")

# fpemu spec -> ml_dtypes type: every type of ml_dtypes that is a floating-point format.
ML_DTYPES = {
    "bf16": ml_dtypes.bfloat16,
    "fp16": np.float16,
    "e5m2": ml_dtypes.float8_e5m2,
    "e4m3fn": ml_dtypes.float8_e4m3fn,
    "e4m3fnuz": ml_dtypes.float8_e4m3fnuz,
    "e5m2fnuz": ml_dtypes.float8_e5m2fnuz,
    "e4m3:bias=11:fnuz": ml_dtypes.float8_e4m3b11fnuz,
    "e4m3": ml_dtypes.float8_e4m3,
    "e3m4": ml_dtypes.float8_e3m4,
    "e8m0fnu": ml_dtypes.float8_e8m0fnu,
    "e3m2fn": ml_dtypes.float6_e3m2fn,
    "e2m3fn": ml_dtypes.float6_e2m3fn,
    "e2m1fn": ml_dtypes.float4_e2m1fn,
}

# fpemu spec -> gfloat format.
GFLOAT = {
    "bf16": gfloat.formats.format_info_bfloat16,
    "fp16": gfloat.formats.format_info_binary16,
    "e5m2": gfloat.formats.format_info_ocp_e5m2,
    "e4m3fn": gfloat.formats.format_info_ocp_e4m3,
    "e3m2fn": gfloat.formats.format_info_ocp_e3m2,
    "e2m3fn": gfloat.formats.format_info_ocp_e2m3,
    "e2m1fn": gfloat.formats.format_info_ocp_e2m1,
    "e8m0fnu": gfloat.formats.format_info_ocp_e8m0,
}
GFLOAT_MODES = {
    "rne": gfloat.RoundMode.TiesToEven,
    "rna": gfloat.RoundMode.TiesToAway,
    "rz": gfloat.RoundMode.TowardZero,
    "ru": gfloat.RoundMode.TowardPositive,
    "rd": gfloat.RoundMode.TowardNegative,
}


def all_codes(spec):
    return np.arange(2 ** fpemu.format(spec).width, dtype=np.uint32)


def same_values(got, want):
    """Elementwise: equal with the sign of zero, or both NaN."""
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    return (np.isnan(got) & np.isnan(want)) | ((got == want) & (np.signbit(got) == np.signbit(want)))


def first_difference(x, got, want):
    bad = np.flatnonzero(~same_values(got, want))
    if bad.size == 0:
        return None
    i = bad[0]
    return "%d of %d differ; first: input %r (0x%08x): fpemu %r, peer %r" % (
        bad.size, len(x), float(x[i]), int(np.asarray(x, np.float32).view(np.uint32)[i]), float(got[i]), float(want[i]))


def boundary_inputs(spec):
    """float32: every finite value of the format, every midpoint between neighbours (and beyond the
    largest, half an ulp out), the float32 neighbours of all of these, infinities and NaN."""
    values = fpemu.decode(all_codes(spec), spec)
    values = np.unique(values[np.isfinite(values)])
    mids = (values[:-1] + values[1:]) / 2
    top = values[-1] + (values[-1] - values[-2]) / 2
    points = np.concatenate([values, mids, [top, -top]]).astype(np.float32)
    up = np.nextafter(points, np.float32(np.inf))
    down = np.nextafter(points, np.float32(-np.inf))
    special = np.array([np.inf, -np.inf, np.nan, 0.0, -0.0], np.float32)
    return np.concatenate([points, up, down, special])


def random_inputs(spec, seed):
    rng = np.random.default_rng(seed)
    bits = rng.integers(0, 2 ** 32, RANDOM // 2, dtype=np.uint64).astype(np.uint32).view(np.float32)
    f = fpemu.format(spec)
    low, high = np.log2(f.min_positive) - 2, np.log2(f.max_finite) + 2
    mags = np.exp2(rng.uniform(low, high, RANDOM - RANDOM // 2)) * rng.choice([-1.0, 1.0], RANDOM - RANDOM // 2)
    x = np.concatenate([bits, mags.astype(np.float32)])
    return x[~np.isnan(x)] if not fpemu.format(spec).has_nan else x


def inputs(spec, seed):
    x = np.concatenate([boundary_inputs(spec), random_inputs(spec, seed)])
    if not fpemu.format(spec).has_nan:
        x = x[~np.isnan(x)]  # a NaN has no code in the format: the peers' answers are their own choice
    return x


# ---- ml_dtypes ---------------------------------------------------------------------------------

@pytest.mark.parametrize("spec", sorted(ML_DTYPES))
def test_every_code_decodes_as_in_ml_dtypes(spec):
    codes = all_codes(spec)
    storage = np.uint8 if fpemu.format(spec).width <= 8 else np.uint16
    want = codes.astype(storage).view(ML_DTYPES[spec]).astype(np.float64)
    assert first_difference(codes.view(np.float32), fpemu.decode(codes, spec), want) is None


def e8m0_subnormal_inputs_above_its_smallest(x):
    """float32 subnormals in (2^-127, 1.5 * 2^-127): ml_dtypes rounds them to 2^-126 by their
    exponent field; the nearest power of two is 2^-127."""
    return (x > np.float32(2.0 ** -127)) & (x < np.float32(1.5 * 2.0 ** -127))


@pytest.mark.parametrize("spec", sorted(ML_DTYPES))
def test_float32_rounds_as_ml_dtypes_astype(spec):
    x = inputs(spec, seed=1)
    if not fpemu.format(spec).has_nan:
        # A float32 infinity has no code in a format without NaN: ml_dtypes gives the largest
        # value, fpemu the same under overflow='saturate' (and +0 with the invalid flag for NaN).
        x = x[np.isfinite(x)]
    want = x.astype(ML_DTYPES[spec]).astype(np.float64)
    overflow = "ieee" if fpemu.format(spec).has_nan else "saturate"
    got = fpemu.round(x, spec, overflow=overflow, dtype="float64")
    known = np.zeros(x.shape, bool)
    if spec == "e8m0fnu":
        known = e8m0_subnormal_inputs_above_its_smallest(x)
        assert known.sum() > 100 and np.all(want[known] == 2.0 ** -126) and np.all(got[known] == 2.0 ** -127)
    assert first_difference(x[~known], got[~known], want[~known]) is None


# ---- gfloat ------------------------------------------------------------------------------------

@pytest.mark.parametrize("spec", sorted(GFLOAT))
def test_every_code_decodes_as_in_gfloat(spec):
    codes = all_codes(spec)
    want = gfloat.decode_ndarray(GFLOAT[spec], codes.astype(np.int64))
    assert first_difference(codes.view(np.float32), fpemu.decode(codes, spec), want) is None


# Every mode, saturating or not; gfloat refuses overflow into a format without NaN unless it
# saturates, so those formats run saturating only.
@pytest.mark.parametrize("spec, mode, saturate", [
    (spec, mode, saturate) for spec in sorted(GFLOAT) for mode in sorted(GFLOAT_MODES) for saturate in (False, True)
    if saturate or fpemu.format(spec).has_nan])
def test_float32_rounds_as_gfloat_in_every_mode(spec, mode, saturate):
    f = fpemu.format(spec)
    x = inputs(spec, seed=2)
    if not f.has_nan:
        x = x[np.isfinite(x)]
    if not f.is_signed:
        # gfloat ignores the sign for an unsigned format (-3.0 gives -4.0, no value of e8m0fnu);
        # fpemu gives NaN, with the invalid flag.
        x = x[~np.signbit(x) | np.isnan(x)]
    want = gfloat.round_ndarray(GFLOAT[spec], x.astype(np.float64), GFLOAT_MODES[mode], saturate)
    got = fpemu.round(x, spec, mode=mode, overflow="saturate" if saturate else "ieee", dtype="float64")
    known = np.zeros(x.shape, bool)
    if spec == "e8m0fnu":
        # Below 2^-127, the smallest value (e8m0fnu has no zero), gfloat returns values that the
        # format does not hold (2^-128, 2^-149, 0); fpemu the smallest, in every mode, and NaN
        # for zero.
        below = x < np.float32(2.0 ** -127)
        assert below.sum() > 100 and np.all(got[below & (x > 0)] == 2.0 ** -127) and np.all(np.isnan(got[x == 0]))
        known |= below
    if spec == "e8m0fnu" and mode == "rne":
        # A tie between two powers of two, 1.5 * 2^k: gfloat takes the even code; fpemu, as MPFR at
        # precision 1, the larger power (docs/formats.md, one-bit significands).
        fraction, exponent = np.frexp(x.astype(np.float64))
        tie = (fraction == 0.75) & ~known
        assert tie.sum() > 100 and np.all(got[tie] == np.ldexp(1.0, exponent[tie]))
        known |= tie
    assert first_difference(x[~known], got[~known], want[~known]) is None
