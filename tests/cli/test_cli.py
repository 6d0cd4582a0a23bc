#!/usr/bin/env python3
"""End-to-end tests of the fpemu command.

Usage: python3 tests/cli/test_cli.py PATH-TO-FPEMU

Python 3 standard library only. The expected values come from facts independent of fpemu: the
OCP FP8 / MX and IEEE 754 constants, and a small exact reference written here with Fraction
(decode of codes, rounding in rne/rna/rz/ru/rd, exact sums). Error cases check the contract of
the command: exit status 2, exactly one line on stderr that starts with "fpemu: " and names the
offending value, and nothing on stdout for the failing input (a command that streams stops at
the first bad input; the lines before it have been printed).

Prints one line per failed check, one line per test function and the summary line
"cli: N passed, N failed" (test functions); exits 0 when every check passed, else 1.
"""

import csv
import io
import json
import math
import os
import re
import random
import struct
import subprocess
import sys
from fractions import Fraction
from checks import CHECKS, FAILURES, check

EXE = None
FAILED_TESTS = set()
TESTS = []


def test(fn):
    TESTS.append(fn)
    return fn




def run(*args, stdin=None):
    p = subprocess.run([EXE, *args], input=stdin, capture_output=True, text=True, timeout=120)
    return p.returncode, p.stdout, p.stderr


# ---- An independent exact reference for a few formats ----------------------------------------

# name: (exp_bits, frac_bits, bias, encoding, signed, subnormals, has_zero)
FORMATS = {
    "e4m3fn": (4, 3, 7, "fn", True, True, True),
    "e5m2": (5, 2, 15, "ieee", True, True, True),
    "e4m3fnuz": (4, 3, 8, "fnuz", True, True, True),
    "bf16": (8, 7, 127, "ieee", True, True, True),
    "fp16": (5, 10, 15, "ieee", True, True, True),
    "tf32": (8, 10, 127, "ieee", True, True, True),
    "fp32": (8, 23, 127, "ieee", True, True, True),
    "e2m1fn": (2, 1, 1, "finite", True, True, True),
    "e3m2fn": (3, 2, 3, "finite", True, True, True),
    "e2m3fn": (2, 3, 1, "finite", True, True, True),
    "e8m0fnu": (8, 0, 127, "fn", False, False, False),
}


def width(f):
    e, m, _, _, signed, _, _ = FORMATS[f]
    return e + m + (1 if signed else 0)


def decode(f, code):
    """('nan'|'inf'|'zero'|'finite', negative, Fraction value, is_subnormal, signaling)."""
    e, m, bias, enc, signed, sub, has_zero = FORMATS[f]
    neg = signed and (code >> (e + m)) & 1 == 1
    mag = code & ((1 << (e + m)) - 1)
    field, frac = mag >> m, mag & ((1 << m) - 1)
    if enc == "ieee" and field == (1 << e) - 1:
        if frac == 0:
            return ("inf", neg, None, False, False)
        return ("nan", neg, None, False, (frac >> (m - 1)) == 0)
    if enc == "fn" and mag == (1 << (e + m)) - 1:
        return ("nan", neg, None, False, False)
    if enc == "fnuz" and neg and mag == 0:
        return ("nan", False, None, False, False)
    if has_zero and field == 0:
        if frac == 0 or not sub:
            return ("zero", neg, Fraction(0), False, False)
        v = Fraction(frac, 1 << m) * Fraction(2) ** (1 - bias)
        return ("finite", neg, -v if neg else v, True, False)
    v = (1 + Fraction(frac, 1 << m)) * Fraction(2) ** (field - bias)
    return ("finite", neg, -v if neg else v, False, False)


def ieee_class(f, code):
    kind, neg, _, subnormal, signaling = decode(f, code)
    if kind == "nan":
        return "signaling_nan" if signaling else "quiet_nan"
    s = "negative_" if neg else "positive_"
    return s + {"inf": "infinity", "zero": "zero", "finite": "subnormal" if subnormal else "normal"}[kind]


def floor_log2(a):
    """floor(log2(a)) for a positive Fraction."""
    e = a.numerator.bit_length() - a.denominator.bit_length()
    while Fraction(2) ** e > a:
        e -= 1
    while Fraction(2) ** (e + 1) <= a:
        e += 1
    return e


def max_finite(f):
    e, m, bias, enc, _, _, _ = FORMATS[f]
    top = (1 << e) - 1
    if enc == "ieee":
        return (2 - Fraction(1, 1 << m)) * Fraction(2) ** (top - 1 - bias)
    if enc == "fn":
        return (2 - Fraction(2, 1 << m)) * Fraction(2) ** (top - bias)
    return (2 - Fraction(1, 1 << m)) * Fraction(2) ** (top - bias)


def round_to_quantum(a, q, mode, neg):
    """Rounds the positive Fraction a to a multiple of 2^q; returns (multiple, inexact)."""
    n = a / Fraction(2) ** q
    fl = n.numerator // n.denominator
    rem = n - fl
    if rem == 0:
        return fl, False
    half = Fraction(1, 2)
    up = {
        "rne": rem > half or (rem == half and fl % 2 == 1),
        "rna": rem >= half,
        "rz": False,
        "ru": not neg,
        "rd": neg,
    }[mode]
    return fl + (1 if up else 0), True


def reference_round(f, x, mode="rne"):
    """Code and flag string of the Fraction x rounded into the signed format f (not e8m0fnu)."""
    e, m, bias, enc, signed, sub, _ = FORMATS[f]
    assert signed and sub
    sign_bit = 1 << (e + m)
    neg = x < 0
    a = -x if neg else x
    if a == 0:
        return (sign_bit if neg and enc != "fnuz" else 0), "-"
    emin = 1 - bias
    E = floor_log2(a)
    q = max(E, emin) - m
    k, inexact = round_to_quantum(a, q, mode, neg)
    r = k * Fraction(2) ** q
    # Tininess after rounding: rounded to p bits with an unbounded exponent, below 2^emin.
    k2, _ = round_to_quantum(a, E - m, mode, neg)
    tiny = k2 * Fraction(2) ** (E - m) < Fraction(2) ** emin
    flags = []
    if r > max_finite(f):
        to_inf = mode in ("rne", "rna") or (mode == "ru" and not neg) or (mode == "rd" and neg)
        mag_max = {"ieee": ((1 << e) - 1 << m) - 1, "fn": sign_bit - 2, "finite": sign_bit - 1}[enc]
        if to_inf and enc == "ieee":
            mag = ((1 << e) - 1) << m
        elif to_inf and enc == "fn":
            mag = sign_bit - 1  # NaN
        else:
            mag = mag_max
        return (sign_bit if neg else 0) | mag, "overflow,inexact"
    if tiny and inexact:
        flags.append("underflow")
    if inexact:
        flags.append("inexact")
    fl = ",".join(flags) or "-"
    if r == 0:
        return (sign_bit if neg and enc != "fnuz" else 0), fl
    if r < Fraction(2) ** emin:
        mag = int(r / Fraction(2) ** (emin - m))
    else:
        Er = floor_log2(r)
        mag = ((Er + bias) << m) | int(r / Fraction(2) ** (Er - m) - (1 << m))
    return (sign_bit if neg else 0) | mag, fl


