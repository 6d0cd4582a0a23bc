#!/usr/bin/env python3
"""The tables of docs/ that the fpemu command can print, made from its output so that they
cannot drift from the code.

    docs_tables.py FPEMU            check: exit 1, with a diff, when a page's block differs
    docs_tables.py FPEMU --write    rewrite the blocks in place

Each table sits in its page between "<!-- table:NAME -->" and "<!-- /table:NAME -->":

    formats   docs/formats.md        from `fpemu formats --json -`
    presets   docs/accumulation.md   from `fpemu mma --list` (the table and its notes)
    scaling   docs/accumulation.md   from `fpemu gemm --json -` over scalings, sigma and K

(The bad-input audit tables have their own generators, the audit tests' --markdown.)
Python 3 standard library only.
"""
import difflib
import json
import os
import re
import subprocess
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))


def run(exe, *args):
    p = subprocess.run([exe, *args], capture_output=True, text=True, timeout=120)
    return p.returncode, p.stdout


def cell(value):
    """A value as a markdown table cell: pipes escaped, lists joined."""
    if isinstance(value, bool):
        value = "yes" if value else "no"
    elif isinstance(value, (list, tuple)):
        value = ", ".join(str(v) for v in value)
    return str(value).replace("|", "\\|")


def table(header, rows):
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def json_output(exe, *attempts):
    """The first attempt whose output is JSON; `--json` is a flag today and may come to take a
    file name ('-' for stdout), so both spellings are tried."""
    for args in attempts:
        status, out = run(exe, *args)
        if status == 0:
            try:
                return json.loads(out)
            except ValueError:
                pass
    return None


def formats_table(exe):
    formats = json_output(exe, ["formats", "--json"], ["formats", "--json", "-"])
    if formats is None:
        raise SystemExit("docs_tables: `fpemu formats --json -` gave no JSON")
    cited = any(f.get("citation") for f in formats)
    header = ["name", "bits", "layout", "non-finite encoding", "max finite", "description"]
    if cited:
        header.append("citation")
    rows = []
    for f in formats:
        layout = "e%dm%d, bias %d" % (f["exp_bits"], f["frac_bits"], f["bias"])
        if not f["subnormals"]:
            layout += ", no subnormals"
        if not f["signed"]:
            layout += ", unsigned"
        if not f["has_zero"]:
            layout += ", no zero"
        row = ["`%s`" % f["name"], f["width"], layout, f["encoding"], "%.6g" % f["max_finite"], f["description"]]
        if cited:
            row.append(f.get("citation", ""))
        rows.append(row)
    return table(header, rows)


def presets_table(exe):
    """The text listing as it prints: a header line of single-word column names, each cell
    starting under its name, one line per preset, then notes, which follow the table as a
    paragraph."""
    status, out = run(exe, "mma", "--list")
    if status != 0:
        raise SystemExit("docs_tables: `fpemu mma --list` exited with %d" % status)
    lines = out.splitlines()
    columns = [(m.start(), m.group()) for m in re.finditer(r"\S+", lines[0])] if lines else []
    starts = [start for start, _ in columns]
    rows, notes = [], []
    for line in lines[1:]:
        if notes or not line.strip() or line.split()[0].endswith(":"):  # the notes under the table
            notes.append(line)
            continue
        cells = [line[a:b].strip() for a, b in zip(starts, starts[1:] + [len(line)])]
        cells[0] = "`%s`" % cells[0]
        rows.append(cells)
    if not rows:
        raise SystemExit("docs_tables: no presets in `fpemu mma --list`")
    header = [name if len(name) == 1 else name.lower() for _, name in columns]
    text = table(header, rows)
    if any(n.strip() for n in notes):
        text += "\n" + "\n".join(n for n in notes if n.strip()) + "\n"
    return text


# The scalings compared by the scaling table: (name, the gemm options that give it). FP8 (e4m3fn)
# inputs accumulate in fp32 (group scalings fold each group into fp32); NVFP4 needs its MMA.
SCALINGS = [
    ("none (e4m3fn)", ["--a-format", "e4m3fn", "--b-format", "e4m3fn", "--acc", "fp32", "--scaling", "none"]),
    ("per tensor (e4m3fn)", ["--a-format", "e4m3fn", "--b-format", "e4m3fn", "--acc", "fp32", "--scaling", "tensor"]),
    ("1x128 A, 128x128 B (e4m3fn)", ["--a-format", "e4m3fn", "--b-format", "e4m3fn", "--acc", "fp32",
                                     "--scaling", "tile128"]),
    ("MX, 32 (e4m3fn, E8M0)", ["--a-format", "e4m3fn", "--b-format", "e4m3fn", "--acc", "fp32", "--scaling", "mx32"]),
    ("NVFP4 (e2m1fn, UE4M3 per 16, b200-mxf4nvf4)", ["--preset", "b200-mxf4nvf4"]),
]
SIGMAS = ["1e-6", "1e-4", "1e-2", "1", "1e2", "1e4"]
SCALING_KS = [128, 4096]


def scaling_table(exe):
    """normwise_error_original of `fpemu gemm` (M = N = 8, one sample, seed 0, N(0, sigma) data),
    with the percentages of the inputs that underflowed (U) or saturated (S) where not zero."""
    rows = []
    for name, options in SCALINGS:
        for k in SCALING_KS:
            cells = [name, str(k)]
            for sigma in SIGMAS:
                status, out = run(exe, "gemm", "--m", "8", "--n", "8", "--k", str(k), "--sigma", sigma,
                                  "--json", "-", *options)
                if status != 0:
                    raise SystemExit("docs_tables: fpemu gemm %s --sigma %s exited with %d" % (" ".join(options), sigma,
                                                                                              status))
                r = json.loads(out)[0]
                lost = ["%s %.3g%%" % (what, 100 * r[key]) for what, key in (("U", "underflowed"), ("S", "saturated"))
                        if r[key] > 0]
                cells.append("%.2g" % r["normwise_error_original"] + (" (%s)" % ", ".join(lost) if lost else ""))
            rows.append(cells)
    return table(["scaling (elements)", "K"] + ["sigma " + s for s in SIGMAS], rows)


TABLES = {
    "formats": ("docs/formats.md", formats_table),
    "presets": ("docs/accumulation.md", presets_table),
    "scaling": ("docs/accumulation.md", scaling_table),
}


def main():
    args = [a for a in sys.argv[1:] if a != "--write"]
    write = "--write" in sys.argv[1:]
    if len(args) != 1:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    exe = os.path.abspath(args[0])
    failed = 0
    for name, (page, make) in TABLES.items():
        path = os.path.join(ROOT, page)
        text = open(path, encoding="utf-8").read()
        begin, end = "<!-- table:%s -->\n" % name, "<!-- /table:%s -->" % name
        if text.count(begin) != 1 or text.count(end) != 1 or text.index(begin) > text.index(end):
            print("FAIL %s: no single %s ... %s block" % (page, begin.strip(), end))
            failed += 1
            continue
        head, rest = text.split(begin)
        old, tail = rest.split(end)
        new = make(exe)
        if old == new:
            print("ok   %s: table %s" % (page, name))
        elif write:
            with open(path, "w", encoding="utf-8") as f:
                f.write(head + begin + new + end + tail)
            print("wrote %s: table %s" % (page, name))
        else:
            print("FAIL %s: table %s differs from the command's output "
                  "(python3 scripts/docs_tables.py FPEMU --write rewrites it):" % (page, name))
            sys.stdout.writelines(difflib.unified_diff(old.splitlines(True), new.splitlines(True), page, "generated"))
            failed += 1
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
