#!/usr/bin/env python3
"""fpemu as a C++ user meets it: installed into a temporary prefix, then found and linked by
three user projects (this folder's meson.build with pkg-config, the same as a meson subproject,
CMakeLists.txt with find_package), plus the header-only core with nothing but -I.

usage: run.py SOURCE_ROOT BUILD_DIR FPEMU_EXE     (the suite 'install' of tests/meson.build)

What each consumer prints is checked against the in-tree command (`fpemu round`, `fpemu
--version`): the codes of the rounded values and the exact sum of their values, not a kept copy.
The environment variable CXX names the compiler (the build's).
"""
import fractions
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "cli"))
import checks  # noqa: E402
from checks import CHECKS, FAILURES  # noqa: E402


def check(cond, what):
    """checks.check, with the passing checks printed too: the log shows what was verified."""
    if checks.check(cond, what):
        print("ok:", what)
    return cond

HERE = Path(__file__).resolve().parent
# Headers of the public rooms that are not installed: the CUDA host API and the MPI AllReduce (the
# command's own libraries). The MPFR oracle's room (tests only) is not public.
NOT_INSTALLED = {"include/fpemu/cuda.hpp", "analysis/casgd/allreduce_mpi.hpp"}
PUBLIC_ROOMS = ["analysis/reference", "analysis/training", "analysis/casgd"]


def run(cmd, env=None, cwd=None):
    """Runs cmd; on failure prints its output and returns None, else its stdout."""
    p = subprocess.run([str(c) for c in cmd], env=env, cwd=cwd, capture_output=True, text=True)
    if p.returncode != 0:
        print("command failed (exit %d): %s\n%s%s" % (p.returncode, " ".join(map(str, cmd)), p.stdout[-3000:],
                                                       p.stderr[-3000:]))
        return None
    return p.stdout


def expected_line(fpemu):
    """The consumer's line as the in-tree command computes it."""
    lines = run([fpemu, "round", "-f", "e4m3fn", "--overflow", "saturate", "0.1", "448", "1e9"]).splitlines()
    codes = [line.split()[0] for line in lines]
    exact = sum(fractions.Fraction(line.split()[1]) for line in lines)  # exact in fp32: one rounding-free sum
    version = run([fpemu, "--version"]).split()[-1]
    return "x %s codes %s sum %s version %s" % (codes[0], " ".join(codes), "%.17g" % float(exact),
                                                version), version


def consumer_output(exe, env=None):
    out = run([exe], env=env)
    return out.strip() if out is not None else None


