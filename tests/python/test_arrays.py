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


def peak_growth_kib(setup, warm, call):
    """In a fresh process: how much the peak resident size (VmHWM, which unlike ru_maxrss starts
    afresh at exec) grows during `call`, after `setup` built and touched every array and `warm`
    started the thread pool, so that only what the call allocates can raise the peak."""
    script = textwrap.dedent("""
        import numpy as np, fpemu
        def peak_kib():
            with open("/proc/self/status") as status:
                return next(int(line.split()[1]) for line in status if line.startswith("VmHWM:"))
        %s
        %s
        before = peak_kib()
        %s
        print(peak_kib() - before)
    """) % (setup, warm, call)
    return int(subprocess.run([sys.executable, "-c", script], check=True, capture_output=True, text=True).stdout)


def round_growth_kib(x_expression):
    """peak_growth_kib of rounding the 2^24 float32 values of `x_expression` into a preallocated
    uint16 array."""
    return peak_growth_kib("x = %s; x *= np.float32(1e-3); out = np.full(1 << 24, 7, np.uint16)" % x_expression,
                           'fpemu.round(x[:1 << 17], "bf16", out=out[:1 << 17])',
                           'assert fpemu.round(x, "bf16", out=out) is out')


def test_round_reads_a_contiguous_input_in_place_and_writes_straight_into_out():
    # A copy of the input would take 64 MiB, a buffer of 32-bit codes 64 MiB.
    grown = round_growth_kib("np.arange(1 << 24, dtype=np.float32)")
    assert grown < 8 * 1024, "peak memory grew by %d KiB" % grown
    # The control: a strided input is copied, and the measurement sees it.
    grown = round_growth_kib("np.arange(1 << 25, dtype=np.float32)[::2]")
    assert grown > 48 * 1024, "peak memory grew by only %d KiB" % grown


def add_growth_kib(a_expression):
    """peak_growth_kib of adding the 2^24 e4m3fn codes of `a_expression` (uint8) to 2^24 others
    into a preallocated uint8 array."""
    return peak_growth_kib("a = %s; b = a[::-1].copy(); out = np.full(1 << 24, 7, np.uint8)" % a_expression,
                           'fpemu.add(a[:1 << 17], b[:1 << 17], "e4m3fn", out=out[:1 << 17])',
                           'assert fpemu.add(a, b, "e4m3fn", out=out) is out')


def test_elementwise_arithmetic_reads_storage_width_codes_in_place():
    # 32-bit copies of the operands would take 128 MiB (and their reading as uint64 256 MiB).
    codes = "np.arange(1 << 24, dtype=np.uint32).astype(np.uint8)"
    grown = add_growth_kib(codes)
    assert grown < 8 * 1024, "peak memory grew by %d KiB" % grown
    grown = add_growth_kib("np.repeat(%s, 2)[::2]" % codes)  # the control: strided, copied
    assert grown > 48 * 1024, "peak memory grew by only %d KiB" % grown


@pytest.mark.parametrize("fmt,dtype", [("e4m3fn", np.uint8), ("e2m1fn", np.uint8), ("e5m2", np.uint32),
                                       ("bf16", np.uint16), ("fp16", np.uint16), ("fp16", np.float16),
                                       ("bf16", np.uint32)])
@pytest.mark.parametrize("mode", ["rne", "rd", "sr"])
def test_codes_read_in_place_give_the_results_of_converted_codes_out_over_an_operand_too(fmt, dtype, mode):
    # Overflowed codes and zero divisors among the operands, so that div lists lanes for the core,
    # which reads the operands again after writing results: out over an operand is copied first.
    rng = np.random.default_rng(17)
    a = fpemu.round(rng.normal(size=5000) * np.exp2(rng.integers(-20, 20, 5000)), fmt)
    b = fpemu.round(np.where(rng.random(5000) < 0.1, 0.0, rng.normal(size=5000)), fmt)
    a[:3] = fpemu.round(np.array([1e30, -1e30, 0.0]), fmt)

    def stored(codes):  # the codes in an array of `dtype` (as their bits for float16)
        return codes.view(np.float16) if dtype == np.float16 else codes.astype(dtype)

    def codes_of(array):
        return (array.view(np.uint16) if dtype == np.float16 else array).astype(np.int64)

    x, y = stored(a), stored(b)
    for op in (fpemu.add, fpemu.mul, fpemu.div):
        want, want_flags = op(a.astype(np.int64), b.astype(np.int64), fmt, mode=mode, seed=5, flags=True)
        got, got_flags = op(x, y, fmt, mode=mode, seed=5, flags=True)
        np.testing.assert_array_equal(codes_of(got), want)
        np.testing.assert_array_equal(got_flags, want_flags)
        over = x.copy()
        assert op(over, y, fmt, mode=mode, seed=5, out=over) is over
        np.testing.assert_array_equal(codes_of(over), want)
    want = fpemu.sqrt(a.astype(np.int64), fmt, mode=mode, seed=5)
    np.testing.assert_array_equal(codes_of(fpemu.sqrt(x, fmt, mode=mode, seed=5)), want)
    want = fpemu.fma(a.astype(np.int64), b.astype(np.int64), a.astype(np.int64), fmt, mode=mode, seed=5)
    np.testing.assert_array_equal(codes_of(fpemu.fma(x, y, x, fmt, mode=mode, seed=5)), want)


