#!/usr/bin/env python3
"""Reproducibility of the fpemu command across processes: same seed, same bytes.

Usage: python3 tests/cli/test_reproducible.py PATH-TO-FPEMU

Python 3 standard library only. Every subcommand with a random input or random rounding runs in
a fresh process twice with the same seed, and with --threads 1, 2 and 3 where it takes a thread
count; stdout and every file it writes must be the same bytes each time. Then it runs with
another seed, and the output must differ (so the check can fail).

What legitimately changes between runs is masked before comparing, and nothing else: wall time
(gemm's elapsed and rate, train's seconds per epoch, casgd's seconds column, the seconds and
elapsed_s / products_per_s CSV columns) and the echo of --threads. For the comparison with
another seed the echo of the seed itself is masked too ("seed 11", "seeds 11..13", CSV seed
columns, casgd's seed column), so that only what the seed drives can make the difference. Every
mask must match the output it is declared for: a mask that matches nothing is a failure.

Prints one line per failed check, one line per command and the summary line
"cli_reproducible: N passed, N failed" (commands); exits 0 when every check passed, else 1.
"""

import csv
import io
import os
import random
import re
import subprocess
import sys
import tempfile
from checks import CHECKS, FAILURES, check

EXE = None

SEED, OTHER_SEED = 11, 12




# ---- Masks --------------------------------------------------------------------------------------

class Mask:
    """Replaces what a regex matches (multiline), or the named columns of CSV blocks."""

    def __init__(self, pattern=None, replacement="<masked>", csv_columns=()):
        self.regex = re.compile(pattern, re.M) if pattern else None
        self.replacement = replacement
        self.csv_columns = set(csv_columns)

    def apply(self, text):
        """(masked text, whether anything matched)."""
        if self.regex:
            masked, count = self.regex.subn(self.replacement, text)
            return masked, count > 0
        return mask_csv_columns(text, self.csv_columns)


def mask_csv_columns(text, columns):
    """Blanks the given columns in every CSV block of text (a block starts at a header line that
    names one of them and runs while lines have the header's field count)."""
    out, matched, header = [], False, None
    for line in text.splitlines(keepends=True):
        fields = next(csv.reader(io.StringIO(line)), [])
        if columns & set(fields):
            header = fields
            matched = True
        elif header and len(fields) == len(header):
            line = ",".join("<masked>" if name in columns else value for name, value in zip(header, fields)) + "\n"
        else:
            header = None
        out.append(line)
    return "".join(out), matched


def masked(text, masks, what):
    for m in masks:
        text, matched = m.apply(text)
        check(matched, "%s: the mask %s matched nothing" % (what, m.regex.pattern if m.regex else sorted(m.csv_columns)))
    return text


SEED_ECHO = Mask(r"\bseeds? \d+(\.\.\d+)?", "seed <S>")
THREADS_ECHO = Mask(r"\bthreads \d+", "threads <T>")


# ---- Running --------------------------------------------------------------------------------------

def run(args, stdin=None):
    """stdout followed by every file the command wrote into its own fresh directory ({dir} in the
    arguments), each under a header line with its name; None if the command failed."""
    with tempfile.TemporaryDirectory() as tmp:
        p = subprocess.run([EXE] + [a.replace("{dir}", tmp) for a in args], input=stdin, capture_output=True,
                           text=True, timeout=120)
        if not check(p.returncode == 0 and p.stderr == "",
                     "%s: exit %d, stderr %r" % (" ".join(args), p.returncode, p.stderr[-300:])):
            return None
        out = p.stdout.replace(tmp, "{dir}")
        for name in sorted(os.listdir(tmp)):
            with open(os.path.join(tmp, name)) as f:
                out += "==> %s <==\n%s" % (name, f.read())
        return out


class Command:
    def __init__(self, name, args, stdin=None, threads=False, volatile=(), seed_echo=()):
        self.name = name
        self.args = args                # args(seed, threads) -> argv after the executable
        self.stdin = stdin
        self.threads = threads          # takes --threads: also run with 2 and 3
        self.volatile = list(volatile)  # wall time and the echo of --threads
        self.seed_echo = list(seed_echo)  # masked only for the comparison with another seed