def hex_code(f, code):
    return "0x%0*x" % ((width(f) + 3) // 4, code)


def parse_round_line(line):
    parts = line.split()
    return int(parts[0], 16), parts[1], parts[2]


def decimal_value(text):
    if text in ("inf", "-inf", "nan"):
        return text
    return Fraction(text)


def random_decimal(rng, lo_exp, hi_exp):
    digits = "".join(rng.choice("0123456789") for _ in range(rng.randint(1, 22)))
    digits = digits.lstrip("0") or "1"
    s = "-" if rng.random() < 0.3 else ""
    point = rng.randint(0, len(digits))
    mant = digits[:point] + "." + digits[point:] if point < len(digits) else digits
    if mant.startswith("."):
        mant = "0" + mant
    return "%s%se%d" % (s, mant, rng.randint(lo_exp, hi_exp) - point)


# ---- Help, version ------------------------------------------------------------------------------


@test
def help_exits_zero():
    for args in ([], ["formats"], ["round"], ["decode"], ["op"], ["mma"], ["sum"], ["dot"], ["gemm"], ["demo"],
                 ["gpu-check"]):
        rc, out, err = run(*args, "--help")
        check(rc == 0 and "Usage" in out and err == "", "fpemu %s --help exits 0 with usage" % " ".join(args))
    rc, out, _ = run("--help")
    for name in ("formats", "round", "decode", "op", "mma", "sum", "dot", "gemm", "demo", "gpu-check"):
        check(name in out, "top-level --help lists %s" % name)
    rc, out, err = run("--version")
    check(rc == 0 and out.startswith("fpemu ") and err == "", "--version exits 0: %r" % out)


# ---- formats ------------------------------------------------------------------------------------

NAMED = ["e4m3fn", "e5m2", "e4m3fnuz", "e5m2fnuz", "bf16", "fp16", "tf32", "fp32", "e8m13",
         "e2m3fn", "e3m2fn", "e2m1fn", "e8m0fnu"]


@test
def formats_json():
    rc, out, err = run("formats", "--json", "-")
    check(rc == 0 and err == "", "formats --json exits 0")
    try:
        data = json.loads(out)
    except ValueError as e:
        check(False, "formats --json is valid JSON: %s" % e)
        return
    by_name = {d["name"]: d for d in data}
    check(sorted(by_name) == sorted(NAMED), "formats --json lists every named format: %s" % sorted(by_name))
    known_max = {
        "e4m3fn": 448, "e5m2": 57344, "e4m3fnuz": 240, "e5m2fnuz": 57344, "bf16": 3.3895313892515355e38,
        "fp16": 65504, "fp32": 3.4028234663852886e38, "e2m1fn": 6, "e3m2fn": 28, "e2m3fn": 7.5,
        "e8m0fnu": 2.0 ** 127,
    }
    for name, v in known_max.items():
        d = by_name.get(name, {})
        check(d.get("max_finite") == v, "%s max_finite %r == %r" % (name, d.get("max_finite"), v))
        check(Fraction(d.get("exact", {}).get("max_finite", "0")) == Fraction(v),
              "%s exact max_finite string == %r" % (name, v))
    facts = {  # name: (width, exp, frac, bias, u, min positive, finite codes)
        "e4m3fn": (8, 4, 3, 7, 2.0 ** -4, 2.0 ** -9, 254),
        "e5m2": (8, 5, 2, 15, 2.0 ** -3, 2.0 ** -16, 248),
        "bf16": (16, 8, 7, 127, 2.0 ** -8, 2.0 ** -133, 65536 - 256),
        "fp16": (16, 5, 10, 15, 2.0 ** -11, 2.0 ** -24, 65536 - 2048),
        "tf32": (19, 8, 10, 127, 2.0 ** -11, 2.0 ** -136, (1 << 19) - 2048),
        "fp32": (32, 8, 23, 127, 2.0 ** -24, 2.0 ** -149, (1 << 32) - (1 << 24)),
        "e2m1fn": (4, 2, 1, 1, 2.0 ** -2, 0.5, 16),
        "e8m0fnu": (8, 8, 0, 127, 0.5, 2.0 ** -127, 255),
    }
    for name, (w, e, m, bias, u, minpos, count) in facts.items():
        d = by_name.get(name, {})
        got = (d.get("width"), d.get("exp_bits"), d.get("frac_bits"), d.get("bias"), d.get("unit_roundoff"),
               d.get("min_positive"), d.get("finite_codes"))
        check(got == (w, e, m, bias, u, minpos, count), "%s derived quantities %r" % (name, got))
        check(Fraction(d.get("exact", {}).get("min_positive", "0")) == Fraction(minpos),
              "%s exact min_positive string" % name)
    check(by_name.get("e8m0fnu", {}).get("signed") is False and by_name.get("e8m0fnu", {}).get("subnormals") is False,
          "e8m0fnu is unsigned without subnormals")
    check(by_name.get("e4m3fnuz", {}).get("encoding") == "fnuz", "e4m3fnuz encoding fnuz")


@test
def formats_table():
    rc, out, err = run("formats")
    check(rc == 0 and err == "", "formats exits 0")
    for name in NAMED:
        check(any(line.split()[:1] == [name] for line in out.splitlines()), "formats table has a row for %s" % name)


# ---- round --------------------------------------------------------------------------------------


@test
def round_known_values():
    cases = [  # (format, args, expected line)
        ("bf16", ["0.1"], "0x3dcd 0.10009765625 inexact"),
        ("e4m3fn", ["0.1"], "0x1d 0.1015625 inexact"),
        ("e4m3fn", ["448"], "0x7e 448 -"),
        ("e4m3fn", ["464"], "0x7e 448 inexact"),            # the tie between 448 and 480 goes to even
        ("e4m3fn", ["465"], "0x7f nan overflow,inexact"),   # above the tie: 480 overflows to NaN
        ("e4m3fn", ["--rounding", "rz", "1000"], "0x7e 448 overflow,inexact"),
        ("e4m3fn", ["--overflow", "saturate", "465"], "0x7e 448 overflow,inexact"),
        ("e4m3fn", ["1e-3"], "0x01 0.001953125 underflow,inexact"),
        ("e5m2", ["1e6"], "0x7c inf overflow,inexact"),
        ("fp16", ["-inf"], "0xfc00 -inf -"),
        ("fp16", ["-.5"], "0xb800 -0.5 -"),
        ("fp16", ["0x1.8p-3"], "0x3200 0.1875 -"),
        ("fp16", ["65520"], "0x7c00 inf overflow,inexact"),  # the tie above 65504
        ("fp16", ["65519.99"], "0x7bff 65504 inexact"),
        ("e2m1fn", ["2.5"], "0x4 2 inexact"),              # tie between 2 and 3: even is 2
        ("e2m1fn", ["100"], "0x7 6 overflow,inexact"),     # no inf, no NaN: the largest finite
        ("e8m0fnu", ["0.7"], "0x7e 0.5 inexact"),          # powers of two only (ties are not pinned here)
        ("e8m0fnu", ["3.5"], "0x81 4 inexact"),
        ("e8m0fnu", ["0x1p127"], "0xfe 1.70141183460469231731687303715884105728e+38 -"),
        # 1 + 2^-8 is the midpoint of bf16 1 and 1 + 2^-7: to-odd gives 1 + 2^-7.
        ("bf16", ["--rounding", "rto", "1.00390625"], "0x3f81 1.0078125 inexact"),
    ]
    for f, args, expected in cases:
        rc, out, err = run("round", "--format", f, *args)
        check(rc == 0 and out.strip() == expected and err == "",
              "round --to %s %s: expected %r, got %r (rc %d, %r)" % (f, " ".join(args), expected, out.strip(), rc, err))
    # Values that CLI11 would take for options ("-inf", "-.5") keep their order, also after "--".
    rc, out, err = run("round", "--format", "fp16", "0.5", "-inf", "--rounding", "rz", "-.5", "--", "-nan", "-1e-3", "2")
    check(rc == 0 and [line.split()[0] for line in out.splitlines()] ==
          ["0x3800", "0xfc00", "0xb800", "0xfe00", "0x9418", "0x4000"], "round keeps value order around '--': %r" % out)
    # tf32 is 19 bits wide: codes have 5 hex digits. 2^-136 is its smallest subnormal.
    rc, out, err = run("round", "--format", "tf32", "0x1p-136")
    words = out.split()
    check(rc == 0 and len(words) == 3 and words[0] == "0x00001" and Fraction(words[1]) == Fraction(2) ** -136 and
          words[2] == "-", "round tf32 smallest subnormal: %r" % out)


@test
def round_matches_reference():
    rng = random.Random(12345)
    ranges = {"e4m3fn": (-5, 4), "e5m2": (-8, 6), "bf16": (-42, 40), "fp16": (-9, 6), "tf32": (-42, 40),
              "fp32": (-47, 40), "e2m1fn": (-2, 2), "e3m2fn": (-3, 2)}
    cases = expected_cases = 0
    for f, (lo, hi) in ranges.items():
        for mode in ("rne", "rna", "rz", "ru", "rd"):
            texts = [random_decimal(rng, lo, hi) for _ in range(60)]
            values = [Fraction(t) for t in texts]
            # Midpoints between neighbouring codes, where the modes differ most, as exact hex floats.
            while len(texts) < 80:
                kind, _, v, _, _ = decode(f, rng.randrange(1 << width(f)))
                if kind == "finite" and v != 0:
                    mid = v + Fraction(2) ** (floor_log2(abs(v)) - FORMATS[f][1] - 1)
                    exp = mid.denominator.bit_length() - 1
                    texts.append("%s0x%xp-%d" % ("-" if mid < 0 else "", abs(mid.numerator), exp))
                    values.append(mid)
            expected_cases += len(texts)
            rc, out, err = run("round", "--format", f, "--rounding", mode, stdin="\n".join(texts) + "\n")
            lines = out.splitlines()
            if not check(rc == 0 and len(lines) == len(texts), "round %s %s over stdin: rc %d, %d lines, %r" %
                         (f, mode, rc, len(lines), err)):
                continue
            for text, x, line in zip(texts, values, lines):
                code, dec, flags = parse_round_line(line)
                want_code, want_flags = reference_round(f, x, mode)
                kind, _, value, _, _ = decode(f, code)
                ok = code == want_code and flags == want_flags and (
                    decimal_value(dec) == value if kind in ("finite", "zero") else dec in ("inf", "-inf", "nan"))
                check(ok, "round %r into %s %s: got %s, reference %s %s" % (text, f, mode, line,
                                                                          hex_code(f, want_code), want_flags))
                cases += 1
    check(cases == expected_cases == 8 * 5 * 80, "round reference comparison ran %d cases" % cases)


@test
def round_stdin_mode():
    rc, out, err = run("round", "--format", "e4m3fn", stdin="0.1\n\n  448  \r\n-1.5\n")
    check(rc == 0 and out.splitlines() == ["0x1d 0.1015625 inexact", "0x7e 448 -", "0xbc -1.5 -"],
          "round from stdin skips blank lines and trims: %r" % out)
    rc, out, err = run("round", "--format", "e4m3fn", stdin="0.1\n\n1.2.3\n448\n")
    check(rc == 2 and out.splitlines() == ["0x1d 0.1015625 inexact"],
          "round stops at the first bad stdin line, earlier lines printed: %r" % out)
    check(len(err.splitlines()) == 1 and err.startswith("fpemu: ") and "line 3" in err and "1.2.3" in err,
          "bad stdin line error names the line number and the text: %r" % err)


@test
def round_stochastic():
    values = ["0.1"] * 400
    base = ["round", "--format", "bf16", "--rounding", "sr", "--seed", "7"]
    rc1, out1, _ = run(*base, *values)
    rc2, out2, _ = run(*base, *values)
    check(rc1 == 0 and out1 == out2, "sr with a seed is reproducible")
    codes = [line.split()[0] for line in out1.splitlines()]
    check(set(codes) <= {"0x3dcc", "0x3dcd"} and len(codes) == 400, "sr rounds 0.1 to a neighbour in bf16")
    ups = codes.count("0x3dcd") / len(codes) if codes else 0
    check(0.7 < ups < 0.9, "sr rounds 0.1 up with probability ~0.8 (distance): %.3f" % ups)
    # Element k is the k-th value, whether from arguments or stdin (blank lines do not count).
    rc3, out3, _ = run(*base, stdin="\n".join(v + "\n" for v in values))
    check(rc3 == 0 and out3 == out1, "sr: stdin values get the same element indices as arguments")
    rc4, out4, _ = run(*base[:-1], "8", *values)
    check(rc4 == 0 and out4 != out1, "sr: another seed gives other bits")
    rc5, out5, _ = run(*base, "--stream", "1", *values)
    check(rc5 == 0 and out5 != out1, "sr: another stream gives other bits")
    rc6, out6, _ = run(*base, "--sr-bits", "1", *values)
    check(rc6 == 0 and set(line.split()[0] for line in out6.splitlines()) <= {"0x3dcc", "0x3dcd"},
          "sr with 1 random bit")
    rc7, out7, _ = run("round", "--format", "bf16", "--rounding", "sr-exact", "--seed", "7", *values)
    c7 = [line.split()[0] for line in out7.splitlines()]
    check(rc7 == 0 and 0.7 < c7.count("0x3dcd") / max(1, len(c7)) < 0.9, "sr-exact rounds up with probability ~0.8")
    # An exact value never moves.
    rc8, out8, _ = run("round", "--format", "bf16", "--rounding", "sr", "1.5", "-2")
    check(rc8 == 0 and out8.splitlines() == ["0x3fc0 1.5 -", "0xc000 -2 -"], "sr leaves exact values alone")


# ---- decode -------------------------------------------------------------------------------------


@test
def decode_known():
    rc, out, err = run("decode", "--format", "e4m3fn", "0x7e")
    words = out.split()
    check(rc == 0 and words[:2] == ["0x7e", "448"] and "sign=0" in words and "exp=1111" in words and
          "frac=110" in words and "(2^8" in words and "1.75)" in words and words[-1] == "positive_normal",
          "decode e4m3fn 0x7e: %r" % out)
    rc, out, err = run("decode", "--format", "fp16", "3c00", "0x8000", "7c00", "7e00", "7d00", "0001")
    classes = [line.split()[-1] for line in out.splitlines()]
    check(rc == 0 and classes == ["positive_normal", "negative_zero", "positive_infinity", "quiet_nan",
                                  "signaling_nan", "positive_subnormal"], "decode fp16 classes: %r" % classes)


@test
def decode_all_codes():
    cases = 0
    for f in ("e4m3fn", "e5m2", "e4m3fnuz", "e2m1fn", "e3m2fn", "e2m3fn", "e8m0fnu"):
        n = 1 << width(f)
        rc, out, err = run("decode", "--format", f, *["%x" % c for c in range(n)])
        lines = out.splitlines()
        if not check(rc == 0 and len(lines) == n, "decode %s: every code (rc %d, %r)" % (f, rc, err)):
            continue
        for code, line in zip(range(n), lines):
            words = line.split()
            kind, neg, value, _, _ = decode(f, code)
            want = {"nan": "nan", "inf": "-inf" if neg else "inf"}.get(kind)
            ok_value = words[1] == want if want else (Fraction(words[1]) == value and words[1].startswith("-") == neg)
            check(int(words[0], 16) == code and ok_value and words[-1] == ieee_class(f, code),
                  "decode %s %s: %r (want %s %s)" % (f, hex_code(f, code), line, value if value is not None else kind,
                                                     ieee_class(f, code)))
            cases += 1
    check(cases == 256 * 4 + 16 + 64 + 64, "decode compared %d codes" % cases)


# ---- op -----------------------------------------------------------------------------------------


@test
def op_known():
    cases = [  # (op, format, extra args, stdin, expected lines)
        ("add", "e4m3fn", [], "0x38 0x38\n40 40\n\n7e 7e\n", ["0x40 -", "0x48 -", "0x7f overflow,inexact"]),
        ("add", "fp16", [], "3c00 0001\n", ["0x3c00 inexact"]),
        ("add", "fp16", ["--rounding", "ru"], "3c00 0001\n", ["0x3c01 inexact"]),
        ("sub", "fp16", [], "3c00 3c00\n", ["0x0000 -"]),
        ("sub", "fp16", ["--rounding", "rd"], "3c00 3c00\n", ["0x8000 -"]),
        ("mul", "fp16", [], "4000 4200\n", ["0x4600 -"]),
        ("div", "fp16", [], "3c00 0000\n3c00 4200\n", ["0x7c00 divide-by-zero", "0x3555 inexact"]),
        ("sqrt", "fp16", [], "4400\nbc00\n", ["0x4000 -", "0x7e00 invalid"]),
        ("fma", "fp16", [], "3c00 3c00 3c00\n", ["0x4000 -"]),
        ("add", "e5m2", [], "7c fc\n", ["0x7e invalid"]),
    ]
    for op, f, extra, stdin, expected in cases:
        rc, out, err = run("op", op, "--format", f, *extra, stdin=stdin)
        check(rc == 0 and out.splitlines() == expected and err == "",
              "op %s %s %s on %r: got %r, want %r (%r)" % (op, f, extra, stdin, out.splitlines(), expected, err))


@test
def op_add_matches_reference():
    rng = random.Random(777)
    cases = 0
    for f in ("fp16", "bf16", "e4m3fn", "e5m2"):
        for mode in ("rne", "rz", "ru", "rd", "rna"):
            pairs = []
            while len(pairs) < 80:
                a, b = rng.randrange(1 << width(f)), rng.randrange(1 << width(f))
                if decode(f, a)[0] == "finite" and decode(f, b)[0] == "finite":
                    if rng.random() < 0.5:  # near-cancelling and same-binade pairs
                        b = (a ^ (1 << (width(f) - 1))) + rng.randrange(-3, 4)
                        if not 0 <= b < (1 << width(f)) or decode(f, b)[0] != "finite":
                            continue
                    pairs.append((a, b))
            stdin = "".join("%x %x\n" % p for p in pairs)
            rc, out, err = run("op", "add", "--format", f, "--rounding", mode, stdin=stdin)
            lines = out.splitlines()
            if not check(rc == 0 and len(lines) == len(pairs), "op add %s %s: rc %d %r" % (f, mode, rc, err)):
                continue
            for (a, b), line in zip(pairs, lines):
                s = decode(f, a)[2] + decode(f, b)[2]
                if s == 0:  # exact cancellation: +0, or -0 when rounding toward -inf
                    want = ((1 << (width(f) - 1)) if mode == "rd" else 0), "-"
                else:
                    want = reference_round(f, s, mode)
                got = (int(line.split()[0], 16), line.split()[1])
                check(got == want, "op add %s %s %s %s: got %s, want %s %s" % (
                    f, mode, hex_code(f, a), hex_code(f, b), line, hex_code(f, want[0]), want[1]))
                cases += 1
    check(cases == 4 * 5 * 80, "op add reference comparison ran %d cases" % cases)


@test
def op_stochastic_reproducible():
    base = ["op", "add", "--format", "bf16", "--rounding", "sr", "--seed", "3"]
    rc1, out1, _ = run(*base, stdin="3f80 3b80\n" * 300)  # 1 + 2^-8 = midpoint in bf16
    rc2, out2, _ = run(*base, stdin="3f80 3b80\n" * 300)
    codes = out1.split()[0::2]
    check(rc1 == 0 and out1 == out2 and set(codes) == {"0x3f80", "0x3f81"},
          "op add sr: reproducible, both neighbours of a midpoint occur")
    check(0.4 < codes.count("0x3f81") / max(1, len(codes)) < 0.6, "op add sr: a midpoint goes up half the time")


# ---- mma ----------------------------------------------------------------------------------------

VECTORS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "tensor-core-vectors")

# The presets of include/fpemu/presets.hpp (docs/architecture.md, the tensor-core model).
PRESETS = ["v100-fp16", "t4-fp16", "a100-fp16", "a100-bf16", "a100-tf32", "ada-fp16", "ada-bf16", "ada-tf32",
           "ada-e4m3", "ada-e5m2", "h100-fp16", "h100-bf16", "h100-tf32", "h100-e4m3", "h100-e5m2",
           "h100-e4m3-fastaccum", "h100-e4m3-deepseek"]
for _gpu in ("b200", "rtx6000b"):
    PRESETS += ["%s-%s" % (_gpu, kind) for kind in ("fp16", "bf16", "tf32", "e4m3", "e5m2", "mxf8f6f4", "mxf4",
                                                     "mxf4nvf4", "mxf4nvf4-ue8m0")]
PRESETS += ["mi100-fp16", "mi100-bf16", "mi250-fp16", "mi250-bf16", "mi250-bf16-legacy", "mi300x-fp16", "mi300x-bf16",
            "mi300x-xf32", "mi300x-e4m3fnuz", "mi300x-e5m2fnuz"]
# The block-scaled presets: (scale format as --list spells it, products per scale). NVFP4 reads
# its e4m3fn scale codes as unsigned (UE4M3).
SCALED = {}
for _gpu in ("b200", "rtx6000b"):
    SCALED.update({_gpu + "-mxf8f6f4": ("e8m0fnu", 32), _gpu + "-mxf4": ("e8m0fnu", 32),
                   _gpu + "-mxf4nvf4": ("ue4m3", 16), _gpu + "-mxf4nvf4-ue8m0": ("e8m0fnu", 16)})


def f32_bits(x):
    return struct.unpack("<I", struct.pack("<f", x))[0]


def fp16_bits_of_f32(bits):
    """The binary16 pattern of a binary32 pattern that holds an fp16 value (struct format 'e')."""
    return struct.unpack("<H", struct.pack("<e", struct.unpack("<f", struct.pack("<I", bits))[0]))[0]


def read_lines(path, n):
    with open(path) as f:
        return [line.split() for _, line in zip(range(n), f)]


