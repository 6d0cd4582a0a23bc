"""NumPy's conventions in the element-wise functions: array_like arguments (lists, scalars, 0-d
arrays), broadcasting, `out=` written in place, `dtype=` choosing codes, a typed array or values,
and no copy of a contiguous input where round reads it. Each result is compared with the same call
on plain arrays, which test_module, test_peers and test_interop check against exact decoding and
the peers. Run by pytest in the venvs of ./dev test."""
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import fpemu

RNG = np.random.default_rng(11)
X = RNG.normal(size=64)  # float64 values
C = fpemu.round(X, "e4m3fn")  # uint8 codes
D = fpemu.round(X[::-1].copy(), "e4m3fn")


def test_lists_tuples_and_python_numbers_are_read_as_numpy_reads_them():
    np.testing.assert_array_equal(fpemu.round(list(X), "e4m3fn"), C)
    np.testing.assert_array_equal(fpemu.round(tuple(X[:3]), "bf16"), fpemu.round(X[:3], "bf16"))
    # Python ints are values where values are asked for (integer arrays are codes: test_bad_input).
    np.testing.assert_array_equal(fpemu.round([1, 3, 300], "e4m3fn"), fpemu.round(np.array([1.0, 3.0, 300.0]), "e4m3fn"))
    np.testing.assert_array_equal(fpemu.add(C.tolist(), D.tolist(), "e4m3fn"), fpemu.add(C, D, "e4m3fn"))
    np.testing.assert_array_equal(fpemu.decode(C.tolist(), "e4m3fn"), fpemu.decode(C, "e4m3fn"))


def test_a_scalar_or_0d_argument_gives_a_numpy_scalar_as_ufuncs_do():
    for x in (X[5], float(X[5]), np.array(X[5])):
        got = fpemu.round(x, "e4m3fn")
        assert isinstance(got, np.uint8) and got == C[5]
    value = fpemu.decode(C[5], "e4m3fn")
    assert isinstance(value, np.float64) and value == fpemu.decode(C, "e4m3fn")[5]
    total = fpemu.add(C[5], D[5], "e4m3fn")
    assert isinstance(total, np.uint8) and total == fpemu.add(C, D, "e4m3fn")[5]


@pytest.mark.parametrize("shapes", [((8, 1), (1, 8)), ((8, 8), (8,)), ((2, 4, 1), (4, 8)), ((8,), ())])
def test_binary_operations_broadcast_as_numpy_does(shapes):
    a = C[:int(np.prod(shapes[0]))].reshape(shapes[0])
    b = D[:int(np.prod(shapes[1]))].reshape(shapes[1])
    wide_a, wide_b = np.broadcast_arrays(a, b)
    for op in (fpemu.add, fpemu.sub, fpemu.mul, fpemu.div):
        got = op(a, b, "e4m3fn")
        assert got.shape == wide_a.shape
        np.testing.assert_array_equal(got, op(wide_a.copy(), wide_b.copy(), "e4m3fn"))


def test_fma_broadcasts_its_three_operands_and_sqrt_keeps_its_shape():
    a, b, c = C[:6].reshape(2, 3, 1), D[:4], C[10]
    wide = [w.copy() for w in np.broadcast_arrays(a, b, c)]
    got = fpemu.fma(a, b, c, "e4m3fn")
    assert got.shape == (2, 3, 4)
    np.testing.assert_array_equal(got, fpemu.fma(*wide, "e4m3fn"))
    assert fpemu.sqrt(C.reshape(8, 8), "e4m3fn").shape == (8, 8)


def test_out_is_written_in_place_and_is_what_the_call_returns():
    buf = np.zeros(64, np.uint8)
    assert fpemu.round(X, "e4m3fn", out=buf) is buf
    np.testing.assert_array_equal(buf, C)
    total = np.zeros(64, np.uint8)
    assert fpemu.add(C, D, "e4m3fn", out=total) is total
    np.testing.assert_array_equal(total, fpemu.add(C, D, "e4m3fn"))
    # In place over an operand: every element is read before it is written.
    a = C.copy()
    fpemu.mul(a, D, "e4m3fn", out=a)
    np.testing.assert_array_equal(a, fpemu.mul(C, D, "e4m3fn"))


