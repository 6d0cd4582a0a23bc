"""The package as pip installs it: its version, its refusal of a NumPy it was not built for, its
type stubs. Run by pytest in each venv of ./dev test (pip's wheel) or on the in-tree package;
FPEMU_SOURCE_ROOT names the source tree (meson sets it)."""
import importlib.metadata
import os
import pathlib
import re
import subprocess
import sys
import textwrap

import pytest

import fpemu

ROOT = pathlib.Path(os.environ.get("FPEMU_SOURCE_ROOT", pathlib.Path(__file__).resolve().parents[2]))
PACKAGE = pathlib.Path(fpemu.__file__).parent
SUPPORTED = fpemu._fpemu._numpy_supported


def installed_by_pip():
    try:
        return pathlib.Path(importlib.metadata.distribution("fpemu").locate_file("fpemu")) == PACKAGE
    except importlib.metadata.PackageNotFoundError:
        return False


def pyproject_numpy_range():
    """((low major, minor), (high major, minor)) of pyproject.toml's 'numpy>=A.B,<C'."""
    text = (ROOT / "pyproject.toml").read_text()
    m = re.search(r"'numpy>=(\d+)\.(\d+),<(\d+)(?:\.(\d+))?'", text)
    assert m, "pyproject.toml names no numpy>=A.B,<C dependency"
    return (int(m[1]), int(m[2])), (int(m[3]), int(m[4] or 0))


def test_version_is_the_meson_projects_and_the_installed_distributions():
    meson_version = re.search(r"version:\s*'([^']+)'", (ROOT / "meson.build").read_text())[1]
    assert fpemu.__version__ == meson_version
    if installed_by_pip():
        assert importlib.metadata.version("fpemu") == fpemu.__version__


def test_numpy_range_is_pyprojects_where_pybind11_speaks_numpy_2():
    low, high = pyproject_numpy_range()
    assert SUPPORTED[0] == low
    # The in-tree build with Debian's pybind11 2.10 speaks NumPy 1 only; pip's build all of it.
    assert SUPPORTED[1] == high or (not installed_by_pip() and SUPPORTED[1] == (2, 0))
    if installed_by_pip():
        assert any(r.replace(" ", "") == "numpy<%d,>=%d.%d" % (high[0], low[0], low[1]) or
                   r.replace(" ", "") == "numpy>=%d.%d,<%d" % (low[0], low[1], high[0])
                   for r in importlib.metadata.requires("fpemu"))


@pytest.mark.parametrize("text, release", [("1.24.2", (1, 24)), ("2.4.6", (2, 4)), ("2.5.0rc1", (2, 5)),
                                           ("3.0.0.dev0+git", (3, 0)), ("2", (2, 0))])
def test_numpy_version_strings_are_read(text, release):
    if text == "2":
        with pytest.raises(ImportError, match="cannot read the NumPy version '2'"):
            fpemu._numpy_release(text)
    else:
        assert fpemu._numpy_release(text) == release


def import_with_fake_numpy(tmp_path, version):
    """Imports fpemu in a child process whose `numpy` is a stub reporting `version`."""
    (tmp_path / "numpy").mkdir(exist_ok=True)
    (tmp_path / "numpy" / "__init__.py").write_text("__version__ = %r\n" % version)
    code = textwrap.dedent("""
        import sys
        sys.path.insert(0, %r)
        import fpemu
    """ % str(tmp_path))
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)


def edge_versions():
    (lo_major, lo_minor), (hi_major, hi_minor) = SUPPORTED
    below = "%d.%d.9" % (lo_major, lo_minor - 1) if lo_minor else "%d.99.0" % (lo_major - 1)
    return [below, "%d.%d.0" % (hi_major, hi_minor)], ["%d.%d.0" % (lo_major, lo_minor)]


@pytest.mark.parametrize("version", edge_versions()[0])
def test_a_numpy_outside_the_built_range_is_refused_at_import(tmp_path, version):
    run = import_with_fake_numpy(tmp_path, version)
    assert run.returncode != 0
    last = run.stderr.strip().splitlines()[-1]
    assert last.startswith("ImportError: fpemu %s was built for NumPy >= %d.%d and < %d.%d, but NumPy %s is installed"
                           % (fpemu.__version__, *SUPPORTED[0], *SUPPORTED[1], version)), run.stderr


@pytest.mark.parametrize("version", edge_versions()[1])
def test_the_lowest_numpy_of_the_range_passes_the_check(tmp_path, version):
    run = import_with_fake_numpy(tmp_path, version)
    assert run.returncode == 0, run.stderr


def test_arrays_cross_the_boundary_right_under_this_numpy():
    # What pybind11 before 2.12 got wrong under NumPy 2, silently: both directions of an array.
    import numpy as np
    assert fpemu.round(np.arange(8.0), "bf16", dtype="float64").tolist() == list(range(8))
    assert fpemu.round(np.array([0.1, 0.2, 0.5]), "e4m3fn").tolist() == [29, 37, 48]


def test_the_package_is_typed():
    assert (PACKAGE / "py.typed").is_file()
    for stub in ("__init__.pyi", "bounds.pyi"):
        assert (PACKAGE / stub).read_text() == (ROOT / "src/python/fpemu" / stub).read_text()


def test_the_stubs_are_what_pybind11_stubgen_makes_of_the_module(tmp_path):
    pytest.importorskip("pybind11_stubgen")
    if not installed_by_pip():
        pytest.skip("the stubs are generated from pip's build (PyPI's pybind11), not the in-tree one")
    # Its import lines come out of a set: a fixed hash seed orders them the same on every run.
    subprocess.run([sys.executable, "-m", "pybind11_stubgen", "fpemu", "-o", str(tmp_path)], check=True,
                   capture_output=True, env=dict(os.environ, PYTHONHASHSEED="0"))
    made = sorted(p.name for p in (tmp_path / "fpemu").iterdir())
    assert made == ["__init__.pyi", "bounds.pyi"]
    for name in made:
        assert (tmp_path / "fpemu" / name).read_text() == (ROOT / "src/python/fpemu" / name).read_text(), (
            "src/python/fpemu/%s is stale: regenerate it with PYTHONHASHSEED=0 python -m pybind11_stubgen fpemu "
            "-o src/python in a venv where pip installed fpemu (./dev venvs: build-venv/numpy2)" % name)
