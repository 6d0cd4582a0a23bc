#!/usr/bin/env python3
"""The command line's shared contract, for every subcommand of fpemu.

Usage: python3 tests/cli/test_options.py PATH-TO-FPEMU

- A bad argument writes nothing at all on stdout: every subcommand, run as a valid invocation
  plus one unknown option, exits 2 with one line "fpemu: ..." on stderr and an empty stdout.
- --help shows the typed options with their ranges and defaults.
- The progress line appears only on a terminal: under a pipe stderr stays empty; under a
  pseudo-terminal (pty) a run long enough shows a percentage and an ETA.
- --csv FILE / --json FILE ('-' for stdout) write the same table.
- sum, dot and gemm read the user's data from NumPy .npy files and plain text, and refuse bad
  files with one line naming the file and what is wrong.

Python 3 standard library and numpy (Debian's python3-numpy): .npy files are written both by hand,
following the format's documentation, and by numpy.save.
Prints one line per failed check and "cli_options: N passed, N failed" (test functions).
"""

import csv
import io
import json
import os
import pty
import select
import struct
import subprocess
import sys
import tempfile
import time
from checks import CHECKS, FAILURES, check

EXE = None
TESTS = []


def test(fn):
    TESTS.append(fn)
    return fn


def run(*args, stdin=None, cwd=None):
    p = subprocess.run([EXE, *args], input=stdin, capture_output=True, text=True, timeout=300, cwd=cwd)
    return p.returncode, p.stdout, p.stderr


# One cheap valid invocation per subcommand (and its stdin); gpu-check exits 77 without a GPU.
VALID = {
    "formats": (["formats"], None),
    "round": (["round", "--format", "bf16", "0.1"], None),
    "decode": (["decode", "--format", "e4m3fn", "7e"], None),
    "op": (["op", "add", "--format", "bf16"], "3f80 3f80\n"),
    "mma": (["mma", "--preset", "h100-bf16"], "3f800000 ; 3f800000 ; 00000000\n"),
    "sum": (["sum", "--n", "16"], None),
    "dot": (["dot", "--k", "16"], None),
    "gemm": (["gemm", "--m", "4", "--n", "4", "--k", "8"], None),
    "optim": (["optim", "--optimizer", "sgd", "--steps", "2"], None),
    "train": (["train", "--data", "quadratic", "--lr", "0.5"], None),
    "casgd": (["casgd", "--data", "synth:64,4", "--b", "4", "--s", "2", "--outer", "1"], None),
    "allreduce": (["allreduce", "--P", "2", "--length", "8", "--trials", "1"], None),
    "gpu-check": (["gpu-check", "--quick", "--only", "no-such-check"], None),
    "demo": (["demo"], None),
}


def subcommands():
    out = subprocess.run([EXE, "--help"], capture_output=True, text=True, timeout=60).stdout
    section = out.split("Subcommands:", 1)[-1].split("\n\n", 1)[0]
    return [line.split()[0] for line in section.splitlines() if line.strip()]


@test
def every_subcommand_has_a_valid_invocation_here():
    names = subcommands()
    check(len(names) >= 14, "fpemu --help lists the subcommands: %r" % names)
    for name in names:
        check(name in VALID, "subcommand %s has a valid invocation in VALID" % name)


@test
def unknown_option_writes_nothing_on_stdout():
    for name, (args, stdin) in VALID.items():
        rc, out, err = run(*args, stdin=stdin)
        check(rc in (0, 77) if name == "gpu-check" else rc == 0,
              "fpemu %s runs (exit %d, stderr %r)" % (" ".join(args), rc, err[-300:]))
        # The unknown option last (after the values of round), and right after the subcommand.
        for bad in (args + ["--jsn"], [args[0], "--jsn"] + args[1:]):
            rc, out, err = run(*bad, stdin=stdin)
            lines = err.splitlines()
            check(rc == 2, "fpemu %s: exit 2, got %d" % (" ".join(bad), rc))
            check(out == "", "fpemu %s: nothing on stdout, got %r" % (" ".join(bad), out[:200]))
            check(len(lines) == 1 and lines[0].startswith("fpemu: ") and "--jsn" in lines[0],
                  "fpemu %s: one line on stderr naming --jsn, got %r" % (" ".join(bad), err[:300]))


@test
def round_with_a_mistyped_option_prints_no_result():
    rc, out, err = run("round", "--format", "bf16", "0.1", "--jsn")
    check(rc == 2 and out == "" and err.startswith("fpemu: ") and "--jsn" in err,
          "round --format bf16 0.1 --jsn: exit 2, empty stdout: rc %d out %r err %r" % (rc, out, err))


