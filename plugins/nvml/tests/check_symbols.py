#!/usr/bin/env python3
"""nvml.symbols: our libnvidia-ml.so.1 exports exactly the functions
plugins/nvml/libnvidia-ml.exports lists (NVIDIA's NVML of driver 580),
unversioned functions as NVIDIA's.  Read with nm -D, independently of the
ELF reader the stub generator uses.

usage: check_symbols.py LIB EXPORTS"""

import subprocess
import sys


def main(argv):
    if len(argv) != 2:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    lib, listed = argv
    out = subprocess.run(["nm", "-D", "--defined-only", "--with-symbol-versions", lib],
                         check=True, capture_output=True, text=True).stdout
    have, bad = set(), []
    for line in out.splitlines():
        kind, sym = line.split()[-2:]
        if "@" in sym or kind != "T":
            bad.append("%s (%s)" % (sym, kind))
        have.add(sym.split("@")[0])
    with open(listed, encoding="utf-8") as f:
        want = {w.strip() for w in f if w.strip() and not w.startswith("#")}
    for name in sorted(want - have):
        bad.append("%s missing" % name)
    for name in sorted(have - want):
        bad.append("%s exported but not NVIDIA's" % name)
    for b in bad:
        print("FAILED: " + b)
    if not bad:
        print("ok: %d functions, as NVIDIA's" % len(have))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
