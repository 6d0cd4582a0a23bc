"""The house's rooms and the directions they may include each other in (docs/architecture.md: Rooms).

Every #include "..." of a C++/CUDA source names either a file in the includer's own folder (or a
subfolder of it, such as cuda/arch/) or a room from the project root (analysis/..., cuda/...,
src/..., tests/...) or a core header (fpemu/...): no include directory makes a bare name from
another folder resolve. Rooms include only what stands below them in the design's picture:
  include/fpemu   the core: only itself
  analysis/       reference < training < casgd (each the ones before it), oracle only the core;
                  the oracle is included by tests and fuzzing only
  src/            the core's compiled half: the core
Exit 1 names each include that breaks a rule.
"""
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
SOURCES = ("*.hpp", "*.cpp", "*.cu", "*.cuh", "*.h")
FOLDERS = ("include", "src", "analysis", "cuda", "tests", "fuzz", "bench")
ANALYSIS_ORDER = ["reference", "training", "casgd"]


def room_of(rel):
    """'analysis/training' for analysis/training/x.hpp, 'cuda' for cuda/arch/y.cuh, ..."""
    parts = rel.parts
    if parts[0] == "analysis":
        return "analysis/" + parts[1] if len(parts) > 2 else "analysis"
    if parts[0] == "include":
        return "fpemu"
    if parts[0] == "src" and len(parts) > 2:
        return "src/" + parts[1]
    return parts[0]


def allowed(src_room, target_room):
    if target_room == "fpemu":
        return True
    if src_room == "fpemu":
        return False
    if src_room == "src":
        return target_room == "src"
    if target_room == "analysis/oracle":
        return src_room in ("analysis/oracle", "tests", "fuzz")
    if src_room.startswith("analysis"):
        if not target_room.startswith("analysis/"):
            return False
        a, b = src_room.split("/")[-1], target_room.split("/")[-1]
        if a == "oracle":
            return a == b
        return a in ANALYSIS_ORDER and b in ANALYSIS_ORDER and ANALYSIS_ORDER.index(b) <= ANALYSIS_ORDER.index(a)
    return True


def main():
    problems = []
    checked = 0
    for folder in FOLDERS:
        for pattern in SOURCES:
            for path in sorted((ROOT / folder).rglob(pattern)):
                rel = path.relative_to(ROOT)
                for number, line in enumerate(path.read_text().splitlines(), 1):
                    m = INCLUDE.match(line)
                    if not m:
                        continue
                    checked += 1
                    name = m.group(1)
                    where = f"{rel}:{number}: #include \"{name}\""
                    if (path.parent / name).is_file():
                        target = (path.parent / name).resolve().relative_to(ROOT)
                    elif name.startswith("fpemu/") and ((ROOT / "include" / name).is_file() or
                                                        (ROOT / "include" / (name + ".in")).is_file()):
                        target = pathlib.Path("include") / name  # or generated from NAME.in by meson
                    elif (ROOT / name).is_file() and name.split("/")[0] in FOLDERS:
                        target = pathlib.Path(name)
                    else:
                        problems.append(f"{where}: resolves neither in its folder nor from the project root")
                        continue
                    if not allowed(room_of(rel), room_of(target)):
                        problems.append(f"{where}: {room_of(rel)} may not include {room_of(target)}")
    if checked < 500:
        print(f"only {checked} includes found: is the tree complete?")
        return 1
    for p in problems:
        print(p)
    print(f"{checked} includes checked, {len(problems)} against the rules")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