def hardware_cases(gpu, fmt, out, n=20, c_zero=False):
    """The first n cases of a published set: (a words, b words, c word, expected D text)."""
    d_dir = os.path.join(VECTORS, gpu, fmt)
    tag = "%s_%s" % (gpu, fmt)
    a = read_lines(os.path.join(d_dir, "a_%s.txt" % tag), n)
    b = read_lines(os.path.join(d_dir, "b_%s.txt" % tag), n)
    c = read_lines(os.path.join(d_dir, "c_%s_fp32.txt" % gpu), n)
    d = read_lines(os.path.join(d_dir, "d_%s_%s.txt" % (gpu, out)), n)
    cases = []
    for ai, bi, ci, di in zip(a, b, c, d):
        c_word = "00000000" if c_zero else "%08x" % int(ci[0], 2)
        bits = int(di[0], 2)
        want = "%04x" % fp16_bits_of_f32(bits) if out == "fp16" else "%08x" % bits
        cases.append((ai, bi, c_word, want))
    check(len(cases) == n, "read %d cases of %s/%s %s" % (len(cases), gpu, fmt, out))
    return cases


def mma_stdin(cases):
    return "".join("%s ; %s ; %s\n" % (" ".join(a), " ".join(b), c) for a, b, c, _ in cases)


@test
def mma_hardware_vectors():
    sets = [  # (gpu, input, output, preset, C is +0: H100 fp8 fp32 data came from wgmma from zero)
        ("V100", "fp16", "fp32", "v100-fp16", False),
        ("V100", "fp16", "fp16", "v100-fp16", False),
        ("A100", "fp16", "fp16", "a100-fp16", False),
        ("H100", "E4M3", "fp32", "h100-e4m3", True),
        ("H100", "E4M3", "fp16", "h100-e4m3", False),
    ]
    for gpu, fmt, out, preset, c_zero in sets:
        cases = hardware_cases(gpu, fmt, out, 20, c_zero)
        rc, got, err = run("mma", "--preset", preset, "--out-format", out, stdin=mma_stdin(cases))
        want = [w for _, _, _, w in cases]
        lines = got.splitlines()
        check(rc == 0 and err == "" and len(lines) == len(want),
              "mma %s --out %s on %s/%s: rc %d, %d lines, %r" % (preset, out, gpu, fmt, rc, len(lines), err))
        for i, (g, w) in enumerate(zip(lines, want)):
            check(g == w, "mma %s --out %s, %s/%s case %d: got %s, GPU %s" % (preset, out, gpu, fmt, i, g, w))


@test
def mma_input_syntax():
    cases = hardware_cases("V100", "fp16", "fp32", 6)
    want = "".join(w + "\n" for _, _, _, w in cases)
    # 0x prefixes, upper case, no blanks around ';', tabs, comments, blank lines, CRLF, no final newline.
    lines = [
        "# V100 cases",
        "0x%s ; %s ; 0X%s" % (" 0x".join(cases[0][0]), " ".join(cases[0][1]), cases[0][2]),
        "",
        "%s;%s;%s" % (" ".join(cases[1][0]).upper(), " ".join(cases[1][1]).upper(), cases[1][2].upper()),
        "   # indented comment",
        "\t%s\t;\t%s\t;\t%s\t" % ("\t".join(cases[2][0]), "\t".join(cases[2][1]), cases[2][2]),
        "%s ; %s ; %s\r" % (" ".join(cases[3][0]), " ".join(cases[3][1]), cases[3][2]),
        "  %s  ;  %s  ;  %s  " % ("   ".join(cases[4][0]), "  ".join(cases[4][1]), cases[4][2]),
        "%s ; %s ; %s" % (" ".join(cases[5][0]), " ".join(cases[5][1]), cases[5][2]),
    ]
    rc, out, err = run("mma", "-p", "v100-fp16", stdin="\n".join(lines))
    check(rc == 0 and out == want and err == "", "mma input syntax variants: rc %d, %r, want %r (%r)" %
          (rc, out, want, err))
    rc, out, err = run("mma", "--preset", "v100-fp16", stdin="")
    check(rc == 0 and out == "" and err == "", "mma on empty input prints nothing")
    rc, out, err = run("mma", "--preset", "v100-fp16", stdin="# only a comment\n\n")
    check(rc == 0 and out == "" and err == "", "mma skips comment-only input")


def list_rows(out):
    """The text of mma --list: its header's words, the rows by preset name, the notes under them."""
    lines = out.splitlines()
    body = lines[1:]
    end = next((i for i, line in enumerate(body) if not line.split() or line.split()[0].endswith(":")), len(body))
    return (lines[0].split() if lines else [], {line.split()[0]: line for line in body[:end]},
            "\n".join(body[end:]))


@test
def mma_list():
    rc, out, err = run("mma", "--list")
    check(rc == 0 and err == "", "mma --list exits 0: rc %d %r" % (rc, err))
    header, rows, notes = list_rows(out)
    for column in ("NAME", "INSTRUCTION", "INPUTS", "K", "N", "F", "SCALES", "ACCUMULATOR", "VALIDATED", "SOURCE"):
        check(column in header, "mma --list has the column %s: %r" % (column, header))
    for name in PRESETS:
        check(name in rows, "mma --list has a row for %s" % name)
    # Every preset the command knows (its unknown-preset message lists them) has a row.
    rc, _, err = run("mma", "--preset", "no-such-gpu", stdin="")
    known = err.split("valid presets are ", 1)[-1].strip().split(", ")
    check(rc == 2 and len(known) >= len(PRESETS), "the unknown-preset message lists the presets: %r" % err)
    for name in known:
        check(name in rows, "mma --list has a row for %s, which --preset knows" % name)
    check("e8m13" in rows.get("h100-e4m3", "") and "fp32" in rows.get("v100-fp16", ""),
          "mma --list shows the accumulator formats")
    # The instruction each preset models, as PTX and the CDNA ISA spell it.
    instructions = {"v100-fp16": "mma.sync.m8n8k4.f16", "h100-e4m3": "wgmma.mma_async",
                    "b200-mxf8f6f4": "tcgen05.mma", "rtx6000b-mxf4nvf4": "kind::mxf4nvf4",
                    "mi100-fp16": "(CDNA1)", "mi250-bf16": "v_mfma_f32_32x32x8bf16_1k", "mi300x-fp16": "(CDNA3)"}
    for name, instruction in instructions.items():
        check(instruction in rows.get(name, ""), "mma --list names %s's instruction %s: %r" %
              (name, instruction, rows.get(name)))
    # SCALES: format/products per scale for the block-scaled presets, '-' for the others.
    for name in PRESETS:
        cells = rows.get(name, "").split()
        want = "%s/%d" % SCALED[name] if name in SCALED else "-"
        check(want in cells, "mma --list: %s scales %s: %r" % (name, want, rows.get(name)))
    # F as the model uses it: exact sums, pairwise FTZ chains and two-stage sums say so.
    for name, f in (("mi100-fp16", "exact"), ("mi300x-fp16", "24 (F2=31)"), ("h100-fp16", "25")):
        check((" %s " % f) in rows.get(name, ""), "mma --list: %s has F = %s: %r" % (name, f, rows.get(name)))
    check(re.search(r"v_mfma\S*\s+\(CDNA2\)\s+fp16\s+8\s+4\s+-\s+-\s", rows.get("mi250-fp16", "")) is not None,
          "mma --list: mi250-fp16 (pairwise) has F = - and no scales: %r" % rows.get("mi250-fp16"))
    for word in ("INSTRUCTION", "SOURCE", "SCALES", "F2", "exact", "pairwise"):
        check(word in notes, "the notes under mma --list explain %s" % word)
    rc, out, err = run("mma", "--help")
    check(rc == 0 and "'#'" in out and "status 2" in out, "mma --help documents comments and the stop at a bad line")
    check("SA_0 ... SA_{K/n-1} ; SB_0 ... SB_{K/n-1}" in out and "b200-mxf8f6f4" in out and "3f800000" in out,
          "mma --help documents the scaled syntax with an example")
    check("e4m3fn or e5m2" not in out and "inputs" in out, "mma --help: --a-format names the preset's inputs list")


@test
def mma_list_csv_json():
    _, rows, _ = list_rows(run("mma", "--list")[1])
    rc_j, out_j, err_j = run("mma", "--list", "--json", "-")
    rc_c, out_c, err_c = run("mma", "--list", "--csv", "-")
    check(rc_j == 0 and rc_c == 0 and err_j == "" and err_c == "", "mma --list --json/--csv: %r %r" % (err_j, err_c))
    listing = json.loads(out_j)
    table = list(csv.DictReader(io.StringIO(out_c)))
    fields = ["name", "instruction", "inputs", "k", "n", "group", "f", "f2", "sum", "scales", "accumulator",
              "fp16_out", "validated", "source", "summary"]
    check([list(p) for p in listing] == [fields] * len(listing), "JSON fields: %r" % (listing[0] if listing else None))
    check(list(table[0]) == fields if table else False, "CSV header: %r" % out_c.splitlines()[:1])
    check([p["name"] for p in listing] == [r["name"] for r in table] == list(rows),
          "JSON, CSV and text list the same presets in the same order")
    for name in PRESETS:
        check(name in [p["name"] for p in listing], "JSON lists %s" % name)
    for p, r in zip(listing, table):
        name = p["name"]
        check(p["instruction"] and p["instruction"] in rows.get(name, "") and r["instruction"] == p["instruction"],
              "%s: the instruction %r in JSON, CSV and the text row" % (name, p["instruction"]))
        check(p["source"] and p["source"] in rows.get(name, "") and r["source"] == p["source"],
              "%s: the source %r in JSON, CSV and the text row" % (name, p["source"]))
        check(p["summary"] and r["summary"] == p["summary"], "%s: the summary in JSON and CSV" % name)
        check(p["sum"] in ("aligned", "exact", "pairwise") and r["sum"] == p["sum"], "%s: sum %r" % (name, p["sum"]))
        aligned = p["sum"] == "aligned"
        check((isinstance(p["f"], int) and p["f"] > 0) == aligned and (p["f"] is None) == (not aligned),
              "%s: f is a number exactly for an aligned sum: %r" % (name, p["f"]))
        check(p["f2"] is None or (aligned and isinstance(p["f2"], int) and p["f2"] > p["f"]),
              "%s: f2 %r" % (name, p["f2"]))
        check(r["f"] == ("" if p["f"] is None else str(p["f"])) and r["f2"] == ("" if p["f2"] is None else str(p["f2"])),
              "%s: CSV f, f2 as JSON's: %r %r" % (name, r["f"], r["f2"]))
        want = "%s/%d" % SCALED[name] if name in SCALED else None
        check(p["scales"] == want and r["scales"] == (want or ""), "%s: scales %r, want %r" % (name, p["scales"], want))
        check(isinstance(p["k"], int) and isinstance(p["n"], int) and isinstance(p["fp16_out"], bool),
              "%s: k, n and fp16_out are JSON numbers and booleans" % name)
    by_name = {p["name"]: p for p in listing}
    check(by_name.get("mi100-fp16", {}).get("sum") == "exact" and by_name.get("mi250-fp16", {}).get("sum") == "pairwise"
          and by_name.get("mi300x-fp16", {}).get("f2") == 31 and by_name.get("b200-mxf4", {}).get("group") == 16,
          "the AMD models and the fp4 groups in JSON")


@test
def mma_mixed_fp8():
    one, two, half, quarter = f32_bits(1.0), f32_bits(2.0), f32_bits(0.5), f32_bits(0.25)
    base = ["mma", "--preset", "h100-e4m3", "--a-format", "e4m3fn", "--b-format", "e5m2"]
    # 1*0.5 + 2*0.25 + 0 = 1 exactly.
    rc, out, err = run(*base, stdin="%08x %08x ; %08x %08x ; 00000000\n" % (one, two, half, quarter))
    check(rc == 0 and out == "3f800000\n" and err == "", "mixed e4m3fn x e5m2: 1*0.5 + 2*0.25 = 1: %r %r" % (out, err))
    # 1024 is an e5m2 value but above e4m3fn's 448: 1*0.5 + 2*1024 = 2048.5 (E = 11: F = 13 bits keep 2^-2).
    case = "%08x %08x ; %08x %08x ; 00000000\n" % (one, two, half, f32_bits(1024.0))
    rc, out, err = run(*base, stdin=case)
    check(rc == 0 and out == "%08x\n" % f32_bits(2048.5), "mixed: B in e5m2 takes 1024: %r %r" % (out, err))
    rc, out, err = run("mma", "--preset", "h100-e4m3", stdin=case)
    check(rc == 2 and out == "" and len(err.splitlines()) == 1 and "B_1" in err and "e4m3fn" in err,
          "without --b-format e5m2, 1024 is not an e4m3fn value: %r" % err)
    rc, out, err = run("mma", "--preset", "h100-e4m3", "--b-format", "e5m2", stdin=case)
    check(rc == 0 and out == "%08x\n" % f32_bits(2048.5), "--b-format alone keeps the preset's A format: %r" % out)


@test
def mma_long_k():
    # K = 40 > the instruction's 32: blocks of 32 then 8, chained. 40 * (1 * 0.5) = 20 exactly.
    one, half = f32_bits(1.0), f32_bits(0.5)
    line = "%s ; %s ; 00000000\n" % (" ".join(["%08x" % one] * 40), " ".join(["%08x" % half] * 40))
    rc, out, err = run("mma", "--preset", "h100-e4m3", stdin=line)
    check(rc == 0 and out == "%08x\n" % f32_bits(20.0) and err == "", "h100-e4m3 K=40: %r %r" % (out, err))
    rc, out, err = run("mma", "--preset", "h100-e4m3", stdin="%08x ; %08x ; %08x" % (one, half, f32_bits(2.0)))
    check(rc == 0 and out == "%08x\n" % f32_bits(2.5), "h100-e4m3 K=1, no final newline: %r %r" % (out, err))
    # Many lines stream through, one result each.
    many = "%08x %08x ; %08x %08x ; %08x\n" % (one, one, half, half, one) * 3000
    rc, out, err = run("mma", "--preset", "a100-fp16", stdin=many)
    check(rc == 0 and out == "40000000\n" * 3000, "mma streams 3000 lines: rc %d, %d lines" % (rc, len(out.splitlines())))


# Values every operand format of the f8f6f4 kinds holds (e4m3fn, e5m2, e3m2fn, e2m3fn, e2m1fn).
FP4_VALUES = [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0]


def scaled_line(a, b, c, sa, sb):
    words = lambda xs: " ".join("%08x" % f32_bits(x) for x in xs)
    return "%s ; %s ; %08x ; %s ; %s\n" % (words(a), words(b), f32_bits(c), words(sa), words(sb))


