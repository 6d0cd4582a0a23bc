#!/usr/bin/env python3
"""Runs every example of README.md and docs/*.md and compares its output with the page's.

    test_docs_examples.py --lang console FPEMU
    test_docs_examples.py --lang python                    (PYTHONPATH at the built module)
    test_docs_examples.py --lang cpp --compile CXX FLAGS... --link LIBS...

The convention, by the info string of a fenced block:

  console  `$ COMMAND` lines, each followed by its expected output (stdout and stderr together;
           the exit status is not compared, so an error example shows its message). COMMAND
           runs in bash, in an empty temporary directory, with `fpemu` on PATH.
  python   a program run with this interpreter; it must exit 0.
  cpp      a program compiled against the library and run; it must compile cleanly and exit 0.
  text     right after a python or cpp block (blank lines between allowed): that example's
           expected stdout. Anywhere else, literal text that is not run.
  sh       commands for the reader's own shell (installing, building, mpirun): never run, so
           each must be marked as below.
  meson, cmake  a user's build file, shown whole: the line `<!-- file: PATH -->` right before
           the fence names the file of this repository it must equal (tests/consumers builds
           those files against fpemu in the suite 'install').

A fence without one of these names fails the test, so that no example escapes it.

A line `...` in an expected output stands for any number of lines (kept for output that
legitimately varies, or to show a part of a long output). The line
`<!-- not run: REASON -->` right before a fence marks that block as not run; the reason is
printed with the results. A page without examples of this language is fine; no example at
all is a failure (the convention or the parser broke).

Python 3 standard library only; prints one line per example and a summary line.
"""
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
TIMEOUT = 300  # seconds per example; the slowest, `fpemu demo`, takes a few


class Block:
    def __init__(self, page, line, lang, body, not_run, file):
        self.page, self.line, self.lang, self.body, self.not_run, self.file = page, line, lang, body, not_run, file
        self.expected = None  # the text block that follows a python or cpp example

    def where(self):
        return "%s:%d" % (self.page, self.line)


def pages():
    return ["README.md"] + sorted(os.path.relpath(p, ROOT) for p in glob.glob(os.path.join(ROOT, "docs", "*.md")))


def blocks(page):
    """The fenced blocks of a page, with the text block after each python/cpp example attached."""
    lines = open(os.path.join(ROOT, page), encoding="utf-8").read().split("\n")
    found, i, marker, file = [], 0, None, None
    while i < len(lines):
        m = re.match(r"^<!-- (not run|file): (.+) -->$", lines[i])
        if m:
            if m.group(1) == "file":
                file = m.group(2)
            else:
                marker = m.group(2)
            i += 1
            continue
        m = re.match(r"^```(\w*)\s*$", lines[i])
        if not m:
            if lines[i].strip():
                marker = file = None  # a marker belongs to the fence right after it
            i += 1
            continue
        start, i = i, i + 1
        body = []
        while i < len(lines) and lines[i] != "```":
            body.append(lines[i])
            i += 1
        if i == len(lines):
            raise SystemExit("%s:%d: unterminated fence" % (page, start + 1))
        found.append(Block(page, start + 1, m.group(1), "\n".join(body) + "\n", marker, file))
        marker = file = None
        i += 1
        # blank lines between an example and its expected output
        j = i
        while j < len(lines) and not lines[j].strip():
            j += 1
        if found[-1].lang in ("python", "cpp") and j < len(lines) and lines[j] == "```text":
            k = j + 1
            out = []
            while k < len(lines) and lines[k] != "```":
                out.append(lines[k])
                k += 1
            found[-1].expected = "\n".join(out) + "\n"
            i = k + 1
    return found


def matches(expected, actual):
    """expected == actual, where a line `...` in expected stands for any number of lines."""
    if not actual.endswith("\n"):
        actual += "\n"
    pattern = "".join("(?:.*\n)*?" if line == "..." else re.escape(line) + "\n"
                      for line in expected.split("\n")[:-1])
    return re.fullmatch(pattern, actual) is not None


def diff(expected, actual):
    return "    expected:\n" + "".join("      | " + l + "\n" for l in expected.split("\n")[:-1]) + \
           "    got:\n" + "".join("      | " + l + "\n" for l in actual.rstrip("\n").split("\n"))


def run_console(block, fpemu):
    """Each `$ COMMAND` of the block in a fresh directory; returns the failures."""
    commands = []
    for line in block.body.split("\n")[:-1]:
        if line.startswith("$ "):
            commands.append([line[2:], ""])
        elif commands:
            commands[-1][1] += line + "\n"
        else:
            return ["output before the first `$ ` command: %r" % line]
    if not commands:
        return ["a console block without a `$ ` command"]
    bindir = tempfile.mkdtemp(prefix="fpemu-docs-bin-")
    os.symlink(fpemu, os.path.join(bindir, "fpemu"))
    env = dict(os.environ, PATH=bindir + os.pathsep + os.environ.get("PATH", ""))
    failures = []
    try:
        with tempfile.TemporaryDirectory(prefix="fpemu-docs-") as cwd:
            for command, expected in commands:
                p = subprocess.run(["bash", "-c", command], cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=TIMEOUT)
                if not matches(expected, p.stdout):
                    failures.append("$ %s\n%s" % (command, diff(expected, p.stdout)))
    finally:
        shutil.rmtree(bindir)
    return failures