@test
def bad_values_fail_while_parsing_with_the_range():
    cases = [  # (args, stdin, what the one line must name)
        (["train", "--epochs", "0"], None, "--epochs: '0' is out of range: valid 1..100000"),
        (["train", "--policy", "fp32,bf17"], None, "bf17"),
        (["casgd", "--recipe", "A,Z"], None, "'Z'"),
        (["casgd", "--seed", "1,x"], None, "'x' is not an integer"),
        (["allreduce", "--P", "4,5000"], None, "'5000' is out of range: valid 1..4096"),
        (["optim", "--optimizer", "sgd", "--steps", "0"], None, "valid 1..10000000"),
        (["round", "--format", "bf16", "--seed", "0x", "1"], None, "--seed"),
        (["round", "--format", "bf16", "--seed", "010x", "1"], None, "'010x'"),
        (["formats", "--csv", "-", "--json", "-"], None, "standard output"),
    ]
    for args, stdin, needle in cases:
        rc, out, err = run(*args, stdin=stdin)
        lines = err.splitlines()
        check(rc == 2 and out == "" and len(lines) == 1 and lines[0].startswith("fpemu: ") and needle in lines[0],
              "fpemu %s: exit 2, nothing on stdout, one line naming %r; got rc %d, out %r, err %r" %
              (" ".join(args), needle, rc, out[:100], err))


@test
def help_shows_types_ranges_and_defaults():
    expected = {  # subcommand: texts its --help must hold
        "round": ["--format", "--rounding", "=rne", "--sr-bits", "in 1..32", "=16", "--seed"],
        "train": ["--epochs", "in 1..100000", "3 for fashion-mnist, else 50", "--momentum", "=0", "--csv", "--json"],
        "casgd": ["--b", "in 1..65536", "=32", "--eta", "=0.5", "--outer", "=200", "--csv", "--json"],
        "allreduce": ["--length", "=4096", "--trials", "=4", "--csv", "--json"],
        "optim": ["--steps", "in 1..10000000", "=100", "--csv", "--json"],
        "formats": ["--csv", "--json"],
    }
    for name, needles in expected.items():
        rc, out, _ = run(name, "--help")
        for needle in needles:
            check(rc == 0 and needle in out, "fpemu %s --help shows %r" % (name, needle))
        check("(default" not in out, "fpemu %s --help writes no default in prose" % name)


@test
def csv_and_json_write_the_same_table():
    with tempfile.TemporaryDirectory() as d:
        c, j = os.path.join(d, "t.csv"), os.path.join(d, "t.json")
        rc, out, err = run("allreduce", "--P", "2,4", "--length", "16", "--trials", "1", "--csv", c, "--json", j)
        check(rc == 0 and "C(P)" in out, "allreduce with --csv and --json files still prints its report")
        rows = list(csv.DictReader(open(c)))
        objs = json.load(open(j))
        check(len(rows) == len(objs) == 2 * 4 * 3, "allreduce: 24 rows in both files: %d, %d" % (len(rows), len(objs)))
        check(all(float(r["c_max"]) == o["c_max"] and r["algorithm"] == o["algorithm"] for r, o in zip(rows, objs)),
              "allreduce: CSV and JSON rows agree")
    rc, out, err = run("decode", "--format", "e4m3fn", "7e", "80", "--json", "-")
    check(rc == 0 and json.loads(out) == [
        {"code": "0x7e", "value": "448", "fields": "sign=0 exp=1111 frac=110 (2^8 x 1.75)", "class": "positive_normal"},
        {"code": "0x80", "value": "-0", "fields": "sign=1 exp=0000 frac=000 (zero)", "class": "negative_zero"}],
        "decode --json -: the rows as JSON objects, nothing else on stdout: %r" % out[:300])
    rc, out, _ = run("formats", "--csv", "-")
    table = list(csv.DictReader(io.StringIO(out)))
    check(rc == 0 and any(r["name"] == "e4m3fn" and float(r["max_finite"]) == 448 for r in table),
          "formats --csv -: a CSV table on stdout")


# ---- Progress -------------------------------------------------------------------------------------

# Long enough (about a second here) to pass the progress line's first 0.2 s.
LONG_GEMM = ["gemm", "--m", "128", "--n", "128", "--k", "2048", "--samples", "4"]


@test
def progress_is_silent_under_a_pipe():
    for args in (LONG_GEMM, ["optim", "--optimizer", "adam", "--steps", "20000"]):
        rc, out, err = run(*args)
        check(rc == 0 and err == "", "fpemu %s under a pipe: nothing on stderr, got %r" % (" ".join(args), err[:200]))