def decode_growth_kib(codes_expression, call):
    """peak_growth_kib of `call` (decode or convert of `codes`, with out=out) after
    codes = `codes_expression` (2^24 bf16 codes) and a preallocated float32 out."""
    return peak_growth_kib("codes = %s; out = np.full(1 << 24, 7, np.float32)" % codes_expression,
                           call.replace("codes", "codes[:1 << 17]").replace("out=out", "out=out[:1 << 17]"),
                           "assert %s is out" % call)


def test_decode_and_convert_read_storage_width_codes_in_place_and_write_into_out():
    # A 32-bit copy of the codes would take 64 MiB, a buffer of results 64 MiB.
    codes = "np.arange(1 << 24, dtype=np.uint32).astype(np.uint16)"
    strided = "np.repeat(%s, 2)[::2]" % codes  # the control: copied
    for call in ('fpemu.decode(codes, "bf16", out=out)', 'fpemu.convert(codes, "bf16", "fp32", out=out)'):
        grown = decode_growth_kib(codes, call)
        assert grown < 8 * 1024, "%s: peak memory grew by %d KiB" % (call, grown)
        grown = decode_growth_kib(strided, call)
        assert grown > 48 * 1024, "%s: peak memory grew by only %d KiB" % (call, grown)


@pytest.mark.parametrize("fmt,dtype", [("e4m3fn", np.uint8), ("e5m2", np.uint8), ("e2m1fn", np.uint8),
                                       ("e5m2", np.uint32), ("bf16", np.uint16), ("fp16", np.float16),
                                       ("bf16", np.uint32)])
def test_decode_and_convert_of_codes_read_in_place_give_the_results_of_converted_codes_out_over_them_too(fmt, dtype):
    # Every code (NaNs, signaling ones and infinities, which convert leaves to the core after
    # writing results) and random ones, read as int64 (copied) and as `dtype` (in place).
    rng = np.random.default_rng(23)
    every = np.arange(1 << fpemu.format(fmt).width, dtype=np.int64)
    codes = np.concatenate([every, rng.permutation(every)[:4096], rng.choice(every, 5000)])
    x = codes.astype(np.uint16).view(np.float16) if dtype == np.float16 else codes.astype(dtype)

    for target in (np.float64, np.float32, "codes"):
        kw = {} if target == "codes" else {"dtype": target}
        np.testing.assert_array_equal(fpemu.decode(x, fmt, **kw), fpemu.decode(codes, fmt, **kw))
    for dst in ("bf16", "e4m3fn", "fp32", "fp16"):
        for mode in ("rne", "rz", "sr"):
            want, want_flags = fpemu.convert(codes, fmt, dst, mode=mode, seed=3, flags=True)
            got, got_flags = fpemu.convert(x, fmt, dst, mode=mode, seed=3, flags=True)
            np.testing.assert_array_equal(got, want)
            np.testing.assert_array_equal(got_flags, want_flags)
    # Results written over the codes themselves: read from a copy first.
    want = fpemu.convert(codes, fmt, fmt, mode="rz")
    over = x.copy()
    assert fpemu.convert(over, fmt, fmt, mode="rz", out=over) is over
    np.testing.assert_array_equal(over.view(np.uint16) if dtype == np.float16 else over, want)
    want = fpemu.decode(codes, fmt, dtype=np.float32)
    words = codes.astype(np.uint32)
    assert fpemu.decode(words, fmt, out=words.view(np.float32)) is not None
    np.testing.assert_array_equal(words.view(np.float32), want)


def test_a_code_beyond_the_width_in_a_storage_width_array_is_still_named():
    with pytest.raises(ValueError, match=r"a\[1\] = 16 is not a code of e2m1fn \(valid: 0\.\.15\)"):
        fpemu.add(np.array([1, 16], np.uint8), np.array([1, 1], np.uint8), "e2m1fn")
