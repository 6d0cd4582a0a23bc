#!/usr/bin/env python3
"""The bad-input audit of the fpemu command and of the file readers behind it.

Usage: python3 tests/cli/test_bad_input.py PATH-TO-FPEMU
       python3 tests/cli/test_bad_input.py --markdown    (the table of docs/bad-input.md)

Python 3 standard library only. CASES is the audit: for every subcommand and file reader, each
kind of bad input that applies to it (and, once per surface, the kinds that do not). Each case
runs in a fresh temporary directory holding only its input files and checks the command's
contract (see test_cli.py): the exact message line (on stderr, "fpemu: ..."), the exit status,
nothing on stdout, and that every file in the directory is left as it was, so that no output
file is left half-written (FILE.tmp) and no existing output file is replaced by a failing run.
The table of docs/bad-input.md between "<!-- audit:cli -->" and "<!-- /audit:cli -->" is generated
from CASES (--markdown prints it), and the test fails when the page's block differs from it.

Prints one line per failed check and the summary line "cli_bad_input: N passed, N failed"
(cases); exits 0 when every check passed, else 1.
"""

import collections
import gzip
import os
import signal
import struct
import subprocess
import sys
import tempfile
import time
from checks import CHECKS, FAILURES, check

EXE = None
PAGE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "docs", "bad-input.md")
BEGIN, END = "<!-- audit:cli -->", "<!-- /audit:cli -->"

# The kinds of bad input (the "bad input" column of docs/bad-input.md).
FORMAT = "unknown format"
NAME = "unknown name or option"
NUMBER = "malformed number"
RANGE = "out-of-range parameter"
HYPER = "NaN or negative hyper-parameter"
SHAPE = "shape mismatch"
CONFLICT = "conflicting options"
MISSING = "missing file"
EMPTY = "empty file"
TRUNCATED = "truncated file"
LABELS = "wrong label set"
GPU = "absent GPU"
UNWRITABLE = "unwritable output"
KEPT = "failed run, existing output"
KILLED = "killed run, existing output"
NA = "n/a"

SENTINEL = b"an earlier run's output\n"

# surface, kind, example (markdown, for the docs table), argv (None: a statement, not run), expect
# (the exact line, or a tuple of accepted lines), status, stdin, files ({name: bytes, or None for
# a directory}), env, stream (where the line goes), killed (the name of an output file whose
# FILE.tmp a SIGKILL may leave behind).
Case = collections.namedtuple(
    "Case", "surface kind example argv expect status stdin files env stream killed")


def case(surface, kind, example, argv, expect, status=2, stdin=None, files=None, env=None, stream="stderr",
         killed=None):
    return Case(surface, kind, example, argv, expect, status, stdin, files or {}, env or {}, stream, killed)


def not_applicable(surface, why):
    """A table row naming the kinds of ALL_KINDS that no case of the surface covers, and why."""
    return case(surface, NA, why, None, None)


# The kinds every surface is audited for, with their short names in the n/a rows.
ALL_KINDS = [((FORMAT,), "format"), ((NUMBER,), "number"), ((RANGE,), "range"), ((HYPER,), "hyper-parameter"),
               ((SHAPE,), "shape"), ((MISSING, EMPTY), "empty file"), ((TRUNCATED,), "truncated file"),
               ((LABELS,), "label"), ((GPU,), "GPU")]


# Input files.


def idx_images(n, rows, cols, present=None):
    """An IDX images file (magic 0x803) whose header promises n images, holding `present` of them."""
    present = n if present is None else present
    return struct.pack(">IIII", 0x803, n, rows, cols) + bytes(present * rows * cols)


def idx_labels(labels, promised=None):
    n = len(labels) if promised is None else promised
    return struct.pack(">II", 0x801, n) + bytes(labels)


def npy(values, descr="<f8", shape=None, fortran=False):
    """A NumPy .npy file (format 1.0) written from the format's documentation (numpy.lib.format)."""
    shape = (len(values),) if shape is None else shape
    dims = ", ".join(map(str, shape)) + ("," if len(shape) == 1 else "")
    header = "{'descr': '%s', 'fortran_order': %s, 'shape': (%s), }" % (descr, fortran, dims)
    header += " " * ((64 - (10 + len(header) + 1) % 64) % 64) + "\n"
    fmt = {"<f8": "<%dd", "<i4": "<%di"}[descr] % len(values)
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode() + struct.pack(fmt, *values)


GOOD_IMAGES = idx_images(4, 2, 2)
GOOD_LABELS = idx_labels([0, 1, 2, 3])


def mnist(images=None, labels=None, compress=True):
    """The four Fashion-MNIST files in mnist/ (training files as given, gzip unless compress is
    False: zlib reads plain files under the same names), for FPEMU_FASHION_MNIST_DIR=mnist."""
    pack = gzip.compress if compress else (lambda b: b)
    images = GOOD_IMAGES if images is None else images
    labels = GOOD_LABELS if labels is None else labels
    return {"mnist": None,
            "mnist/train-images-idx3-ubyte.gz": pack(images), "mnist/train-labels-idx1-ubyte.gz": pack(labels),
            "mnist/t10k-images-idx3-ubyte.gz": gzip.compress(GOOD_IMAGES),
            "mnist/t10k-labels-idx1-ubyte.gz": gzip.compress(GOOD_LABELS)}


MNIST_ENV = {"FPEMU_FASHION_MNIST_DIR": "mnist"}
MNIST_SOURCE = "mnist/train-images-idx3-ubyte.gz, mnist/train-labels-idx1-ubyte.gz"
GOOD_SVM = b"1 1:0.5 2:0.25\n-1 1:-0.5\n1 2:1\n-1 1:0.125 2:-1\n1 1:1\n"
GZIP_IMAGES = gzip.compress(GOOD_IMAGES)
TRAIN = ["train", "--epochs", "1"]
CASGD_SMALL = ["casgd", "--data", "synth:64,4", "--b", "4", "--s", "2", "--outer", "1"]
TRAIN_MNIST = ["train", "--epochs", "1", "--hidden", "4"]
GPU_SKIP = "fpemu gpu-check: skipped: "

# The audit.

