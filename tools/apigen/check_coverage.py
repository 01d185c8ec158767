#!/usr/bin/env python3
"""A committed coverage table (docs/coverage*.md) is the one the build
generated from the current frontend (gvs_unsupported.py).

usage: check_coverage.py GENERATED COMMITTED TARGET
TARGET is the build target that refreshes COMMITTED."""

import difflib
import sys


def main(argv):
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    generated, committed, target = argv
    with open(generated, encoding="utf-8") as f:
        new = f.read().splitlines(keepends=True)
    try:
        with open(committed, encoding="utf-8") as f:
            old = f.read().splitlines(keepends=True)
    except FileNotFoundError:
        old = []
    if new == old:
        print("ok: %s is up to date" % committed)
        return 0
    sys.stdout.writelines(difflib.unified_diff(old, new, committed, generated))
    print("FAIL: %s is out of date; refresh it with "
          "`cmake --build <build dir> --target %s`" % (committed, target))
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
