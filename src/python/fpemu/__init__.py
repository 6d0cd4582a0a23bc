# The package fpemu: every function is the C++ library's, in the extension fpemu._fpemu (whose
# docstring is the package's); this file adds the version and refuses, at import, a NumPy that the
# extension was not built to speak (pybind11 before 2.12 reads NumPy 2 arrays wrongly, without an
# error).
import numpy as _numpy

from . import _fpemu
from ._fpemu import *  # noqa: F401,F403 - the package's API is the extension's
from ._fpemu import __doc__, __version__, bounds  # noqa: F401 - not matched by the star


def _numpy_release(text):
    """(major, minor) of a NumPy version string such as '2.4.6' or '2.5.0rc1'."""
    parts = text.split(".")
    try:
        return int(parts[0]), int("".join(c for c in parts[1] if c.isdigit()) or 0)
    except (IndexError, ValueError):
        raise ImportError("fpemu: cannot read the NumPy version %r" % text) from None


def _check_numpy(version, supported):
    low, high = supported
    if not low <= _numpy_release(version) < high:
        raise ImportError(
            "fpemu %s was built for NumPy >= %d.%d and < %d.%d, but NumPy %s is installed; install a NumPy in that "
            "range, or an fpemu built for this one"
            % (__version__, low[0], low[1], high[0], high[1], version))


_check_numpy(_numpy.__version__, _fpemu._numpy_supported)
