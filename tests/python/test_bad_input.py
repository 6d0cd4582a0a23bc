"""The bad-input audit of the Python module: every public function, class and method of fpemu
called with each kind of bad input that applies to it. The cases are data (ROWS): the call as
text, the kind of bad input, the exception and its exact message. Each call must raise exactly
that (fpemu.bounds, whose contract is not to raise, must return valid=False with exactly that
condition), leave every array argument and the optimizer it was given unchanged, and write no
file. The same rows generate the audit table of docs/bad-input.md (`--markdown` prints it), and the
test checks that the page holds exactly that table, so the two cannot drift. Run by pytest in the
venvs of ./dev test; `python test_bad_input.py --markdown` prints the table."""
import os
import re
import sys

import numpy as np

import fpemu
from checks import check

PAGE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "docs", "bad-input.md")
BEGIN, END = "<!-- audit:python -->", "<!-- /audit:python -->"
MESSAGE_SHOWN = 120  # characters of a message in the docs table; the test compares all of it

VALUE, TYPE, INVALID, RETURNS = "ValueError", "TypeError", "valid=False", "returns"


class Row:
    def __init__(self, kind, call, outcome, message):
        self.kind, self.call, self.outcome, self.message = kind, call, outcome, message
        # "round(x, ...)" -> round, "B.gamma(...)" -> bounds.gamma, "opt.lr = nan" -> optimizer.lr
        name = re.match(r"[A-Za-z_][\w.]*", call).group(0)
        self.function = re.sub(r"^B\.", "bounds.", re.sub(r"^opt\.", "optimizer.", name))


def v(kind, call, message):
    return Row(kind, call, VALUE, message)


def t(kind, call, message):
    """A TypeError; pybind11's own (wrong Python type) are compared on their first line."""
    return Row(kind, call, TYPE, message)


def invalid(kind, call, condition):
    return Row(kind, call, INVALID, condition)


def unknown_format(spec):
    return ("unknown format '%s': expected one of %s, or eXmY[:bias=N][:nosub][:ieee|fn|fnuz|finite][:unsigned]"
            "[:nozero]" % (spec, ", ".join(fpemu.formats())))


def unknown_accumulator(name):
    """The accumulator grammar's message (fpemu/presets.hpp), shared with the command line's --acc."""
    return "acc = '%s' is neither 'exact', a tensor-core preset (%s) nor a format: %s" % (
        name, PRESETS, unknown_format(name))


def unknown_policy(name):
    return ("unknown policy '%s' (valid: fp32, mixed, mixed-fp16, or FMT[-kahan|-zamirai|-sr[K]][-ops] with FMT such "
            "as bf16 or fp16; %s)" % (name, unknown_format(name)))


def pybind_signature(function):
    return "%s(): incompatible function arguments. The following argument types are supported:" % function


MODE = "unknown rounding mode 'up': valid rne|rna|rz|ru|rd|rto|sr|sr-exact"
OVERFLOW = "unknown overflow policy 'clip': valid ieee|saturate|nan"
SR_BITS = "rounding: stochastic-rounding bits %d out of range: valid 1..32"
CODES_DTYPE = ("%s must hold codes (an integer array), values (a float array) or a typed array (float16, bfloat16, "
               "float8_*, float6_*, float4_*); got dtype <U1")
FORMAT_TYPE = ("a format is a spec string such as 'e4m3fn' or 'e5m3:fn', a dtype such as ml_dtypes.float8_e4m3fn, "
               "or an fpemu.format; got %s")
NOT_A_VALUE = "%s = 0.1 is not a value of %s (nearest: %s); round it with fpemu.round first"
THREADS = "threads = -1 (valid: 0 for fpemu.get_num_threads(), or >= 1)"
PRESETS = ", ".join(p["name"] for p in fpemu.presets())

ROWS = [
    # Formats.
    v("unknown format", "format('bogus')", unknown_format("bogus")),
    v("malformed value", "format('e4m3:bias=x')", "format 'e4m3:bias=x': bias 'x' is not an integer"),
    v("out of range", "format('e9m99')",
      "format 'e9m99': frac_bits 99 is out of range for 9 exponent bits: valid 0..22 (at most 32 bits with the sign)"),
    v("out of range", "format('e0m3')", "format 'e0m3': exponent bits 0 out of range: valid 1..11"),
    v("wrong Python type", "format(None)", FORMAT_TYPE % "None"),
    v("wrong dtype", "format(np.int8)", "dtype int8 stores no format of fpemu (those that do: float32 float16 bfloat16 "
      "float8_e5m2 float8_e4m3fn float8_e4m3fnuz float8_e5m2fnuz float8_e4m3b11fnuz float8_e4m3 float8_e3m4 "
      "float8_e8m0fnu float6_e3m2fn float6_e2m3fn float4_e2m1fn)"),
    t("wrong Python type", "get_num_threads(1)", pybind_signature("get_num_threads")),
    v("out of range", "set_num_threads(-1)", "n = -1 (valid: 1..4096, or 0 for every hardware thread)"),
    v("out of range", "set_num_threads(5000)", "n = 5000 (valid: 1..4096, or 0 for every hardware thread)"),
    # Rounding, decoding, conversion.
    v("unknown format", "round(x, 'bogus')", unknown_format("bogus")),
    v("wrong Python type", "round(x, 5)", FORMAT_TYPE % "5"),
    v("unknown name", "round(x, 'bf16', mode='up')", MODE),
    v("unknown name", "round(x, 'bf16', overflow='clip')", OVERFLOW),
    t("wrong Python type", "round(x, 'bf16', out='values')",
      "out = 'values': out takes a preallocated array; ask for values with dtype='float64'"),
    v("shape mismatch", "round(x, 'bf16', out=np.zeros(3, np.uint16))", "out has shape (3,) but the result has shape (2,)"),
    v("wrong dtype", "round(x, 'bf16', out=np.zeros(2, np.uint8))", "out's dtype uint8 cannot hold the codes of bf16 (0..65535)"),
    v("wrong dtype", "round(x, 'bf16', dtype=np.int16)", "dtype int16 cannot hold the codes of bf16 (0..65535)"),
    v("wrong dtype", "round(x, 'bf16', dtype=np.complex64)",
      "dtype complex64 cannot hold results in bf16 (valid: an integer dtype for codes, a dtype that stores it, or "
      "float64 or another format's dtype for its values)"),
    v("conflicting arguments", "round(x, 'bf16', out=np.zeros(2, np.uint16), dtype=np.uint16)", "give out= or dtype=, not both"),
    v("read-only output", "round(x, 'bf16', out=np.broadcast_to(np.zeros(1, np.uint16), (2,)))", "out is read-only"),
    v("value not exact", "round(np.array([1.0, 1e-7]), 'fp32', dtype=np.float16)",
      "result[1] = 1.0000000116860974e-07 is not a value of fp16, the format of dtype float16; ask for float64 values "
      "or for codes"),
    v("out of range", "round(x, 'bf16', mode='sr', sr_bits=0)", SR_BITS % 0),
    v("out of range", "round(x, 'bf16', mode='sr', sr_bits=33)", SR_BITS % 33),
    v("out of range", "round(x, 'e2m1fn', overflow='nan')",
      "rounding: overflow policy nan needs a format with a NaN; e2m1fn has none (use ieee or saturate)"),
    v("wrong dtype", "round(np.array(['a']), 'bf16')", "x must be a float32 or float64 array; got dtype <U1"),
    v("wrong dtype", "round(np.array([1j]), 'bf16')", "x must be a float32 or float64 array; got dtype complex128"),
    v("value not exact", "round([2**60 + 2**36 + 1], 'fp32')",
      "x[0] = 1152921573326323713 is not a float64 value (narrowing it would round it before the emulated rounding)"),
    t("wrong dtype", "round(c, 'bf16')",
      "x is an integer array (dtype uint8), and integer arrays are codes: convert codes with fpemu.convert(codes, src, "
      "dst), or round integer values with x.astype(float)"),
    t("wrong Python type", "round(['a'], 'bf16')", "x must be an array_like of numbers; got ['a']"),
    t("wrong Python type", "round(None, 'bf16')", "x must be an array_like of numbers; got None"),
    t("out of range", "round(x, 'bf16', seed=-1)", pybind_signature("round")),
    v("unknown format", "decode(c, 'bogus')", unknown_format("bogus")),
    v("wrong dtype", "decode(s, 'e4m3fn')", CODES_DTYPE % "codes"),
    v("value not exact", "decode(t, 'e4m3fn')", NOT_A_VALUE % ("codes[0]", "e4m3fn", "0.1015625")),
    v("out of range", "decode(np.array([300]), 'e4m3fn')", "codes[0] = 300 is not a code of e4m3fn (valid: 0..255)"),
    v("out of range", "decode(np.array([-1]), 'e4m3fn')", "codes[0] = -1 is not a code of e4m3fn (valid: 0..255)"),
    v("out of range", "decode(np.array([2**64 - 1], np.uint64), 'e4m3fn')",
      "codes[0] = 18446744073709551615 is not a code of e4m3fn (valid: 0..255)"),
    v("unknown format", "convert(c, 'bogus', 'bf16')", unknown_format("bogus")),
    v("unknown format", "convert(c, 'e4m3fn', 'bogus')", unknown_format("bogus")),
    v("unknown name", "convert(c, 'e4m3fn', 'bf16', mode='up')", MODE),
    v("out of range", "convert(c, 'e4m3fn', 'bf16', mode='sr', sr_bits=0)", SR_BITS % 0),
    v("out of range", "convert(np.array([300]), 'e4m3fn', 'bf16')",
      "codes[0] = 300 is not a code of e4m3fn (valid: 0..255)"),
    v("wrong dtype", "convert(s, 'e4m3fn', 'bf16')", CODES_DTYPE % "codes"),
]