CASES = [
    # The command line itself.
    case("fpemu", NAME, "`fpemu frobnicate`", ["frobnicate"],
         "fpemu: The following argument was not expected: frobnicate (subcommands: formats, round, decode, op, mma, "
         "sum, dot, gemm, optim, train, casgd, allreduce, gpu-check or demo; see fpemu --help)"),
    case("fpemu", NAME, "no subcommand", [],
         "fpemu: a subcommand is required: formats, round, decode, op, mma, sum, dot, gemm, optim, train, casgd, "
         "allreduce, gpu-check or demo (see fpemu --help)"),

    case("formats", NAME, "`--yaml`", ["formats", "--yaml"],
         "fpemu: The following argument was not expected: --yaml (see fpemu formats --help)"),
    not_applicable("formats", "it takes no values"),

    case("round", FORMAT, "`--format e4m3fx`", ["round", "--format", "e4m3fx", "1"],
         "fpemu: --format: unknown format 'e4m3fx': expected one of e4m3fn, e5m2, e4m3fnuz, e5m2fnuz, "
         "bf16, fp16, tf32, fp32, e8m13, e2m3fn, e3m2fn, e2m1fn, e8m0fnu, or "
         "eXmY[:bias=N][:nosub][:ieee|fn|fnuz|finite][:unsigned][:nozero]"),
    case("round", NAME, "`--rounding rnx`", ["round", "--format", "e4m3fn", "--rounding", "rnx", "1"],
         "fpemu: --rounding: 'rnx' is not valid: expected rne|rna|rz|ru|rd|rto|sr|sr-exact"),
    case("round", NUMBER, "value `1.2.3`", ["round", "--format", "e4m3fn", "1.2.3"],
         "fpemu: cannot parse '1.2.3' as a number: expected decimal (1.5e-3), hex float (0x1.8p-3), inf or nan"),
    case("round", NUMBER, "stdin line 2 `abc`", ["round", "--format", "bf16"],
         "fpemu: stdin line 2: cannot parse 'abc' as a number: expected decimal (1.5e-3), hex float (0x1.8p-3), "
         "inf or nan", stdin=b"\nabc\n"),
    case("round", NUMBER, "stdin `1`, NUL, `x`", ["round", "--format", "bf16"],
         "fpemu: stdin line 1: cannot parse '1\\x00x' as a number: expected decimal (1.5e-3), hex float (0x1.8p-3), "
         "inf or nan", stdin=b"1\x00x\n"),
    case("round", RANGE, "`--sr-bits 33`", ["round", "--format", "e4m3fn", "--rounding", "sr", "--sr-bits", "33", "1"],
         "fpemu: --sr-bits: '33' is out of range: valid 1..32"),
    case("round", RANGE, "`--stream 4294967296`", ["round", "--format", "e4m3fn", "--stream", "4294967296", "1"],
         "fpemu: --stream: '4294967296' is not valid: expected an integer in 0..4294967295 (decimal or 0x "
         "hex)"),
    case("round", CONFLICT, "`--overflow nan` into e2m1fn", ["round", "--format", "e2m1fn", "--overflow", "nan", "1"],
         "fpemu: overflow policy nan needs a format with a NaN; e2m1fn has none (use ieee or saturate)"),
    not_applicable("round", "values one at a time"),

    case("decode", FORMAT, "`--format e99m2`", ["decode", "--format", "e99m2", "7e"],
         "fpemu: --format: format 'e99m2': exponent bits 99 out of range: valid 1..11"),
    case("decode", NUMBER, "code `zz`", ["decode", "--format", "e4m3fn", "zz"],
         "fpemu: cannot parse code 'zz' as hex: expected hex digits with an optional 0x, e.g. 0x7e"),
    case("decode", RANGE, "code `0x1ff` in 8 bits", ["decode", "--format", "e4m3fn", "7e", "0x1ff"],
         "fpemu: code '0x1ff' does not fit e4m3fn's 8 bits: valid 0x00..0xff"),
    not_applicable("decode", "codes only"),

    case("op", NAME, "`pow`", ["op", "pow", "--format", "e4m3fn"],
         "fpemu: OP: 'pow' is not valid: expected add|sub|mul|div|fma|sqrt", stdin=b"38 38\n"),
    case("op", FORMAT, "`--format e4m3:foo`", ["op", "add", "--format", "e4m3:foo"],
         "fpemu: --format: format 'e4m3:foo': unknown option 'foo': valid bias=N, nosub, ieee, fn, fnuz, "
         "finite, unsigned, nozero", stdin=b"38 38\n"),
    case("op", NUMBER, "stdin `38 4g`", ["op", "mul", "--format", "e4m3fn"],
         "fpemu: stdin line 1: cannot parse code '4g' as hex: expected hex digits with an optional 0x, e.g. 0x7e",
         stdin=b"38 4g\n"),
    case("op", RANGE, "stdin line 2 `38 100`", ["op", "mul", "--format", "e4m3fn"],
         "fpemu: stdin line 2: code '100' does not fit e4m3fn's 8 bits: valid 0x00..0xff", stdin=b"\n38 100\n"),
    case("op", SHAPE, "`add` of 3 codes", ["op", "add", "--format", "e4m3fn"],
         "fpemu: stdin line 1: add takes 2 operand codes, got 3: '38 38 38'", stdin=b"38 38 38\n"),
    not_applicable("op", "the operands are codes on stdin"),

    case("mma", NAME, "`--preset v100-fpx`", ["mma", "--preset", "v100-fpx"],
         "fpemu: unknown tensor-core preset 'v100-fpx': valid presets are v100-fp16, t4-fp16, a100-fp16, a100-"
         "bf16, a100-tf32, ada-fp16, ada-bf16, ada-tf32, ada-e4m3, ada-e5m2, h100-fp16, h100-bf16, h100-tf32, "
         "h100-e4m3, h100-e5m2, h100-e4m3-fastaccum, h100-e4m3-deepseek, b200-fp16, b200-bf16, b200-tf32, b200"
         "-e4m3, b200-e5m2, b200-mxf8f6f4, b200-mxf4, b200-mxf4nvf4, b200-mxf4nvf4-ue8m0, rtx6000b-fp16, rtx60"
         "00b-bf16, rtx6000b-tf32, rtx6000b-e4m3, rtx6000b-e5m2, rtx6000b-mxf8f6f4, rtx6000b-mxf4, rtx6000b-mx"
         "f4nvf4, rtx6000b-mxf4nvf4-ue8m0, mi100-fp16, mi100-bf16, mi250-fp16, mi250-bf16, mi250-bf16-legacy, "
         "mi300x-fp16, mi300x-bf16, mi300x-xf32, mi300x-e4m3fnuz, mi300x-e5m2fnuz", stdin=b"3f800000 ; 3f800000 ; 00000000\n"),
    case("mma", FORMAT, "`--a-format fp16` with an FP8 preset", ["mma", "--preset", "h100-e4m3", "--a-format", "fp16"],
         "fpemu: preset h100-e4m3 takes inputs e4m3fn or e5m2 for each operand, not fp16 x e4m3fn",
         stdin=b"3f800000 ; 3f800000 ; 00000000\n"),
    case("mma", FORMAT, "`--out-format fp64`", ["mma", "--preset", "v100-fp16", "--out-format", "fp64"],
         "fpemu: --out-format: 'fp64' is not valid: expected fp32|fp16", stdin=b"3f800000 ; 3f800000 ; 00000000\n"),
    case("mma", NUMBER, "C `0000000g`", ["mma", "--preset", "v100-fp16"],
         "fpemu: line 1: C '0000000g' is not valid: expected 8 hex digits of a binary32 bit pattern (optional 0x), "
         "e.g. 3f800000 for 1.0", stdin=b"3f800000 ; 3f800000 ; 0000000g\n"),
    case("mma", RANGE, "A_0 = 1 + 2^-23 for bf16 inputs", ["mma", "--preset", "h100-bf16"],
         "fpemu: line 1: A_0 = 1.00000011920928955078125 is not a bf16 value (preset h100-bf16 takes bf16 inputs)",
         stdin=b"3f800001 ; 3f800000 ; 00000000\n"),
    case("mma", SHAPE, "1 value of A, 2 of B", ["mma", "--preset", "h100-bf16"],
         "fpemu: line 1: A has 1 values but B has 2: they must have the same length K",
         stdin=b"3f800000 ; 3f800000 3f800000 ; 00000000\n"),
    not_applicable("mma", "the operands are hex values on stdin"),

    case("sum", FORMAT, "`--format e99m2`", ["sum", "--format", "e99m2"],
         "fpemu: --format: format 'e99m2': exponent bits 99 out of range: valid 1..11"),
    case("sum", NAME, "`--method fastest`", ["sum", "--method", "fastest"],
         "fpemu: --method: unknown summation method 'fastest': expected one of recursive, pairwise, blocked, kahan, "
         "neumaier, promoted, stochastic, or all"),
    case("sum", NUMBER, "`--n ten`", ["sum", "--n", "ten"], "fpemu: --n: 'ten' is not an integer: valid 1..100000000"),
    case("sum", RANGE, "`--n 0`", ["sum", "--n", "0"], "fpemu: --n: '0' is out of range: valid 1..100000000"),
    case("sum", HYPER, "`--sigma -1`", ["sum", "--sigma", "-1"],
         "fpemu: --sigma: '-1' is out of range: valid > 0 and finite"),
    case("sum", HYPER, "`--lambda nan`", ["sum", "--lambda", "nan"],
         "fpemu: --lambda: 'nan' is not finite: valid > 0 and finite"),
    case("sum", CONFLICT, "`--acc bf16 --preset h100-bf16`", ["sum", "--acc", "bf16", "--preset", "h100-bf16"],
         "fpemu: --acc 'bf16' and --preset 'h100-bf16' both choose the accumulator: give one of them"),
    case("sum", CONFLICT, "`--input v.txt --n 3`", ["sum", "--input", "v.txt", "--n", "3"],
         "fpemu: --n shapes random data, but --input gives the data: leave --n out", files={"v.txt": b"1 2 3\n"}),
    not_applicable("sum", "its files are read by the .npy and text reader"),

    case("dot", FORMAT, "`--a-format e99m2`", ["dot", "--a-format", "e99m2"],
         "fpemu: --a-format: format 'e99m2': exponent bits 99 out of range: valid 1..11"),
    case("dot", NAME, "`--scaling tile64`", ["dot", "--scaling", "tile64"],
         "fpemu: --scaling: 'tile64' is not valid: expected none|tensor|tile128|block128|mx32|nvfp4"),
    case("dot", NUMBER, "`--k 1.5`", ["dot", "--k", "1.5"], "fpemu: --k: '1.5' is not an integer: valid 1..100000000"),
    case("dot", RANGE, "`--k 0`", ["dot", "--k", "0"], "fpemu: --k: '0' is out of range: valid 1..100000000"),
    case("dot", CONFLICT, "`--scaling tile128 --promote 64`",
         ["dot", "--scaling", "tile128", "--acc", "fp32", "--promote", "64"],
         "fpemu: --scaling tile128 groups K by 128 and folds each group into fp32, but --promote 64: they must agree "
         "(give --promote 128 or leave --promote out)"),
    case("dot", SHAPE, "3 values of a, 2 of b", ["dot", "--a-input", "a.txt", "--b-input", "b.txt"],
         "fpemu: --a-input 'a.txt' holds 3 values but --b-input 'b.txt' holds 2: a dot product needs vectors of one "
         "length", files={"a.txt": b"1 2 3\n", "b.txt": b"1 2\n"}),
    not_applicable("dot", "its files are read by the .npy and text reader"),

    case("gemm", FORMAT, "`--out-format e4m3:foo`", ["gemm", "--out-format", "e4m3:foo"],
         "fpemu: --out-format: format 'e4m3:foo': unknown option 'foo': valid bias=N, nosub, ieee, fn, "
         "fnuz, finite, unsigned, nozero"),
    case("gemm", NUMBER, "`--m x`", ["gemm", "--m", "x"], "fpemu: --m: 'x' is not an integer: valid 1..65536"),
    case("gemm", RANGE, "`--threads 2000`", ["gemm", "--threads", "2000"],
         "fpemu: --threads: '2000' is out of range: valid 0..1024"),
    case("gemm", HYPER, "`--alpha nan`", ["gemm", "--alpha", "nan"],
         "fpemu: --alpha: 'nan' is not finite: expected a finite number"),
    case("gemm", SHAPE, "`--m 4096 --k 8192`", ["gemm", "--k", "8192", "--m", "4096"],
         "fpemu: A would have --m x --k = 33554432 elements: at most 16777216 (2^24) per matrix"),
    case("gemm", SHAPE, "A 2 x 3, B 2 x 2", ["gemm", "--a-input", "a.txt", "--b-input", "b.txt"],
         "fpemu: --a-input 'a.txt' is 2 x 3 but --b-input 'b.txt' is 2 x 2: A's columns must equal B's rows",
         files={"a.txt": b"1 2 3\n4 5 6\n", "b.txt": b"1 0\n0 1\n"}),
    case("gemm", CONFLICT, "`--a-input` with `--beta 1`",
         ["gemm", "--a-input", "a.txt", "--b-input", "a.txt", "--beta", "1"],
         "fpemu: --beta needs C, which is drawn at random: leave --beta out with --a-input",
         files={"a.txt": b"1 2\n3 4\n"}),
    not_applicable("gemm", "its files are read by the .npy and text reader"),

    case("optim", NAME, "`--optimizer rmsprop`", ["optim", "--optimizer", "rmsprop"],
         "fpemu: --optimizer: 'rmsprop' is not valid: expected sgd|adam|adamw|lion"),
    case("optim", FORMAT, "`--policy e99m2`", ["optim", "--optimizer", "adam", "--policy", "e99m2"],
         "fpemu: --policy: unknown policy 'e99m2' (valid: fp32, mixed, mixed-fp16, or FMT[-kahan|-zamirai|-sr[K]]"
         "[-ops] with FMT such as bf16 or fp16; format 'e99m2': exponent bits 99 out of range: valid 1..11)"),
    case("optim", NUMBER, "`--steps 1e3`", ["optim", "--optimizer", "sgd", "--steps", "1e3"],
         "fpemu: --steps: '1e3' is not an integer: valid 1..10000000"),
    case("optim", HYPER, "`--lr nan`", ["optim", "--optimizer", "adam", "--lr", "nan"],
         "fpemu: --lr: 'nan' is not finite: valid > 0 and finite"),
    case("optim", HYPER, "`--lr -1`", ["optim", "--optimizer", "adam", "--lr", "-1"],
         "fpemu: --lr: '-1' is out of range: valid > 0 and finite"),
    case("optim", RANGE, "`--beta1 1.5`", ["optim", "--optimizer", "adam", "--beta1", "1.5"],
         "fpemu: --beta1: '1.5' is out of range: valid >= 0 and < 1"),
    case("optim", CONFLICT, "`--momentum` with adam", ["optim", "--optimizer", "adam", "--momentum", "0.9"],
         "fpemu: --momentum '0.9' does not apply to --optimizer adam"),
    not_applicable("optim", "the problem is generated"),

    case("train", NAME, "`--data no-such-data`", ["train", "--data", "no-such-data"],
         "fpemu: --data 'no-such-data': not fashion-mnist, heart_scale, quadratic or an existing LIBSVM file"),
    case("train", FORMAT, "`--data quadratic --format e99m2`", ["train", "--data", "quadratic", "--format", "e99m2"],
         "fpemu: --format: format 'e99m2': exponent bits 99 out of range: valid 1..11"),
    case("train", NUMBER, "`--epochs x`", ["train", "--data", "d.svm", "--epochs", "x"],
         "fpemu: --epochs: 'x' is not an integer: valid 1..100000", files={"d.svm": GOOD_SVM}),
    case("train", RANGE, "`--test-fraction 1`", TRAIN + ["--data", "d.svm", "--test-fraction", "1"],
         "fpemu: --test-fraction: '1' is out of range: valid > 0 and < 1", files={"d.svm": GOOD_SVM}),
    case("train", HYPER, "`--lr nan`", TRAIN + ["--data", "d.svm", "--lr", "nan"],
         "fpemu: --lr: 'nan' is not finite: valid > 0 and finite", files={"d.svm": GOOD_SVM}),
    case("train", HYPER, "`--weight-decay -1`", TRAIN + ["--data", "d.svm", "--weight-decay", "-1"],
         "fpemu: --weight-decay: '-1' is out of range: valid >= 0 and finite", files={"d.svm": GOOD_SVM}),
    case("train", LABELS, "label `2` on line 2, `--model logreg`", TRAIN + ["--data", "d.svm"],
         "fpemu: d.svm: label 2 on line 2 is not valid for the logreg model (allowed: -1, 1)",
         files={"d.svm": b"1 1:1\n2 1:0.5\n-1 2:1\n"}),
    case("train", LABELS, "label `3e9`, `--model mlp`", TRAIN + ["--data", "d.svm", "--model", "mlp"],
         "fpemu: d.svm: label 3e+09 on line 3 is not valid for the mlp model (allowed: class indices 0..65535; "
         "a LIBSVM label -1 is class 0)", files={"d.svm": b"1 1:1\n-1 1:0.5\n3000000000 2:1\n"}),
    case("train", SHAPE, "every row only a label", TRAIN + ["--data", "d.svm"],
         "fpemu: d.svm: no features (every row has only a label)", files={"d.svm": b"1\n-1\n1\n"}),
    not_applicable("train", "its files are read by the LIBSVM and IDX readers"),

    case("casgd", NAME, "`--loss hinge`", ["casgd", "--loss", "hinge"],
         "fpemu: --loss: 'hinge' is not valid: expected logistic|linear|poisson"),
    case("casgd", FORMAT, "`--slot u_G=e99m2`", ["casgd", "--slot", "u_G=e99m2"],
         "fpemu: --slot: u_G: format 'e99m2': exponent bits 99 out of range: valid 1..11"),
    case("casgd", NUMBER, "`--b x`", ["casgd", "--b", "x"], "fpemu: --b: 'x' is not an integer: valid 1..65536"),
    case("casgd", NUMBER, "`--data synth:10`", ["casgd", "--data", "synth:10"],
         "fpemu: --data synth:10: expected synth:M,N with M rows and N features (positive integers)"),
    case("casgd", RANGE, "`--b 0`", ["casgd", "--b", "0"], "fpemu: --b: '0' is out of range: valid 1..65536"),
    case("casgd", HYPER, "`--eta nan`", ["casgd", "--eta", "nan"],
         "fpemu: --eta: 'nan' is not finite: valid > 0 and finite"),
    case("casgd", HYPER, "`--eta -1`", ["casgd", "--eta", "-1"],
         "fpemu: --eta: '-1' is out of range: valid > 0 and finite"),
    case("casgd", SHAPE, "`--P 11` ranks for 10 columns", ["casgd", "--data", "synth:10,10", "--P", "11"],
         "fpemu: --P 11 is out of range (1..n = 10: every rank needs a column)"),
    case("casgd", CONFLICT, "`--weights` of two recipes",
         ["casgd", "--data", "synth:64,4", "--recipe", "A,C", "--weights", "w.txt"],
         "fpemu: --weights writes one run: give one --recipe and one --seed"),
    not_applicable("casgd", "its files are read by the LIBSVM and CSV readers"),

    case("allreduce", NAME, "`--algorithm butterfly`", ["allreduce", "--algorithm", "butterfly"],
         "fpemu: --algorithm: 'butterfly' is not valid: expected ring|rd|tree|seq"),
    case("allreduce", FORMAT, "`--datatype e99m2`", ["allreduce", "--datatype", "e99m2"],
         "fpemu: --datatype: format 'e99m2': exponent bits 99 out of range: valid 1..11 (or fp64)"),
    case("allreduce", NUMBER, "`--P 4,x`", ["allreduce", "--P", "4,x"],
         "fpemu: --P: 'x' is not an integer: valid 1..4096"),
    case("allreduce", RANGE, "`--trials 0`", ["allreduce", "--trials", "0"],
         "fpemu: --trials: '0' is out of range: valid 1..1000000"),
    case("allreduce", SHAPE, "`--P 4096 --length 65536`", ["allreduce", "--P", "4096", "--length", "65536"],
         "fpemu: --P 4096 with --length 65536 holds 268435456 elements: valid P x length <= 134217728"),
    not_applicable("allreduce", "the rank vectors are random"),

    case("gpu-check", GPU, "no usable GPU (`CUDA_VISIBLE_DEVICES=` hides one)", ["gpu-check", "--quick"],
         (GPU_SKIP + "no CUDA device: no NVIDIA GPU with a working driver was found (cudaErrorInsufficientDriver)",
          GPU_SKIP + "no CUDA device: no NVIDIA GPU with a working driver was found (cudaErrorNoDevice)",
          GPU_SKIP + "fpemu was built without CUDA (nvcc was not found when meson configured the build; put nvcc on "
          "PATH and reconfigure with -Dcuda=enabled)"),
         status=77, env={"CUDA_VISIBLE_DEVICES": ""}, stream="stdout"),
    case("gpu-check", NAME, "`--only` without TEXT", ["gpu-check", "--only"],
         "fpemu: --only: 1 required TEXT missing (see fpemu gpu-check --help)"),
    case("gpu-check", MISSING, "`--vectors nosuch`", ["gpu-check", "--vectors", "nosuch"],
         "fpemu: --vectors 'nosuch' is not a folder: expected the folder of the published tensor-core vectors"),
    not_applicable("gpu-check", "its options are a filter and a folder"),

    case("demo", NAME, "`--x`", ["demo", "--x"],
         "fpemu: The following argument was not expected: --x (see fpemu demo --help)"),
    not_applicable("demo", "it takes no values"),

    # LIBSVM, through casgd --data FILE and train --data FILE.
    case("LIBSVM reader", MISSING, "`--data missing.svm`", ["casgd", "--data", "missing.svm"],
         "fpemu: missing.svm: cannot open: no such file"),
    case("LIBSVM reader", MISSING, "a directory", ["casgd", "--data", "adir"],
         "fpemu: adir: cannot read: is a directory", files={"adir": None}),
    case("LIBSVM reader", EMPTY, "0 bytes", ["casgd", "--data", "d.svm"], "fpemu: d.svm: no data rows",
         files={"d.svm": b""}),
    case("LIBSVM reader", EMPTY, "a comment and blank lines", TRAIN + ["--data", "d.svm"],
         "fpemu: d.svm: no data rows", files={"d.svm": b"# nothing yet\n\n  \n"}),
    case("LIBSVM reader", NUMBER, "line 3: `1 1:0.5 2-0.3`", ["casgd", "--data", "d.svm"],
         "fpemu: d.svm:3: malformed token '2-0.3', expected index:value",
         files={"d.svm": b"1 1:1\n-1 2:1\n1 1:0.5 2-0.3\n"}),
    case("LIBSVM reader", NUMBER, "line 2: `-1 1:abc`", TRAIN + ["--data", "d.svm"],
         "fpemu: d.svm:2: value in '1:abc' is not a number", files={"d.svm": b"1 1:1\n-1 1:abc\n"}),
    case("LIBSVM reader", NUMBER, "line 1: `1 1:1e39`", ["casgd", "--data", "d.svm"],
         "fpemu: d.svm:1: value in '1:1e39' is not a finite binary32 value", files={"d.svm": b"1 1:1e39\n"}),
    case("LIBSVM reader", NUMBER, "control bytes as the label", ["casgd", "--data", "d.svm"],
         "fpemu: d.svm:1: label '\\x00\\x01\\x1b' is not a number", files={"d.svm": b"\x00\x01\x1b 1:1\n"}),
    case("LIBSVM reader", NUMBER, "a 100000-byte token", ["casgd", "--data", "d.svm"],
         "fpemu: d.svm:1: malformed token '" + "x" * 40 + "... (100000 bytes)', expected index:value",
         files={"d.svm": b"1 " + b"x" * 100000 + b"\n"}),
    case("LIBSVM reader", RANGE, "line 1: index `0`", ["casgd", "--data", "d.svm"],
         "fpemu: d.svm:1: index 0 in '0:0.5' is not >= 1 (LIBSVM indices are 1-based)",
         files={"d.svm": b"1 0:0.5\n"}),
    case("LIBSVM reader", RANGE, "index `2000000000`", ["casgd", "--data", "d.svm"],
         "fpemu: d.svm: 1 rows x 2000000000 columns (largest index on line 1) is too large for a dense matrix",
         files={"d.svm": b"1 2000000000:1\n"}),
    case("LIBSVM reader", SHAPE, "indices `2:` then `1:`", ["casgd", "--data", "d.svm"],
         "fpemu: d.svm:1: index 1 in '1:0.25' does not increase on the previous index 2 (indices must be strictly "
         "increasing)", files={"d.svm": b"1 2:0.5 1:0.25\n"}),
    case("LIBSVM reader", SHAPE, "no features", ["casgd", "--data", "d.svm"],
         "fpemu: d.svm: no features (every row has only a label)", files={"d.svm": b"1\n-1\n"}),
    case("LIBSVM reader", LABELS, "label `2`, logistic loss", ["casgd", "--data", "d.svm"],
         "fpemu: d.svm:3: label 2 is not valid for logistic regression (labels must be -1 or +1)",
         files={"d.svm": b"1 1:0.5\n-1 2:0.25\n2 1:1\n"}),
    case("LIBSVM reader", LABELS, "label `-1`, Poisson loss", ["casgd", "--data", "d.svm", "--loss", "poisson"],
         "fpemu: d.svm:2: label -1 is not valid for poisson regression (labels must be a non-negative integer)",
         files={"d.svm": b"1 1:0.5\n-1 2:0.25\n"}),
    not_applicable("LIBSVM reader", "a cut line is a shorter valid file or a malformed line"),

    # CSV, through casgd --data FILE.csv (label in the first column).
    case("CSV reader", MISSING, "`--data missing.csv`", ["casgd", "--data", "missing.csv"],
         "fpemu: missing.csv: cannot open: no such file"),
    case("CSV reader", EMPTY, "0 bytes", ["casgd", "--data", "d.csv"], "fpemu: d.csv: no data rows",
         files={"d.csv": b""}),
    case("CSV reader", EMPTY, "a header only", ["casgd", "--data", "d.csv"],
         "fpemu: d.csv: no data rows after the header", files={"d.csv": b"y,a,b\n"}),
    case("CSV reader", NUMBER, "line 2: `-1,0.1,x`", ["casgd", "--data", "d.csv"],
         "fpemu: d.csv:2: field 3 'x' is not a number", files={"d.csv": b"1,0.5,0.25\n-1,0.1,x\n"}),
    case("CSV reader", NUMBER, "line 2: an empty field", ["casgd", "--data", "d.csv"],
         "fpemu: d.csv:2: field 2 '' is empty", files={"d.csv": b"1,0.5,0.25\n-1,,0.5\n"}),
    case("CSV reader", NUMBER, "line 1: `1e39`", ["casgd", "--data", "d.csv"],
         "fpemu: d.csv:1: field 2 '1e39' is not a finite binary32 value", files={"d.csv": b"1,1e39\n"}),
    case("CSV reader", SHAPE, "line 3 with 2 of 3 fields", ["casgd", "--data", "d.csv"],
         "fpemu: d.csv:3: found 2 fields, expected 3 (as in the header on line 1)",
         files={"d.csv": b"y,a,b\n1,0.5,0.25\n-1,0.1\n"}),
    case("CSV reader", SHAPE, "labels only", ["casgd", "--data", "d.csv"],
         "fpemu: d.csv: no features (every row has only a label)", files={"d.csv": b"1\n-1\n"}),
    case("CSV reader", LABELS, "label `2`, logistic loss", ["casgd", "--data", "d.csv"],
         "fpemu: d.csv:2: label 2 is not valid for logistic regression (labels must be -1 or +1)",
         files={"d.csv": b"1,0.5,0.25\n2,0.1,0.3\n"}),
    not_applicable("CSV reader", "a cut line is a row with fewer fields (shape mismatch)"),

    # IDX, through train --data fashion-mnist with FPEMU_FASHION_MNIST_DIR=mnist.
    case("IDX reader", MISSING, "no files in `mnist/`", TRAIN_MNIST,
         "fpemu: Fashion-MNIST file mnist/train-images-idx3-ubyte.gz not found; Debian's dataset-fashion-mnist "
         "package provides it (in /usr/share/datasets/fashion-mnist), and FPEMU_FASHION_MNIST_DIR selects another "
         "directory", files={"mnist": None}, env=MNIST_ENV),
    case("IDX reader", EMPTY, "0-byte images file", TRAIN_MNIST,
         "fpemu: mnist/train-images-idx3-ubyte.gz: truncated: an IDX header needs 16 bytes, found 0",
         files=mnist(images=b"", compress=False), env=MNIST_ENV),
    case("IDX reader", TRUNCATED, "header cut at 10 bytes", TRAIN_MNIST,
         "fpemu: mnist/train-images-idx3-ubyte.gz: truncated: the IDX header needs 16 bytes, found 10",
         files=mnist(images=GOOD_IMAGES[:10]), env=MNIST_ENV),
    case("IDX reader", TRUNCATED, "header promises 4 images, 3 present (gzip)", TRAIN_MNIST,
         "fpemu: mnist/train-images-idx3-ubyte.gz: truncated: 4 x 2 x 2 images need 16 bytes of data, found 12",
         files=mnist(images=idx_images(4, 2, 2, present=3)), env=MNIST_ENV),
    case("IDX reader", TRUNCATED, "labels promise 5, 4 present (plain)", TRAIN_MNIST,
         "fpemu: mnist/train-labels-idx1-ubyte.gz: truncated: 5 labels need 5 bytes of data, found 4",
         files=mnist(labels=idx_labels([0, 1, 2, 3], promised=5), compress=False), env=MNIST_ENV),
    case("IDX reader", TRUNCATED, "gzip stream cut short", TRAIN_MNIST,
         "fpemu: mnist/train-images-idx3-ubyte.gz: cannot read: unexpected end of file",
         files=dict(mnist(), **{"mnist/train-images-idx3-ubyte.gz": GZIP_IMAGES[:-10]}), env=MNIST_ENV),
    case("IDX reader", FORMAT, "a labels file as images", TRAIN_MNIST,
         "fpemu: mnist/train-images-idx3-ubyte.gz: bad magic 0x00000801, expected 0x00000803 (IDX images: unsigned "
         "bytes, 3 dimensions); this looks like a labels file", files=mnist(images=GOOD_LABELS), env=MNIST_ENV),
    case("IDX reader", SHAPE, "4 images, 3 labels", TRAIN_MNIST,
         "fpemu: mnist/train-images-idx3-ubyte.gz has 4 images but mnist/train-labels-idx1-ubyte.gz has 3 labels",
         files=mnist(labels=idx_labels([0, 1, 2])), env=MNIST_ENV),
    case("IDX reader", SHAPE, "2 bytes after the data", TRAIN_MNIST,
         "fpemu: mnist/train-images-idx3-ubyte.gz: 2 unexpected bytes after the data (4 x 2 x 2 images need 16 "
         "bytes, found 18)", files=mnist(images=GOOD_IMAGES + b"\0\0"), env=MNIST_ENV),
    case("IDX reader", SHAPE, "images of 0 x 0 pixels", TRAIN_MNIST,
         "fpemu: " + MNIST_SOURCE + ": no features (the images have no pixels)",
         files=mnist(images=idx_images(4, 0, 0)), env=MNIST_ENV),
    case("IDX reader", LABELS, "label 200", TRAIN_MNIST,
         "fpemu: " + MNIST_SOURCE + ": label 200 on row 2 (0-based) is not valid for Fashion-MNIST (allowed: 0, 1, "
         "2, 3, 4, 5, 6, 7, 8, 9)", files=mnist(labels=idx_labels([0, 1, 200, 3])), env=MNIST_ENV),
    case("IDX reader", LABELS, "classes 0..9, `--model logreg`", TRAIN_MNIST + ["--model", "logreg"],
         "fpemu: " + MNIST_SOURCE + ": label 0 on row 0 (0-based) is not valid for the logreg model (allowed: -1, 1)",
         files=mnist(), env=MNIST_ENV),

    not_applicable("IDX reader", "bytes, not text"),

    # The user's data of sum, dot and gemm (src/cli/data_file.cpp): NumPy .npy or text.
    case("data reader", MISSING, "`--input missing.npy`", ["sum", "--input", "missing.npy"],
         "fpemu: --input 'missing.npy': No such file or directory"),
    case("data reader", EMPTY, "0-byte text file", ["sum", "--input", "v.txt"],
         "fpemu: --input 'v.txt': no numbers: expected a vector", files={"v.txt": b""}),
    case("data reader", FORMAT, "`.npy` without the magic", ["sum", "--input", "v.npy"],
         "fpemu: --input 'v.npy': not a NumPy .npy file (it does not start with the magic \\x93NUMPY): expected a "
         "file written by numpy.save, or plain text under another name", files={"v.npy": b"1 2 3\n"}),
    case("data reader", FORMAT, "descr `<i4`", ["sum", "--input", "v.npy"],
         "fpemu: --input 'v.npy': descr '<i4' is not supported: expected '<f4' or '<f8' (little-endian float32 or "
         "float64)", files={"v.npy": npy([1, 2], "<i4")}),
    case("data reader", FORMAT, "Fortran order", ["gemm", "--a-input", "m.npy", "--b-input", "m.npy"],
         "fpemu: --a-input 'm.npy': fortran_order True is not supported: expected C order (fortran_order False; "
         "numpy.ascontiguousarray)", files={"m.npy": npy([1.0, 2.0, 3.0, 4.0], shape=(2, 2), fortran=True)}),
    case("data reader", SHAPE, "a 2-D array as a vector", ["sum", "--input", "m.npy"],
         "fpemu: --input 'm.npy': shape (2, 2) is not supported: expected a 1-D array, shape (n,)",
         files={"m.npy": npy([1.0, 2.0, 3.0, 4.0], shape=(2, 2))}),
    case("data reader", SHAPE, "text rows of 3 and 2 numbers", ["gemm", "--a-input", "a.txt", "--b-input", "a.txt"],
         "fpemu: --a-input 'a.txt': line 2 has 2 numbers, line 1 has 3: a matrix needs one row per line, every row "
         "of the same length", files={"a.txt": b"1 2 3\n4 5\n"}),
    case("data reader", TRUNCATED, "`.npy` data cut by 4 bytes", ["sum", "--input", "v.npy"],
         "fpemu: --input 'v.npy': shape (3,) of <f8 needs 24 bytes of data, the file has 20",
         files={"v.npy": npy([1.0, 2.0, 3.0])[:-4]}),
    case("data reader", NUMBER, "line 2: `x4`", ["sum", "--input", "v.txt"],
         "fpemu: --input 'v.txt': line 2: 'x4' is not a number: expected decimal or hex-float values separated by "
         "blanks", files={"v.txt": b"1 2\n3 x4\n"}),
    case("data reader", NUMBER, "a NaN in `.npy`", ["sum", "--input", "v.npy"],
         "fpemu: --input 'v.npy': element 1 (row-major, 0-based) is nan: expected finite values",
         files={"v.npy": npy([1.0, float("nan")])}),
    not_applicable("data reader", "plain values: no parameters, labels or devices"),

    # Output files: FILE.tmp, renamed to FILE when the run is complete (src/cli/common.cpp).
    case("train --csv", UNWRITABLE, "`--csv nodir/c.csv`", TRAIN + ["--data", "d.svm", "--csv", "nodir/c.csv"],
         "fpemu: --csv 'nodir/c.csv': cannot write 'nodir/c.csv.tmp': No such file or directory",
         files={"d.svm": GOOD_SVM}),
    case("train --csv", KEPT, "`c.csv` exists, the data file is empty",
         TRAIN + ["--data", "d.svm", "--csv", "c.csv"], "fpemu: d.svm: no data rows",
         files={"d.svm": b"", "c.csv": SENTINEL}),
    case("casgd --csv", UNWRITABLE, "`--csv nodir/t.csv`", CASGD_SMALL + ["--csv", "nodir/t.csv"],
         "fpemu: --csv 'nodir/t.csv': cannot write 'nodir/t.csv.tmp': No such file or directory"),
    case("casgd --csv", UNWRITABLE, "`--csv` names a directory", CASGD_SMALL + ["--csv", "out"],
         "fpemu: --csv: 'out' is a directory: expected a file name", files={"out": None}),
    case("casgd --csv", KEPT, "`t.csv` exists, `--eta 0`", ["casgd", "--eta", "0", "--csv", "t.csv"],
         "fpemu: --eta: '0' is out of range: valid > 0 and finite", files={"t.csv": SENTINEL}),
    case("casgd --weights", UNWRITABLE, "`--weights nodir/w.txt`",
         CASGD_SMALL + ["--weights", "nodir/w.txt"],
         "fpemu: --weights 'nodir/w.txt': cannot write 'nodir/w.txt.tmp': No such file or directory"),
    case("casgd --weights", KEPT, "`w.txt` exists, label `2`", ["casgd", "--data", "d.svm", "--weights", "w.txt"],
         "fpemu: d.svm:1: label 2 is not valid for logistic regression (labels must be -1 or +1)",
         files={"d.svm": b"2 1:1\n", "w.txt": SENTINEL}),
    case("allreduce --csv", UNWRITABLE, "`--csv nodir/cp.csv`", ["allreduce", "--P", "2", "--csv", "nodir/cp.csv"],
         "fpemu: --csv 'nodir/cp.csv': cannot write 'nodir/cp.csv.tmp': No such file or directory"),
    case("allreduce --csv", KEPT, "`cp.csv` exists, `--length 0`", ["allreduce", "--length", "0", "--csv", "cp.csv"],
         "fpemu: --length: '0' is out of range: valid 1..16777216", files={"cp.csv": SENTINEL}),
    case("allreduce --csv", KILLED, "SIGKILL while `cp.csv.tmp` is being written",
         ["allreduce", "--P", "256", "--length", "65536", "--trials", "1000000", "--csv", "cp.csv"],
         None, status=-signal.SIGKILL, files={"cp.csv": SENTINEL}, killed="cp.csv"),
]