def exact_scaled_dot(a, b, c, sa, sb, n):
    """C + sum_k SA_{k/n} SB_{k/n} A_k B_k exactly, as the binary32 pattern it must be (checked exact)."""
    d = Fraction(c) + sum(Fraction(x) * Fraction(y) * Fraction(sa[k // n]) * Fraction(sb[k // n])
                          for k, (x, y) in enumerate(zip(a, b)))
    check(Fraction(float(d)) == d and Fraction(struct.unpack("<f", struct.pack("<f", float(d)))[0]) == d,
          "the test's exact result %s is a binary32 value" % d)
    return "%08x" % f32_bits(float(d))


@test
def mma_block_scaled():
    rng = random.Random(20251)
    signed = FP4_VALUES + [-v for v in FP4_VALUES[1:]]
    # MX (E8M0 per 32): K = 64, scales 2^3 and 2^-2 for A, 2^1 and 2^0 for B; small exact values so
    # that the exact result is a binary32 value and F = 25 loses nothing: D is the exact result.
    sa, sb = [2.0 ** 3, 2.0 ** -2], [2.0, 1.0]
    cases = []
    for _ in range(12):
        a = [rng.choice(signed) for _ in range(64)]
        b = [rng.choice(signed) for _ in range(64)]
        c = rng.choice([0.0, 0.75, -5.5, 1024.0])
        cases.append((a, b, c))
    stdin = "".join(scaled_line(a, b, c, sa, sb) for a, b, c in cases)
    want = "".join(exact_scaled_dot(a, b, c, sa, sb, 32) + "\n" for a, b, c in cases)
    for preset in ("b200-mxf8f6f4", "rtx6000b-mxf8f6f4"):
        for formats in ([], ["--a-format", "e2m1fn", "--b-format", "e3m2fn"], ["--b-format", "e5m2"]):
            rc, out, err = run("mma", "--preset", preset, *formats, stdin=stdin)
            check(rc == 0 and out == want and err == "", "%s %s, scales 2^3 2^-2 x 2^1 2^0: rc %d %r, want %r (%r)" %
                  (preset, " ".join(formats), rc, out, want, err))
    # The same data with all scales 1 is not the scaled result: the scales are used.
    rc, out, _ = run("mma", "--preset", "b200-mxf8f6f4", stdin="".join(scaled_line(a, b, c, [1.0, 1.0], [1.0, 1.0])
                                                                      for a, b, c in cases))
    want_one = "".join(exact_scaled_dot(a, b, c, [1, 1], [1, 1], 32) + "\n" for a, b, c in cases)
    check(rc == 0 and out == want_one and out != want, "b200-mxf8f6f4 with unit scales: %r" % out)
    # The example of mma --help: 32 x (1 x 0.5) x 2^0 x 2^2 = 64.
    example = "%s ; %s ; 00000000 ; 3f800000 ; 40800000\n" % (" ".join(["3f800000"] * 32), " ".join(["3f000000"] * 32))
    rc, out, err = run("mma", "--preset", "b200-mxf8f6f4", stdin=example)
    check(rc == 0 and out == "42800000\n", "the --help example prints 42800000: %r %r" % (out, err))
    # NVFP4 (UE4M3 per 16): E2M1 inputs, scales that are not powers of two; K = 64, four scales.
    sa, sb = [1.5, 0.375, 3.5, 0.8125], [0.8125, 2.0, 1.0, 0.5]
    cases = []
    for _ in range(8):
        cases.append(([rng.choice(signed) for _ in range(64)], [rng.choice(signed) for _ in range(64)],
                      rng.choice([0.0, 2.25, -96.0])))
    stdin = "".join(scaled_line(a, b, c, sa, sb) for a, b, c in cases)
    want = "".join(exact_scaled_dot(a, b, c, sa, sb, 16) + "\n" for a, b, c in cases)
    rc, out, err = run("mma", "--preset", "b200-mxf4nvf4", stdin=stdin)
    check(rc == 0 and out == want and err == "", "b200-mxf4nvf4 with UE4M3 scales: rc %d %r, want %r (%r)" %
          (rc, out, want, err))
    # E8M0 per 16 over the same data, scales 2^-1, 2^4, 2^0, 2^-3.
    sa2, sb2 = [0.5, 16.0, 1.0, 0.125], [1.0, 1.0, 2.0, 0.25]
    rc, out, err = run("mma", "--preset", "b200-mxf4nvf4-ue8m0",
                       stdin="".join(scaled_line(a, b, c, sa2, sb2) for a, b, c in cases))
    want = "".join(exact_scaled_dot(a, b, c, sa2, sb2, 16) + "\n" for a, b, c in cases)
    check(rc == 0 and out == want, "b200-mxf4nvf4-ue8m0: %r, want %r (%r)" % (out, want, err))


@test
def mma_block_scaled_errors():
    a32 = " ".join(["3f800000"] * 32)
    line = "%s ; %s ; 00000000" % (a32, a32)
    cases = [  # (preset, stdin, texts that the message must contain)
        # The unscaled syntax for a scaled preset, and the scaled one for an unscaled preset.
        ("b200-mxf8f6f4", line + "\n",
         ["line 1", "SA_0 ... SA_{K/32-1} ; SB_0 ... SB_{K/32-1}", "four ';'", "b200-mxf8f6f4", "found 2"]),
        ("b200-mxf8f6f4", line + " ; 3f800000\n", ["line 1", "four ';'", "found 3"]),
        ("b200-mxf8f6f4", line + " ; 3f800000 ; 3f800000 ; 3f800000\n", ["four ';'", "found 5"]),
        ("b200-mxf4nvf4", "3f800000 ; 3f800000 ; 00000000\n", ["SB_0 ... SB_{K/16-1}", "ue4m3", "16", "found 2"]),
        ("b200-e4m3", line + " ; 3f800000 ; 3f800000\n",
         ["line 1", "'A_0 ... A_{K-1} ; B_0 ... B_{K-1} ; C'", "two ';'", "b200-e4m3", "no block scales", "found 4"]),
        # E8M0 holds powers of two only; UE4M3 is unsigned.
        ("b200-mxf8f6f4", line + " ; 40400000 ; 3f800000\n", ["line 1", "3", "not a", "e8m0fnu"]),
        ("b200-mxf8f6f4", line + " ; 3f800000 ; 3fc00000\n", ["1.5", "e8m0fnu"]),
        ("b200-mxf4nvf4", "%s ; %s ; 00000000 ; c0000000 3f800000 ; 3f800000 3f800000\n" % (a32, a32),
         ["-2", "negative", "UE4M3"]),
        ("rtx6000b-mxf4nvf4", "%s ; %s ; 00000000 ; 3f800000 3f800000 ; 3f800000 be000000\n" % (a32, a32),
         ["-0.125", "negative"]),
        ("b200-mxf4nvf4", "%s ; %s ; 00000000 ; 3e99999a 3f800000 ; 3f800000 3f800000\n" % (a32, a32),
         ["0.3", "e4m3fn"]),  # 0.3 (binary32) is no e4m3fn value
        # Counts, K and the fields themselves.
        ("b200-mxf8f6f4", line + " ; 3f800000 3f800000 ; 3f800000\n", ["needs K / 32 = 1", "got 2 and 1"]),
        ("b200-mxf8f6f4", "3f800000 ; 3f800000 ; 00000000 ; 3f800000 ; 3f800000\n", ["K = 1", "multiple of 32"]),
        ("b200-mxf8f6f4", line + " ;  ; 3f800000\n", ["line 1", "SA is empty"]),
        ("b200-mxf8f6f4", line + " ; 3f800000 ;\n", ["line 1", "SB is empty"]),
        ("b200-mxf8f6f4", line + " ; 3f800000 ; 3f80000g\n", ["line 1", "SB_0", "'3f80000g'", "8 hex digits"]),
        ("b200-mxf8f6f4", line + " ; 0x3f8 ; 3f800000\n", ["SA_0", "'0x3f8'"]),
    ]
    for preset, stdin, needles in cases:
        rc, out, err = run("mma", "--preset", preset, stdin=stdin)
        lines = err.splitlines()
        ok = rc == 2 and len(lines) == 1 and lines[0].startswith("fpemu: ") and all(n in lines[0] for n in needles)
        check(ok, "fpemu mma --preset %s on %r: exit 2 with one line naming %r; got rc %d, stderr %r" %
              (preset, stdin[-60:], needles, rc, err))
        check(out == "", "fpemu mma --preset %s on %r: nothing on stdout, got %r" % (preset, stdin[-60:], out))
    # Streamed: the scaled lines before a bad one are printed.
    good = line + " ; 3f800000 ; 3f800000\n"
    rc, out, err = run("mma", "--preset", "b200-mxf8f6f4", stdin=good + line + "\n" + good)
    check(rc == 2 and out == "%08x\n" % f32_bits(32.0) and len(err.splitlines()) == 1 and "line 2" in err,
          "scaled mma stops at the first bad line, earlier results printed: %r %r" % (out, err))


@test
def mma_errors():
    good = "3f800000 ; 3f800000 ; 00000000"
    cases = [  # (args, stdin, texts that the message must contain)
        (["--preset", "v100-fp16"], "3f80000g ; 3f800000 ; 00000000\n",
         ["line 1", "3f80000g", "expected 8 hex digits of a binary32 bit pattern"]),
        (["--preset", "v100-fp16"], "3f800000 ; 3f8 ; 00000000\n", ["'3f8'", "8 hex digits"]),
        (["--preset", "v100-fp16"], "3f800000 ; 3f800000 ; 3f8000000\n", ["'3f8000000'", "8 hex digits"]),
        (["--preset", "v100-fp16"], "0x ; 3f800000 ; 00000000\n", ["'0x'", "8 hex digits"]),
        (["--preset", "v100-fp16"], "3f800000 3f800000 00000000\n", ["line 1", "';'"]),
        (["--preset", "v100-fp16"], "3f800000 ; 3f800000 00000000\n", ["line 1", "';'"]),
        (["--preset", "v100-fp16"], "3f800000 ; 3f800000 ; 00000000 ; 00000000\n", ["line 1", "';'"]),
        (["--preset", "v100-fp16"], " ; 3f800000 ; 00000000\n", ["line 1", "A", "empty"]),
        (["--preset", "v100-fp16"], "3f800000 ;  ; 00000000\n", ["line 1", "B", "empty"]),
        (["--preset", "v100-fp16"], "3f800000 ; 3f800000 3f800000 ; 00000000\n", ["line 1", "same length"]),
        (["--preset", "v100-fp16"], "3f800000 ; 3f800000 ;\n", ["line 1", "C"]),
        (["--preset", "v100-fp16"], "3f800000 ; 3f800000 ; 00000000 00000000\n", ["line 1", "C"]),
        (["--preset", "v100-fp16"], "# comment\n\n3f800001 ; 3f800000 ; 00000000\n", ["line 3", "A_0", "fp16"]),
        (["--preset", "h100-e4m3"], "3f800000 ; 43e80000 ; 00000000\n", ["B_0", "e4m3fn"]),  # 464 > 448
        (["--preset", "v100-fpx"], good + "\n", ["v100-fpx", "v100-fp16"]),
        (["--preset", "v100-fp16", "--out-format", "fp64"], good + "\n", ["'fp64'", "fp32", "fp16"]),
        (["--preset", "a100-bf16", "--out-format", "fp16"], good + "\n", ["a100-bf16", "fp16"]),
        (["--preset", "h100-e4m3", "--a-format", "e4m3fx"], good + "\n", ["e4m3fx"]),
        (["--preset", "a100-bf16", "--a-format", "e4m3fn"], good + "\n", ["a100-bf16", "e4m3fn"]),
        (["--out-format", "fp32"], good + "\n", ["--preset"]),
        (["--preset"], good + "\n", ["--preset"]),
        (["--preset", "v100-fp16", "--bogus"], good + "\n", ["--bogus"]),
        (["--preset", "v100-fp16"], "3f800000 ; zz", ["line 1", "';'"]),  # no final newline
        (["--preset", "v100-fp16"], "3f800000 ; 3f800000 ; x", ["line 1", "'x'"]),
    ]
    for args, stdin, needles in cases:
        rc, out, err = run("mma", *args, stdin=stdin)
        lines = err.splitlines()
        ok = rc == 2 and len(lines) == 1 and lines[0].startswith("fpemu: ") and all(n in lines[0] for n in needles)
        check(ok, "fpemu mma %s on %r: exit 2 with one line naming %r; got rc %d, stderr %r" %
              (" ".join(args), stdin, needles, rc, err))
        check(out == "", "fpemu mma %s on %r: nothing on stdout, got %r" % (" ".join(args), stdin, out))
    # The results before the first bad line are printed; nothing after it.
    rc, out, err = run("mma", "--preset", "v100-fp16", stdin=good + "\n" + "3f800000 ; 3f800000\n" + good + "\n")
    check(rc == 2 and out == "3f800000\n" and len(err.splitlines()) == 1 and "line 2" in err,
          "mma stops at the first bad line, earlier results printed: %r %r" % (out, err))
    # Huge or binary garbage: still one short line, no crash.
    for junk in ("g" * 1000000, "\x00\x01\xff" * 1000 + " ; 3f800000 ; 00000000", "3f800000 " * 200000 + "; ; 0"):
        p = subprocess.run([EXE, "mma", "--preset", "h100-e4m3"], input=junk.encode("latin-1"),
                           capture_output=True, timeout=120)
        lines = p.stderr.splitlines()
        check(p.returncode == 2 and p.stdout == b"" and len(lines) == 1 and lines[0].startswith(b"fpemu: line 1: ")
              and len(lines[0]) < 400, "mma on %d bytes of junk: rc %d, stderr %r" %
              (len(junk), p.returncode, p.stderr[:200]))


# ---- sum, dot, gemm: workloads with exact references and error bounds ----------------------------

BOUND_RE = re.compile(r"coefficient (\S+), absolute (\S+), (valid|not valid) \(")


def key_values(block):
    """The first word after each indented key: {"value": "1.5", "error": "...", ...}."""
    d = {}
    for line in block.splitlines():
        parts = line.split()
        if line.startswith("  ") and len(parts) >= 2 and parts[0] not in d:
            d[parts[0]] = parts[1]
    return d


def bound_lines(block, key="bound"):
    """(kind, coefficient, absolute, valid) of the lines '  KEY  KIND  NAME: coefficient C, absolute A, ...'."""
    found = []
    for line in block.splitlines():
        parts = line.split()
        if not line.startswith("  ") or not parts or parts[0] != key:
            continue
        m = BOUND_RE.search(line)
        if m:
            found.append((parts[1], float(m.group(1)), float(m.group(2)), m.group(3) == "valid"))
    return found


def sum_sections(out):
    """{method: its lines} of fpemu sum's report."""
    sections = {}
    for part in out.split("\nmethod ")[1:]:
        sections[part.split()[0]] = part
    return sections


def csv_rows(out):
    rows = list(csv.reader(io.StringIO(out)))
    return rows[0] if rows else [], rows[1:]


SUM_METHODS = ["recursive", "pairwise", "blocked", "kahan", "neumaier", "promoted", "stochastic"]
SUM_HEADER = ("method,n,input,accumulator,samples,seed,value,exact,error,rel_error,mean_rel_error,max_rel_error,"
              "bound,bound_coefficient,bound_absolute,bound_valid,max_error_over_bound,bound_violations").split(",")
DOT_HEADER = ("a_format,b_format,k,accumulator,scaling,out,samples,seed,value,exact,error,rel_error,mean_rel_error,"
              "max_rel_error,bound,bound_coefficient,bound_absolute,bound_valid,max_error_over_bound,"
              "bound_violations,exact_original,error_original,rel_error_original,bound_original_absolute,"
              "bound_original_valid,bound_original_violations,underflowed,saturated").split(",")
GEMM_HEADER = ("m,n,k,a_format,b_format,scaling,accumulator,out,alpha,beta,threads,samples,seed,reference,max_rel_error,"
               "mean_rel_error,normwise_error,normwise_bound,normwise_bound_valid,max_rel_error_original,"
               "normwise_error_original,underflowed,saturated,checksum,elapsed_s,products_per_s").split(",")


@test
def sum_default():
    rc, out, err = run("sum")
    check(rc == 0 and err == "", "sum exits 0 quietly: rc %d, stderr %r" % (rc, err))
    check("1000 bf16 values" in out and "accumulator: bf16 rne" in out, "sum header names n, --in and --acc")
    sections = sum_sections(out)
    check(sorted(sections) == sorted(SUM_METHODS), "sum --method all runs every method: %r" % sorted(sections))
    for name, block in sections.items():
        kv = key_values(block)
        ok = all(k in kv for k in ("value", "exact", "error", "rel_error"))
        check(ok, "sum %s prints value, exact, error, rel_error: %r" % (name, sorted(kv)))
        if ok:
            value, exact, error = float(kv["value"]), float(kv["exact"]), float(kv["error"])
            check(abs(value - exact - error) <= 1e-9 * max(1.0, abs(exact)), "sum %s: error = value - exact" % name)
            check(abs(float(kv["rel_error"]) - abs(error) / abs(exact)) <= 1e-5 * abs(float(kv["rel_error"])) + 1e-12,
                  "sum %s: rel_error = |error| / |exact|" % name)
        check(len(bound_lines(block)) >= 1 and bound_lines(block)[0][0] == "deterministic",
              "sum %s prints its deterministic bound first" % name)
    # Presets and the exact accumulator run the methods that apply to them.
    rc, out, _ = run("sum", "--preset", "h100-bf16", "--n", "300")
    check(rc == 0 and sorted(sum_sections(out)) == ["promoted", "recursive"], "sum --preset: recursive and promoted")
    rc, out, _ = run("sum", "--acc", "fp32", "--promote", "64", "--n", "300")
    check(rc == 0 and list(sum_sections(out)) == ["recursive"], "sum --promote: recursive (promoting) only")


@test
def sum_csv():
    rc, out, err = run("sum", "--csv", "-", "--n", "200")
    header, rows = csv_rows(out)
    check(rc == 0 and err == "" and header == SUM_HEADER, "sum --csv header: %r" % header)
    check(len(rows) == len(SUM_METHODS) and all(len(r) == len(SUM_HEADER) for r in rows),
          "sum --csv: one full row per method, got %d" % len(rows))
    check([r[0] for r in rows] == SUM_METHODS, "sum --csv rows in method order: %r" % [r[0] for r in rows])
    rc, out, err = run("sum", "--csv", "-", "--method", "kahan", "--samples", "4", "--n", "100", "--acc", "fp16")
    header, rows = csv_rows(out)
    check(rc == 0 and err == "" and len(rows) == 1 and rows[0][0] == "kahan" and rows[0][4] == "4",
          "sum --csv --samples 4: one row: %r" % rows)
    if rows:
        r = dict(zip(header, rows[0]))
        check(float(r["max_rel_error"]) >= float(r["mean_rel_error"]) and float(r["max_rel_error"]) == float(r["rel_error"]),
              "sum --samples: max >= mean and the row is the worst sample: %r" % r)
        check(r["bound_valid"] == "true" and r["bound_violations"] == "0" and float(r["max_error_over_bound"]) <= 1,
              "sum --samples: no violation of the valid kahan bound: %r" % r)


@test
def sum_bounds_hold():
    configs = [
        ["--acc", "fp16", "--n", "300"],
        ["--acc", "bf16", "--n", "60", "--dist", "uniform", "--scale", "3"],
        ["--acc", "fp16", "--acc-rounding", "rz", "--n", "300", "--dist", "positive"],
        ["--acc", "e5m2", "--format", "e5m2", "--n", "6", "--seed", "7"],
        ["--preset", "a100-fp16", "--n", "500"],
        ["--acc", "exact", "--format", "fp32", "--n", "100"],
    ]
    valid_seen = 0
    for args in configs:
        rc, out, err = run("sum", *args)
        check(rc == 0 and err == "", "sum %s exits 0: %r" % (" ".join(args), err))
        for name, block in sum_sections(out).items():
            kv = key_values(block)
            lines = bound_lines(block)
            if not lines or "error" not in kv:
                check(False, "sum %s %s: no bound or error printed" % (" ".join(args), name))
                continue
            kind, coef, absolute, valid = lines[0]
            if valid:
                valid_seen += 1
                check(abs(float(kv["error"])) <= absolute,
                      "sum %s %s: |error| %s <= bound %s" % (" ".join(args), name, kv["error"], absolute))
            else:
                check(absolute == float("inf"), "sum %s %s: an invalid bound is inf" % (" ".join(args), name))
    check(valid_seen >= 25, "sum: most deterministic bounds are valid in these configurations (%d)" % valid_seen)
    # Many samples at once: the CSV counts violations of the valid bound.
    rc, out, _ = run("sum", "--csv", "-", "--acc", "fp16", "--n", "200", "--samples", "25")
    header, rows = csv_rows(out)
    for r in rows:
        d = dict(zip(header, r))
        check(d["bound_violations"] == "0", "sum --samples 25 %s: no violation: %r" % (d["method"], d))


@test
def sum_recursive_stagnates():
    # [1, then 1999 x 2^-9] in bf16: 1 + 2^-9 rounds back to 1 (8 bits), so recursive summation stalls
    # at 1; Kahan's compensation recovers the lost low parts.
    data = ["--n", "2000", "--dist", "normal", "--mu", "0.001953125", "--sigma", "1e-12", "--first", "1",
            "--format", "bf16", "--acc", "bf16", "--csv", "-"]
    rc1, out1, _ = run("sum", "--method", "recursive", *data)
    rc2, out2, _ = run("sum", "--method", "kahan", *data)
    h1, r1 = csv_rows(out1)
    h2, r2 = csv_rows(out2)
    if check(rc1 == 0 and rc2 == 0 and len(r1) == 1 and len(r2) == 1, "sum stagnation runs: %r %r" % (out1, out2)):
        rec, kah = dict(zip(h1, r1[0])), dict(zip(h2, r2[0]))
        exact = 1 + 1999 * 2.0 ** -9
        check(float(rec["exact"]) == exact and float(kah["exact"]) == exact, "the exact sum is 1 + 1999 * 2^-9")
        check(float(rec["value"]) == 1.0, "recursive bf16 summation stagnates at 1: %s" % rec["value"])
        check(abs(float(kah["error"])) * 100 < abs(float(rec["error"])),
              "kahan is far more accurate: %s vs %s" % (kah["error"], rec["error"]))


@test
def dot_default():
    rc, out, err = run("dot")
    check(rc == 0 and err == "", "dot exits 0 quietly: rc %d, stderr %r" % (rc, err))
    check("K = 4096" in out and "A e4m3fn, B e4m3fn" in out and "preset h100-e4m3" in out,
          "dot defaults: K 4096, e4m3fn inputs, preset h100-e4m3")
    kv = key_values(out)
    for k in ("value", "exact", "error", "rel_error", "exact_original", "error_original", "rel_error_original"):
        check(k in kv, "dot prints %s" % k)
    if all(k in kv for k in ("value", "exact", "error", "exact_original", "error_original")):
        value = float(kv["value"])
        check(abs(value - float(kv["exact"]) - float(kv["error"])) <= 1e-7 * abs(value) + 1e-12, "dot: error = value - exact")
        check(abs(value - float(kv["exact_original"]) - float(kv["error_original"])) <= 1e-7 * abs(value) + 1e-12,
              "dot: error_original = value - exact_original")
    check(len(bound_lines(out)) == 1 and len(bound_lines(out, "bound_original")) == 1,
          "dot prints the accumulation bound and the bound against the original data")
    rc, out, err = run("dot", "--csv", "-", "--k", "300", "--samples", "3")
    header, rows = csv_rows(out)
    check(rc == 0 and err == "" and header == DOT_HEADER and len(rows) == 1 and len(rows[0]) == len(DOT_HEADER),
          "dot --csv: header and one row: %r" % out)


@test
def dot_bounds_hold():
    configs = [
        [],
        ["--acc", "fp16", "--k", "500"],
        ["--acc", "bf16", "--acc-rounding", "rz", "--k", "100", "--a-format", "bf16", "--b-format", "bf16"],
        ["--acc", "fp32", "--scaling", "mx32", "--k", "1000"],
        ["--acc", "fp32", "--scaling", "tensor", "--k", "700", "--seed", "3"],
        ["--preset", "h100-e4m3-deepseek", "--scaling", "tile128", "--k", "1024"],
        ["--preset", "a100-bf16", "--k", "2000", "--dist", "uniform"],
        ["--acc", "exact", "--scaling", "block128", "--k", "600"],
        ["--acc", "bf16", "--promote", "32", "--k", "1000", "--a-format", "bf16", "--b-format", "bf16"],
        ["--acc", "bf16", "--acc-rounding", "sr", "--sr-bits", "8", "--k", "100", "--a-format", "fp16", "--b-format", "e5m2"],
    ]
    valid_seen = 0
    for args in configs:
        rc, out, err = run("dot", *args)
        check(rc == 0 and err == "", "dot %s exits 0: %r" % (" ".join(args), err))
        kv = key_values(out)
        for key, err_key in (("bound", "error"), ("bound_original", "error_original")):
            lines = bound_lines(out, key)
            if not check(len(lines) == 1 and err_key in kv, "dot %s prints %s and %s" % (" ".join(args), key, err_key)):
                continue
            _, coef, absolute, valid = lines[0]
            if valid:
                valid_seen += 1
                check(abs(float(kv[err_key])) <= absolute,
                      "dot %s: |%s| %s <= %s %s" % (" ".join(args), err_key, kv[err_key], key, absolute))
    check(valid_seen >= 18, "dot: the bounds are valid in most configurations (%d of 20)" % valid_seen)
    rc, out, _ = run("dot", "--csv", "-", "--acc", "fp16", "--k", "256", "--samples", "20")
    header, rows = csv_rows(out)
    if check(rc == 0 and len(rows) == 1, "dot --samples 20 --csv"):
        d = dict(zip(header, rows[0]))
        check(d["bound_violations"] == "0" and d["bound_original_violations"] == "0",
              "dot --samples 20: no violations: %r" % d)
    # The exact accumulator with per-tensor scaling rounds once: relative error <= 2^-24.
    rc, out, _ = run("dot", "--csv", "-", "--acc", "exact", "--scaling", "tensor", "--k", "999", "--samples", "5")
    header, rows = csv_rows(out)
    if check(rc == 0 and len(rows) == 1, "dot --acc exact --csv"):
        check(float(dict(zip(header, rows[0]))["max_rel_error"]) <= 2.0 ** -24, "dot --acc exact: one rounding")


@test
def dot_reports_what_quantisation_lost():
    """Counted by hand on the user's vectors (e4m3fn: values below 2^-10 round to 0, the largest
    finite value is 448), over all samples on random data, and 0, not NaN, with no non-zero input."""
    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        files = {"a.txt": "1e-5 1000 1 0 -3\n", "b.txt": "1 1 0x1p-12 5 0.5\n", "zeros.txt": "0 0 0\n",
                 "huge.txt": "1 1e39 2\n", "ones.txt": "1 1 1\n"}
        for name, text in files.items():
            with open(os.path.join(tmp, name), "w") as f:
                f.write(text)
        path = lambda name: os.path.join(tmp, name)  # noqa: E731
        base = ["dot", "--acc", "fp32", "--a-format", "e4m3fn", "--b-format", "e4m3fn"]
        rc, out, err = run(*base, "--a-input", path("a.txt"), "--b-input", path("b.txt"), "--json", "-")
        if check(rc == 0, "dot of the user's vectors runs: %r" % err):
            r = json.loads(out)[0]
            # Non-zero: 4 of a, 5 of b; 1e-5 and 2^-12 underflow, 1000 saturates.
            check(r["underflowed"] == 2 / 9 and r["saturated"] == 1 / 9, "dot: 2 of 9 underflowed, 1 saturated: %r" % r)
            check(r["exact"] == 446.5 and r["exact_original"] == 998.5 + 2.0 ** -12 + struct.unpack("f", struct.pack(
                "f", 1e-5))[0], "dot: the exact values of the codes and of the data: %r" % r)
        rc, out, err = run(*base, "--a-input", path("a.txt"), "--b-input", path("b.txt"))
        check(rc == 0 and re.search(r"^  inputs: 0\.2222\d* of the non-zero ones underflowed to 0, 0\.1111\d* saturated",
                                    out, re.M), "dot prints the fractions lost: %r" % out)
        rc, out, err = run(*base, "--a-input", path("zeros.txt"), "--b-input", path("zeros.txt"), "--json", "-")
        if check(rc == 0, "dot of zeros runs: %r" % err):
            r = json.loads(out)[0]
            check(r["underflowed"] == 0 and r["saturated"] == 0, "no non-zero input, nothing lost: %r" % r)
        # A value beyond binary32's range is refused, not counted as a saturated input.
        rc, out, err = run(*base, "--a-input", path("huge.txt"), "--b-input", path("ones.txt"))
        lines = err.splitlines()
        check(rc == 2 and out == "" and len(lines) == 1 and lines[0].startswith("fpemu: ") and "infinite" in lines[0],
              "dot refuses a value beyond binary32: rc %d, %r" % (rc, err))
    # Unscaled, N(0, 1e-8) e4m3fn inputs all underflow: exact against the codes, wrong by 100%.
    rc, out, err = run("dot", "--json", "-", "--k", "512", "--sigma", "1e-4", "--acc", "fp32")
    if check(rc == 0, "dot --sigma 1e-4 runs: %r" % err):
        r = json.loads(out)[0]
        check(r["underflowed"] == 1 and r["saturated"] == 0 and r["rel_error"] == 0 and r["rel_error_original"] == 1,
              "every input underflowed: %r" % r)
    rc, out, err = run("dot", "--json", "-", "--k", "512", "--sigma", "1e-4", "--acc", "fp32", "--scaling", "tensor")
    if check(rc == 0, "dot --scaling tensor runs: %r" % err):
        r = json.loads(out)[0]
        check(r["underflowed"] < 0.01 and r["saturated"] == 0 and r["rel_error_original"] < 0.5,
              "a per-tensor scale keeps the data: %r" % r)
    # Over samples: the counts of all samples (each 2K non-zero inputs), so the mean of the samples'.
    args = ["dot", "--json", "-", "--k", "300", "--sigma", "1e-2", "--acc", "fp32", "--a-format", "e4m3fn",
            "--b-format", "e5m2"]
    rc, out, _ = run(*args, "--samples", "3")
    each = [run(*args, "--seed", str(s)) for s in range(3)]
    if check(rc == 0 and all(e[0] == 0 for e in each), "dot --samples 3 and its samples one by one run"):
        r, parts = json.loads(out)[0], [json.loads(e[1])[0] for e in each]
        for key in ("underflowed", "saturated"):
            mean = sum(p[key] for p in parts) / 3
            check(abs(r[key] - mean) <= 1e-15, "dot --samples 3: %s %r is the samples' mean %r" % (key, r[key], mean))
        check(0 < r["underflowed"] < 1, "at sigma 1e-2 some inputs underflow: %r" % r)


@test
def gemm_runs():
    rc, out, err = run("gemm")
    check(rc == 0 and err == "", "gemm exits 0 quietly: rc %d, stderr %r" % (rc, err))
    check("M = 64, N = 64, K = 512" in out and "A bf16, B bf16" in out and "accumulator: fp32 rne" in out,
          "gemm defaults: 64x64x512 bf16 with an fp32 accumulator")
    kv = key_values(out)
    for k in ("max_rel_error", "mean_rel_error", "checksum", "elapsed", "rate"):
        check(k in kv, "gemm prints %s" % k)
    if "max_rel_error" in kv and "mean_rel_error" in kv:
        check(0 <= float(kv["mean_rel_error"]) <= float(kv["max_rel_error"]) < 1e-2, "gemm: 0 <= mean <= max, small")
    rc, out, err = run("gemm", "--csv", "-", "--m", "8", "--n", "8", "--k", "64", "--samples", "2")
    header, rows = csv_rows(out)
    check(rc == 0 and err == "" and header == GEMM_HEADER and len(rows) == 1 and len(rows[0]) == len(GEMM_HEADER),
          "gemm --csv: header and one row: %r" % out)
    # The exact accumulator with fp32 inputs and output rounds once per output.
    rc, out, _ = run("gemm", "--csv", "-", "--acc", "exact", "--a-format", "fp32", "--b-format", "fp32", "--m", "16",
                     "--n", "16", "--k", "100", "--alpha", "0.75", "--beta", "-2", "--scaling", "tensor")
    header, rows = csv_rows(out)
    if check(rc == 0 and len(rows) == 1, "gemm --acc exact --csv"):
        check(float(dict(zip(header, rows[0]))["max_rel_error"]) <= 2.0 ** -24, "gemm --acc exact: one rounding")


@test
def gemm_normwise_error_within_bound():
    """The normwise error of gemm stays within the bound it reports, for formats, presets and scalings."""
    for args in (["--acc", "fp32"],
                 ["--preset", "h100-e4m3"],
                 ["--preset", "h100-e4m3-deepseek", "--scaling", "tile128"],
                 ["--a-format", "e2m1fn", "--b-format", "e2m1fn", "--acc", "fp32", "--scaling", "mx32"],
                 ["--acc", "fp16", "--alpha", "0.5", "--beta", "2"]):
        rc, out, err = run("gemm", "--csv", "-", "--m", "8", "--n", "8", "--k", "256", "--samples", "2", *args)
        header, rows = csv_rows(out)
        if not check(rc == 0 and len(rows) == 1, "gemm %s: %r" % (" ".join(args), err)):
            continue
        row = dict(zip(header, rows[0]))
        check(row["normwise_bound_valid"] == "true", "gemm %s: the bound holds its premises" % " ".join(args))
        check(0 <= float(row["normwise_error"]) <= float(row["normwise_bound"]),
              "gemm %s: 0 <= normwise error %s <= bound %s" % (" ".join(args), row["normwise_error"],
                                                                 row["normwise_bound"]))


@test
def gemm_reports_what_quantisation_lost():
    """Inputs that all underflow give D = 0, exact against the quantised zeros but wrong by 100%
    against the data; the report says so instead of reading as exact."""
    base = ["gemm", "--json", "-", "--m", "8", "--n", "8", "--k", "256", "--a-format", "e4m3fn", "--b-format", "e4m3fn",
            "--preset", "h100-e4m3-deepseek"]
    rc, out, err = run(*base, "--scaling", "none", "--sigma", "1e-4")
    if check(rc == 0, "gemm --sigma 1e-4 unscaled runs: %r" % err):
        r = json.loads(out)[0]
        check(r["max_rel_error"] == 0 and r["underflowed"] == 1 and r["saturated"] == 0,
              "every input underflowed, the quantised GEMM is exact: %r" % r)
        check(r["normwise_error_original"] == 1 and r["max_rel_error_original"] == 1,
              "against the data, D = 0 is wrong by 100%%: %r" % r)
    # Scaled per 1x128 tile / 128x128 block, nothing underflows and the error against the data is
    # the quantisation's, at most a few e4m3fn unit roundoffs.
    rc, out, err = run(*base, "--scaling", "tile128", "--sigma", "1e-4")
    if check(rc == 0, "gemm --scaling tile128 runs: %r" % err):
        r = json.loads(out)[0]
        check(r["underflowed"] < 0.01 and r["saturated"] == 0 and 0 < r["normwise_error_original"] < 0.1,
              "scaling keeps the data: %r" % r)
    rc, out, _ = run(*base, "--scaling", "none", "--sigma", "1e3")
    if check(rc == 0, "gemm --sigma 1e3 unscaled runs"):
        r = json.loads(out)[0]
        check(0.5 < r["saturated"] < 1 and r["normwise_error_original"] > 0.5, "beyond 448, inputs saturate: %r" % r)
    rc, out, _ = run("gemm", "--m", "8", "--n", "8", "--k", "64", "--a-format", "fp32", "--b-format", "fp32")
    kv = key_values(out)
    check(kv.get("max_rel_error") == kv.get("max_rel_error_original") and "0 of the non-zero ones underflowed" in out,
          "fp32 inputs lose nothing: the two reports agree: %r" % out)


@test
def gemm_reference_none_skips_the_errors_not_the_gemm():
    args = ["gemm", "--m", "12", "--n", "10", "--k", "128", "--samples", "2", "--json", "-"]
    rc1, exact, _ = run(*args)
    rc2, none, _ = run(*args, "--reference", "none")
    if check(rc1 == 0 and rc2 == 0, "gemm --reference exact and none run"):
        e, n = json.loads(exact)[0], json.loads(none)[0]
        check(e["checksum"] == n["checksum"], "the same GEMM either way: %s, %s" % (e["checksum"], n["checksum"]))
        check(e["reference"] == "exact" and 0 <= e["normwise_error"] <= e["normwise_bound"],
              "--reference exact: the normwise error within its bound: %r" % e)
        check(n["reference"] == "none" and all(n[k] is None for k in ("max_rel_error", "mean_rel_error",
                                                                      "normwise_error", "normwise_bound")),
              "--reference none: the error columns are null: %r" % n)
    rc, out, _ = run("gemm", "--m", "8", "--n", "8", "--k", "64", "--reference", "none")
    check(rc == 0 and "normwise" not in out and "checksum" in out, "--reference none: the report has no errors")


@test
def gemm_threads_identical():
    def results(*args):
        rc, out, _ = run("gemm", *args)
        kv = key_values(out)
        return rc, [kv.get(k) for k in ("max_rel_error", "mean_rel_error", "checksum")]
    for args in (["--m", "24", "--n", "20", "--k", "96"],
                 ["--m", "17", "--n", "9", "--k", "256", "--preset", "h100-e4m3-deepseek", "--scaling", "tile128"],
                 ["--m", "13", "--n", "11", "--k", "64", "--acc", "bf16", "--acc-rounding", "sr", "--beta", "1"]):
        rc1, r1 = results("--threads", "1", *args)
        rc2, r2 = results("--threads", "2", *args)
        check(rc1 == 0 and rc2 == 0 and None not in r1 and r1 == r2,
              "gemm %s: --threads 1 and 2 print the same results: %r %r" % (" ".join(args), r1, r2))


@test
def workload_progress_silent_in_logs():
    # The progress line is for terminals only (test_options.py checks it under a pty).
    rc, out, err = run("sum", "--n", "50", "--samples", "3", "--method", "pairwise", "--csv", "-")
    header, rows = csv_rows(out)
    check(rc == 0 and err == "" and header == SUM_HEADER and len(rows) == 1,
          "sum under a pipe: CSV on stdout, nothing on stderr: %r %r" % (err, out))
    rc, out, err = run("dot", "--k", "64", "--samples", "3")
    check(rc == 0 and err == "", "no progress line when stderr is not a terminal: %r" % err)


@test
def workload_errors():
    cases = [  # (args, texts that the one message line must contain)
        (["sum", "--method", "fastest"], ["fastest", "kahan"]),
        (["sum", "--format", "e4m3fx"], ["--format", "e4m3fx"]),
        (["sum", "--acc", "bf16", "--preset", "h100-bf16"], ["--acc", "--preset"]),
        (["dot", "--acc", "fp32", "--preset", "h100-e4m3"], ["--acc", "--preset"]),
        (["sum", "--n", "0"], ["--n", "1..100000000"]),
        (["sum", "--n", "ten"], ["--n", "ten"]),
        (["sum", "--sigma", "-1"], ["--sigma", "> 0"]),
        (["sum", "--sigma", "inf"], ["--sigma", "finite"]),
        (["sum", "--samples", "0"], ["--samples", "1..1000000"]),
        (["sum", "--block", "0"], ["--block"]),
        (["sum", "--acc-rounding", "sr", "--sr-bits", "33"], ["--sr-bits", "1..32"]),
        (["sum", "--acc-rounding", "rnx"], ["rnx"]),
        (["sum", "--preset", "h100-bf16", "--acc-rounding", "rz"], ["--acc-rounding", "--preset"]),
        (["sum", "--method", "kahan", "--preset", "h100-bf16"], ["kahan", "format accumulator"]),
        (["sum", "--method", "pairwise", "--promote", "16"], ["pairwise", "--promote"]),
        (["sum", "--dist", "gaussian"], ["gaussian", "normal"]),
        (["sum", "--dist", "uniform", "--mu", "1"], ["--mu", "uniform"]),
        (["sum", "--seed", "-3"], ["--seed"]),
        (["dot", "--k", "0"], ["--k", "1..100000000"]),
        (["dot", "--scaling", "tile64"], ["tile64", "tile128"]),
        (["dot", "--scaling", "tile128", "--acc", "fp32", "--promote", "64"], ["--promote 64", "128"]),
        (["gemm", "--scaling", "mx32", "--preset", "h100-e4m3-deepseek"], ["mx32", "h100-e4m3-deepseek", "128"]),
        (["dot", "--a-format", "e99m2"], ["--a-format", "e99m2"]),
        (["dot", "--preset", "z100"], ["z100"]),
        (["gemm", "--m", "0"], ["--m", "1..65536"]),
        (["gemm", "--k", "8192", "--m", "4096"], ["--m x --k", "2^24"]),
        (["gemm", "--threads", "2000"], ["--threads", "0..1024"]),
        (["gemm", "--out-format", "fp64"], ["--out-format", "fp64"]),
        (["gemm", "--alpha", "nan"], ["--alpha"]),
        (["gemm", "--beta", "1e300"], ["--beta", "2^100"]),
        (["gemm", "--bogus"], ["--bogus"]),
        (["dot", "--", "x"], ["'x'"]),
    ]
    for args, needles in cases:
        rc, out, err = run(*args)
        lines = err.splitlines()
        ok = rc == 2 and len(lines) == 1 and lines[0].startswith("fpemu: ") and all(n in lines[0] for n in needles)
        check(ok, "fpemu %s: exit 2 with one line naming %r; got rc %d, stderr %r" % (" ".join(args), needles, rc, err))
        check(out == "", "fpemu %s: nothing on stdout, got %r" % (" ".join(args), out[:200]))


# ---- Errors -------------------------------------------------------------------------------------


@test
def errors():
    cases = [  # (args, stdin, text that the message must contain)
        (["round", "--format", "e4m3fx", "1"], None, "e4m3fx"),
        (["round", "--format", "e99m2", "1"], None, "e99m2"),
        (["round", "--format", "e4m3fn", "1.2.3"], None, "'1.2.3'"),
        (["round", "--format", "e4m3fn", "abc"], None, "abc"),
        (["round", "--format", "e4m3fn", "--rounding", "rnx", "1"], None, "rnx"),
        (["round", "--format", "e4m3fn", "--rounding", "sr", "--sr-bits", "0", "1"], None, "1..32"),
        (["round", "--format", "e4m3fn", "--rounding", "sr", "--sr-bits", "33", "1"], None, "33"),
        (["round", "--format", "e4m3fn", "--sr-bits", "x", "1"], None, "'x'"),
        (["round", "--format", "e2m1fn", "--overflow", "nan", "1"], None, "e2m1fn"),
        (["round", "--format", "e4m3fn", "--overflow", "wrap", "1"], None, "wrap"),
        (["round", "--format", "e4m3fn", "--seed", "-1", "1"], None, "-1"),
        (["round", "--format", "e4m3fn", "--stream", "4294967296", "1"], None, "4294967296"),
        (["round", "--format", "e4m3fn", "--mdoe", "rz", "1"], None, "--mdoe"),
        (["round", "1"], None, "--format"),
        (["decode", "--format", "e4m3fn", "zz"], None, "zz"),
        (["decode", "--format", "e4m3fn", "0x1ff"], None, "0x1ff"),
        (["decode", "--format", "tf32", "80000"], None, "19"),
        (["decode", "--format", "fp32", "123456789"], None, "123456789"),
        (["decode", "--format", "e4m3fn", "7e", "0x100"], None, "0x100"),
        (["decode", "--format", "nonsense", "7e"], None, "nonsense"),
        (["decode", "--format", "e4m3fn"], None, "CODE"),
        (["decode", "--format", "e4m3fn", "--", "-7e"], None, "-7e"),
        (["op", "add", "--format", "e4m3fn"], "38 38\n38 38 38\n", "line 2"),
        (["op", "sqrt", "--format", "e4m3fn"], "38 38\n", "line 1"),
        (["op", "mul", "--format", "e4m3fn"], "38 4g\n", "4g"),
        (["op", "mul", "--format", "e4m3fn"], "\n38 100\n", "line 2"),
        (["op", "pow", "--format", "e4m3fn"], "38 38\n", "pow"),
        (["op", "add", "--format", "bf16", "--rounding", "sr", "--sr-bits", "0"], "3f80 3f80\n", "--sr-bits"),
        (["op", "add"], "", "--format"),
        (["frobnicate"], None, "frobnicate"),
        ([], None, "subcommand"),
        (["formats", "--yaml"], None, "--yaml"),
        (["formats", "--", "x"], None, "'x'"),
        (["--", "x"], None, "x"),
    ]
    for args, stdin, needle in cases:
        rc, out, err = run(*args, stdin=stdin)
        lines = err.splitlines()
        ok = rc == 2 and len(lines) == 1 and lines[0].startswith("fpemu: ") and needle in lines[0]
        check(ok, "fpemu %s: exit 2 with one line naming %r; got rc %d, stderr %r" % (" ".join(args), needle, rc, err))
        first_bad_is_first = not (stdin and "\n" in stdin.strip())
        if first_bad_is_first:
            check(out == "", "fpemu %s: nothing on stdout, got %r" % (" ".join(args), out))
    # A bad value among the arguments prints nothing, even after good ones; from stdin, the
    # lines before the first bad input are printed and nothing after it.
    rc, out, err = run("round", "--format", "e4m3fn", "0.5", "1.2.3", "0.25")
    check(rc == 2 and out == "" and "1.2.3" in err, "round prints nothing for a bad argument value: %r" % out)
    rc, out, err = run("op", "add", "--format", "e4m3fn", stdin="38 38\n38\n38 38\n")
    check(rc == 2 and out == "0x40 -\n" and "line 2" in err, "op stops at the first bad line: %r" % out)


# ---- demo ---------------------------------------------------------------------------------------


@test
def demo():
    rc, out, err = run("demo")
    rc2, out2, _ = run("demo")
    lines = out.splitlines()
    check(rc == 0 and err == "" and out == out2, "demo exits 0 and is deterministic")
    check(20 < len(lines) <= 100 and max(map(len, lines)) <= 110, "demo fits two screens: %d lines, width %d" %
          (len(lines), max(map(len, lines)) if lines else 0))
    for part in ("(1)", "(2)", "(3)", "(4)"):
        check(any(line.startswith(part) for line in lines), "demo has part %s" % part)
    check("0x3dcd" in out and "0x1d" in out and "0.10009765625" in out, "demo shows 0.1 in e4m3fn and bf16")


# ---- optim ---------------------------------------------------------------------------------------


def check_usage_errors(cases):
    """Each (args, needle): exit 2, one stderr line "fpemu: ..." containing needle, empty stdout."""
    for args, needle in cases:
        rc, out, err = run(*args)
        lines = err.splitlines()
        ok = rc == 2 and len(lines) == 1 and lines[0].startswith("fpemu: ") and needle in lines[0]
        check(ok, "fpemu %s: exit 2 with one line naming %r; got rc %d, stderr %r" % (" ".join(args), needle, rc, err))
        check(out == "", "fpemu %s: nothing on stdout, got %r" % (" ".join(args), out[:200]))


@test
def optim_errors():
    cases = [  # (args, text that the message must contain)
        (["optim", "--optimizer", "rmsprop"], "'rmsprop'"),
        (["optim", "--optimizer", "adam", "--policy", "bf17"], "'bf17'"),
        (["optim", "--optimizer", "adam", "--lr", "nan"], "'nan'"),
        (["optim", "--optimizer", "adam", "--lr", "-1"], "-1"),
        (["optim", "--optimizer", "adam", "--beta1", "1.5"], "1.5"),
        (["optim", "--optimizer", "sgd", "--steps", "0"], "'0'"),
        (["optim", "--optimizer", "sgd", "--nesterov"], "nesterov"),
        (["optim", "--optimizer", "sgd", "--momentum", "0.9", "--dampening", "0.5", "--nesterov"], "0.5"),
        (["optim", "--optimizer", "adam", "--momentum", "0.9"], "--momentum"),
        (["optim", "--optimizer", "adam", "--cols", "10001"], "10001"),
        (["optim", "--optimizer", "lion", "--policy", "bf16-sr40"], "40"),
        (["optim"], "--optimizer"),
    ]
    check_usage_errors(cases)


@test
def optim_memory():
    # Bytes per parameter of Adam, from the table of Warner's optimi documentation (2023): mixed
    # precision 16-22, bf16 with Kahan summation 10-12, pure bf16 8-10.
    expected = {"mixed": (16, 22), "bf16-kahan": (10, 12), "bf16": (8, 10)}
    rc, out, err = run("optim", "--memory")
    check(rc == 0 and err == "", "optim --memory exits 0: rc %d, %r" % (rc, err))
    table = {}
    for line in out.splitlines():
        f = line.split()
        if len(f) >= 4 and f[2].isdigit() and f[3].isdigit():
            table[(f[0], f[1])] = (int(f[2]), int(f[3]))
    for policy, mm in expected.items():
        check(table.get(("adam", policy)) == mm, "optim --memory: adam %s is %d-%d bytes, got %r" %
              (policy, mm[0], mm[1], table.get(("adam", policy))))
    for opt in ("sgd", "adam", "adamw", "lion"):
        for policy in ("fp32", "mixed", "mixed-fp16", "bf16", "bf16-kahan", "bf16-sr", "fp16", "fp16-kahan"):
            check((opt, policy) in table, "optim --memory has a row for %s %s" % (opt, policy))
    rc, out, err = run("optim", "--memory", "--json", "-")
    try:
        rows = json.loads(out) if rc == 0 else []
    except ValueError:
        rows = []
    check(rc == 0 and len(rows) == len(table), "optim --memory --json: one object per table row")
    for r in rows:
        if r.get("optimizer") == "adam" and r.get("policy") in expected:
            mm = expected[r["policy"]]
            check((r["min"], r["max"]) == mm and sum(c["bytes"] for c in r["components"]) == mm[1] and
                  sum(c["bytes"] for c in r["components"] if not c["optional"]) == mm[0],
                  "optim --memory --json: adam %s: %r" % (r["policy"], r))


@test
def optim_csv():
    args = ("optim", "--optimizer", "sgd", "--lr", "0.1", "--momentum", "0.9", "--steps", "7", "--cols", "3")
    rc, out, err = run(*args, "--csv", "-")
    lines = out.splitlines()
    check(rc == 0 and err == "" and lines and lines[0] == "step,loss,w0,w1,w2",
          "optim --csv header: rc %d, %r" % (rc, lines[:1]))
    check(len(lines) == 1 + 7 + 1, "optim --csv --steps 7: 8 lines after the header, got %d" % (len(lines) - 1))
    rows = [line.split(",") for line in lines[1:]]
    check([r[0] for r in rows] == [str(i) for i in range(8)] and all(len(r) == 5 for r in rows),
          "optim --csv: steps 0..7, 5 fields each")
    rc2, out2, _ = run(*args, "--csv", "-")
    check(rc2 == 0 and out2 == out, "optim --csv is deterministic")
    rc, out, err = run(*args, "--json", "-")
    try:
        j = json.loads(out)
    except ValueError:
        j = {}
    ok = rc == 0 and len(j.get("trajectory", [])) == 7 and len(j.get("loss", [])) == 8
    check(ok, "optim --json: 7 weight vectors and 8 losses")
    if ok and len(rows) == 8:
        same = all([float(x) for x in rows[k + 1][2:]] == j["trajectory"][k] for k in range(7))
        same = same and [float(r[1]) for r in rows] == j["loss"] and [float(x) for x in rows[0][2:]] == j["w0"]
        check(same, "optim --csv and --json print the same values, exactly")
        check(j["loss"][-1] < j["loss"][0], "optim: the loss decreases: %r" % j["loss"])
        check(all(struct.unpack("<f", struct.pack("<f", x))[0] == x for x in j["A"] + j["b"] + j["w0"]) and
              all(-1 <= x <= 1 for x in j["A"] + j["b"] + j["w0"]) and len(j["A"]) == 32 * 3,
              "optim --json: A, b, w0 are binary32 values in [-1, 1]")

@test
def train_errors():
    cases = [  # (args, text that the message must contain)
        (["train", "--data", "no-such-data"], "'no-such-data'"),
        (["train", "--data", "heart_scale", "--model", "svm"], "'svm'"),
        (["train", "--data", "heart_scale", "--policy", "fp32,bf17"], "'bf17'"),
        (["train", "--data", "heart_scale", "--lr", "nan"], "nan"),
        (["train", "--data", "heart_scale", "--optimizer", "adam", "--beta2", "1"], "--beta2: '1' is out of range"),
        (["train", "--data", "heart_scale", "--epochs", "0"], "0"),
        (["train", "--data", "heart_scale", "--grad-accum", "0"], "0"),
        (["train", "--data", "heart_scale", "--clip", "-1"], "-1"),
        (["train", "--data", "heart_scale", "--test-fraction", "1"], "1"),
        (["train", "--data", "heart_scale", "--model", "mlp", "--hidden", "0"], "0"),
        (["train", "--data", "quadratic", "--lr", "2"], "2"),
        (["train", "--data", "quadratic", "--format", "e11m4"], "e11m4"),
        (["train", "--data", "heart_scale", "--gemm", "fp8-bogus"], "gemm recipe 'fp8-bogus'"),
        (["train", "--data", "heart_scale", "--gemm", "e4m3fn/tile64/fp32"], "unknown scaling 'tile64'"),
        (["train", "--data", "heart_scale", "--gemm", "bf16/none/h100-e4m3"], "takes inputs"),
        (["train", "--data", "heart_scale", "--policy", "bf16", "--gemm", "weights/none/h100-e4m3"], "takes inputs"),
        (["train", "--data", "heart_scale", "--gemm-error-every", "-1"], "-1"),
        (["train", "--data", "heart_scale", "--gemm-error-rows", "0"], "0"),
    ]
    check_usage_errors(cases)


@test
def train_quadratic_floor():
    # Theorem 1 of Zamirai et al. 2020: nearest rounding stalls at or above the predicted floor,
    # which grows as the step size shrinks; Kahan and stochastic rounding get at least as close as
    # fp32.
    rc, out, err = run("train", "--data", "quadratic", "--lr", "0.2,0.05")
    check(rc == 0, "train --data quadratic exits 0: %r" % err)
    rows = [l.split() for l in out.splitlines() if l.strip() and l.split()[0] in ("0.2", "0.05")]
    check(len(rows) == 2, "two table rows, got %r" % out)
    for r in rows:
        lr, steps, predicted, nearest, kahan, sr, fp32 = r[0], int(r[1]), *map(float, r[2:7])
        check(steps == round(80 / float(lr)), "steps 80/lr for lr %s: %d" % (lr, steps))
        check(nearest >= predicted > 0, "nearest %g >= predicted %g" % (nearest, predicted))
        check(kahan <= fp32 and sr <= fp32, "kahan %g and sr %g at most fp32 %g" % (kahan, sr, fp32))
    if len(rows) == 2:
        check(float(rows[1][2]) > float(rows[0][2]), "the floor grows as lr shrinks")


@test
def train_heart_scale_csv():
    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "curves.csv")
        rc, out, err = run("train", "--data", "heart_scale", "--epochs", "3", "--batch", "54",
                           "--policy", "fp32,bf16-kahan", "--csv", path)
        check(rc == 0, "train heart_scale exits 0: %r" % err)
        check(out.count("epoch   3/3") == 2, "a progress line per epoch and policy: %r" % out)
        check(os.listdir(tmp) == ["curves.csv"], "only the csv is left: %r" % os.listdir(tmp))
        with open(path) as f:
            rows = list(csv.DictReader(f))
        steps = [r for r in rows if r["kind"] == "step"]
        epochs = [r for r in rows if r["kind"] == "epoch"]
        # 216 training rows in batches of 54: 4 steps per epoch, 3 epochs, 2 policies.
        check(len(steps) == 24 and len(epochs) == 6, "24 step rows and 6 epoch rows, got %d, %d" % (len(steps), len(epochs)))
        check(all(int(r["step"]) == 4 * int(r["epoch"]) for r in epochs), "epoch rows carry the step count")
        check(all(0 < float(r["test_accuracy"]) <= 1 for r in epochs), "accuracies within (0, 1]")


@test
def train_fp8_recipes_report_gemm_errors():
    # Two GEMM recipes, probed every 2 steps: a gemm_error row per GEMM of the logreg model (fprop1,
    # wgrad1) at steps 1, 3, ..., and the text's table of them. fp32 operands are not rounded, so
    # both references agree; e4m3fn rounding costs percents, its accumulation (promoted) far less.
    rc, out, err = run("train", "--data", "heart_scale", "--epochs", "2", "--batch", "54", "--gemm",
                       "weights,fp8-deepseek", "--gemm-error-every", "2", "--csv", "-")
    check(rc == 0, "train --gemm exits 0: %r" % err)
    rows = list(csv.DictReader(io.StringIO(out)))
    probes = [r for r in rows if r["kind"] == "gemm_error"]
    # 216 rows in batches of 54: 4 steps an epoch, 8 steps, probed at 1, 3, 5, 7.
    check(len(probes) == 2 * 2 * 4, "2 recipes x 2 GEMMs x 4 probes, got %d" % len(probes))
    check([r["step"] for r in probes[:8:2]] == ["1", "3", "5", "7"], "probed steps: %r" % [r["step"] for r in probes])
    check({r["layer"] for r in probes} == {"fprop1", "wgrad1"}, "the logreg model's GEMMs")
    for r in probes:
        if r["step"] == "1" and r["layer"] == "fprop1":
            continue  # zero initial weights: an exact zero product, error 0
        o, q = float(r["error_original"]), float(r["error_quantised"])
        if r["gemm"] == "weights":
            check(o == q and 0 <= o < 1e-5, "fp32 operands: one reference, fp32 accumulation: %r" % r)
        else:
            check(0 < o < 0.2 and q < o / 50, "fp8-deepseek: rounding dominates: %r" % r)
    rc, out, err = run("train", "--data", "heart_scale", "--epochs", "1", "--gemm", "fp8-deepseek",
                       "--gemm-error-every", "3")
    check(rc == 0 and "GEMM error" in out and "fprop1" in out and "wgrad1" in out, "the text's GEMM table: %r" % out)
    check("fp32 fp8-deepseek" in out, "the summary names the recipe: %r" % out)



def casgd_table(out):
    """The final table: {(recipe, seed): (loss, gap)}."""
    rows = {}
    for line in out.splitlines():
        f = line.split()
        if len(f) == 5 and f[0] in "ABCDEFGHI" and f[1].isdigit():
            rows[(f[0], int(f[1]))] = (float(f[2]), float(f[3]))
    return rows


@test
def casgd_runs():
    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "trajectory.csv")
        rc, out, err = run("casgd", "--data", "synth:600,24", "--recipe", "A,C,I", "--b", "4", "--s", "4",
                           "--P", "3", "--outer", "10", "--seed", "1,2", "--eval-every", "5", "--csv", path)
        check(rc == 0, "casgd exits 0: %r" % err)
        rows = casgd_table(out)
        check(len(rows) == 6, "a row per recipe and seed: %r" % out)
        check(all(rows[("A", s)][1] == 0 for s in (1, 2)), "recipe A's gap to itself is 0")
        check(all(0 < rows[(r, s)][1] < 0.05 for r in "CI" for s in (1, 2)), "C and I differ a little from A")
        check("largest relative final-loss gap to recipe A over 2 seeds" in out, "a gap summary over the seeds")
        check("u_A=bf16 u_G=b u_r=b u_c=fp32" in out, "the recipes' slots are printed")
        check(os.listdir(tmp) == ["trajectory.csv"], "only the csv is left: %r" % os.listdir(tmp))
        with open(path) as f:
            traj = list(csv.DictReader(f))
        # evaluations at outer 0, 5, 10 for 3 recipes and 2 seeds
        check(len(traj) == 18, "18 trajectory rows, got %d" % len(traj))
        check(all(int(r["sgd_steps"]) == 4 * int(r["outer"]) for r in traj), "sgd_steps = s * outer")
        last = {(r["recipe"], int(r["seed"])): float(r["loss"]) for r in traj if r["outer"] == "10"}
        check(all(last[k] == rows[k][0] for k in rows), "the csv's last losses are the table's")
    # --s 1 is mini-batch SGD: with every slot binary64, CA-SGD with s = 4 over 10 outer iterations
    # lands where 40 SGD steps on the same samples land.
    slots = []
    for name in ("u_A", "u_G", "u_r", "u_c", "u_sigma", "u_g", "u_AR_r", "u_AR_G", "u_x"):
        slots += ["--slot", name + "=fp64"]
    common = ["casgd", "--data", "synth:600,24", "--recipe", "A", "--b", "4", "--P", "2"] + slots
    _, ca, _ = run(*common, "--s", "4", "--outer", "10")
    _, sgd, _ = run(*common, "--s", "1", "--outer", "40")
    a, b = casgd_table(ca).get(("A", 42)), casgd_table(sgd).get(("A", 42))
    check(a is not None and b is not None and abs(a[0] - b[0]) <= 1e-12 * abs(b[0]),
          "binary64 CA-SGD (s=4, 10 outer) and SGD (40 steps) reach the same loss: %r %r" % (a, b))