# Arithmetic: the four binary operations share one binding; each is called.
for op in ("add", "sub", "mul", "div"):
    ROWS += [
        v("unknown format", "%s(c, c, 'bogus')" % op, unknown_format("bogus")),
        v("unknown name", "%s(c, c, 'e4m3fn', mode='up')" % op, MODE),
        v("unknown name", "%s(c, c, 'e4m3fn', overflow='clip')" % op, OVERFLOW),
        v("out of range", "%s(c, c, 'e4m3fn', mode='sr', sr_bits=33)" % op, SR_BITS % 33),
        v("out of range", "%s(c, np.array([1, 300]), 'e4m3fn')" % op,
          "b[1] = 300 is not a code of e4m3fn (valid: 0..255)"),
        v("shape mismatch", "%s(c, np.zeros(3, np.uint8), 'e4m3fn')" % op, "shapes do not broadcast: a (2,), b (3,)"),
        v("shape mismatch", "%s(c.reshape(1, 2), np.zeros((3, 3), np.uint8), 'e4m3fn')" % op,
          "shapes do not broadcast: a (1, 2), b (3, 3)"),
        v("wrong dtype", "%s(s, s, 'e4m3fn')" % op, CODES_DTYPE % "a"),
        v("value not exact", "%s(c, t, 'e4m3fn')" % op, NOT_A_VALUE % ("b[0]", "e4m3fn", "0.1015625")),
    ]

