"""check/raises counters shared by the Python test scripts (each prints its own summary)."""
FAILURES = []
CHECKS = [0]


def check(cond, what):
    CHECKS[0] += 1
    if not cond:
        FAILURES.append(what)
        print("FAIL:", what)
    return cond


def raises(fn, needle):
    """fn() must raise ValueError whose message contains needle (the library's message)."""
    try:
        fn()
    except ValueError as e:
        check(needle in str(e), "ValueError names %r: %r" % (needle, str(e)))
        return
    except Exception as e:  # noqa: BLE001 - any other exception type is a failure
        check(False, "expected ValueError with %r, got %r" % (needle, e))
        return
    check(False, "expected ValueError with %r, nothing raised" % needle)


def finish(name, minimum, extra=""):
    """Prints the summary; the exit status: 1 on a failure or fewer than `minimum` checks."""
    print("%s: %d checks, %d failed%s" % (name, CHECKS[0], len(FAILURES), extra))
    return 1 if FAILURES or CHECKS[0] < minimum else 0