def main():
    source, build, fpemu = Path(sys.argv[1]).resolve(), Path(sys.argv[2]).resolve(), Path(sys.argv[3]).resolve()
    cxx = os.environ.get("CXX", "c++")
    want, version = expected_line(fpemu)
    major, minor = version.split(".")[:2]
    soversion = "%s.%s" % (major, minor) if major == "0" else major
    opts = {o["name"]: o["value"] for o in json.loads(run(["meson", "introspect", build, "--buildoptions"]))}
    tmp = Path(tempfile.mkdtemp(prefix="fpemu-consumers."))
    try:
        # 1. Install into a temporary tree (DESTDIR): the pkg-config and CMake files are
        #    relocatable, so the tree is used where it lies.
        stage = tmp / "stage"
        check(run(["meson", "install", "-C", build, "--no-rebuild", "--quiet", "--destdir", stage]) is not None,
              "meson install --destdir")
        prefix = stage / opts["prefix"].lstrip("/")
        inc, lib = prefix / opts["includedir"], prefix / opts["libdir"]
        headers = [h.relative_to(source) for h in sorted((source / "include/fpemu").rglob("*.hpp"))]
        for room in PUBLIC_ROOMS:
            headers += [h.relative_to(source) for h in sorted((source / room).glob("*.hpp"))]
        missing = [str(h) for h in headers if str(h) not in NOT_INSTALLED and not (
            inc / "fpemu" / (h.relative_to("include/fpemu") if h.parts[0] == "include" else h)).is_file()]
        check(len(headers) > 40 and not missing, "every public header installed (%d; missing: %s)" % (len(headers), missing))
        check(not (inc / "fpemu/cuda.hpp").exists() and not (inc / "fpemu/analysis/oracle").exists(),
              "cuda.hpp and the oracle not installed")
        check((inc / "fpemu/version.hpp").is_file() and ('"%s"' % version) in (inc / "fpemu/version.hpp").read_text(),
              "fpemu/version.hpp installed with the version")
        for name in ["libfpemu", "libfpemu_analysis"]:
            so = lib / ("%s.so.%s" % (name, soversion))
            dyn = run(["readelf", "-d", so]) or ""
            check("Library soname: [%s.so.%s]" % (name, soversion) in dyn, "%s: soname %s.so.%s" % (so.name, name, soversion))
            check((lib / (name + ".a")).is_file() and (lib / (name + ".so")).is_symlink(), name + ".a and .so installed")
        check((prefix / "share/doc/fpemu/LICENSE").is_file(), "LICENSE installed")
        pc_env = dict(os.environ, PKG_CONFIG_PATH=str(lib / "pkgconfig"))
        static_libs = run(["pkg-config", "--static", "--libs", "fpemu"], env=pc_env) or ""
        check(all(f in static_libs.split() for f in ["-lfpemu", "-lgmp", "-lhwy"]),
              "pkg-config --static --libs fpemu names GMP and Highway: " + static_libs.strip())
        cflags = run(["pkg-config", "--cflags", "fpemu-analysis"], env=pc_env) or ""
        dirs = [os.path.normpath(f[2:]) for f in cflags.split() if f.startswith("-I")]
        check(str(inc / "fpemu") in dirs and str(inc) in dirs, "fpemu-analysis.pc: -I<includedir>/fpemu -I<includedir>")

        # 2. The header-only core: -I and nothing else.
        exe = tmp / "header_only"
        built = run([cxx, "-std=c++20", "-I", inc, HERE / "header_only.cpp", "-o", exe]) is not None
        bf16 = fractions.Fraction(run([fpemu, "round", "-f", "bf16", "0.1"]).split()[1])
        out = consumer_output(exe) if built else None
        check(out is not None and out.split()[1] == "%g" % float(bf16) and float.fromhex(out.split()[2]) == bf16,
              "header-only core, -I only: %s (bf16(0.1) = %s)" % (out, float(bf16)))

        # 3. meson + pkg-config.
        def meson_consumer(name, setup_args, env):
            src = tmp / name
            src.mkdir()
            for f in ["meson.build", "consumer.cpp"]:
                shutil.copy(HERE / f, src / f)
            return src, (run(["meson", "setup", src / "build", src] + setup_args, env=env) is not None and
                         run(["ninja", "-C", src / "build"], env=env) is not None)

        src, ok = meson_consumer("pkgconfig", ["--wrap-mode=nofallback"], dict(pc_env, CXX=cxx))
        out = consumer_output(src / "build/consumer", dict(os.environ, LD_LIBRARY_PATH=str(lib))) if ok else None
        check(out == want, "meson + pkg-config consumer: %r, the command: %r" % (out, want))

        # 4. CMake find_package (the imported targets carry the library paths; CMake sets the
        #    build tree's RUNPATH to them).
        src = tmp / "cmake"
        src.mkdir()
        for f in ["CMakeLists.txt", "consumer.cpp"]:
            shutil.copy(HERE / f, src / f)
        ok = (run(["cmake", "-S", src, "-B", src / "build", "-G", "Ninja", "-DCMAKE_PREFIX_PATH=%s" % prefix,
                   "-DCMAKE_CXX_COMPILER=%s" % cxx]) is not None and
              run(["cmake", "--build", src / "build"]) is not None)
        out = consumer_output(src / "build/consumer") if ok else None
        check(out == want, "CMake find_package consumer: %r, the command: %r" % (out, want))

        # 5. meson subproject: fpemu built from source inside the user's project, with the
        #    subproject defaults (libraries only, nothing probed for the front ends, nothing
        #    installed). This compiles the whole library: unoptimised, and for Highway's static
        #    target alone (HWY_COMPILE_ONLY_STATIC, a mode users pick to cut build time, which
        #    must build too; 50 core-seconds against 131 for every target).
        started = time.monotonic()
        src = tmp / "subproject"
        (src / "subprojects").mkdir(parents=True)
        (src / "subprojects/fpemu").symlink_to(source)
        for f in ["meson.build", "consumer.cpp"]:
            shutil.copy(HERE / f, src / f)
        env = dict(os.environ, CXX=cxx, PKG_CONFIG_PATH="", CXXFLAGS="-DHWY_COMPILE_ONLY_STATIC")
        ok = (run(["meson", "setup", src / "build", src, "--wrap-mode=forcefallback", "-Dbuildtype=plain"],
                  env=env) is not None and run(["ninja", "-C", src / "build"], env=env) is not None)
        out = consumer_output(src / "build/consumer") if ok else None
        check(out == want, "meson subproject consumer (%.0f s): %r, the command: %r" % (time.monotonic() - started, out, want))
        commands = json.loads((src / "build/compile_commands.json").read_text()) if ok else []
        library = [c["command"] for c in commands if "subprojects/fpemu/" in c["file"]]
        check(library and all("-DHWY_COMPILE_ONLY_STATIC" in c for c in library),
              "subproject: its %d files compiled with HWY_COMPILE_ONLY_STATIC" % len(library))
        log = (src / "build/meson-logs/meson-log.txt").read_text() if ok else ""
        # A dependency looked for logs "dependency NAME found: YES|NO"; a disabled one "skipped".
        probed = [w for w in ["CLI11", "pybind11", "mpi", "cuda", "mpfr", "doctest", "benchmark", "python"]
                  if re.search(r"(dependency %s found:|program %s.* found:|compiler for language %s for)" % (w, w, w),
                               log, re.IGNORECASE)]
        check(ok and not probed, "subproject: no front end, test or benchmark dependency probed (probed: %s)" % probed)
        staged = tmp / "subproject-stage"
        installed = []
        if ok and run(["meson", "install", "-C", src / "build", "--no-rebuild", "--quiet", "--destdir", staged]) is not None:
            installed = sorted(str(p.relative_to(staged)) for p in staged.rglob("*") if p.is_file())
        check(len(installed) == 1 and installed[0].endswith("bin/consumer"),
              "subproject: the parent installs its own program and nothing of fpemu: %s" % installed)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("consumers: %d checks, %d failed" % (CHECKS[0], len(FAILURES)))
    return 1 if FAILURES or CHECKS[0] == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
