#!/usr/bin/python3
"""Executes one of fpemu's notebooks with nbconvert and fails on the first cell that raises.

    run_notebook.py NOTEBOOK --out DIR   a copy runs in DIR/notebooks (the test suite: the
                                         source tree is not touched); figures land in
                                         DIR/notebooks/figures
    run_notebook.py NOTEBOOK --in-place  runs in notebooks/ and saves the outputs into the
                                         notebook; figures land in notebooks/figures (the
                                         figures of docs/python.md; ./dev notebooks)

A notebook runs with its own directory as the working directory: it writes figures to
figures/NN_*.png and reads recorded results from ../bench/results and hardware vectors from
../tests/data, which --out links to the source tree's. The kernel is the interpreter that runs this
script (a venv where pip installed fpemu, or Debian's python3 with PYTHONPATH at the build's
src/python); it needs ipykernel.
"""
import argparse
import json
import os
import shutil
import sys
import tempfile
import time

import nbformat
from nbconvert.preprocessors import CellExecutionError, ExecutePreprocessor


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("notebook")
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--out", help="run a copy in OUT/notebooks")
    where.add_argument("--in-place", action="store_true", help="run in place and save the outputs")
    parser.add_argument("--timeout", type=int, default=900, help="seconds per cell (default 900)")
    args = parser.parse_args()

    source = os.path.abspath(args.notebook)
    if not os.path.isfile(source):
        sys.exit(f"run_notebook: no notebook {args.notebook}")
    repo = os.path.dirname(os.path.dirname(source))
    if args.in_place:
        workdir = os.path.dirname(source)
        target = source
    else:
        workdir = os.path.join(os.path.abspath(args.out), "notebooks")
        os.makedirs(workdir, exist_ok=True)
        for recorded in ("bench", "tests"):  # recorded results and hardware vectors, read-only
            try:
                os.symlink(os.path.join(repo, recorded), os.path.join(os.path.abspath(args.out), recorded))
            except FileExistsError:  # another notebook's run made it
                pass
        target = os.path.join(workdir, os.path.basename(source))
    os.makedirs(os.path.join(workdir, "figures"), exist_ok=True)

    # The kernel starts in the notebook's directory: a relative PYTHONPATH would no longer
    # find the module there.
    if os.environ.get("PYTHONPATH"):
        os.environ["PYTHONPATH"] = os.pathsep.join(os.path.abspath(p) for p in os.environ["PYTHONPATH"].split(os.pathsep))
    os.environ.setdefault("PYDEVD_DISABLE_FILE_VALIDATION", "1")  # the kernel's debugger notice on stderr
    # The kernel is this interpreter: Debian's python3 kernel spec would start /usr/bin/python3,
    # outside the venv that holds fpemu.
    specs = tempfile.mkdtemp(prefix="fpemu-kernel-")
    os.makedirs(os.path.join(specs, "kernels", "fpemu"))
    with open(os.path.join(specs, "kernels", "fpemu", "kernel.json"), "w") as f:
        json.dump({"argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
                   "display_name": "fpemu", "language": "python"}, f)
    os.environ["JUPYTER_PATH"] = os.pathsep.join(p for p in (specs, os.environ.get("JUPYTER_PATH")) if p)
    start = time.monotonic()
    name = os.path.basename(source)
    try:
        for attempt in range(3):
            nb = nbformat.read(source, as_version=4)
            runner = ExecutePreprocessor(timeout=args.timeout, kernel_name="fpemu")
            try:
                runner.preprocess(nb, {"metadata": {"path": workdir}})
                break
            except RuntimeError as e:
                # Two notebooks started at once can draw the same free port (jupyter_client picks
                # the ports, then the kernel binds them): one kernel dies at its start ("Address
                # already in use") before any cell ran. That start, and only that, is tried again.
                if "Kernel died before replying to kernel_info" not in str(e) or attempt == 2:
                    raise
                print(f"{name}: the kernel died at its start; starting another", file=sys.stderr)
    except CellExecutionError as e:
        nbformat.write(nb, target if not args.in_place else target + ".failed")
        print(f"{name}: FAILED after {time.monotonic() - start:.1f} s\n{e}", file=sys.stderr)
        return 1
    finally:
        shutil.rmtree(specs)
    nbformat.write(nb, target)
    print(f"{name}: ran {sum(c.cell_type == 'code' for c in nb.cells)} code cells in {time.monotonic() - start:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