@test
def casgd_bound():
    rc, out, err = run("casgd", "--data", "synth:2000,64", "--recipe", "C", "--b", "8", "--s", "8", "--P", "4",
                       "--outer", "3", "--bound")
    check(rc == 0, "casgd --bound exits 0: %r" % err)
    check(out.count("E_") == 9, "nine E terms: %r" % out)
    m = re.search(r"bound \(1 \+ Omega\) sum (\S+)\s+measured \|\|x_hat - x\|\|_2 (\S+)", out)
    check(m is not None and 0 < float(m.group(2)) <= float(m.group(1)), "measured <= bound: %r" % out)
    check("C(P)=9.6" in out and "holds" in out, "C(P) = 2.4 P by default, and the hypothesis holds")
    rc, out, err = run("casgd", "--data", "synth:2000,64", "--recipe", "C", "--b", "8", "--s", "8", "--P", "4",
                       "--outer", "3", "--bound", "--cp", "measured")
    check(rc == 0 and "C(P)=9.6" not in out, "--cp measured replaces 2.4 P: %r" % err)
    rc, out, err = run("casgd", "--data", "synth:2000,64", "--recipe", "C", "--b", "8", "--s", "8", "--P", "4",
                       "--outer", "3", "--bound", "--cp", "nccl-fit")
    m = re.search(r"C\(P\)=(\S+?),", out)
    check(rc == 0 and m is not None and abs(float(m.group(1)) - 4.62 * 4 ** 0.56) < 0.05,
          "--cp nccl-fit is the paper's 4.62 P^0.56: %r %r" % (out, err))