ROWS += [
    v("unknown format", "fma(c, c, c, 'bogus')", unknown_format("bogus")),
    v("unknown name", "fma(c, c, c, 'e4m3fn', mode='up')", MODE),
    v("out of range", "fma(c, c, np.array([1, 300]), 'e4m3fn')", "c[1] = 300 is not a code of e4m3fn (valid: 0..255)"),
    v("shape mismatch", "fma(c, np.zeros(3, np.uint8), c, 'e4m3fn')", "shapes do not broadcast: a (2,), b (3,), c (2,)"),
    v("shape mismatch", "fma(c, c, np.zeros(3, np.uint8), 'e4m3fn')", "shapes do not broadcast: a (2,), b (2,), c (3,)"),
    v("shape mismatch", "sqrt(c, 'e4m3fn', out=np.zeros((2, 1), np.uint8))",
      "out has shape (2, 1) but the result has shape (2,)"),
    v("wrong dtype", "fma(c, c, s, 'e4m3fn')", CODES_DTYPE % "c"),
    v("unknown format", "sqrt(c, 'bogus')", unknown_format("bogus")),
    v("unknown name", "sqrt(c, 'e4m3fn', mode='up')", MODE),
    v("out of range", "sqrt(c, 'e4m3fn', mode='sr', sr_bits=0)", SR_BITS % 0),
    v("out of range", "sqrt(np.array([300]), 'e4m3fn')", "a[0] = 300 is not a code of e4m3fn (valid: 0..255)"),
    v("wrong dtype", "sqrt(s, 'e4m3fn')", CODES_DTYPE % "a"),
    # Block-scaled quantisation.
    v("unknown format", "quantise(f, 'bogus')", unknown_format("bogus")),
    v("unknown name", "quantise(f, 'e4m3fn', scaling='mx64')",
      "unknown scaling 'mx64': valid are none, tensor, tile128, block128, mx32, nvfp4"),
    v("out of range", "quantise(f, 'e4m3fn', k_axis=2)",
      "k_axis = 2 (valid: 1, K along columns as in A; 0, along rows as in B)"),
    v("non-finite value", "quantise(np.array([[1.0, nan]], np.float32), 'e4m3fn')",
      "quantise: element (0, 1) is NaN; scaling needs finite inputs"),
    v("shape mismatch", "quantise(x, 'e4m3fn')", "x must be a 2-D array; got 1 dimension(s)"),
    v("value not exact", "quantise(np.array([[0.1]]), 'e4m3fn')",
      "x[0, 0] = 0.1 is not a float32 value (narrowing it would round it before the emulated rounding)"),
    v("shape mismatch", "dequantise(c.reshape(1, 2), np.array([127, 127]), 'e4m3fn')",
      "dequantise: 2 scales; a 1x2 matrix scaled mx32 with K along its columns has 1"),
    v("out of range", "dequantise(c.reshape(1, 2), np.array([300]), 'e4m3fn')",
      "scales[0] = 300 is not a code of e8m0fnu (valid: 0..255)"),
    v("unknown name", "dequantise(c.reshape(1, 2), np.array([127]), 'e4m3fn', scaling='mx64')",
      "unknown scaling 'mx64': valid are none, tensor, tile128, block128, mx32, nvfp4"),
    # Accumulation.
    v("unknown format", "sum(c, 'bogus')", unknown_format("bogus")),
    v("unknown format", "sum(c, 'e4m3fn', acc='fp99')",
      unknown_accumulator("fp99")),
    v("unknown format", "sum(c, 'e4m3fn', method='promoted', high='bogus')", unknown_format("bogus")),
    v("unknown name", "sum(c, 'e4m3fn', method='fast')",
      "unknown summation method 'fast': expected one of recursive, pairwise, blocked, kahan, neumaier, promoted, "
      "stochastic"),
    v("unknown name", "sum(c, 'e4m3fn', acc_mode='up')", MODE),
    v("out of range", "sum(c, 'e4m3fn', acc='h100-e4m3', acc_mode='rz')",
      "acc_mode = 'rz' applies to a format accumulator, not to the preset 'h100-e4m3' (the preset fixes its rounding)"),
    v("out of range", "sum(c, 'e4m3fn', acc_mode='sr', sr_bits=0)", SR_BITS % 0),
    v("out of range", "sum(c, 'e4m3fn', promote=-1)", "promote = -1 (valid: 0 for the default, or 1..2^30 products)"),
    v("out of range", "sum(c, 'e4m3fn', method='blocked', block=0)", "block = 0 (valid: >= 1)"),
    v("NaN hyper-parameter", "sum(c, 'e4m3fn', lam=nan)", "lam = nan (valid: > 0, finite)"),
    v("negative hyper-parameter", "sum(c, 'e4m3fn', lam=-1.0)", "lam = -1 (valid: > 0, finite)"),
    v("out of range", "sum(np.array([300]), 'e4m3fn')", "x[0] = 300 is not a code of e4m3fn (valid: 0..255)"),
    v("wrong dtype", "sum(s, 'e4m3fn')", CODES_DTYPE % "x"),
    v("unknown format", "gemm(m, mt, a_fmt='bogus')", unknown_format("bogus")),
    v("unknown format", "gemm(m, mt, a_fmt='bf16', b_fmt='bogus')", unknown_format("bogus")),
    v("unknown format", "gemm(m, mt, a_fmt='bf16', out_fmt='bogus')", unknown_format("bogus")),
    v("wrong dtype", "gemm(m, mt, a_fmt='bf16', dtype=np.uint16)", "dtype uint16 cannot hold the codes of fp32 (0..4294967295)"),
    v("shape mismatch", "gemm(m, mt, a_fmt='bf16', out=np.zeros((2, 3), np.uint32))",
      "out has shape (2, 3) but the result has shape (2, 2)"),
    v("unknown format", "gemm(m, mt, a_fmt='bf16', acc='fp99')",
      unknown_accumulator("fp99")),
    v("unknown name", "gemm(m, mt, a_fmt='bf16', out_mode='up')", MODE),
    v("out of range", "gemm(m, mt, a_fmt='bf16', acc='exact', acc_mode='rz')",
      "acc_mode = 'rz' applies to a format accumulator; 'exact' keeps the exact sum (the output rounding is out_mode)"),
    v("out of range", "gemm(m, mt, a_fmt='bf16', out_mode='sr', sr_bits=33)", SR_BITS % 33),
    v("out of range", "gemm(m, mt, a_fmt='bf16', k_order=[0, 1, 1])", "gemm: k_order must be a permutation of 0..2"),
    v("out of range", "gemm(m, mt, a_fmt='bf16', threads=-1)", THREADS),
    v("out of range", "gemm(m, mt, a_fmt='bf16', promote=2**30 + 1)",
      "promote = 1073741825 (valid: 0 for the default, or 1..2^30 products)"),
    v("out of range", "gemm(np.full((2, 3), 70000), mt, a_fmt='bf16')",
      "A[0, 0] = 70000 is not a code of bf16 (valid: 0..65535)"),
    v("NaN hyper-parameter", "gemm(m, mt, a_fmt='bf16', alpha=nan)", "alpha = nan, beta = 0 (valid: finite)"),
    v("NaN hyper-parameter", "gemm(m, mt, a_fmt='bf16', beta=inf)", "alpha = 1, beta = inf (valid: finite)"),
    v("shape mismatch", "gemm(m, m, a_fmt='bf16')", "gemm: A is 2x3 and B is 2x3: A's columns must equal B's rows"),
    v("shape mismatch", "gemm(m, mt, np.zeros((3, 3), np.uint32), a_fmt='bf16')", "C has shape (3, 3); A*B is (2, 2)"),
    v("shape mismatch", "gemm(m[0], mt, a_fmt='bf16')", "A must be a 2-D array; got 1 dimension(s)"),
    v("empty input", "gemm(m[:0], mt, a_fmt='bf16')", "A has shape (0, 3); each side must be 1..2^30"),
    v("wrong dtype", "gemm(m, mt, np.full((2, 2), 'a'), a_fmt='bf16')", CODES_DTYPE % "C"),
    v("unknown format", "dot(m[0], m[1], a_fmt='bogus')", unknown_format("bogus")),
    v("unknown format", "dot(m[0], m[1], a_fmt='bf16', acc='bogus')",
      unknown_accumulator("bogus")),
    v("unknown name", "dot(m[0], m[1], a_fmt='bf16', out_mode='up')", MODE),
    v("out of range", "dot(m[0], m[1], a_fmt='bf16', promote=-2)",
      "promote = -2 (valid: 0 for the default, or 1..2^30 products)"),
    v("out of range", "dot(m[0], np.array([1, 2, 70000]), a_fmt='bf16')",
      "b[2] = 70000 is not a code of bf16 (valid: 0..65535)"),
    v("shape mismatch", "dot(m[0], m[1][:2], a_fmt='bf16')", "a has length 3 and b has length 2 (valid: equal, 1..2^30)"),
    v("shape mismatch", "dot(m, m, a_fmt='bf16')", "a and b must be 1-D arrays of codes"),
    v("empty input", "dot(m[0][:0], m[1][:0], a_fmt='bf16')", "a has length 0 and b has length 0 (valid: equal, 1..2^30)"),
    v("wrong dtype", "dot(s, s, a_fmt='bf16')", CODES_DTYPE % "a"),
    v("value not exact", "dot(t, x, a_fmt='bf16')", NOT_A_VALUE % ("a[0]", "bf16", "0.10009765625")),
    v("shape mismatch", "gemm(m, mt, a_fmt='bf16', report=True, a_original=f, b_original=f)",
      "a_original is (2, 2) but A is (2, 3): give the data A was quantised from, in its shape"),
    v("conflicting arguments", "gemm(m, mt, a_fmt='bf16', report=True, b_original=f)",
      "b_original given without a_original: give the data before quantisation of both operands, or neither"),
    v("conflicting arguments", "gemm(m, mt, a_fmt='bf16', a_original=f, b_original=f)",
      "a_original and b_original are read by the report: pass report=True with them"),
    v("non-finite value", "gemm(m, mt, a_fmt='bf16', report=True, a_original=np.full((2, 3), inf, np.float32), "
      "b_original=np.ones((3, 2), np.float32))",
      "a_original[0, 0] = inf is not finite (the data before quantisation must be finite)"),
    v("value not exact", "gemm(m, mt, a_fmt='bf16', report=True, a_original=np.full((2, 3), 0.1), "
      "b_original=np.ones((3, 2), np.float32))",
      "a_original[0, 0] = 0.1 is not a float32 value (narrowing it would round it before the emulated rounding)"),
    v("shape mismatch", "dot(m[0], m[1], a_fmt='bf16', a_original=x, b_original=x)",
      "a_original has shape (2,); a has length 3: give the 3 values a was quantised from, as a 1-D array"),
    v("unknown name", "mma(f, f, preset='bogus')",
      "unknown tensor-core preset 'bogus': valid presets are " + PRESETS),
    v("unknown name", "mma(f, f, preset='h100-bf16', out_fmt='fp8')", "out_fmt = 'fp8' (valid: fp32, fp16)"),
    v("unknown format", "mma(f, f, preset='h100-e4m3', a_fmt='bogus')", unknown_format("bogus")),
    v("out of range", "mma(f, f, preset='h100-e4m3', a_fmt='bf16')",
      "preset h100-e4m3 takes inputs e4m3fn or e5m2 for each operand, not bf16 x e4m3fn"),
    v("out of range", "mma(f, f, preset='h100-bf16', out_fmt='fp16')",
      "preset h100-bf16 has no fp16 accumulator: the hardware accumulates bf16 products in fp32 only"),
    v("value not exact", "mma(f * np.float32(1.0001), f, preset='h100-bf16')",
      "A_0 = 1.00010001659393310546875 is not a bf16 value (preset h100-bf16 takes bf16 inputs)"),
    v("value not exact", "mma(f.astype(float) + 2**-30, f, preset='h100-bf16')",
      NOT_A_VALUE.replace("0.1", "1.0000000009313226") % ("A[0, 0]", "bf16", "1")),
    v("value not exact", "mma(f, f, f.astype(float) + 0.1, preset='h100-bf16')",
      NOT_A_VALUE.replace("0.1", "1.1") % ("C[0, 0]", "fp32", "1.100000023841858")),
    v("value not exact", "mma(f, f, f + np.float32(0.1), preset='v100-fp16', out_fmt='fp16')",
      NOT_A_VALUE.replace("0.1", "1.100000023841858") % ("C[0, 0]", "fp16", "1.099609375")),
    v("out of range", "mma(np.full((2, 2), 70000), f, preset='h100-bf16')",
      "A[0, 0] = 70000 is not a code of bf16 (valid: 0..65535)"),
    v("shape mismatch", "mma(f, f[:1], preset='h100-bf16')", "A is (2, 2) but B is (1, 2): the inner sizes must agree"),
    v("shape mismatch", "mma(f, f, f[:1], preset='h100-bf16')", "C is (1, 2); D is (2, 2)"),
    v("shape mismatch", "mma(f[0], f, preset='h100-bf16')", "A must be a 2-D array; got 1 dimension(s)"),
    v("empty input", "mma(f[:, :0], f[:0], preset='h100-bf16')", "A has shape (2, 0); each side must be 1..2^30"),
    v("wrong dtype", "mma(f.astype(str), f, preset='h100-bf16')", CODES_DTYPE.replace("<U1", "<U32") % "A"),
    t("wrong Python type", "mma(f, f)", pybind_signature("mma")),
    v("empty input", "accumulation_experiment([])", "ks is empty (give lengths K >= 1)"),
    v("out of range", "accumulation_experiment([0])", "K = 0 (valid: 1..2^24)"),
    v("out of range", "accumulation_experiment([2**24 + 1])", "K = 16777217 (valid: 1..2^24)"),
    v("out of range", "accumulation_experiment([4], samples=0)", "samples = 0 (valid: >= 1)"),
    t("out of range", "accumulation_experiment([4], seed=-1)", pybind_signature("accumulation_experiment")),
    v("empty input", "scaling_table(ks=[])", "no K given (give lengths K in 1..65536)"),
    v("empty input", "scaling_table(sigmas=[])", "no sigma given (give standard deviations > 0)"),
    v("out of range", "scaling_table(m=0)", "M = 0 is out of range (valid: 1..65536)"),
    v("out of range", "scaling_table(ks=[65537])", "K = 65537 is out of range (valid: 1..65536)"),
    v("out of range", "scaling_table(ks=[4096], m=8192)",
      "K = 4096 with M = 8192, N = 8 makes a matrix of more than 2^24 elements"),
    v("out of range", "scaling_table(ks=[1], m=8192, n=4096)",
      "M = 8192, N = 4096 make an output of more than 2^24 elements"),
    v("NaN hyper-parameter", "scaling_table(sigmas=[nan])", "sigma = nan is out of range (valid: > 0 and <= 1e30)"),
    v("negative hyper-parameter", "scaling_table(sigmas=[-1.0])", "sigma = -1 is out of range (valid: > 0 and <= 1e30)"),
    v("out of range", "scaling_table(threads=-1)", THREADS),
    t("out of range", "scaling_table(seed=-1)", pybind_signature("scaling_table")),
    v("unknown format", "effective_unit_roundoff('bogus')", unknown_format("bogus")),
    v("unknown name", "effective_unit_roundoff('bf16', 'up')", MODE),
]

