#!/usr/bin/env python3
"""cudart.symbols: our libcudart.so.13 exports only CUDA names, all in the
libcudart.so.13 version node, and every one a -cudart shared program of
the first slice imports.

usage: check_symbols.py LIB [--nvcc NVCC SAMPLE.cu]
Exit 77 (skipped) when nvcc is given but cannot compile the sample.
"""

import os
import re
import subprocess
import sys
import tempfile

NODE = "libcudart.so.13"
NAME = re.compile(r"^(cuda|__cuda)[A-Za-z0-9_]*$")


def dynsyms(path):
    """(name, version, defined) for each dynamic symbol, from nm -D."""
    out = subprocess.run(["nm", "-D", "--with-symbol-versions", path],
                         check=True, capture_output=True, text=True).stdout
    syms = []
    for line in out.splitlines():
        parts = line.split()
        if len(parts) < 2:
            continue
        kind, sym = parts[-2], parts[-1]
        name, _, version = sym.partition("@")
        version = version.lstrip("@")
        if kind == "A" and name == NODE:
            continue  # the version node's own definition
        syms.append((name, version, kind not in ("U", "w", "v")))
    return syms


def check_exports(lib):
    errors = []
    exported = set()
    for name, version, defined in dynsyms(lib):
        if not defined:
            continue
        if not NAME.match(name):
            errors.append("exports non-CUDA symbol %s" % name)
        if version != NODE:
            errors.append("%s is versioned %r, not %s" % (name, version, NODE))
        exported.add(name)
    return exported, errors


# The sample is built both ways: per-thread default stream compiles the
# same calls to their _ptds/_ptsz entry points.
NVCC_VARIANTS = ([], ["--default-stream", "per-thread"])


def sample_imports(nvcc, sample, flags):
    with tempfile.TemporaryDirectory() as tmp:
        exe = os.path.join(tmp, "sample")
        r = subprocess.run([nvcc, "-cudart", "shared"] + flags + ["-o", exe, sample],
                           capture_output=True, text=True)
        if r.returncode != 0:
            sys.stderr.write(r.stderr)
            return None
        return [(n, v) for n, v, d in dynsyms(exe) if not d and v == NODE]


def main(argv):
    if len(argv) not in (1, 4) or (len(argv) == 4 and argv[1] != "--nvcc"):
        print(__doc__, file=sys.stderr)
        return 2
    exported, errors = check_exports(argv[0])
    if not exported:
        errors.append("no symbol exported at all")
    for flags in NVCC_VARIANTS if len(argv) == 4 else ():
        imports = sample_imports(argv[2], argv[3], flags)
        if imports is None:
            print("skipped: nvcc could not build the sample")
            return 77
        if not imports:
            errors.append("the sample imports nothing from %s" % NODE)
        for name, _ in imports:
            if name not in exported:
                errors.append("sample (nvcc %s) imports %s, which we do not export"
                              % (" ".join(flags), name))
    for e in errors:
        print("FAIL: %s" % e)
    if not errors:
        print("ok: %d symbols exported" % len(exported))
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