def casgd_table_2_hand(b, s, P, n_loc, alpha, beta, gamma, margin_bytes, gram_bytes, speedup):
    """Table 2 and Equation 2 of Devarakonda et al. 2026 written out: (T_SGD, T_CA) in seconds."""
    lat, ring, sb = 2 * math.log2(P), 2 * (P - 1) / P, s * b
    sgd = gamma * 4 * sb * n_loc + beta * margin_bytes * sb * ring + alpha * s * lat
    ca = (gamma * (4 * sb * n_loc + b * b * s * (s - 1)) + gamma / speedup * 2 * sb * sb * n_loc
          + beta * (margin_bytes * sb + gram_bytes * sb * sb) * ring + alpha * lat)
    return sgd, ca


@test
def casgd_cost_and_radius():
    # Recipe C at b = 8, s = 8, P = 4, n = 64 (n_loc = 16), linear regression, with the defaults.
    args = ["casgd", "--data", "synth:2000,64", "--loss", "linear", "--recipe", "C", "--b", "8", "--s", "8", "--P", "4",
            "--outer", "50", "--bound"]
    rc, out, err = run(*args)
    check(rc == 0, "casgd --bound exits 0: %r" % err)
    m = re.search(r"total \(s\)\s+(\S+)\s+(\S+)", out)
    sgd, ca = casgd_table_2_hand(8, 8, 4, 16, 7e-6, 4e-11, 1 / 19.5e12, 2, 4, 16)
    check(m is not None and abs(float(m.group(1)) / sgd - 1) < 1e-3 and abs(float(m.group(2)) / ca - 1) < 1e-3,
          "Table 2's totals == the paper's formula by hand (%g, %g): %r" % (sgd, ca, out))
    cheaper = [s for s in range(2, 5000) if casgd_table_2_hand(8, s, 4, 16, 7e-6, 4e-11, 1 / 19.5e12, 2, 4, 16)[1] <
               casgd_table_2_hand(8, s, 4, 16, 7e-6, 4e-11, 1 / 19.5e12, 2, 4, 16)[0]]
    want = "crossover s* = %d (CA-SGD cheaper for %d <= s <= %d;" % (cheaper[0], cheaper[0], cheaper[-1])
    check(want in out, "the crossover == a brute-force search (%s): %r" % (want, out))
    m = re.search(r"at M: sqrt\(Equation 9's right side\) (\S+)\s+measured \|\|x_hat_M - x\*\|\|_2 (\S+)", out)
    check(m is not None and 0 < float(m.group(2)) <= float(m.group(1)), "measured distance <= Equation 9's bound: %r" % out)
    check("lambda_min(A^T A/m), exact" in out and "theorem's hypotheses: hold" in out, "linear: exact mu_F, L_F: %r" % out)
    # Given constants replace the computed ones; the radius is then sqrt(N / (1 - q)) by hand.
    rc, out, err = run(*args, "--mu-F", "0.01", "--L-F", "0.05", "--sigma-g2", "2", "--cost-alpha", "0")
    check(rc == 0 and out.count("(given)") == 3, "three constants given: %r %r" % (out, err))
    rho = float(re.search(r"\n  rho (\S+) ", out).group(1))
    chi = float(re.search(r"chi (\S+) \(minimises", out).group(1))
    a = (1 - 0.01 * 0.5) ** 8
    nu = 0.5 * 2 * (1 - a) / (0.01 * 8)
    radius = math.sqrt(((1 + chi) * nu + (1 + 1 / chi) * rho ** 2) / (1 - (1 + chi) * a))
    got = float(re.search(r"radius sqrt\(N / \(1 - q\)\) (\S+)", out).group(1))
    check(abs(got / radius - 1) < 1e-3, "the radius == Equation 9's limit by hand (%g): %r" % (radius, out))
    check("crossover s* = none" in out, "--cost-alpha 0: no latency to save, CA-SGD never cheaper: %r" % out)
    # Logistic regression: the constants are bounds, and the run says so.
    rc, out, err = run("casgd", "--data", "synth:600,24", "--recipe", "C", "--b", "4", "--s", "4", "--P", "2", "--outer", "5",
                       "--bound")
    check(rc == 0 and "bound sigma'(R) lambda_min(A^T A/m)" in out and "sigma(R)^2" in out, "logistic bounds: %r" % out)