# The bounds do not raise: a parameter out of range gives valid=False, value=inf and the reason.
U = "u = nan is not in [0, 1)"
LAMBDA = "lambda = nan is not a finite number > 0"
ROWS += [
    invalid("NaN hyper-parameter", "B.gamma(10, nan)", U),
    invalid("negative hyper-parameter", "B.gamma(10, -1.0)", "u = -1 is not in [0, 1)"),
    invalid("out of range", "B.gamma(1000, 2**-8)", "n*u = 3.90625 >= 1: gamma_n is undefined (needs n*u < 1)"),
    t("out of range", "B.gamma(-1, 2**-8)", pybind_signature("gamma")),
    invalid("NaN hyper-parameter", "B.gamma_probabilistic(10, 2**-8, nan)", LAMBDA),
    invalid("negative hyper-parameter", "B.gamma_probabilistic(10, 2**-8, -1.0)", "lambda = -1 is not a finite number > 0"),
    invalid("NaN hyper-parameter", "B.gamma_probabilistic(10, nan, 1.0)", U),
    invalid("NaN hyper-parameter", "B.recursive_sum(10, nan)", U),
    invalid("NaN hyper-parameter", "B.pairwise_sum(10, nan)", U),
    invalid("NaN hyper-parameter", "B.blocked_sum(10, 2, nan)", U),
    invalid("out of range", "B.blocked_sum(10, 0, 2**-8)", "block size b = 0 is not >= 1"),
    invalid("NaN hyper-parameter", "B.kahan_sum(10, nan)", U),
    invalid("NaN hyper-parameter", "B.neumaier_sum(10, nan)", U),
    invalid("NaN hyper-parameter", "B.promoted_sum(10, 2, 2**-8, nan)", "u_high = nan is not in [0, 1)"),
    invalid("negative hyper-parameter", "B.promoted_sum(10, 2, -1.0, 2**-8)", "u_low = -1 is not in [0, 1)"),
    invalid("out of range", "B.promoted_sum(10, 0, 2**-8, 2**-24)", "chunk size nc = 0 is not >= 1"),
    invalid("NaN hyper-parameter", "B.stochastic_sum_deterministic(10, nan)", U),
    invalid("NaN hyper-parameter", "B.stochastic_sum_probabilistic(10, 2**-8, nan)", LAMBDA),
    invalid("NaN hyper-parameter", "B.recursive_sum_probabilistic(10, 2**-8, nan)", LAMBDA),
    invalid("NaN hyper-parameter", "B.dot(10, nan)", U),
    invalid("NaN hyper-parameter", "B.dot_probabilistic(10, 2**-8, nan)", LAMBDA),
    invalid("NaN hyper-parameter", "B.dot_lowprec_inputs(10, nan, 2**-24)", "u_in = nan is not in [0, 1)"),
    invalid("negative hyper-parameter", "B.dot_lowprec_inputs(10, 2**-8, -1.0)", "u_acc = -1 is not in [0, 1)"),
    invalid("NaN hyper-parameter", "B.block_fma_dot(10, 4, nan, 2**-24)", "u_int = nan is not in [0, 1)"),
    invalid("out of range", "B.block_fma_dot(10, 0, 2**-8, 2**-24)", "block size b = 0 is not >= 1"),
    invalid("NaN hyper-parameter", "B.truncating_block_dot(10, 4, 13, nan)", "u_acc = nan is not in [0, 1)"),
    invalid("out of range", "B.truncating_block_dot(10, 4, -1, 2**-24)", "frac_bits = -1 is not in [0, 1000]"),
    invalid("out of range", "B.truncating_block_dot(10, 0, 13, 2**-24)", "block size b = 0 is not >= 1"),
    t("wrong Python type", "B.coefficient()", "fpemu.bounds.coefficient: No constructor defined!"),
    t("wrong Python type", "B.probabilistic()", "fpemu.bounds.probabilistic: No constructor defined!"),
]

