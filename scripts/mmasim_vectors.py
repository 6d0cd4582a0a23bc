#!/usr/bin/env python3
"""Tensor-core test vectors from mmasim, for fpemu's C++ checker (tests/mmasim_vectors.cpp).

The expected outputs D are computed by mmasim 2.1.1 (PyPI), the bit-accurate tensor-core and
matrix-core simulator of Xie et al., "MMA-Sim: Bit-Accurate Reference Model of Tensor Cores and
Matrix Cores" (arXiv 2511.10909, 2025), running on torch 2.9.1; scripts/mmasim_requirements.txt
pins both. fpemu's own implementation is independent of it: fpemu only reads the files written
here and compares its results with them, bit for bit.

One file per preset (the f6/f4 inputs of the f8f6f4 kinds in files of their own, whose sections
name the fpemu preset that takes them, e.g. preset=b200-e4m3 a=e2m1fn), <out>/<name>.txt:

  # comment lines (generator, versions, seed, command line)
  @ preset=<name> a=<fmt> b=<fmt> out=<fp32|fp16> k=<K> scale=<e8m0fnu|e4m3fn|-> scale_block=<n|0> source=<Class>(<arch>,<shape_and_type>)
  A B C SA SB D

A and B hold K hex codes run together, each of its format's width (1 digit for fp4, 2 for fp6 and
fp8, 4 for 16-bit, 8 for fp32), C and D one, SA and SB K/scale_block scale codes (or '-'). Codes
are fpemu codes: the format's raw bits, right-aligned, lowercase hex without 0x (fp6
codes have their sign in bit 5, fp4 codes in bit 3). K is the instruction's k, or 4k in a second
section: a chain of 4 instructions, each D the next one's C (what mmasim's dpa does over long K).
tf32/xf32 operands are fp32 registers whose low 13 bits the hardware ignores; ue4m3 scales are
e4m3fn codes whose sign bit the hardware ignores. An arch name's space is written '_' in source=.

Cases per section (numpy Generator seeded by --seed and the section header): 20% codes uniform over
all finite codes; 20% +-(1+u)*2^e spread over the format's range (products spanning more than F
bits); 15% cancellation (a_j = a_i, b_j = -b_i, some one code off, C = -sum); 15% subnormal and
smallest-normal operands, subnormal C; 10% zero products (+-0, C +-0); 10% NaN/inf where the
formats have them (inf x 0, inf - inf, NaN payloads in C); 10% operands in the top binades
(overflow). C mixes uniform, matched to the products' sum, -sum, +-0, subnormal, huge and NaN/inf.
Scales: near 1, uniform over all codes, alternating low/high blocks (> 35 bits apart), extreme
(e8m0 0x00 = 2^-127, 0xfe = 2^127; ue4m3 zero and max), and NaN (e8m0 0xff, ue4m3 0x7f/0xff).

The committed vectors: python scripts/mmasim_vectors.py --out tests/data/mmasim --cases 2048 --budget 2048
(with the pinned packages; ./dev mmasim runs the 10^5-case sweep).
"""

import argparse
import importlib.metadata
import logging
import sys
import time
import zlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

# mmasim compiles a small CPU extension on import; torch then warns that it found no CUDA runtime
logging.getLogger("torch.utils.cpp_extension").setLevel(logging.ERROR)
from mmasim.amd import MFMA
from mmasim.nv_ptx import MMA, WGMMA, MMABlockScale, TCGen05MMA, TCGen05MMABlockScale


# --- formats ---------------------------------------------------------------------------------