# Running the cases.





def snapshot(root):
    """{relative path: bytes, or None for a directory} of everything under root."""
    found = {}
    for folder, dirs, files in os.walk(root):
        for d in dirs:
            found[os.path.relpath(os.path.join(folder, d), root)] = None
        for f in files:
            with open(os.path.join(folder, f), "rb") as fh:
                found[os.path.relpath(os.path.join(folder, f), root)] = fh.read()
    return found


def start(c, cwd, stdin):
    env = dict(os.environ, **c.env)
    return subprocess.Popen([EXE, *c.argv], cwd=cwd, env=env, stdin=stdin, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)


def run_killed(c, cwd):
    """Starts the run, kills it once FILE.tmp exists, and returns (status, stdout, stderr)."""
    p = start(c, cwd, subprocess.DEVNULL)
    tmp = os.path.join(cwd, c.killed + ".tmp")
    deadline = time.monotonic() + 30
    while not os.path.exists(tmp) and p.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    check(os.path.exists(tmp), "%s: %s appears while the run is under way" % (c.surface, c.killed + ".tmp"))
    time.sleep(0.2)
    p.kill()
    out, err = p.communicate(timeout=30)
    return p.returncode, out, err


def run_case(c):
    label = "%s, %s (%s)" % (c.surface, c.kind, " ".join(c.argv))
    with tempfile.TemporaryDirectory() as cwd:
        for name, content in sorted(c.files.items()):
            path = os.path.join(cwd, name)
            if content is None:
                os.makedirs(path, exist_ok=True)
            else:
                with open(path, "wb") as f:
                    f.write(content)
        before = snapshot(cwd)
        if c.killed:
            status, out, err = run_killed(c, cwd)
        else:
            p = start(c, cwd, subprocess.PIPE)
            try:
                out, err = p.communicate(c.stdin or b"", timeout=120)
            except subprocess.TimeoutExpired:  # a hang is a failure of the case (its status is the kill's)
                p.kill()
                out, err = p.communicate()
            status = p.returncode
        after = snapshot(cwd)
    out, err = out.decode("utf-8", "backslashreplace"), err.decode("utf-8", "backslashreplace")
    check(status == c.status, "%s: exit status %d, got %d (stderr %r)" % (label, c.status, status, err[:300]))
    if c.expect is not None:
        accepted = c.expect if isinstance(c.expect, tuple) else (c.expect,)
        message, silent = (out, err) if c.stream == "stdout" else (err, out)
        check(message in (line + "\n" for line in accepted),
              "%s: exactly the line %r on %s, got %r" % (label, accepted[0], c.stream, message))
        check(silent == "", "%s: nothing on the other stream, got %r" % (label, silent[:300]))
    if c.killed:  # a killed run cannot remove its FILE.tmp; FILE itself must be untouched
        after.pop(c.killed + ".tmp", None)
    check(after == before, "%s: the files are left as they were: %s" % (label, describe_change(before, after)))


