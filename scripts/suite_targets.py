#!/usr/bin/env python3
"""Prints the ninja targets that the tests of some meson suites need, so that a build directory
used for a few suites (the sanitizer build runs only 'quick') compiles nothing else.

usage: suite_targets.py BUILD_DIR SUITE [SUITE...]
"""
import json
import os
import subprocess
import sys


def introspect(build, what):
    out = subprocess.run(["meson", "introspect", build, what], check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def main():
    if len(sys.argv) < 3:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    build, suites = sys.argv[1], set(sys.argv[2:])
    files = {t["id"]: t["filename"] for t in introspect(build, "--targets")}
    needed = set()
    for test in introspect(build, "--tests"):
        if any(s.split(":")[-1] in suites for s in test["suite"]):
            for dep in test["depends"]:
                for f in files.get(dep, []):
                    needed.add(os.path.relpath(f, os.path.abspath(build)))
    if not needed:
        print("suite_targets.py: no test of the suites %s in %s" % (" ".join(sorted(suites)), build), file=sys.stderr)
        return 1
    print("\n".join(sorted(needed)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