# Training: policies, optimizers, data, runs.
ROWS += [
    v("unknown format", "policy('bf17')", unknown_policy("bf17")),
    v("unknown name", "policy('bf16-foo')", unknown_policy("bf16-foo")),
    v("malformed value", "policy('bf16-srx')", "policy 'bf16-srx': stochastic rounding bits 'x' must be an integer in 1..32"),
    v("out of range", "policy('bf16-sr33')",
      "policy 'bf16-sr33': stochastic rounding bits '33' must be an integer in 1..32"),
    t("wrong Python type", "policy(None)", "__init__(): incompatible constructor arguments. The following argument "
      "types are supported:"),
    v("unknown name", "bytes_per_parameter('adagrad', 'bf16')", "unknown optimizer 'adagrad' (valid: sgd adam adamw lion)"),
    v("unknown format", "bytes_per_parameter('adam', 'bf17')", unknown_policy("bf17")),
    v("NaN hyper-parameter", "bytes_per_parameter('adam', 'bf16', lr=nan)", "learning rate nan must be finite and > 0"),
    v("NaN hyper-parameter", "bytes_per_parameter('adam', 'bf16', momentum=nan)",
      "momentum nan must be finite and >= 0 (adam does not use it)"),
    v("negative hyper-parameter", "bytes_per_parameter('adam', 'bf16', eps=-1.0)", "eps -1 must be finite and > 0"),
    v("unknown name", "optimizer('adagrad', p)", "unknown optimizer 'adagrad' (valid: sgd adam adamw lion)"),
    v("unknown format", "optimizer('sgd', p, 'bf17')", unknown_policy("bf17")),
    v("NaN hyper-parameter", "optimizer('adam', p, lr=nan)", "learning rate nan must be finite and > 0"),
    v("negative hyper-parameter", "optimizer('adam', p, lr=-1.0)", "learning rate -1 must be finite and > 0"),
    v("NaN hyper-parameter", "optimizer('adam', p, weight_decay=nan)", "weight decay nan must be finite and >= 0"),
    v("NaN hyper-parameter", "optimizer('sgd', p, momentum=nan)", "momentum nan must be finite and >= 0"),
    v("negative hyper-parameter", "optimizer('sgd', p, dampening=-1.0)", "dampening -1 must lie in [0, 1]"),
    v("out of range", "optimizer('sgd', p, nesterov=True)", "nesterov momentum needs momentum > 0 and dampening 0"),
    v("out of range", "optimizer('adam', p, beta1=1.5)", "beta1 1.5 must lie in [0, 1)"),
    v("NaN hyper-parameter", "optimizer('adam', p, beta2=nan)", "beta2 nan must lie in [0, 1)"),
    v("negative hyper-parameter", "optimizer('adamw', p, eps=-1.0)", "eps -1 must be finite and > 0"),
    v("NaN hyper-parameter", "optimizer('adam', p, dampening=nan)", "dampening nan must lie in [0, 1] (adam does not use it)"),
    v("NaN hyper-parameter", "optimizer('sgd', p, beta1=nan)", "beta1 nan must lie in [0, 1) (sgd does not use it)"),
    v("NaN hyper-parameter", "optimizer('lion', p, eps=nan)", "eps nan must be finite and > 0 (lion does not use it)"),
    v("empty input", "optimizer('sgd', [])", "params is empty: give at least one tensor"),
    v("wrong dtype", "optimizer('sgd', [np.array(['a'])])", "params[0] must be a float32 or float64 array; got dtype <U1"),
    t("out of range", "optimizer('sgd', p, seed=-1)", "__init__(): incompatible constructor arguments. The following "
      "argument types are supported:"),
    v("shape mismatch", "opt.step([])", "step got 0 gradients for 1 parameter tensors"),
    v("shape mismatch", "opt.step([g.T])", "grads[0] has shape [3, 2] but the parameter has shape [2, 3]"),
    v("wrong dtype", "opt.step([g.astype(str)])", "grads[0] must be a float32 or float64 array; got dtype <U32"),
    v("out of range", "opt.weights(1)", "tensor 1 (valid: 0..0)"),
    t("out of range", "opt.weights(-1)", pybind_signature("weights")),
    v("out of range", "opt.updated_weights(1)", "tensor 1 (valid: 0..0)"),
    v("out of range", "opt.state(1, 0)", "tensor 1 (valid: 0..0)"),
    # A state the optimizer does not keep is None, as documented, whatever k.
    Row("out of range", "opt.state(0, 2)", RETURNS, "None"),
    v("out of range", "opt.compensation(1)", "tensor 1 (valid: 0..0)"),
    v("NaN hyper-parameter", "opt.lr = nan", "lr = nan (valid: finite >= 0)"),
    v("negative hyper-parameter", "opt.lr = -1e-9", "lr = -1e-09 (valid: finite >= 0)"),
    v("missing file", "load_fashion_mnist(dir='no/such/dir')",
      "Fashion-MNIST file no/such/dir/train-images-idx3-ubyte.gz not found; Debian's dataset-fashion-mnist package "
      "provides it (in /usr/share/datasets/fashion-mnist), and FPEMU_FASHION_MNIST_DIR selects another directory"),
    v("missing file", "load_libsvm('missing.svm')", "missing.svm: cannot open: no such file"),
    v("not a file", "load_libsvm('.')", ".: cannot read: is a directory"),
    v("empty file", "load_libsvm('empty.svm')", "empty.svm: no data rows"),
    v("truncated file", "load_libsvm('truncated.svm')", "truncated.svm:2: malformed token '2:', expected index:value"),
    v("malformed value", "load_libsvm('bad.svm')", "bad.svm:2: value in '1:abc' is not a number"),
    v("out of range", "load_libsvm('bad.svm', min_cols=-1)", "min_cols = -1 (valid: >= 0)"),
    v("unknown name", "train(X, Y, X, Y, model='cnn')", "unknown model 'cnn': valid are mlp, logreg, linreg"),
    v("unknown name", "train(X, Y, X, Y, optimizer='adagrad')", "unknown optimizer 'adagrad' (valid: sgd adam adamw lion)"),
    v("unknown format", "train(X, Y, X, Y, policy='bf17')", unknown_policy("bf17")),
    v("NaN hyper-parameter", "train(X, Y, X, Y, lr=nan)", "learning rate nan must be finite and > 0"),
    v("negative hyper-parameter", "train(X, Y, X, Y, momentum=-1.0)", "momentum -1 must be finite and >= 0"),
    v("NaN hyper-parameter", "train(X, Y, X, Y, clip_norm=nan)", "clip_norm = nan (valid: 0 for none, or finite > 0)"),
    v("negative hyper-parameter", "train(X, Y, X, Y, clip_norm=-1e-9)",
      "clip_norm = -1e-09 (valid: 0 for none, or finite > 0)"),
    v("unknown name", "train(X, Y, X, Y, gemm='fp8-bogus')",
      "gemm recipe 'fp8-bogus': expected a name (weights, bf16, fp8-fastaccum, fp8-deepseek, fp8-tensor, fp8-unscaled) or "
      "FORMAT/SCALING/ACCUMULATOR, e.g. e4m3fn/tile128/h100-e4m3-deepseek"),
    v("conflicting arguments", "train(X, Y, X, Y, gemm='bf16/none/h100-e4m3')",
      "gemm recipe 'bf16/none/h100-e4m3': preset h100-e4m3 takes inputs e4m3fn or e5m2 for each operand, not bf16 x bf16"),
    v("out of range", "train(X, Y, X, Y, gemm_error_every=-1)",
      "gemm_error_every = -1, gemm_error_rows = 8 (valid: every >= 0, 0 for none; rows >= 1)"),
    v("out of range", "train(X, Y, X, Y, epochs=0)",
      "epochs = 0, batch = 128, grad_accum = 1 (valid: >= 1 each)"),
    v("out of range", "train(X, Y, X, Y, batch=0)",
      "epochs = 1, batch = 0, grad_accum = 1 (valid: >= 1 each)"),
    v("out of range", "train(X, Y, X, Y, grad_accum=0)",
      "epochs = 1, batch = 128, grad_accum = 0 (valid: >= 1 each)"),
    v("out of range", "train(X, Y, X, Y, threads=-1)", THREADS),
    v("out of range", "train(X, Y, X, Y, hidden=0)", "model: hidden = 0; must be 1..16777216"),
    v("out of range", "train(X, Y, X, Y, classes=1)", "model: classes = 1; an mlp needs 2..16777216"),
    v("wrong label set", "train(X, Y + 1, X, Y, classes=2)",
      "train set: label 1 is 2.000000; the mlp model needs a class index 0..1"),
    v("wrong label set", "train(X, Y, X, Y, model='logreg')",
      "train set: label 0 is 0.000000; the logreg model needs -1 or +1"),
    v("wrong label set", "train(X, Y * nan, X, Y, model='linreg')",
      "train set: label 0 is nan; the linreg model needs a finite value"),
    v("shape mismatch", "train(X, Y[:3], X, Y)", "y_train must be 1-D with one label per row of x_train (4); got shape [3]"),
    v("shape mismatch", "train(X, Y, X, Y.reshape(2, 2))",
      "y_test must be 1-D with one label per row of x_test (4); got shape [2, 2]"),
    v("shape mismatch", "train(X[:, 0], Y, X, Y)", "x_train must be a 2-D array; got 1 dimension(s)"),
    v("shape mismatch", "train(X, Y, X[:, :1], Y)", "dataset test set has 1 features but the model takes 2"),
    v("non-finite value", "train(X, Y, X + inf, Y)", "x_test has a non-finite value at row 0, column 0"),
    v("empty input", "train(X[:0], Y[:0], X, Y)", "x_train has shape (0, 2); each side must be 1..2^30"),
    v("wrong dtype", "train(X.astype(str), Y, X, Y)", "x_train must be a float32 or float64 array; got dtype <U32"),
    t("wrong Python type", "train(X, Y, X, Y, progress=5)",
      "progress must be a callable taking the epoch dict, or None; got 5"),
    v("unknown format", "theorem1_floor('bogus')", unknown_format("bogus")),
    v("NaN hyper-parameter", "theorem1_floor('bf16', [nan])", "lr = nan (valid: 0 < lr < 1)"),
    v("negative hyper-parameter", "theorem1_floor('bf16', [-1e-9])", "lr = -1e-09 (valid: 0 < lr < 1)"),
    v("out of range", "theorem1_floor('bf16', [1.5])", "lr = 1.5 (valid: 0 < lr < 1)"),
    v("out of range", "theorem1_floor('bf16', dim=0)", "dim = 0 (valid: 1..2^20)"),
]