def describe_change(before, after):
    changed = sorted(k for k in set(before) | set(after) if before.get(k, b"?") != after.get(k, b"?"))
    return ", ".join(changed) or "none"


# The table of docs/bad-input.md.


def code(text):
    """A markdown code span that survives a table cell."""
    return "`" + text.replace("|", "\\|") + "`"


def markdown():
    lines = ["Each row is a case of `tests/cli/test_bad_input.py`, which runs it in a directory holding only its "
             "input files and checks the exact line (stderr, empty stdout, exit 2 unless noted) and that no file "
             "there was created or changed; the test also fails when this table differs from its `--markdown` "
             "output.",
             "",
             "| surface | bad input | example | exit | what fpemu prints |",
             "|---|---|---|---|---|"]
    for c in CASES:
        if c.argv is None:
            covered = {d.kind for d in CASES if d.surface == c.surface}
            absent = [name for kinds, name in ALL_KINDS if not covered.intersection(kinds)]
            listed = ", ".join(absent[:-1]) + " or " + absent[-1] if len(absent) > 1 else absent[0]
            lines.append("| %s | n/a | no %s input: %s | | |" % (c.surface, listed, c.example))
            continue
        if c.killed:
            status, said = "SIGKILL", "nothing; `%s` keeps its content (`%s.tmp` stays behind)" % (c.killed, c.killed)
        else:
            status = str(c.status)
            accepted = c.expect if isinstance(c.expect, tuple) else (c.expect,)
            said = " or ".join(code(line) for line in accepted)
            if c.stream == "stdout":
                said += " (on stdout)"
        lines.append("| %s | %s | %s | %s | %s |" % (c.surface, c.kind, c.example, status, said))
    return "\n".join(lines) + "\n"


