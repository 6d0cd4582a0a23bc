#!/usr/bin/env python3
"""Adds up the test cases of one or more meson test logs and prints 'N passed, N failed, N skipped'.

A doctest program contributes its test-case counts (not the cases its --test-case filter left out,
which doctest reports as skipped: the ThreadSanitizer pass runs a selection); a program that prints its own
'N passed, N failed[, N skipped]' line contributes those; any other program counts as one case.
A program that failed or timed out without reporting a failed case still counts as one failure.
"""
import json
import re
import sys

DOCTEST = re.compile(r"\[doctest\] test cases:\s*(\d+) \|\s*(\d+) passed \|\s*(\d+) failed \|\s*(\d+) skipped")
PLAIN = re.compile(r"^(?:\w+: )?(\d+) passed, (\d+) failed(?:, (\d+) skipped)?\s*$", re.M)


def count(log_path):
    passed = failed = skipped = 0
    with open(log_path) as log:
        for line in log:
            test = json.loads(line)
            out = test.get("stdout", "") or ""
            result = test["result"]
            if result == "SKIP":
                skipped += 1
                continue
            d = DOCTEST.findall(out)
            p = PLAIN.findall(out)
            if d:
                _, ok, bad, _ = map(int, d[-1])
                skip = 0
            elif p:
                ok, bad = int(p[-1][0]), int(p[-1][1])
                skip = int(p[-1][2] or 0)
            else:
                ok, bad, skip = (1, 0, 0) if result == "OK" else (0, 1, 0)
            if result != "OK" and bad == 0:
                bad = 1
            passed, failed, skipped = passed + ok, failed + bad, skipped + skip
    return passed, failed, skipped


def main(paths):
    totals = [0, 0, 0]
    for path in paths:
        for i, n in enumerate(count(path)):
            totals[i] += n
    print(f"{totals[0]} passed, {totals[1]} failed, {totals[2]} skipped")
    return 1 if totals[1] else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
