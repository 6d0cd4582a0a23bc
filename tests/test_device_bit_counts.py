"""Code that nvcc compiles for the device counts bits through fpemu/detail/bits.hpp only.

nvcc 13.0 with libstdc++ 12 turns std::countr_zero (any width) and the 64-bit std::countl_zero
and std::bit_width into constants in device code, silently (bits.hpp says how this was found).
Every header under include/ and every file under cuda/ may be compiled for the device, so none
of them may name <bit>'s counting functions; bits.hpp wraps them once. Exit 1 names each use.
"""
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
COUNTERS = re.compile(r"\bstd::(countl_zero|countl_one|countr_zero|countr_one|bit_width|bit_floor|bit_ceil|"
                      r"popcount|has_single_bit)\b")
HOME = ROOT / "include/fpemu/detail/bits.hpp"


def device_sources():
    for folder, patterns in (("include", ("*.hpp",)), ("cuda", ("*.hpp", "*.cuh", "*.cu"))):
        for pattern in patterns:
            yield from (ROOT / folder).rglob(pattern)


def main():
    found = []
    checked = 0
    for path in sorted(device_sources()):
        if path == HOME:
            continue
        checked += 1
        for number, line in enumerate(path.read_text().splitlines(), 1):
            code = line.split("//", 1)[0]
            if COUNTERS.search(code):
                found.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    if checked < 20:
        print(f"only {checked} files found under include/ and cuda/: is the tree complete?")
        return 1
    for f in found:
        print(f"{f}\n  use fpemu::detail::countl_zero/countr_zero/bit_width (detail/bits.hpp): nvcc miscompiles "
              "<bit>'s counters in device code")
    print(f"{checked} files checked, {len(found)} uses of <bit>'s counters outside detail/bits.hpp")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