# CA-SGD and the AllReduce constant.
SYNTH = "'synth:64,8'"
ROWS += [
    v("missing file", "casgd('missing.svm')", "missing.svm: cannot open: no such file"),
    v("empty file", "casgd('empty.svm')", "empty.svm: no data rows"),
    v("truncated file", "casgd('truncated.svm')", "truncated.svm:2: malformed token '2:', expected index:value"),
    v("malformed value", "casgd('bad.svm')", "bad.svm:2: value in '1:abc' is not a number"),
    v("wrong label set", "casgd('labels.svm')",
      "labels.svm:2: label 3 is not valid for logistic regression (labels must be -1 or +1)"),
    v("malformed value", "casgd('synth:abc')",
      "--data synth:abc: expected synth:M,N with M rows and N features (positive integers)"),
    v("out of range", "casgd('synth:0,8')",
      "--data synth:0,8: M and N must be at least 1 and M*N at most 268435456 (2^28), got M=0 N=8"),
    v("unknown name", "casgd(%s, loss='hinge')" % SYNTH, "unknown loss 'hinge' (expected logistic, linear or poisson)"),
    v("unknown name", "casgd(%s, recipe='Z')" % SYNTH, "unknown recipe 'Z' (expected one of A B C D E F G H I)"),
    v("unknown name", "casgd(%s, slots=['u_q=fp32'])" % SYNTH,
      "unknown precision slot 'u_q' (expected u_A, u_G, u_r, u_c, u_sigma, u_g, u_AR_r, u_AR_G or u_x)"),
    v("malformed value", "casgd(%s, slots=['u_c'])" % SYNTH, "slot assignment 'u_c' is not NAME=PRECISION (e.g. u_c=fp32)"),
    v("unknown format", "casgd(%s, slots=['u_c=fp99'])" % SYNTH, "u_c: " + unknown_format("fp99")),
    v("unknown name", "casgd(%s, allreduce='bogus')" % SYNTH,
      "unknown AllReduce algorithm 'bogus' (expected ring, rd, tree or seq)"),
    v("out of range", "casgd(%s, b=0)" % SYNTH, "--b 0 is out of range (1..65536)"),
    v("out of range", "casgd(%s, s=0)" % SYNTH, "--s 0 is out of range (1..4096)"),
    v("out of range", "casgd(%s, P=9)" % SYNTH, "--P 9 is out of range (1..n = 8: every rank needs a column)"),
    v("out of range", "casgd(%s, outer=-1)" % SYNTH, "--outer -1 is out of range (0..100000000)"),
    v("out of range", "casgd(%s, eval_every=0)" % SYNTH, "eval_every = 0 (valid: >= 1)"),
    v("out of range", "casgd(%s, threads=-1)" % SYNTH, THREADS),
    v("out of range", "casgd(%s, outer=4, budget_at=4)" % SYNTH, "budget_at = 4 (valid: 0..3)"),
    v("NaN hyper-parameter", "casgd(%s, eta=nan)" % SYNTH, "eta = nan (valid: finite > 0)"),
    v("negative hyper-parameter", "casgd(%s, eta=-0.5)" % SYNTH, "eta = -0.5 (valid: finite > 0)"),
    v("NaN hyper-parameter", "casgd(%s, cp=nan)" % SYNTH, "cp = nan (valid: >= 0, finite)"),
    v("negative hyper-parameter", "casgd(%s, cp=-1e-9)" % SYNTH, "cp = -1e-09 (valid: >= 0, finite)"),
    v("wrong Python type", "casgd(%s, cp=[1])" % SYNTH, "cp = [1] (valid: 'worst' for 2.4 P, 'nccl-fit' for 4.62 P^0.56, or a number >= 0)"),
    t("out of range", "casgd(%s, seed=-1)" % SYNTH, pybind_signature("casgd")),
    v("out of range", "casgd(%s, outer=4, budget_at=3, mu_F=0)" % SYNTH, "mu_F = 0 (valid: finite > 0)"),
    v("conflicting arguments", "casgd(%s, sigma_g2=1)" % SYNTH,
      "mu_F, L_F and sigma_g2 are constants of Theorem 5.9's radius, which comes with the budget: give budget_at"),
    v("out of range", "casgd_cost(0, 2, 4, 16)", "b = 0, s = 2, P = 4, n_loc = 16 (valid: each >= 1)"),
    v("negative hyper-parameter", "casgd_cost(8, 2, 4, 16, alpha=-1)", "alpha = -1 (valid: finite >= 0)"),
    v("NaN hyper-parameter", "casgd_cost(8, 2, 4, 16, gamma=nan)", "gamma = nan (valid: finite >= 0)"),
    v("out of range", "casgd_cost(8, 2, 4, 16, gram_speedup=0)", "gram_speedup = 0 (valid: finite > 0)"),
    v("unknown name", "casgd_cost(8, 2, 4, 16, recipe='Z')", "unknown recipe 'Z' (expected one of A B C D E F G H I)"),
    v("out of range", "casgd_radius(0.5, 0, 8, 0.1, 1, 2, 0.1)", "b = 0, s = 8 (valid: each >= 1)"),
    v("NaN hyper-parameter", "casgd_radius(nan, 8, 8, 0.1, 1, 2, 0.1)", "eta = nan (valid: finite > 0)"),
    v("out of range", "casgd_radius(0.5, 8, 8, 0, 1, 2, 0.1)", "mu_F = 0 (valid: finite > 0)"),
    v("negative hyper-parameter", "casgd_radius(0.5, 8, 8, 0.1, 1, 2, -0.1)", "rho = -0.1 (valid: finite >= 0)"),
]
CP_RANGE = " (valid: P 1..4096, length 1..2^24, trials 1..10^6, P x length <= 2^27)"
ROWS += [
    v("out of range", "allreduce_cp(0)", "P = 0, length = 4096, trials = 4" + CP_RANGE),
    v("out of range", "allreduce_cp(4097)", "P = 4097, length = 4096, trials = 4" + CP_RANGE),
    v("out of range", "allreduce_cp(4, length=0)", "P = 4, length = 0, trials = 4" + CP_RANGE),
    v("out of range", "allreduce_cp(4096, length=2**24)", "P = 4096, length = 16777216, trials = 4" + CP_RANGE),
    v("out of range", "allreduce_cp(4, trials=0)", "P = 4, length = 4096, trials = 0" + CP_RANGE),
    v("unknown name", "allreduce_cp(4, algorithm='bogus')",
      "unknown AllReduce algorithm 'bogus' (expected ring, rd, tree or seq)"),
    v("unknown format", "allreduce_cp(4, datatype='bogus')", unknown_format("bogus")),
]

