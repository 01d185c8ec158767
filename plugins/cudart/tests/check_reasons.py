#!/usr/bin/env python3
"""cudart.reasons: every function the generated coverage table marks not
supported has a reason in plugins/cudart/unsupported.reasons, and no entry
there names, or as a prefix covers, a function the frontend implements or
no export at all (a stale or mistyped entry).

usage: check_reasons.py GENERATED_COVERAGE REASONS"""

import os
import re
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "..", "tools", "apigen"))
import gvs_unsupported as gu  # noqa: E402

ROW = re.compile(r"^\| `([^`]+)` \| ([a-z ]+) \|")


def main(argv):
    coverage, reasons_path = argv
    status = {}
    with open(coverage, encoding="utf-8") as f:
        for line in f:
            m = ROW.match(line)
            if m:
                status[m.group(1)] = m.group(2)
    try:
        reasons = gu.read_reasons(reasons_path)
    except gu.GenError as e:
        print("FAIL: %s" % e)
        return 1
    bad = []
    for name in sorted(status):
        if status[name] == "not supported" and gu.reason_for(reasons, name) is None:
            bad.append("%s is not supported and has no reason in %s" % (name, reasons_path))
    for entry in reasons:
        covered = [n for n in status if gu.entry_matches(entry, n)]
        done = sorted(n for n in covered if status[n] != "not supported")
        if not covered:
            bad.append("%s:%d: %s names no export" % (reasons_path, entry[2], entry[0]))
        elif done:
            bad.append("%s:%d: %s covers implemented %s: drop or narrow it"
                       % (reasons_path, entry[2], entry[0], ", ".join(done)))
    for b in bad:
        print("FAIL: " + b)
    if not bad:
        print("ok: every unsupported function has a reason")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