def check_command(c):
    """Returns the number of runs compared."""
    reference = run(c.args(SEED, 1), c.stdin)
    if not check(reference, "%s: output" % c.name):
        return 0
    want = masked(reference, c.volatile, c.name)
    compared = 0
    runs = [("rerun", 1)] + ([("--threads 2", 2), ("--threads 3", 3)] if c.threads else [])
    for what, threads in runs:
        out = run(c.args(SEED, threads), c.stdin)
        if out is not None:
            got = masked(out, c.volatile, c.name)
            check(got == want, "%s (%s): output differs from the first run:\n%s" % (c.name, what, first_diff(want, got)))
        compared += 1
    other = run(c.args(OTHER_SEED, 1), c.stdin)
    if other is not None:
        check(masked(other, c.volatile + c.seed_echo, c.name) != masked(want, c.seed_echo, c.name),
              "%s: seeds %d and %d give the same output" % (c.name, SEED, OTHER_SEED))
    return compared


def first_diff(a, b):
    for i, (x, y) in enumerate(zip(a.splitlines(), b.splitlines())):
        if x != y:
            return "  line %d: %r\n  then:   %r" % (i + 1, x, y)
    return "  lengths %d and %d" % (len(a), len(b))


# ---- The seeded subcommands -----------------------------------------------------------------------

def fixed_inputs():
    """Inputs that do not depend on the seed under test."""
    rng = random.Random(2)
    decimals = "".join("%.17g\n" % rng.gauss(0, 3) for _ in range(300))
    bf16_pairs = "".join("%04x %04x %04x\n" % (rng.randrange(0x3c00, 0x4100), rng.randrange(0x3c00, 0x4100),
                                               rng.randrange(0x3800, 0x4000)) for _ in range(300))
    svm = []
    for _ in range(120):
        x = [rng.uniform(-1, 1) for _ in range(6)]
        y = 1 if x[0] - x[2] + 0.3 * x[4] > 0 else -1
        svm.append("%+d %s\n" % (y, " ".join("%d:%.6f" % (j + 1, v) for j, v in enumerate(x))))
    return decimals, bf16_pairs, "".join(svm)


