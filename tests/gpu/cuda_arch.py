#!/usr/bin/env python3
"""Checks that a CUDA program holds exactly the GPU code it was built for.

    cuda_arch.py [--cuobjdump PATH] [--required] --expect LIST PROGRAM

LIST is a CMAKE_CUDA_ARCHITECTURES value ("80", "75-real;90", "90a-real"):
N-real is machine code (SASS) for sm_N, N-virtual is PTX of compute_N, N
alone both.  `cuobjdump --list-elf` and `--list-ptx` of PROGRAM must list
those and nothing else.  Exits 0 when they do, 1 when not, 77 (a skipped
test) when there is no cuobjdump to ask or LIST is not a list of numbers
(all, all-major, native unresolved); with --required (CI) those fail too.
"""
import argparse
import re
import shutil
import subprocess
import sys

SKIP = 77


def expected(arch_list):
    sass, ptx = set(), set()
    for item in filter(None, re.split(r"[;\s]+", arch_list)):
        m = re.fullmatch(r"([0-9]+[a-z]?)(-real|-virtual)?", item)
        if m is None:
            return None
        arch, kind = m.groups()
        if kind != "-virtual":
            sass.add("sm_" + arch)
        if kind != "-real":
            ptx.add("sm_" + arch)
    return sass, ptx


def listed(cuobjdump, option, program):
    p = subprocess.run([cuobjdump, option, program], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True)
    # A program without any file of that kind makes cuobjdump say so and
    # exit non-zero: that is an empty list, not an error.
    if p.returncode != 0 and "does not contain" not in p.stdout:
        sys.exit(f"{cuobjdump} {option} {program} failed:\n{p.stdout}")
    # "ELF file    1: vector_add.1.sm_80.cubin", "PTX file    1: ....sm_100.ptx"
    return set(re.findall(r"\.(sm_[0-9]+[a-z]?)\.(?:cubin|ptx)\s*$",
                          p.stdout, re.M))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cuobjdump", default=shutil.which("cuobjdump"))
    ap.add_argument("--required", action="store_true",
                    help="fail rather than skip when it cannot check")
    ap.add_argument("--expect", required=True)
    ap.add_argument("program")
    a = ap.parse_args()
    skip = 1 if a.required else SKIP
    want = expected(a.expect)
    if want is None:
        print(f"cannot check: {a.expect!r} is not a list of architectures")
        return skip
    if not a.cuobjdump or not shutil.which(a.cuobjdump):
        print("cannot check: no cuobjdump (CUDA toolkit, or pip's "
              "nvidia-cuda-cuobjdump)")
        return skip
    got = (listed(a.cuobjdump, "--list-elf", a.program),
           listed(a.cuobjdump, "--list-ptx", a.program))
    def names(archs):
        return " ".join(sorted(archs, key=lambda a: (len(a), a))) or "-"

    ok = True
    for what, w, g in (("machine code", want[0], got[0]),
                       ("PTX", want[1], got[1])):
        print(f"{what}: expected {names(w)}, found {names(g)}")
        ok &= w == g
    if not ok:
        print(f"FAILED: {a.program} does not hold what "
              f"CMAKE_CUDA_ARCHITECTURES={a.expect} asks for")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