def run_on_pty(args, timeout=300):
    """Runs fpemu with stderr on a pseudo-terminal; returns (status, stdout, what the pty saw)."""
    master, slave = pty.openpty()
    p = subprocess.Popen([EXE, *args], stdout=subprocess.PIPE, stderr=slave, stdin=subprocess.DEVNULL)
    os.close(slave)
    seen = b""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ready, _, _ = select.select([master], [], [], 0.1)
        if ready:
            try:
                chunk = os.read(master, 4096)
            except OSError:  # the pty is closed once the program has exited
                break
            if not chunk:
                break
            seen += chunk
        elif p.poll() is not None:
            break
    out = p.stdout.read().decode()
    p.wait()
    os.close(master)
    return p.returncode, out, seen.decode("utf-8", "replace")


@test
def progress_shows_percentage_and_eta_on_a_terminal():
    rc, out, seen = run_on_pty(LONG_GEMM)
    check(rc == 0 and "%" in seen and "ETA" in seen, "gemm under a pty shows '%%' and 'ETA': %r" % seen[-200:])
    check(seen.endswith("\r") or seen == "", "the progress line is cleared at the end: %r" % seen[-80:])
    check("%" not in out and "ETA" not in out, "the progress line never reaches stdout")


# ---- Data files -----------------------------------------------------------------------------------


def npy(values, descr="<f8", shape=None, fortran=False, magic=b"\x93NUMPY", version=(1, 0)):
    """A .npy file written by hand from the format's documentation (numpy.lib.format)."""
    shape = (len(values),) if shape is None else shape
    shape_text = "(%s)" % (", ".join(map(str, shape)) + ("," if len(shape) == 1 else ""))
    header = "{'descr': '%s', 'fortran_order': %s, 'shape': %s, }" % (descr, "True" if fortran else "False",
                                                                       shape_text)
    pre = len(magic) + 2 + (2 if version[0] == 1 else 4)
    header += " " * ((64 - (pre + len(header) + 1) % 64) % 64) + "\n"
    size = struct.pack("<H" if version[0] == 1 else "<I", len(header))
    fmt = {"<f8": "<%dd", "<f4": "<%df", ">f8": ">%dd", "<i4": "<%di"}[descr]
    return magic + bytes(version) + size + header.encode() + struct.pack(fmt % len(values), *values)


def write(d, name, content):
    path = os.path.join(d, name)
    with open(path, "wb" if isinstance(content, bytes) else "w") as f:
        f.write(content)
    return path


def exact_sum(values):
    from fractions import Fraction
    return float(sum(Fraction(v) for v in values))


@test
def sum_reads_npy_and_text():
    values = [0.5, 0.25, 1.0, -0.125, 3.0]
    with tempfile.TemporaryDirectory() as d:
        for name, content in (("v.npy", npy(values)), ("v32.npy", npy(values, "<f4")),
                              ("v2.npy", npy(values, version=(2, 0))), ("v.txt", "0.5 0.25\n1.0\n# a comment\n-0.125 3\n")):
            path = write(d, name, content)
            rc, out, err = run("sum", "--input", path, "--format", "fp32", "--acc", "fp32", "--json", "-")
            ok = rc == 0 and err == ""
            check(ok, "sum --input %s runs: rc %d err %r" % (name, rc, err))
            if ok:
                rows = json.loads(out)
                check(all(r["n"] == len(values) for r in rows), "sum --input %s: n = %d" % (name, len(values)))
                check(all(r["exact"] == exact_sum(values) for r in rows),
                      "sum --input %s: the exact sum is numpy's / Fraction's sum of the values" % name)


@test
def sum_of_random_npy_matches_numpy():
    try:
        import numpy as np
    except ImportError:
        check(False, "numpy is importable (python3-numpy, which ./dev installs): it writes the reference .npy files")
        return
    rng = np.random.default_rng(5)
    x = rng.standard_normal(1000).astype(np.float32)
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "x.npy")
        np.save(path, x)
        rc, out, err = run("sum", "--input", path, "--format", "fp32", "--acc", "exact", "--json", "-")
        check(rc == 0, "sum --input x.npy (numpy.save) runs: %r" % err)
        if rc == 0:
            rows = json.loads(out)
            ref = exact_sum([float(v) for v in x])
            check(abs(ref - float(np.sum(x.astype(np.float64)))) <= 1e-12 * float(np.sum(np.abs(x))),
                  "the exact sum agrees with numpy's float64 sum")
            check(all(r["exact"] == ref for r in rows), "sum: the exact sum of the file's float32 values")
            check(all(r["value"] == float(np.float32(ref)) for r in rows if r["method"] == "recursive"),
                  "sum --acc exact: the computed sum is the exact sum rounded once into fp32")
        # Fortran order and a wrong dtype, as numpy writes them.
        np.save(path, np.asfortranarray(rng.standard_normal((3, 4))))
        rc, out, err = run("gemm", "--a-input", path, "--b-input", path)
        check(rc == 2 and out == "" and "fortran_order" in err, "gemm: a Fortran-order .npy is refused: %r" % err)
        np.save(path, np.arange(4, dtype=np.int32))
        rc, out, err = run("sum", "--input", path)
        check(rc == 2 and out == "" and "'<i4'" in err, "sum: an int32 .npy is refused naming its descr: %r" % err)