def commands(svm_path):
    decimals, bf16_triples, _ = fixed_inputs()
    seed = lambda s: ["--seed", str(s)]
    threads = lambda t: ["--threads", str(t)]
    casgd = ["casgd", "--data", "synth:400,24", "--recipe", "C,D", "--b", "4", "--s", "4", "--P", "3", "--outer",
             "6", "--eval-every", "2"]
    # casgd's table: the seed column (its echo) and the seconds column (wall time).
    casgd_seconds = Mask(r"^([A-I] +\d+ +\S+ +\S+ +)\d+\.\d+$", r"\1<seconds>")
    casgd_seed_column = Mask(r"^([A-I] +)\d+", r"\1<S>")
    return [
        Command("round sr (5 bits)", lambda s, t: ["round", "--format", "bf16", "--rounding", "sr", "--sr-bits", "5",
                                                   "--stream", "3"] + seed(s), stdin=decimals),
        Command("round sr-exact", lambda s, t: ["round", "--format", "e4m3fn", "--rounding", "sr-exact", "--overflow",
                                                "saturate"] + seed(s), stdin=decimals),
        Command("op fma sr", lambda s, t: ["op", "fma", "--format", "bf16", "--rounding", "sr"] + seed(s),
                stdin=bf16_triples),
        Command("op div sr-exact", lambda s, t: ["op", "div", "--format", "bf16", "--rounding", "sr-exact"] + seed(s),
                stdin="".join(" ".join(line.split()[:2]) + "\n" for line in bf16_triples.splitlines())),
        Command("sum (every method, sr accumulator, 3 samples)",
                lambda s, t: ["sum", "--n", "400", "--format", "bf16", "--method", "all", "--acc", "bf16", "--acc-rounding",
                              "sr", "--sr-bits", "8", "--samples", "3"] + seed(s),
                seed_echo=[SEED_ECHO]),
        Command("dot (fp8 in, sr accumulator, 2 samples)",
                lambda s, t: ["dot", "--k", "256", "--a-format", "e4m3fn", "--b-format", "e4m3fn", "--acc", "bf16",
                              "--acc-rounding", "sr", "--samples", "2"] + seed(s),
                seed_echo=[SEED_ECHO]),
        Command("gemm (sr accumulator, sr output)",
                lambda s, t: ["gemm", "--m", "17", "--n", "9", "--k", "64", "--acc", "bf16", "--acc-rounding", "sr",
                              "--out-format", "bf16", "--out-rounding", "sr", "--beta", "1"] + seed(s) + threads(t),
                threads=True,
                volatile=[Mask(r"^  elapsed .*$"), Mask(r"^  rate .*$"), THREADS_ECHO],
                seed_echo=[SEED_ECHO]),
        Command("gemm --csv (fp32 SIMD kernel, sr output, 2 samples)",
                lambda s, t: ["gemm", "--m", "19", "--n", "21", "--k", "80", "--out-format", "bf16", "--out-rounding", "sr",
                              "--samples", "2", "--csv", "-"] + seed(s) + threads(t),
                threads=True,
                volatile=[Mask(csv_columns=["threads", "elapsed_s", "products_per_s"])],
                seed_echo=[Mask(csv_columns=["seed"])]),
        Command("optim adamw bf16-sr", lambda s, t: ["optim", "--optimizer", "adamw", "--policy", "bf16-sr",
                                                     "--steps", "30", "--rows", "16", "--cols", "6", "--csv", "-"] + seed(s)),
        Command("optim lion fp16-sr4-ops (json)", lambda s, t: ["optim", "--optimizer", "lion", "--policy",
                                                                "fp16-sr4-ops", "--steps", "20", "--rows", "8",
                                                                "--cols", "5", "--json", "-"] + seed(s),
                seed_echo=[Mask(r'"seed": *\d+', '"seed": <S>')]),
        Command("train (split, shuffling, sr; 2 seeds, 3 policies)",
                lambda s, t: ["train", "--data", svm_path, "--policy", "fp32,bf16-sr,bf16-kahan", "--epochs", "3",
                              "--batch", "16", "--seeds", "2", "--test-fraction", "0.25", "--csv",
                              "{dir}/curves.csv"] + seed(s) + threads(t),
                threads=True,
                volatile=[Mask(r"\d+\.\d+ s$", "<seconds> s"), Mask(r"\d+\.\d+ \+- \d+\.\d+$", "<s/epoch>"),
                          Mask(csv_columns=["seconds"])],
                seed_echo=[SEED_ECHO, Mask(csv_columns=["seed"])]),
        Command("train --data quadratic (Theorem 1)",
                lambda s, t: ["train", "--data", "quadratic", "--lr", "0.2,0.1"] + seed(s)),
        Command("casgd (sampling; recipes C, D on 3 ranks)",
                lambda s, t: casgd + ["--csv", "{dir}/trajectory.csv"] + seed(s) + threads(t),
                threads=True,
                volatile=[casgd_seconds],
                seed_echo=[casgd_seed_column, Mask(csv_columns=["seed"])]),
        Command("casgd --data-seed (synthetic data), --weights",
                lambda s, t: ["casgd", "--data", "synth:300,16", "--recipe", "C", "--b", "4", "--s", "4", "--outer",
                              "5", "--data-seed", str(s), "--weights", "{dir}/weights.txt"] + threads(t),
                threads=True,
                volatile=[casgd_seconds]),
        Command("allreduce C(P)",
                lambda s, t: ["allreduce", "--P", "4,6", "--length", "64", "--trials", "2", "--datatype", "bf16,fp16",
                              "--csv", "{dir}/cp.csv"] + seed(s),
                seed_echo=[SEED_ECHO, Mask(csv_columns=["seed"])]),
    ]


def main():
    global EXE
    if len(sys.argv) != 2:
        print("usage: test_reproducible.py PATH-TO-FPEMU", file=sys.stderr)
        return 2
    EXE = sys.argv[1]
    passed = failed = runs = 0
    with tempfile.TemporaryDirectory() as tmp:
        svm_path = os.path.join(tmp, "planted.svm")
        with open(svm_path, "w") as f:
            f.write(fixed_inputs()[2])
        for c in commands(svm_path):
            before = len(FAILURES)
            runs += check_command(c)
            ok = len(FAILURES) == before
            passed, failed = passed + ok, failed + (not ok)
            print("%-52s %s" % (c.name, "ok" if ok else "FAILED"))
    print("cli_reproducible: %d runs compared with the first, %d checks, %d failed" % (runs, CHECKS[0], len(FAILURES)))
    print("cli_reproducible: %d passed, %d failed" % (passed, failed))
    return 1 if FAILURES or CHECKS[0] == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
