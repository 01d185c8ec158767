#!/usr/bin/env python3
"""cuda.procaddr_exports: every function NVIDIA's driver answered
cuGetProcAddress with in the probe's data (plugins/cuda/probe/README.md)
is one our libcuda.so.1 exports: listed in plugins/cuda/libcuda.exports
and in the library's dynamic symbol table (nm -D).  Then the frontend can
answer with its own export of each.  The exports the probe never asked
about are counted: they answer as a name the driver does not know.

usage: check_procaddr_exports.py PROCADDR_TXT EXPORTS LIB"""

import subprocess
import sys


def answered(path):
    """{function name: first record naming it} of the proc and edge
    records' answers (RC,STATUS,PFN), and the names the probe asked."""
    names, asked = {}, set()
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            kind = line.split(" ", 1)[0]
            if kind not in ("proc", "edge"):
                continue
            head, _, tail = line.rstrip("\n").partition(" : ")
            if kind == "proc":
                asked.add(head.split(" ")[1])
            for r in tail.split(" "):
                fields = r.rpartition("=")[2].split(",")
                if len(fields) == 3 and fields[2] not in ("NULL", "unset"):
                    names.setdefault(fields[2].split("|")[0], "%s:%d" % (path, n))
    return names, asked


def main(argv):
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    data, listed, lib = argv
    with open(listed, encoding="utf-8") as f:
        exports = {line.strip() for line in f if line.strip() and not line.startswith("#")}
    nm = subprocess.run(["nm", "-D", "--defined-only", lib],
                        check=True, capture_output=True, text=True).stdout
    dynamic = {line.split()[-1] for line in nm.splitlines() if line.split()[-2:-1] == ["T"]}
    names, asked = answered(data)
    errors = ["%s: the driver answers %s, which %s does not list" % (where, name, listed)
              for name, where in sorted(names.items()) if name not in exports]
    errors += ["%s: the driver answers %s, which %s does not export" % (where, name, lib)
               for name, where in sorted(names.items()) if name not in dynamic]
    if not names:
        errors.append("%s: no answers naming a function" % data)
    for e in errors:
        print("FAIL: %s" % e)
    if not errors:
        print("ok: the %d functions the driver's answers name are all exported; "
              "%d exports the probe did not ask about answer as unknown names"
              % (len(names), len(exports - asked)))
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