# Public names that take no argument at all, so there is nothing to refuse.
NO_ARGUMENTS = ["formats", "presets", "casgd_recipes", "gemm_recipes"]
# Where files are read; nothing in the module writes one.
READS_FILES = ["load_fashion_mnist", "load_libsvm", "casgd"]
FILES = {"empty.svm": "", "truncated.svm": "+1 1:0.5 2:0.25\n-1 1:0.5 2:", "bad.svm": "+1 1:0.5\n-1 1:abc\n",
         "labels.svm": "+1 1:0.5 2:0.25\n3 1:0.1\n"}


def fixtures():
    """The names a row's call may use: fpemu's functions and these arguments."""
    rng = np.random.default_rng(3)
    m = fpemu.round(rng.normal(size=(2, 3)), "bf16")
    p = [np.ones((2, 3), np.float32)]
    opt = fpemu.optimizer("adam", p, "bf16-kahan")
    g = np.full((2, 3), 0.5, np.float32)
    opt.step([g])  # states and compensation now hold values that a failed call must not change
    names = {n: getattr(fpemu, n) for n in dir(fpemu) if not n.startswith("_")}
    names.update(np=np, nan=float("nan"), inf=float("inf"), B=fpemu.bounds,
                 x=np.array([1.0, 2.0]), c=np.array([56, 60], np.uint8), m=m, mt=m.T.copy(),
                 s=np.array(["a", "b"]), t=np.array([0.1, 2.0]),
                 f=np.array([[1.0, 2.0], [3.0, 4.0]], np.float32), p=p, g=g, opt=opt,
                 X=np.array([[0.5, -1.0], [1.0, 0.25], [-0.5, 2.0], [0.0, 1.0]], np.float32),
                 Y=np.array([0.0, 1.0, 1.0, 0.0], np.float32))
    return names


