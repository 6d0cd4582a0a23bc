#!/usr/bin/env python3
"""Runs the README's Python quick start verbatim, as a new user would: in a fresh copy of the
clone, its commands (make a venv with the first python3 on PATH, `pip install .`, the one-line
example) in bash, and compares the example's output with the text block the README shows after
it. The apt-get line is checked, not run: each package it names must be installed.

    python3 tests/readme_quickstart.py

Opt-in (suite 'packaging', `./dev packaging`): pip builds the package from source, which takes
minutes and fetches the build requirements and NumPy from PyPI. Standard library only.
"""
import os
import re
import shlex
import subprocess
import sys
import tempfile

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))


def quick_start():
    """The commands of the sh block that installs the package, and the text block after it."""
    readme = open(os.path.join(ROOT, "README.md"), encoding="utf-8").read()
    m = re.search(r"```sh\n((?:(?!```).)*?pip install \.(?:(?!```).)*?)```\s*```text\n(.*?)```", readme, re.S)
    if not m:
        sys.exit("readme_quickstart: no sh block with `pip install .` followed by a text block in README.md")
    return m.group(1).strip().splitlines(), m.group(2)


def main():
    commands, expected = quick_start()
    apt = [c for c in commands if c.startswith("apt-get install")]
    if len(apt) != 1:
        sys.exit("readme_quickstart: expected one apt-get install line, got %d" % len(apt))
    missing = [p for p in shlex.split(apt[0])[2:]
               if subprocess.run(["dpkg-query", "-W", "-f=${Status}", p], capture_output=True, text=True).stdout
               != "install ok installed"]
    if missing:
        sys.exit("readme_quickstart: the apt-get line names packages that are not installed: " + " ".join(missing))
    files = subprocess.run(["git", "-C", ROOT, "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                           check=True, capture_output=True).stdout.split(b"\0")
    with tempfile.TemporaryDirectory(prefix="fpemu-quickstart-") as clone:
        for f in filter(None, files):
            src, dst = os.path.join(ROOT.encode(), f), os.path.join(clone.encode(), f)
            if not os.path.isfile(src):
                continue  # deleted in the working tree
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            with open(src, "rb") as i, open(dst, "wb") as o:
                o.write(i.read())
            os.chmod(dst, os.stat(src).st_mode)
        script = "set -e\n" + "\n".join(c for c in commands if c not in apt) + "\n"
        print("readme_quickstart: running in a fresh copy of the clone:\n" + script, flush=True)
        r = subprocess.run(["bash", "-c", script], cwd=clone, capture_output=True, text=True)
        if r.returncode != 0:
            sys.stderr.write(r.stdout[-4000:] + r.stderr[-4000:])
            sys.exit("readme_quickstart: the quick start failed (exit %d)" % r.returncode)
        # pip's own lines come first; the example's output is the last lines.
        got = r.stdout.splitlines()[-len(expected.splitlines()):]
        if got != expected.splitlines():
            sys.exit("readme_quickstart: the example printed %r, the README shows %r" % (got, expected.splitlines()))
    print("readme_quickstart: the README's quick start gives the README's output: %s" % expected.strip())


if __name__ == "__main__":
    main()
