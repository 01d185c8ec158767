#!/usr/bin/env python3
"""bench.sockbulk.TRANSPORT: bench/sockbulk.c over one transport, small:
every line there, each rate positive, the mean the mean of the two
directions, and each direction's median round no faster than its best.

usage: test_sockbulk.py SOCKBULK URI"""
import math
import subprocess
import sys

import run  # bench/run.py: its parser of "metric value unit"

ROW = "socket_bulk_8MiB"


def main(argv):
    if len(argv) != 3:
        sys.exit(__doc__)
    p = subprocess.run([argv[1], argv[2], "8", "1", "4"], capture_output=True,
                       timeout=120)
    if p.returncode != 0:
        sys.exit("FAIL: sockbulk exited %d: %s" % (p.returncode,
                                                   p.stderr.decode()[-500:]))
    out = run.parse(p.stdout)
    for k in ("", "_c2s", "_s2c", "_c2s_best", "_s2c_best"):
        v = out.get(ROW + k)
        if v is None or v[1] != "GB/s" or not v[0] > 0:
            sys.exit("FAIL: %s%s is %r" % (ROW, k, v))
    mean = (out[ROW + "_c2s"][0] + out[ROW + "_s2c"][0]) / 2
    if not math.isclose(out[ROW][0], mean, rel_tol=1e-4):
        sys.exit("FAIL: %s %.6g, the mean of its directions %.6g" %
                 (ROW, out[ROW][0], mean))
    for way in ("_c2s", "_s2c"):
        med, best = out[ROW + way][0], out[ROW + way + "_best"][0]
        if med > best * (1 + 1e-4):
            sys.exit("FAIL: %s median %.6g above its best %.6g" %
                     (way, med, best))
    print("ok")


if __name__ == "__main__":
    main(sys.argv)