def optimizer_state(opt):
    return ([opt.weights(0), opt.updated_weights(0), opt.state(0, 0), opt.state(0, 1), opt.compensation(0)],
            (opt.steps, opt.lr, opt.bytes))


def arrays_in(names):
    out = {}
    for k, obj in names.items():
        if isinstance(obj, np.ndarray):
            out[k] = obj
        elif isinstance(obj, list) and all(isinstance(a, np.ndarray) for a in obj):
            out.update(("%s[%d]" % (k, i), a) for i, a in enumerate(obj))
    return out


def outcome(row, names):
    """What the call did, as (outcome, message): the exception's name and message (pybind11's
    TypeErrors by their first line), or valid=False and the condition, or what it returned."""
    try:
        try:
            code = compile(row.call, "<row>", "eval")
        except SyntaxError:
            exec(compile(row.call, "<row>", "exec"), names)
            return RETURNS, ""
        result = eval(code, names)
    except (ValueError, TypeError) as e:
        message = str(e)
        return type(e).__name__, message.split("\n")[0] if isinstance(e, TypeError) else message
    except Exception as e:  # noqa: BLE001 - any other exception is reported as what it is
        return type(e).__name__, str(e)
    if isinstance(result, (fpemu.bounds.coefficient, fpemu.bounds.probabilistic)) and not result.valid:
        condition = result.condition if isinstance(result, fpemu.bounds.coefficient) else result.coefficient.condition
        return (INVALID if float(result) == float("inf") else "valid=False, value %r" % float(result)), condition
    return RETURNS, repr(result)[:80]


def test_rows(tmp_path, monkeypatch):
    """Every row, in order, against one set of arguments; every failure is collected and reported."""
    monkeypatch.chdir(tmp_path)  # the file rows name relative paths, and a file written by a call lands here
    for name, text in FILES.items():
        (tmp_path / name).write_text(text)
    names = fixtures()
    arrays = arrays_in(names)
    saved = {k: a.copy() for k, a in arrays.items()}
    opt_before = optimizer_state(names["opt"])
    problems = []
    for row in ROWS:
        got = outcome(row, names)
        if got != (row.outcome, row.message):
            problems.append("%s: want %s %r, got %s %r" % (row.call, row.outcome, row.message, *got))
        changed = [k for k, a in arrays.items()
                   if a.dtype != saved[k].dtype or not np.array_equal(a, saved[k], equal_nan=a.dtype.kind == "f")]
        if changed:
            problems.append("%s left its arguments %s changed" % (row.call, changed))
        saved.update((k, arrays[k].copy()) for k in changed)
        opt_now = optimizer_state(names["opt"])
        same = all((a is None and b is None) or np.array_equal(a, b) for a, b in zip(opt_before[0], opt_now[0]))
        if not (same and opt_before[1] == opt_now[1]):
            problems.append("%s changed the optimizer" % row.call)
        opt_before = opt_now  # a change is reported once, by the row that made it
    assert not problems, "\n".join(problems)
    assert sorted(os.listdir(".")) == sorted(FILES), "a call wrote a file: %s" % sorted(os.listdir("."))
    assert all(open(k).read() == text for k, text in FILES.items()), "an input file changed"


def public_names():
    """Every public function, class, method and property of the module (constants excepted)."""
    names = set()
    for n in dir(fpemu):
        obj = getattr(fpemu, n)
        if n.startswith("_") or isinstance(obj, int):
            continue
        if n == "bounds":
            names |= {"bounds." + b for b in dir(obj) if not b.startswith("_")}
        else:
            names.add(n)
    # The optimizer's methods and its one settable property; the others only read.
    names |= {"optimizer." + m for m in ("step", "weights", "updated_weights", "state", "compensation", "lr")}
    return names


def test_coverage():
    covered = {row.function for row in ROWS} | set(NO_ARGUMENTS)
    missing = sorted(public_names() - covered)
    check(not missing, "public names without a bad-input row: %s" % missing)
    unknown = sorted(covered - public_names())
    check(not unknown, "rows for names that are not public: %s" % unknown)
    for n in READS_FILES:
        check(any(r.function == n and r.kind == "missing file" for r in ROWS), "%s: a missing-file row" % n)
    file_kinds = {"missing file", "empty file", "truncated file"}
    check(not [r for r in ROWS if r.kind in file_kinds and r.function not in READS_FILES], "file rows only for readers")
    # Python's own comparison rules for a format next to another object (it was a TypeError).
    bf16 = fpemu.format("bf16")
    check(bf16 != None and bf16 != "bf16" and bf16 == fpemu.format("e8m7"), "format == other object is False")  # noqa: E711


def cell(text):
    return text.replace("|", "\\|")


def markdown():
    lines = [
        "Made and checked by `tests/python/test_bad_input.py` (`--markdown` prints this table): each call gives "
        "exactly this result (messages cut here at %d characters, pybind11's TypeErrors by their first line), changes no "
        "argument and writes no file; `fpemu.` is left out, `x` is float64 [1, 2], `c` e4m3fn codes [56, 60], `m` "
        "2x3 bf16 codes (`mt` = `m.T`), `f` float32 [[1, 2], [3, 4]], `p` [2x3 float32 ones], `opt` an adam "
        "optimizer over `p` under bf16-kahan after one step with `g`, `X` 4x2 float32 with class labels `Y` = "
        "[0, 1, 1, 0], `B` = `fpemu.bounds`." % MESSAGE_SHOWN,
        "",
        "| call | bad input | result |",
        "|---|---|---|",
    ]
    for row in ROWS:
        message = row.message if len(row.message) <= MESSAGE_SHOWN else row.message[:MESSAGE_SHOWN] + "…"
        lines.append("| `%s` | %s | %s: `%s` |" % (cell(row.call), row.kind, row.outcome, cell(message)))
    lines += [
        "| `%s` | no arguments | nothing to refuse |" % "`, `".join(n + "()" for n in NO_ARGUMENTS),
        "| every other function | empty or truncated file | takes no file (only `%s` read one); no function writes "
        "one |" % "`, `".join(READS_FILES),
        "| the module | absent GPU | no GPU entry point: the CUDA kernels belong to the C++ API (`fpemu/cuda.hpp`) and "
        "`fpemu gpu-check` |",
    ]
    return "\n".join(lines) + "\n"


def test_page():
    text = open(PAGE, encoding="utf-8").read()
    begin, end = text.find(BEGIN), text.find(END)
    check(0 <= begin < end, "docs/bad-input.md has the %s ... %s block" % (BEGIN, END))
    block = text[begin + len(BEGIN):end].strip("\n") + "\n"
    check(block == markdown(), "docs/bad-input.md's audit block equals `test_bad_input.py --markdown` (regenerate it)")


if __name__ == "__main__" and sys.argv[1:] == ["--markdown"]:
    sys.stdout.write(markdown())