@test
def casgd_errors():
    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        bad = os.path.join(tmp, "bad.svm")
        with open(bad, "w") as f:
            f.write("1 1:0.5\n-1 2:0.25\n2 1:1\n")
        weights = os.path.join(tmp, "w.txt")
        cases = [  # (args, text that the message must contain)
            (["casgd", "--loss", "hinge"], "'hinge'"),
            (["casgd", "--recipe", "Z"], "'Z'"),
            (["casgd", "--recipe", "C", "--slot", "u_q=fp32"], "'u_q'"),
            (["casgd", "--slot", "u_G=bf16,nonsense"], "'nonsense'"),
            (["casgd", "--slot", "u_G=fp64,fp32"], "needs a format"),
            (["casgd", "--data", "synth:10,10", "--P", "11"], "--P 11"),
            (["casgd", "--data", "synth:10"], "synth:M,N"),
            (["casgd", "--data", bad], "bad.svm:3: label 2 is not valid for logistic"),
            (["casgd", "--data", bad, "--loss", "poisson"], "bad.svm:2: label -1"),
            (["casgd", "--data", os.path.join(tmp, "missing.svm")], "no such file"),
            (["casgd", "--eta", "nan"], "--eta"),
            (["casgd", "--eta", "-1"], "--eta"),
            (["casgd", "--b", "0"], "--b"),
            (["casgd", "--b", "64", "--s", "1024"], "s*b"),
            (["casgd", "--allreduce", "butterfly"], "'butterfly'"),
            (["casgd", "--data", "synth:100,8", "--cp", "bogus", "--outer", "1"], "bogus"),
            (["casgd", "--data", "synth:100,8", "--loss", "poisson", "--bound", "--outer", "1", "--b", "2", "--s", "2"], "Lipschitz"),
            (["casgd", "--data", "synth:100,8", "--recipe", "A,C", "--weights", weights], "--weights"),
            (["casgd", "--cost-alpha", "-1"], "--cost-alpha: '-1' is out of range: valid >= 0"),
            (["casgd", "--cost-gamma", "nan"], "--cost-gamma: 'nan' is not finite"),
            (["casgd", "--cost-gram-speedup", "0"], "--cost-gram-speedup: '0' is out of range: valid > 0"),
            (["casgd", "--mu-F", "0"], "--mu-F: '0' is out of range: valid > 0"),
            (["casgd", "--sigma-g2", "-1"], "--sigma-g2: '-1' is out of range: valid >= 0"),
            (["casgd", "--data", "synth:100,8", "--cost-beta", "1e-9", "--outer", "1"], "--cost-beta sets a constant of --bound's output"),
            (["allreduce", "--algorithm", "butterfly"], "butterfly"),
            (["allreduce", "--datatype", "bf17"], "bf17"),
            (["allreduce", "--P", "0"], "0"),
            (["allreduce", "--length", "0"], "0"),
        ]
        check_usage_errors(cases)
        check(not os.path.exists(weights), "no weights file after an error")


