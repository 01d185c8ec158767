#!/usr/bin/env python3
"""cudart.symbols: our libcudart.so.13 exports exactly what NVIDIA's does,
each name under the same version (nm -D, independently of the ELF reader
the build's stub generator uses), and every symbol a -cudart shared
program imports in both default-stream modes.

usage: check_symbols.py LIB REFERENCE [--nvcc NVCC SAMPLE.cu]
A sample nvcc cannot compile is a failure.
"""

import os
import subprocess
import sys
import tempfile

NODE = "libcudart.so.13"


def dynsyms(path):
    """(name, version, kind) for each dynamic symbol, from nm -D; version
    keeps nm's "@@" (default) or "@" prefix."""
    out = subprocess.run(["nm", "-D", "--with-symbol-versions", path],
                         check=True, capture_output=True, text=True).stdout
    syms = []
    for line in out.splitlines():
        parts = line.split()
        if len(parts) < 2:
            continue
        kind, sym = parts[-2], parts[-1]
        at = sym.find("@")
        name, version = (sym, "") if at < 0 else (sym[:at], sym[at:])
        if kind == "A" and name == NODE:
            continue  # the version node's own definition
        syms.append((name, version, kind))
    return syms


def exports(path):
    return {(n, v): k for n, v, k in dynsyms(path) if k not in ("U", "w", "v")}


def check_exports(lib, reference):
    ours, theirs = exports(lib), exports(reference)
    errors = ["missing %s%s (%s exports it)" % (n, v, os.path.basename(reference))
              for n, v in sorted(set(theirs) - set(ours))]
    errors += ["extra %s%s" % (n, v) for n, v in sorted(set(ours) - set(theirs))]
    errors += ["%s%s is of kind %s, %s in the reference" % (n, v, ours[(n, v)], theirs[(n, v)])
               for n, v in sorted(set(ours) & set(theirs)) if ours[(n, v)] != theirs[(n, v)]]
    return {n for n, _ in ours}, errors


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
        return [n for n, v, k in dynsyms(exe) if k == "U" and v.lstrip("@") == NODE]


def main(argv):
    if len(argv) not in (2, 5) or (len(argv) == 5 and argv[2] != "--nvcc"):
        print(__doc__, file=sys.stderr)
        return 2
    exported, errors = check_exports(argv[0], argv[1])
    for flags in NVCC_VARIANTS if len(argv) == 5 else ():
        imports = sample_imports(argv[3], argv[4], flags)
        if imports is None:
            print("FAILED: nvcc could not build the sample")
            return 1
        if not imports:
            errors.append("the sample imports nothing from %s" % NODE)
        for name in imports:
            if name not in exported:
                errors.append("sample (nvcc %s) imports %s, which we do not export"
                              % (" ".join(flags), name))
    for e in errors:
        print("FAIL: %s" % e)
    if not errors:
        print("ok: %d symbols exported, as by %s" % (len(exported), argv[1]))
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