def run_program(argv, block, cwd, env=None):
    p = subprocess.run(argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                       timeout=TIMEOUT)
    if p.returncode != 0:
        return ["exit status %d\n%s" % (p.returncode, p.stderr[-3000:])]
    if block.expected is not None and not matches(block.expected, p.stdout):
        return [diff(block.expected, p.stdout)]
    return []


def run_python(block):
    # The example runs in an empty directory, so a relative PYTHONPATH is made absolute here.
    path = os.pathsep.join(os.path.abspath(p) for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p)
    env = dict(os.environ, PYTHONPATH=path)
    with tempfile.TemporaryDirectory(prefix="fpemu-docs-") as cwd:
        return run_program([sys.executable, "-c", block.body], block, cwd, env)


def run_cpp(block, compile_cmd, link):
    with tempfile.TemporaryDirectory(prefix="fpemu-docs-") as cwd:
        src, exe = os.path.join(cwd, "example.cpp"), os.path.join(cwd, "example")
        with open(src, "w", encoding="utf-8") as f:
            f.write(block.body)
        p = subprocess.run(compile_cmd + [src, "-o", exe] + link, capture_output=True, text=True, timeout=TIMEOUT)
        if p.returncode != 0:
            return ["does not compile:\n" + p.stdout + p.stderr[-3000:]]
        return run_program([exe], block, cwd)


def main():
    args = sys.argv[1:]
    if len(args) < 2 or args[0] != "--lang" or args[1] not in ("console", "python", "cpp"):
        print(__doc__.strip(), file=sys.stderr)
        return 2
    lang, rest = args[1], args[2:]
    if lang == "console":
        if len(rest) != 1:
            print("usage: test_docs_examples.py --lang console FPEMU", file=sys.stderr)
            return 2
        fpemu = os.path.abspath(rest[0])
        run = lambda b: run_console(b, fpemu)
    elif lang == "cpp":
        if "--compile" not in rest or "--link" not in rest:
            print("usage: test_docs_examples.py --lang cpp --compile CXX FLAGS... --link LIBS...", file=sys.stderr)
            return 2
        compile_cmd = rest[rest.index("--compile") + 1:rest.index("--link")]
        link = rest[rest.index("--link") + 1:]
        run = lambda b: run_cpp(b, compile_cmd, link)
    else:
        run = run_python

    ran = failed = not_run = 0
    for page in pages():
        for block in blocks(page):
            if block.lang not in ("console", "python", "cpp", "text", "sh", "meson", "cmake"):
                if lang == "console":  # reported once, by the console test
                    print("FAIL %s: a fence names one of console, python, cpp, text, sh, meson or cmake, not %r"
                          % (block.where(), block.lang))
                    failed += 1
                continue
            if block.lang in ("meson", "cmake"):
                if lang != "console":  # checked once, by the console test
                    continue
                path = os.path.join(ROOT, block.file or "")
                if block.file is None or not os.path.isfile(path):
                    print("FAIL %s: a %s block must be marked `<!-- file: PATH -->` with a file of the "
                          "repository" % (block.where(), block.lang))
                    failed += 1
                elif open(path, encoding="utf-8").read() != block.body:
                    print("FAIL %s: differs from %s" % (block.where(), block.file))
                    failed += 1
                else:
                    print("ok   %s (= %s)" % (block.where(), block.file))
                    ran += 1
                continue
            if block.lang == "sh":
                if lang != "console":  # reported once, by the console test
                    continue
                if block.not_run is None:
                    print("FAIL %s: an sh block must be marked `<!-- not run: REASON -->` "
                          "(or be a console example)" % block.where())
                    failed += 1
                else:
                    print("not run %s: %s" % (block.where(), block.not_run))
                    not_run += 1
                continue
            if block.lang != lang:
                continue
            if block.not_run is not None:
                print("not run %s: %s" % (block.where(), block.not_run))
                not_run += 1
                continue
            failures = run(block)
            ran += 1
            if failures:
                failed += 1
                print("FAIL %s\n%s" % (block.where(), "\n".join("  " + f for f in failures)))
            else:
                print("ok   %s" % block.where())
    if ran == 0:
        print("FAIL no %s example found: the convention or this parser broke" % lang)
        failed += 1
    print("docs_examples (%s): %d run, %d failed, %d not run" % (lang, ran, failed, not_run))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