@test
def allreduce_table():
    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "cp.csv")
        rc, out, err = run("allreduce", "--P", "4,16", "--length", "256", "--trials", "2", "--csv", path)
        check(rc == 0, "allreduce exits 0: %r" % err)
        check(os.listdir(tmp) == ["cp.csv"], "only the csv is left: %r" % os.listdir(tmp))
        with open(path) as f:
            rows = list(csv.reader(f))[1:]
        check(len(rows) == 2 * 4 * 3, "a row per P, algorithm and datatype: %d" % len(rows))
        # C(P) of a sum of P vectors: positive, and within the sequential worst case P - 1 (+1 for the cast).
        check(all(0 < float(r[3]) <= int(r[0]) for r in rows), "0 < C(P) <= P: %r" % rows)


@test
def gpu_check_without_gpu():
    """On a machine without a GPU (CI): exit 77 with one line saying why; bad options still exit 2."""
    rc, out, err = run("gpu-check", "--quick")
    if rc != 77:
        check(rc in (0, 1) and "fpemu gpu-check on " in out, "gpu-check on a GPU prints its device: rc %d %r" % (rc, out[:200]))
        return
    lines = out.splitlines()
    check(len(lines) == 1 and lines[0].startswith("fpemu gpu-check: skipped: ") and
          ("no CUDA device" in lines[0] or "built without CUDA" in lines[0]),
          "gpu-check without a GPU says why in one line: %r" % out)
    check(err == "", "nothing on stderr: %r" % err)
    check_usage_errors([(["gpu-check", "extra"], "extra"), (["gpu-check", "--only"], "--only"),
                        (["gpu-check", "--bogus"], "--bogus")])


def main():
    global EXE
    if len(sys.argv) < 2:
        print("usage: test_cli.py PATH-TO-FPEMU [TEST...]", file=sys.stderr)
        return 2
    EXE = sys.argv[1]
    chosen = [t for t in TESTS if len(sys.argv) == 2 or t.__name__ in sys.argv[2:]]
    unknown = set(sys.argv[2:]) - {t.__name__ for t in TESTS}
    if unknown:
        print("test_cli.py: no test named %s" % ", ".join(sorted(unknown)), file=sys.stderr)
        return 2
    for t in chosen:
        before = len(FAILURES)
        try:
            t()
        except Exception as e:  # a crash in a test is a failure of that test, not of the run
            check(False, "%s raised %r" % (t.__name__, e))
        if len(FAILURES) != before:
            FAILED_TESTS.add(t.__name__)
        print("%-28s %s" % (t.__name__, "ok" if len(FAILURES) == before else "FAILED"))
    failed_tests = len([t for t in chosen if t.__name__ in FAILED_TESTS])
    print("cli: %d checks, %d failed" % (CHECKS[0], len(FAILURES)))
    # The summary line that scripts/test_summary.py adds up (test functions, not checks).
    print("cli: %d passed, %d failed" % (len(chosen) - failed_tests, failed_tests))
    return 1 if FAILURES or CHECKS[0] == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
