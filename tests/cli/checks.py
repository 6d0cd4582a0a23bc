"""check() counters shared by the command's test scripts (each prints its own summary line)."""
FAILURES = []
CHECKS = [0]


def check(cond, what):
    CHECKS[0] += 1
    if not cond:
        FAILURES.append(what)
        print("FAIL:", what)
    return cond