class Fmt:
    """A binary format by its fields; codes are numpy int64 arrays of raw bits."""

    def __init__(self, name, bits, ebits, mbits, bias, kind, torch_dtype=None):
        # kind: 'ieee' (inf and NaNs at the top exponent), 'fn' (e4m3fn: only S.1111.111 is NaN),
        # 'fnuz' (0x80 is the only NaN, no -0, no inf), 'none' (fp6/fp4: all codes finite),
        # 'e8m0' (unsigned powers of two, 0xff NaN).
        self.name, self.bits, self.ebits, self.mbits, self.bias = name, bits, ebits, mbits, bias
        self.kind, self.torch_dtype = kind, torch_dtype
        self.sign = 0 if kind == "e8m0" else 1 << (bits - 1)
        top = (1 << ebits) - 1
        self.maxmag = {"ieee": (top << mbits) - 1, "fn": (1 << (bits - 1)) - 2,
                       "fnuz": (1 << (bits - 1)) - 1, "none": (1 << (bits - 1)) - 1,
                       "e8m0": 0xFE}[kind]
        self.emin = 1 - bias  # exponent of the smallest normal
        self.emax = (top - (kind == "ieee")) - bias
        self.width = (bits + 3) // 4
        self.has_inf = kind == "ieee"
        self.has_nan = kind != "none"
        if bits <= 16:  # sorted non-negative finite values, for encode()
            mags = np.arange(self.maxmag + 1, dtype=np.int64)
            self._pos = self.decode(mags)

    def decode(self, codes):
        """Values as float64 (NaN for NaN codes)."""
        c = np.asarray(codes, dtype=np.int64)
        if self.kind == "e8m0":
            return np.where(c == 0xFF, np.nan, np.exp2(c.astype(np.float64) - 127))
        mag = c & (self.sign - 1)
        e = (mag >> self.mbits).astype(np.float64)
        m = (mag & ((1 << self.mbits) - 1)).astype(np.float64)
        v = np.where(e == 0, m * 2.0 ** (self.emin - self.mbits),
                     (m + 2.0**self.mbits) * np.exp2(e - self.bias - self.mbits))
        if self.kind == "ieee":
            top = (1 << self.ebits) - 1
            v = np.where(e == top, np.where(m == 0, np.inf, np.nan), v)
        elif self.kind == "fn":
            v = np.where(mag == self.maxmag + 1, np.nan, v)
        v = np.where(c & self.sign, -v, v)
        if self.kind == "fnuz":
            v = np.where(c == self.sign, np.nan, v)
        return v

    def encode(self, v):
        """Nearest finite code of each float64 value (magnitudes beyond the range clamp to max)."""
        v = np.asarray(v, dtype=np.float64)
        neg = np.signbit(v)
        a = np.abs(v)
        if self.bits == 32:
            f = np.minimum(a, float(np.finfo(np.float32).max)).astype(np.float32)
            mag = f.view(np.uint32).astype(np.int64)
        else:
            i = np.clip(np.searchsorted(self._pos, a), 1, self.maxmag)
            lo = self._pos[i - 1]
            mag = np.where(a - lo < self._pos[i] - a, i - 1, i)
            mag = np.where(a >= self._pos[-1], self.maxmag, mag)
        return self.with_sign(mag, neg)

    def with_sign(self, mag, neg):
        if self.kind == "fnuz":  # 0x80 is NaN: zero has no negative
            neg = neg & (mag != 0)
        return np.where(neg, mag | self.sign, mag).astype(np.int64)

    def neg(self, c):
        return self.with_sign(c & (self.sign - 1), (c & self.sign) == 0)

    # random codes --------------------------------------------------------------------------
    def uniform(self, rng, shape):
        """Uniform over all finite codes."""
        return self.with_sign(rng.integers(0, self.maxmag + 1, shape), rng.random(shape) < 0.5)

    def uniform_rows(self, rng, n, k):
        """uniform() but, for the 8-bit-exponent formats, 3/4 of the rows within 2^+-62: products
        of codes drawn over the whole range overflow fp32 in almost every row of 8 or more."""
        c = self.uniform(rng, (n, k))
        if self.emax < 64:
            return c
        tame = self.with_sign(rng.integers((self.bias - 62) << self.mbits, (self.bias + 63) << self.mbits, (n, k)),
                              rng.random((n, k)) < 0.5)
        return np.where((rng.random(n) < 0.75)[:, None], tame, c)

    def spread(self, rng, n, k, narrow=False):
        """+-(1+u)*2^e, e uniform within a per-case width of a per-case centre: for narrow formats
        anywhere in (and one binade past) their range, so products span more than F bits; for wide
        ones within 2^+-40 of the centre, mostly near 1 so that the terms interact, else anywhere
        in the middle half of the range (products then span the whole fp32 range)."""
        lo, hi = self.emin - self.mbits - 1, self.emax + 1
        if hi - lo <= 48:
            centre = rng.integers(lo, hi + 1, n)
            w = rng.integers(0, 3 if narrow else hi - lo + 1, n)
        else:
            centre = np.where(rng.random(n) < 0.3, rng.integers(lo // 2, hi // 2 + 1, n), rng.integers(-20, 21, n))
            w = rng.integers(0, 4 if narrow else 41, n)
        e_lo, e_hi = np.maximum(centre - w, lo)[:, None], np.minimum(centre + w, hi)[:, None]
        e = e_lo + np.floor(rng.random((n, k)) * (e_hi - e_lo + 1))
        sign = np.where(rng.random((n, k)) < 0.5, -1.0, 1.0)
        return self.encode(sign * (1 + rng.random((n, k))) * np.exp2(e))

    def small(self, rng, shape):
        """Subnormals (and zero) mostly, else the two smallest normal binades."""
        sub = rng.integers(0, 1 << self.mbits, shape)
        nrm = rng.integers(1 << self.mbits, 3 << self.mbits, shape)
        mag = np.minimum(np.where(rng.random(shape) < 0.7, sub, nrm), self.maxmag)
        return self.with_sign(mag, rng.random(shape) < 0.5)

    def big(self, rng, shape, neg):
        """The top two binades."""
        return self.with_sign(self.maxmag - rng.integers(0, 2 << self.mbits, shape), neg)

    def zero(self, rng, shape):
        return self.with_sign(np.zeros(shape, np.int64), rng.random(shape) < 0.5)

    def nan(self, rng, shape):
        if self.kind == "ieee":  # payloads: canonical quiet, signalling, random; either sign
            top = ((1 << self.ebits) - 1) << self.mbits
            m = rng.integers(1, 1 << self.mbits, shape)
            m = np.where(rng.random(shape) < 0.3, 1 << (self.mbits - 1), m)
            m = np.where(rng.random(shape) < 0.15, 1, m)
            return self.with_sign(top | m, rng.random(shape) < 0.5)
        if self.kind == "fn":
            return self.with_sign(np.full(shape, self.maxmag + 1), rng.random(shape) < 0.5)
        return np.full(shape, 0xFF if self.kind == "e8m0" else self.sign, np.int64)

    def inf(self, rng, shape, neg=None):
        neg = rng.random(shape) < 0.5 if neg is None else neg
        return self.with_sign(np.full(shape, self.maxmag + 1, np.int64), neg)

    def nudge(self, rng, c):
        """One code up or down in magnitude, staying finite."""
        mag = np.clip((c & (self.sign - 1)) + np.where(rng.random(c.shape) < 0.5, -1, 1), 0, self.maxmag)
        return self.with_sign(mag, (c & self.sign) != 0)


F = {f.name: f for f in [
    Fmt("fp32", 32, 8, 23, 127, "ieee", torch.float32),
    Fmt("fp16", 16, 5, 10, 15, "ieee", torch.float16),
    Fmt("bf16", 16, 8, 7, 127, "ieee", torch.bfloat16),
    Fmt("e4m3fn", 8, 4, 3, 7, "fn", torch.float8_e4m3fn),
    Fmt("e5m2", 8, 5, 2, 15, "ieee", torch.float8_e5m2),
    Fmt("e4m3fnuz", 8, 4, 3, 8, "fnuz", torch.float8_e4m3fnuz),
    Fmt("e5m2fnuz", 8, 5, 2, 16, "fnuz", torch.float8_e5m2fnuz),
    Fmt("e3m2fn", 6, 3, 2, 3, "none"),
    Fmt("e2m3fn", 6, 2, 3, 1, "none"),
    Fmt("e2m1fn", 4, 2, 1, 1, "none"),
    Fmt("e8m0fnu", 8, 8, 0, 127, "e8m0", torch.float8_e8m0fnu),
]}
PTX = {"f16": "fp16", "bf16": "bf16", "tf32": "fp32", "e4m3": "e4m3fn", "e5m2": "e5m2",
       "e3m2": "e3m2fn", "e2m3": "e2m3fn", "e2m1": "e2m1fn"}
F8F6F4 = ["e4m3", "e5m2", "e3m2", "e2m3", "e2m1"]


# --- sections: preset -> mmasim instructions -----------------------------------------------------

@dataclass
class Sec:
    preset: str
    a: str
    b: str
    out: str
    k: int          # the instruction's k
    cls: type
    arch: str
    shape: str
    tf32: bool = False        # A, B are fp32 registers read as tf32
    scale: str = "-"
    block: int = 0
    chain: int = 1            # instructions chained: K = chain * k
    model: str = ""           # the fpemu preset, when the file is named otherwise (f8f6f4 inputs)

    @property
    def K(self):
        return self.k * self.chain

    def header(self):
        src = f"{self.cls.__name__}({self.arch.replace(' ', '_')},{self.shape})"
        return (f"@ preset={self.model or self.preset} a={self.a} b={self.b} out={self.out} k={self.K} "
                f"scale={self.scale} scale_block={self.block} source={src}")


def presets():
    P = {}

    def add(preset, cls, arch, shape, a, b, out, k, **kw):
        P.setdefault(preset, []).append(Sec(preset, a, b, out, k, cls, arch, shape, **kw))

    def nv16(preset, cls, arch, shapes):  # shapes: (shape, a, out, k)
        for shape, a, out, k in shapes:
            add(preset, cls, arch, shape, a, a, out, k, tf32=a == "fp32")

    nv16("v100-fp16", MMA, "Volta", [("m8n8k4.f32.f16.f16.f32", "fp16", "fp32", 4),
                                     ("m8n8k4.f16.f16.f16.f16", "fp16", "fp16", 4)])
    nv16("t4-fp16", MMA, "Turing", [("m16n8k8.f32.f16.f16.f32", "fp16", "fp32", 8),
                                    ("m16n8k8.f16.f16.f16.f16", "fp16", "fp16", 8)])
    for gpu, arch in [("a100", "Ampere"), ("rtx6000b", "RTX Blackwell")]:
        nv16(f"{gpu}-fp16", MMA, arch, [("m16n8k16.f32.f16.f16.f32", "fp16", "fp32", 16),
                                        ("m16n8k16.f16.f16.f16.f16", "fp16", "fp16", 16)])
        nv16(f"{gpu}-bf16", MMA, arch, [("m16n8k16.f32.bf16.bf16.f32", "bf16", "fp32", 16)])
        nv16(f"{gpu}-tf32", MMA, arch, [("m16n8k8.f32.tf32.tf32.f32", "fp32", "fp32", 8)])
    for a in ["e4m3", "e5m2"]:
        for d in ["f32", "f16"]:
            for b in ["e4m3", "e5m2"]:
                add(f"ada-{a}", MMA, "Ada Lovelace", f"m16n8k32.{d}.{a}.{b}.{d}", PTX[a], PTX[b],
                    "fp32" if d == "f32" else "fp16", 32)
        for b in ["e4m3", "e5m2"]:  # fp16 out of h100-e4m3/e5m2 models mma.sync, not wgmma
            add(f"h100-{a}", WGMMA, "Hopper", f"m64n8k32.f32.{a}.{b}", PTX[a], PTX[b], "fp32", 32)
    nv16("h100-fp16", WGMMA, "Hopper", [("m64n8k16.f32.f16.f16", "fp16", "fp32", 16),
                                        ("m64n8k16.f16.f16.f16", "fp16", "fp16", 16)])
    nv16("h100-bf16", WGMMA, "Hopper", [("m64n8k16.f32.bf16.bf16", "bf16", "fp32", 16)])
    nv16("h100-tf32", WGMMA, "Hopper", [("m64n8k8.f32.tf32.tf32", "fp32", "fp32", 8)])
    nv16("b200-fp16", TCGen05MMA, "Blackwell", [("m64n8k16.kind::f16.f32.f16.f16", "fp16", "fp32", 16),
                                                ("m64n8k16.kind::f16.f16.f16.f16", "fp16", "fp16", 16)])
    nv16("b200-bf16", TCGen05MMA, "Blackwell", [("m64n8k16.kind::f16.f32.bf16.bf16", "bf16", "fp32", 16)])
    nv16("b200-tf32", TCGen05MMA, "Blackwell", [("m64n8k8.kind::tf32.f32.tf32.tf32", "fp32", "fp32", 8)])
    for a in F8F6F4:
        for d in ["f32", "f16"]:
            for b in F8F6F4:
                out = "fp32" if d == "f32" else "fp16"
                # fpemu's b200-e4m3/e5m2 take the f6/f4 inputs through --a-format
                model = "" if a in ("e4m3", "e5m2") else "-e4m3"
                add(f"b200-{a}", TCGen05MMA, "Blackwell", f"m64n8k32.kind::f8f6f4.{d}.{a}.{b}",
                    PTX[a], PTX[b], out, 32, model=model and "b200" + model)
                add(f"rtx6000b-{a}", MMA, "RTX Blackwell", f"m16n8k32.kind::f8f6f4.{d}.{a}.{b}.{d}",
                    PTX[a], PTX[b], out, 32, model=model and "rtx6000b" + model)
    for a in F8F6F4:
        for b in F8F6F4:
            kw = dict(scale="e8m0fnu", block=32)
            add("b200-mxf8f6f4", TCGen05MMABlockScale, "Blackwell",
                f"m128n8k32.kind::mxf8f6f4.block32.f32.{a}.{b}.ue8m0", PTX[a], PTX[b], "fp32", 32, **kw)
            add("rtx6000b-mxf8f6f4", MMABlockScale, "RTX Blackwell",
                f"m16n8k32.kind::mxf8f6f4.block32.f32.{a}.{b}.f32.ue8m0", PTX[a], PTX[b], "fp32", 32, **kw)
    fp4 = ("e2m1fn", "e2m1fn", "fp32", 64)
    add("b200-mxf4", TCGen05MMABlockScale, "Blackwell", "m128n8k64.kind::mxf4.block32.f32.e2m1.e2m1.ue8m0",
        *fp4, scale="e8m0fnu", block=32)
    for blk, s, sf in [(16, "ue4m3", "e4m3fn"), (16, "ue8m0", "e8m0fnu"), (32, "ue8m0", "e8m0fnu")]:
        add("b200-mxf4nvf4", TCGen05MMABlockScale, "Blackwell",
            f"m128n8k64.kind::mxf4nvf4.block{blk}.f32.e2m1.e2m1.{s}", *fp4, scale=sf, block=blk)
        add("rtx6000b-mxf4nvf4", MMABlockScale, "RTX Blackwell",
            f"m16n8k64.kind::mxf4nvf4.block{blk}.f32.e2m1.e2m1.f32.{s}", *fp4, scale=sf, block=blk)

    # AMD MFMA: every suffix is one of mmasim/amd/isa_mfma.py's.
    def amd(preset, arch, suffix, a, b, k, tf32=False):
        add(preset, MFMA, arch, suffix, a, b, "fp32", k, tf32=tf32)

    amd("mi100-fp16", "CDNA1", "f32_32x32x8f16", "fp16", "fp16", 8)
    amd("mi100-bf16", "CDNA1", "f32_32x32x4bf16", "bf16", "bf16", 4)
    amd("mi250-fp16", "CDNA2", "f32_32x32x8f16", "fp16", "fp16", 8)
    amd("mi250-bf16", "CDNA2", "f32_32x32x8bf16_1k", "bf16", "bf16", 8)
    amd("mi250-bf16-legacy", "CDNA2", "f32_32x32x4bf16", "bf16", "bf16", 4)
    amd("mi300x-fp16", "CDNA3", "f32_32x32x8_f16", "fp16", "fp16", 8)
    amd("mi300x-bf16", "CDNA3", "f32_32x32x8_bf16", "bf16", "bf16", 8)
    amd("mi300x-xf32", "CDNA3", "f32_16x16x8_xf32", "fp32", "fp32", 8, tf32=True)
    for a, fa in [("fp8", "e4m3fnuz"), ("bf8", "e5m2fnuz")]:
        for b, fb in [("fp8", "e4m3fnuz"), ("bf8", "e5m2fnuz")]:
            amd(f"mi300x-{fa}", "CDNA3", f"f32_32x32x16_{a}_{b}", fa, fb, 16)

    # every section again as a chain of 4 instructions (K = 4k)
    return {p: P[p] + [Sec(**{**s.__dict__, "chain": 4}) for s in P[p]] for p in sorted(P)}


# --- cases -------------------------------------------------------------------------------------

# per-case categories and their shares; C's kind per category (see c_codes)
CATS = {"uniform": 0.20, "spread": 0.20, "cancel": 0.15, "small": 0.15, "zero": 0.10,
        "special": 0.10, "big": 0.10}
C_MODES = {
    "uniform": {"uniform": .4, "match": .3, "cancel": .1, "zero": .1, "small": .1},
    "spread": {"match": .4, "spread": .2, "cancel": .2, "zero": .1, "small": .1},
    "cancel": {"cancel": .5, "zero": .3, "match": .2},
    "small": {"small": .6, "zero": .2, "match": .2},
    "zero": {"zero": .6, "small": .2, "uniform": .2},
    "special": {"special": .5, "match": .3, "uniform": .2},
    "big": {"big": .6, "match": .2, "special": .1, "uniform": .1},
}
SCALE_MODES = {"unit": .35, "random": .30, "spread": .15, "extreme": .15, "nan": .05}


def shares(rng, n, weights):
    """Exact counts per key (the first key takes the rounding remainder), in random order."""
    keys = list(weights)
    counts = [int(n * w) for w in weights.values()]
    counts[0] += n - sum(counts)
    return rng.permutation(np.repeat(np.arange(len(keys)), counts)), keys


def ab_codes(rng, cat, fa, fb, n, K):
    """A and B codes [n, K] of one category."""
    if cat == "uniform":
        return fa.uniform_rows(rng, n, K), fb.uniform_rows(rng, n, K)
    if cat == "spread":
        return fa.spread(rng, n, K), fb.spread(rng, n, K)
    if cat == "cancel":  # pairs (i, j): a_j = a_i, b_j = -b_i; some one code off, some pairs left
        A, B = fa.spread(rng, n, K, narrow=True), fb.spread(rng, n, K, narrow=True)
        h = K // 2
        perm = np.argsort(rng.random((n, K)), axis=1)
        i, j = perm[:, :h], perm[:, h:2 * h]
        rows = np.arange(n)[:, None]
        paired = np.arange(h)[None, :] < np.where(rng.random(n) < 0.7, h, rng.integers(1, h + 1, n))[:, None]
        bj = fb.neg(B[rows, i])
        bj = np.where(rng.random(n)[:, None] < 0.3, fb.nudge(rng, bj), bj)
        A[rows, j] = np.where(paired, A[rows, i], A[rows, j])
        B[rows, j] = np.where(paired, bj, B[rows, j])
        return A, B
    if cat == "small":  # both small, or one small and the other ordinary
        A, B = fa.small(rng, (n, K)), fb.small(rng, (n, K))
        mix = rng.random(n) < 0.3
        A = np.where(mix[:, None], fa.spread(rng, n, K), A)
        return A, B
    if cat == "zero":  # every product zero (either operand, -0 too); some rows all zero
        A, B = fa.spread(rng, n, K), fb.spread(rng, n, K)
        which = rng.integers(0, 3, (n, K))
        which = np.where(rng.random(n)[:, None] < 0.25, 2, which)
        A = np.where(which != 1, fa.zero(rng, (n, K)), A)
        B = np.where(which != 0, fb.zero(rng, (n, K)), B)
        return A, B
    if cat == "big":  # the top binades, all products of one sign (half the rows)
        sa = rng.random((n, K)) < 0.5
        same = rng.random(n) < 0.5
        sb = np.where(same[:, None], sa ^ (rng.random(n) < 0.5)[:, None], rng.random((n, K)) < 0.5)
        return fa.big(rng, (n, K), sa), fb.big(rng, (n, K), sb)
    if cat == "special":  # one or two NaN/inf (inf x 0, inf - inf) where the formats have them
        A, B = fa.spread(rng, n, K), fb.spread(rng, n, K)
        kinds = [k for k, ok in [("nanA", fa.has_nan), ("nanB", fb.has_nan), ("infA", fa.has_inf),
                                 ("infB", fb.has_inf), ("inf0", fa.has_inf), ("infinf", fa.has_inf)] if ok]
        if not kinds:
            return A, B
        kind = rng.integers(0, len(kinds), n)
        rows = np.arange(n)
        p = rng.integers(0, K, n)
        q = (p + rng.integers(1, K, n)) % K  # another position
        for t, name in enumerate(kinds):
            r = rows[kind == t]
            m = len(r)
            if name == "nanA":
                A[r, p[r]] = fa.nan(rng, m)
            elif name == "nanB":
                B[r, p[r]] = fb.nan(rng, m)
            elif name == "infA":
                A[r, p[r]] = fa.inf(rng, m)
            elif name == "infB":
                B[r, p[r]] = fb.inf(rng, m)
            elif name == "inf0":
                A[r, p[r]] = fa.inf(rng, m)
                B[r, p[r]] = fb.zero(rng, m)
            else:  # +inf and -inf products: NaN
                A[r, p[r]] = fa.inf(rng, m, np.zeros(m, bool))
                A[r, q[r]] = fa.inf(rng, m, np.ones(m, bool))
                B[r, p[r]] = fb.with_sign(B[r, p[r]] & (fb.sign - 1), np.zeros(m, bool))
                B[r, q[r]] = fb.with_sign(B[r, q[r]] & (fb.sign - 1), np.zeros(m, bool))
        return A, B
    raise ValueError(cat)


def scale_codes(rng, fs, n, nb):
    """Scale codes [n, nb] for one operand: near 1, random, spread between blocks, extreme, NaN."""
    idx, keys = shares(rng, n, SCALE_MODES)
    if fs.name == "e8m0fnu":
        unit = 127 + rng.integers(-4, 5, (n, nb))
        rand = rng.integers(0, 0xFF, (n, nb))
        # alternate low and high blocks: 2^-18.. vs 2^18.. apart, > F=35 bits between blocks
        off = rng.integers(18, 61, (n, nb)) * np.where(np.arange(nb) % 2 == 0, -1, 1)
        spread = 127 + off * np.where(rng.random(n) < 0.5, 1, -1)[:, None]
        extreme = rng.choice([0x00, 0x01, 0xFD, 0xFE], (n, nb))
        nan = np.full((n, nb), 0xFF)
    else:  # ue4m3 as e4m3fn codes: 0x38 is 1.0, 0x01 2^-9, 0x7e 448; the sign bit is ignored
        unit = 0x38 + rng.integers(-8, 9, (n, nb))
        rand = rng.integers(0, 0x7F, (n, nb))
        lo, hi = rng.integers(0x01, 0x09, (n, nb)), rng.integers(0x70, 0x7F, (n, nb))
        flip = (rng.random(n) < 0.5)[:, None] ^ (np.arange(nb) % 2 == 0)[None, :]
        spread = np.where(flip, lo, hi)
        extreme = rng.choice([0x00, 0x01, 0x7E, 0x08], (n, nb))
        nan = np.full((n, nb), 0x7F)
    # NaN in one block only, the others near 1
    nan = np.where(np.arange(nb)[None, :] == rng.integers(0, nb, n)[:, None], nan, unit)
    S = np.choose(idx[:, None], [{"unit": unit, "random": rand, "spread": spread,
                                  "extreme": extreme, "nan": nan}[k] for k in keys])
    if fs.name == "e4m3fn":
        S = S | np.where(rng.random((n, nb)) < 0.3, 0x80, 0)
    return S.astype(np.int64)


def seen(sec, f, codes):
    """The values the instruction reads: tf32 drops the 13 low bits of the fp32 register."""
    return f.decode(codes & ~0x1FFF if sec.tf32 else codes)


def c_codes(rng, fo, modes, est, n):
    """C codes of the output format, per mode; est is the float64 dot product A.B (scaled)."""
    ok = np.isfinite(est) & (est != 0)
    r = np.exp2(rng.integers(-30, 31, n).astype(np.float64))
    sgn = np.where(rng.random(n) < 0.5, -1.0, 1.0)
    with np.errstate(all="ignore"):
        cand = {
            "uniform": fo.uniform(rng, n),
            "spread": fo.spread(rng, n, 1)[:, 0],
            "match": np.where(ok, fo.encode(np.where(ok, sgn * np.abs(est) * r, 0)), fo.uniform(rng, n)),
            "cancel": np.where(ok, fo.encode(np.where(ok, -est, 0)), fo.zero(rng, n)),
            "zero": fo.zero(rng, n),
            "small": fo.small(rng, n),
            "big": fo.big(rng, n, np.where(np.isnan(est), rng.random(n) < 0.5,
                                           (est < 0) ^ (rng.random(n) < 0.2))),
            "special": np.where(rng.random(n) < 0.5, fo.nan(rng, n), fo.inf(rng, n)),
        }
    return np.choose(modes, [cand[m] for m in C_MODE_KEYS])


C_MODE_KEYS = ["uniform", "spread", "match", "cancel", "zero", "small", "big", "special"]


def gen_cases(sec, n, rng):
    fa, fb, fo = F[sec.a], F[sec.b], F[sec.out]
    K = sec.K
    cat, keys = shares(rng, n, CATS)
    A = np.zeros((n, K), np.int64)
    B = np.zeros((n, K), np.int64)
    cmode = np.zeros(n, np.int64)
    for t, name in enumerate(keys):
        r = np.nonzero(cat == t)[0]
        if len(r) == 0:
            continue
        A[r], B[r] = ab_codes(rng, name, fa, fb, len(r), K)
        w = dict(C_MODES[name])
        if name == "special" and not (fa.has_nan or fb.has_nan):
            w = {"special": .8, "match": .2}  # fp6/fp4 inputs: the specials come from C only
        m, mk = shares(rng, len(r), w)
        cmode[r] = np.array([C_MODE_KEYS.index(mk[i]) for i in m], dtype=np.int64)
    if sec.tf32:  # random low 13 bits, which the instruction ignores (inf|low is an fp32 NaN)
        A |= np.where(rng.random((n, K)) < 0.5, rng.integers(0, 0x2000, (n, K)), 0)
        B |= np.where(rng.random((n, K)) < 0.5, rng.integers(0, 0x2000, (n, K)), 0)
    SA = SB = None
    with np.errstate(all="ignore"):
        prod = seen(sec, fa, A) * seen(sec, fb, B)
        if sec.scale != "-":
            fs = F[sec.scale]
            nb = K // sec.block
            SA, SB = scale_codes(rng, fs, n, nb), scale_codes(rng, fs, n, nb)
            mask = 0x7F if fs.name == "e4m3fn" else 0xFF
            s = fs.decode(SA & mask) * fs.decode(SB & mask)
            prod = prod * np.repeat(s, sec.block, axis=1)
        est = prod.sum(axis=1)
    C = c_codes(rng, fo, cmode, est, n)
    return A, B, C, SA, SB


# --- running mmasim ----------------------------------------------------------------------------

def to_torch(f, codes, fp4_packed=False):
    c = np.ascontiguousarray(codes)
    if f.bits == 32:
        return torch.from_numpy(c.astype(np.uint32).view(np.int32)).view(torch.float32)
    if f.bits == 16:
        return torch.from_numpy(c.astype(np.uint16).view(np.int16)).view(f.torch_dtype)
    if f.torch_dtype is not None:
        return torch.from_numpy(c.astype(np.uint8)).view(f.torch_dtype)
    if fp4_packed:  # mxf4 ops: two fp4 per byte, element 2i in the high nibble
        return torch.from_numpy((c[:, 0::2] << 4 | c[:, 1::2]).astype(np.uint8))
    # f8f6f4 ops: one fp6/fp4 per byte, fp6 in bits 5:0, fp4 in bits 5:2 (helper.decode_uint8_to_fp6_fp4)
    return torch.from_numpy((c << (6 - f.bits)).astype(np.uint8))


def run_mmasim(sec, op, A, B, C, SA, SB):
    fa, fb, fo = F[sec.a], F[sec.b], F[sec.out]
    packed = getattr(op, "packing", 1) == 2
    a, b, c = to_torch(fa, A, packed), to_torch(fb, B, packed), to_torch(fo, C)
    if sec.scale == "-":
        d = op.dpa(a, b, c)
    elif op.k == 64:  # MMA_GST_FDPA (as mmasim picks it): all K/block scales at once, chained by dpa
        fs = F[sec.scale]
        d = op.dpa(a, b, c, to_torch(fs, SA), to_torch(fs, SB))
    else:  # MMA_ST_FDPA takes one scale per row: chain the k32 instructions here, D -> next C
        fs = F[sec.scale]
        d = c
        for i in range(sec.chain):
            kk = slice(i * sec.k, (i + 1) * sec.k)
            d = op.dpa(a[:, kk], b[:, kk], d, to_torch(fs, SA[:, i:i + 1]), to_torch(fs, SB[:, i:i + 1]))
    assert d.dtype == fo.torch_dtype and d.shape == (len(C),), (d.dtype, d.shape)
    bits = d.view(torch.int32 if fo.bits == 32 else torch.int16).numpy().astype(np.int64)
    return bits & ((1 << fo.bits) - 1)


# --- writing -----------------------------------------------------------------------------------

HEX = np.frombuffer(b"0123456789abcdef", np.uint8)


def hex_field(codes, width, end):
    """[n, m] codes -> [n, m*width+1] ASCII: fixed-width hex digits run together, then `end`."""
    n, m = codes.shape
    shifts = 4 * np.arange(width - 1, -1, -1)
    digits = HEX[(codes[:, :, None] >> shifts) & 0xF].reshape(n, -1)
    return np.concatenate([digits, np.full((n, 1), ord(end), np.uint8)], axis=1)


def section_text(sec, A, B, C, SA, SB, D):
    n = len(C)
    dash = np.tile(np.frombuffer(b"- ", np.uint8), (n, 1))
    fs = F.get(sec.scale)
    cols = [hex_field(A, F[sec.a].width, " "), hex_field(B, F[sec.b].width, " "),
            hex_field(C[:, None], F[sec.out].width, " "),
            dash if SA is None else hex_field(SA, fs.width, " "),
            dash if SB is None else hex_field(SB, fs.width, " "),
            hex_field(D[:, None], F[sec.out].width, "\n")]
    return (sec.header() + "\n").encode() + np.concatenate(cols, axis=1).tobytes()


def main(argv=None):
    table = presets()
    ap = argparse.ArgumentParser(description=__doc__, epilog="presets: " + " ".join(table),
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, help="output directory (created)")
    ap.add_argument("--cases", type=int, default=256,
                    help="cases per section (the chained K=4k sections get a quarter); default 256")
    ap.add_argument("--seed", type=int, default=1, help="random seed (default 1); each section's "
                    "generator is seeded from it and the section header, so a subset of presets "
                    "gives the same sections as a full run")
    ap.add_argument("--budget", type=int, default=0,
                    help="at most about this many cases per file, shared by its sections (at least "
                         "16 per section); 0 (default): no limit")
    ap.add_argument("--preset", nargs="+", metavar="NAME", help="only these presets (default: all)")
    ap.add_argument("--list", action="store_true", help="print the preset (file) names and exit")
    args = ap.parse_args(argv)
    if args.list:
        print("\n".join(table))
        return 0
    if args.out is None:
        ap.error("--out DIR is required")
    if args.cases < 4:
        ap.error("--cases must be at least 4")
    bad = [p for p in args.preset or [] if p not in table]
    if bad:
        print(f"mmasim_vectors.py: unknown preset {', '.join(bad)}; valid presets: {' '.join(table)}",
              file=sys.stderr)
        return 2

    ver = {p: importlib.metadata.version(p) for p in ("mmasim", "torch", "numpy")}
    cmd = " ".join(["scripts/mmasim_vectors.py"] + (sys.argv[1:] if argv is None else list(argv)))
    torch.set_grad_enabled(False)
    args.out.mkdir(parents=True, exist_ok=True)
    for preset in args.preset or table:
        t0 = time.perf_counter()
        head = [
            "# generated by scripts/mmasim_vectors.py: expected outputs D from mmasim "
            f"{ver['mmasim']} (Xie et al., arXiv 2511.10909) on torch {ver['torch']}, numpy {ver['numpy']}",
            f"# seed {args.seed}; up to {args.cases} cases per section"
            + (f" and about {args.budget} per file" if args.budget else "")
            + ", a quarter of that in the chained (k = 4 x instruction k) ones",
            f"# command: {cmd}",
            "# lines: A B C SA SB D; each a run of fixed-width hex codes of the format's raw bits; '-' for no scales; "
            "source=mmasim class(arch with '_' for ' ',shape_and_type)",
        ]
        ncases = 0
        secs = table[preset]
        path = args.out / f"{preset}.txt"
        with open(path, "wb") as out:  # section by section: a sweep's file can be GBs
            out.write(("\n".join(head) + "\n").encode())
            for sec in secs:
                per = args.cases if not args.budget else min(args.cases, max(16, args.budget // len(secs)))
                n = per if sec.chain == 1 else max(4, per // 4)
                rng = np.random.default_rng([args.seed, zlib.crc32(sec.header().encode())])
                op = sec.cls(sec.arch, sec.shape)
                A, B, C, SA, SB = gen_cases(sec, n, rng)
                D = run_mmasim(sec, op, A, B, C, SA, SB)
                out.write(section_text(sec, A, B, C, SA, SB, D))
                ncases += n
        print(f"{path}: {len(secs)} sections, {ncases} cases, {time.perf_counter() - t0:.1f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