def test_out_may_be_a_strided_view_and_nothing_outside_it_changes():
    wide = np.full((64, 3), 7, np.uint16)
    fpemu.round(X, "bf16", out=wide[:, 1])
    np.testing.assert_array_equal(wide[:, 1], fpemu.round(X, "bf16"))
    assert (wide[:, 0] == 7).all() and (wide[:, 2] == 7).all()


@pytest.mark.parametrize("dtype", [np.uint8, np.uint16, np.uint32, np.int16, np.int64])
def test_an_integer_dtype_takes_the_codes(dtype):
    got = fpemu.round(X, "e4m3fn", dtype=dtype)
    assert got.dtype == dtype
    np.testing.assert_array_equal(got, C)
    out = np.zeros(64, dtype)
    fpemu.convert(C, "e4m3fn", "e4m3fn", out=out)
    np.testing.assert_array_equal(out, C)


def test_float64_and_the_dtypes_of_wider_formats_take_the_values_exactly():
    values = fpemu.decode(C, "e4m3fn")
    np.testing.assert_array_equal(fpemu.round(X, "e4m3fn", dtype=np.float64), values)
    np.testing.assert_array_equal(fpemu.round(X, "e4m3fn", dtype="float64"), values)
    for wider in (np.float32, np.float16):  # every e4m3fn value is one of theirs
        got = fpemu.round(X, "e4m3fn", dtype=wider)
        assert got.dtype == wider
        np.testing.assert_array_equal(got, values.astype(wider))
        np.testing.assert_array_equal(fpemu.decode(C, "e4m3fn", dtype=wider), values.astype(wider))
    out = np.zeros(64)
    fpemu.sqrt(C, "e4m3fn", out=out)
    np.testing.assert_array_equal(out, fpemu.decode(fpemu.sqrt(C, "e4m3fn"), "e4m3fn"))


def test_a_value_the_target_dtype_lacks_is_refused_not_rounded_again():
    with pytest.raises(ValueError, match=r"^result\[0\] = 1\.000244140625 is not a value of fp16"):
        fpemu.round(np.array([1 + 2 ** -12]), "fp32", dtype=np.float16)


def test_typed_results_are_views_of_the_codes():
    ml_dtypes = pytest.importorskip("ml_dtypes")
    typed = fpemu.round(X, "e4m3fn", dtype=ml_dtypes.float8_e4m3fn)
    assert typed.dtype == ml_dtypes.float8_e4m3fn
    np.testing.assert_array_equal(typed.view(np.uint8), C)
    np.testing.assert_array_equal(typed, X.astype(ml_dtypes.float8_e4m3fn))
    # The format may be named by the dtype alone, and `out` may be typed.
    out = np.zeros(64, ml_dtypes.bfloat16)
    assert fpemu.round(X, ml_dtypes.bfloat16, out=out) is out
    np.testing.assert_array_equal(out, X.astype(ml_dtypes.bfloat16))
    assert np.shares_memory(out.view(np.uint16), out)


def peak_growth_kib(x_expression):
    """In a fresh process: how much the peak resident size (VmHWM, which unlike ru_maxrss starts
    afresh at exec) grows while 2^24 float32 values, the elements of `x_expression`, are rounded
    into a preallocated uint16 array (every array built and touched before, so that only what the
    call allocates can raise the peak)."""
    script = textwrap.dedent("""
        import numpy as np, fpemu
        def peak_kib():
            with open("/proc/self/status") as status:
                return next(int(line.split()[1]) for line in status if line.startswith("VmHWM:"))
        x = %s
        x *= np.float32(1e-3)
        out = np.full(1 << 24, 7, np.uint16)
        fpemu.round(x[:1 << 17], "bf16", out=out[:1 << 17])  # starts the thread pool
        before = peak_kib()
        assert fpemu.round(x, "bf16", out=out) is out
        print(peak_kib() - before)
    """ % x_expression)
    return int(subprocess.run([sys.executable, "-c", script], check=True, capture_output=True, text=True).stdout)


def test_round_reads_a_contiguous_input_in_place_and_writes_straight_into_out():
    # A copy of the input would take 64 MiB, a buffer of 32-bit codes 64 MiB.
    grown = peak_growth_kib("np.arange(1 << 24, dtype=np.float32)")
    assert grown < 8 * 1024, "peak memory grew by %d KiB" % grown
    # The control: a strided input is copied, and the measurement sees it.
    grown = peak_growth_kib("np.arange(1 << 25, dtype=np.float32)[::2]")
    assert grown > 48 * 1024, "peak memory grew by only %d KiB" % grown