def page_block():
    with open(PAGE, encoding="utf-8") as f:
        text = f.read()
    if BEGIN + "\n" not in text or END not in text:
        return None
    return text.split(BEGIN + "\n", 1)[1].split(END, 1)[0]


def every_subcommand_audited():
    """Each subcommand that `fpemu --help` lists has its cases and an n/a row."""
    help_text = subprocess.run([EXE, "--help"], capture_output=True, text=True, timeout=60).stdout
    section = help_text.split("Subcommands:", 1)[-1].split("\n\n", 1)[0]
    names = [line.split()[0] for line in section.splitlines() if line.strip()]
    check(len(names) >= 14, "fpemu --help lists the subcommands: %r" % names)
    for name in names:
        check(any(c.surface == name and c.kind == NA for c in CASES) and
              any(c.surface == name and c.argv is not None for c in CASES),
              "subcommand %s has audit cases and an n/a row" % name)


def main():
    global EXE
    args = sys.argv[1:]
    if "--markdown" in args:  # the table needs no program: it is the cases' own text
        sys.stdout.write(markdown())
        return 0
    if len(args) != 1:
        print("usage: test_bad_input.py PATH-TO-FPEMU, or test_bad_input.py --markdown", file=sys.stderr)
        return 2
    EXE = os.path.abspath(args[0])
    runnable = [c for c in CASES if c.argv is not None]
    # The units counted in the summary: every case, then the checks of the table itself.
    units = [(lambda c=c: run_case(c)) for c in runnable]
    units.append(lambda: check(len({(c.surface, c.example) for c in CASES}) == len(CASES),
                               "no two rows of a surface share an example"))
    units.append(every_subcommand_audited)
    units.append(lambda: check(page_block() == markdown(),
                               "docs/bad-input.md's block between %s and %s equals `test_bad_input.py FPEMU --markdown`" %
                               (BEGIN, END)))
    failed = 0
    for unit in units:
        before = len(FAILURES)
        try:
            unit()
        except Exception as e:  # a crash in one case is a failure of that case, not of the run
            check(False, "raised %r" % e)
        failed += len(FAILURES) != before
    print("cli_bad_input: %d cases and %d n/a rows, %d checks, %d failed" %
          (len(runnable), len(CASES) - len(runnable), CHECKS[0], len(FAILURES)))
    # The summary line that scripts/test_summary.py adds up (the cases and the two table checks).
    print("cli_bad_input: %d passed, %d failed" % (len(units) - failed, failed))
    return 1 if FAILURES or CHECKS[0] == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
