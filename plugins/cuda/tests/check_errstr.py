#!/usr/bin/env python3
"""cuda.errstr: the frontend's error table (frontend/errstr.inc, dumped
from NVIDIA's driver by tools/errstr_dump) names every CUresult of the
toolkit's cuda.h with its value and nothing else, in code order (the
frontend searches it by halves).  A toolkit with new codes fails it until
the table is dumped again from a driver that knows them.

cuda.errstr_driver (--driver): the table is what ERRSTR_DUMP writes from
the driver of this machine; exit status 77 (skipped) where it has none.

usage: check_errstr.py ERRSTR_INC CUDA_INCLUDE_DIR...
       check_errstr.py --driver ERRSTR_DUMP ERRSTR_INC"""

import difflib
import os
import re
import subprocess
import sys
import tempfile

ENUM = re.compile(r"typedef\s+enum\s+cudaError_enum\s*\{(.*?)\}\s*CUresult\s*;", re.S)
ENUMERATOR = re.compile(r"^\s*(CUDA_\w+)\s*=\s*(\d+)", re.M)
ROW = re.compile(r'^\{(-?\d+), "(\w+)", "(?:\\.|[^"\\])*"\},$')
SKIPPED = 77


def check_header(inc, include_dirs):
    cuda_h = next((os.path.join(d, "cuda.h") for d in include_dirs
                   if os.path.isfile(os.path.join(d, "cuda.h"))), None)
    if cuda_h is None:
        return ["no cuda.h in %s" % " ".join(include_dirs)], 0
    with open(cuda_h, encoding="utf-8") as f:
        m = ENUM.search(re.sub(r"/\*.*?\*/", "", f.read(), flags=re.S))
    if m is None:
        return ["%s defines no CUresult" % cuda_h], 0
    header = {name: int(v) for name, v in ENUMERATOR.findall(m.group(1))}
    rows, errors = [], []
    with open(inc, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            line = line.rstrip("\n")
            r = ROW.match(line)
            if r:
                rows.append((int(r.group(1)), r.group(2)))
            elif line.startswith("{"):
                errors.append("%s:%d: not a {code, name, string} row" % (inc, n))
    table = dict((name, code) for code, name in rows)
    errors += ["%s (%d) is in cuda.h, not in the table: dump it again "
               "(`cmake --build <build dir> --target cuda_errstr`, with a driver)"
               % (name, code) for name, code in sorted(header.items()) if name not in table]
    errors += ["%s is %d in the table, %d in cuda.h" % (name, table[name], code)
               for name, code in sorted(header.items())
               if name in table and table[name] != code]
    errors += ["%s is in the table, not in cuda.h" % name
               for name in sorted(set(table) - set(header))]
    codes = [code for code, _ in rows]
    if codes != sorted(set(codes)):
        errors.append("%s is not in strictly increasing code order" % inc)
    return errors, len(rows)


def check_driver(dump, inc):
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "errstr.inc")
        r = subprocess.run([dump, out], capture_output=True, text=True, timeout=60)
        if r.returncode == SKIPPED:
            print("skipped: %s" % r.stderr.strip())
            return SKIPPED
        if r.returncode != 0:
            print("FAIL: %s exited with %d: %s" % (dump, r.returncode, r.stderr.strip()))
            return 1
        with open(out, encoding="utf-8") as f:
            new = f.read().splitlines(keepends=True)
    with open(inc, encoding="utf-8") as f:
        old = f.read().splitlines(keepends=True)
    if new == old:
        print("ok: %s is this driver's answers" % inc)
        return 0
    sys.stdout.writelines(difflib.unified_diff(old, new, inc, "the driver"))
    print("FAIL: %s is not this driver's answers; refresh it with "
          "`cmake --build <build dir> --target cuda_errstr`" % inc)
    return 1


def main(argv):
    if len(argv) == 3 and argv[0] == "--driver":
        return check_driver(argv[1], argv[2])
    if len(argv) < 2 or argv[0].startswith("-"):
        print(__doc__, file=sys.stderr)
        return 2
    errors, count = check_header(argv[0], argv[1:])
    for e in errors:
        print("FAIL: %s" % e)
    if not errors:
        print("ok: %d codes, as cuda.h's CUresult" % count)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