@test
def bad_data_files_are_refused_naming_the_file_and_the_field():
    with tempfile.TemporaryDirectory() as d:
        cases = [  # (args, files, the line's text)
            (["sum", "--input", "bad.npy"], {"bad.npy": b"\x93NUMPX" + npy([1.0])[6:]},
             "fpemu: --input 'bad.npy': not a NumPy .npy file"),
            (["sum", "--input", "f.npy"], {"f.npy": npy([1.0, 2.0], shape=(2, 1), fortran=True)},
             "fpemu: --input 'f.npy': fortran_order True is not supported"),
            (["sum", "--input", "i.npy"], {"i.npy": npy([1, 2], "<i4")},
             "fpemu: --input 'i.npy': descr '<i4' is not supported: expected '<f4' or '<f8'"),
            (["sum", "--input", "b.npy"], {"b.npy": npy([1.0, 2.0], ">f8")},
             "fpemu: --input 'b.npy': descr '>f8' is not supported"),
            (["sum", "--input", "m.npy"], {"m.npy": npy([1.0, 2.0], shape=(1, 2))},
             "fpemu: --input 'm.npy': shape (1, 2) is not supported: expected a 1-D array"),
            (["sum", "--input", "t.npy"], {"t.npy": npy([1.0, 2.0, 3.0])[:-4]},
             "fpemu: --input 't.npy': shape (3,) of <f8 needs 24 bytes of data, the file has 20"),
            (["gemm", "--a-input", "a.txt", "--b-input", "a.txt"], {"a.txt": "1 2 3\n4 5\n"},
             "fpemu: --a-input 'a.txt': line 2 has 2 numbers, line 1 has 3"),
            (["sum", "--input", "x.txt"], {"x.txt": "1 2\n3 x4\n"},
             "fpemu: --input 'x.txt': line 2: 'x4' is not a number"),
            (["sum", "--input", "none.txt"], {}, "fpemu: --input 'none.txt': No such file or directory"),
            (["sum", "--input", "e.txt"], {"e.txt": "\n# nothing\n"}, "fpemu: --input 'e.txt': no numbers"),
        ]
        for args, files, needle in cases:
            for name, content in files.items():
                write(d, name, content)
            rc, out, err = run(*args, cwd=d)
            check(rc == 2 and out == "" and err.startswith(needle) and len(err.splitlines()) == 1,
                  "fpemu %s: exit 2, one line starting %r; got rc %d, out %r, err %r" %
                  (" ".join(args), needle, rc, out[:100], err))


@test
def user_data_conflicts_with_random_data_options():
    with tempfile.TemporaryDirectory() as d:
        write(d, "v.txt", "1 2 3\n")
        write(d, "m.txt", "1 2\n3 4\n")
        for args, needle in ((["sum", "--input", "v.txt", "--n", "3"], "--n"),
                             (["sum", "--input", "v.txt", "--samples", "2"], "--samples"),
                             (["sum", "--input", "v.txt", "--sigma", "2"], "--sigma"),
                             (["dot", "--a-input", "v.txt", "--b-input", "v.txt", "--k", "3"], "--k"),
                             (["dot", "--a-input", "v.txt"], "--b-input"),
                             (["gemm", "--a-input", "m.txt", "--b-input", "m.txt", "--m", "2"], "--m"),
                             (["gemm", "--a-input", "m.txt", "--b-input", "v.txt"], "3")):
            rc, out, err = run(*args, cwd=d)
            check(rc == 2 and out == "" and err.startswith("fpemu: ") and needle in err,
                  "fpemu %s: refused naming %s; got rc %d err %r" % (" ".join(args), needle, rc, err))


def main():
    global EXE
    if len(sys.argv) != 2:
        print("usage: test_options.py PATH-TO-FPEMU", file=sys.stderr)
        return 2
    EXE = os.path.abspath(sys.argv[1])
    failed = 0
    for t in TESTS:
        before = len(FAILURES)
        try:
            t()
        except Exception as e:  # a crash in one test is a failure of that test
            check(False, "%s raised %r" % (t.__name__, e))
        ok = len(FAILURES) == before
        failed += not ok
        print("%s %s" % ("ok  " if ok else "FAIL", t.__name__))
    print("cli_options: %d passed, %d failed" % (len(TESTS) - failed, failed))
    return 1 if failed or CHECKS[0] == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
