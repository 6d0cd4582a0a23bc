"""Assertions shared by the older Python test modules, under pytest: check() fails the test with
its message, raises() expects the library's ValueError naming a value."""
import pytest


def check(cond, what):
    assert cond, what


def raises(fn, needle):
    """fn() must raise ValueError whose message contains needle (the library's message)."""
    with pytest.raises(ValueError) as e:
        fn()
    assert needle in str(e.value), "ValueError names %r: %r" % (needle, str(e.value))
