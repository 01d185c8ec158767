#!/usr/bin/env python3
"""cudart.unreachable: runs the unreachable test program against a server
that does not exist and checks that it passes quickly with exactly one
line on stderr.  usage: run_unreachable.py PROGRAM"""

import os
import subprocess
import sys
import tempfile
import time

EXPECTED_OUT = ("cudaErrorInsufficientDriver: CUDA driver version is "
                "insufficient for CUDA runtime version\n")


def main(argv):
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ)
        env["GVS_SERVER"] = "unix://%s/no-such.sock" % tmp
        env["GVS_CONFIG"] = os.devnull  # an empty config: the server only
        t0 = time.monotonic()
        r = subprocess.run([argv[0]], env=env, capture_output=True, text=True,
                           timeout=30)
        elapsed = time.monotonic() - t0
    errors = []
    if r.returncode != 0:
        errors.append("exit status %d, stdout: %r" % (r.returncode, r.stdout))
    if r.stdout != EXPECTED_OUT:
        errors.append("stdout %r, expected %r" % (r.stdout, EXPECTED_OUT))
    lines = r.stderr.splitlines()
    if len(lines) != 1 or "no-such.sock" not in lines[0]:
        errors.append("stderr should be one line naming the server: %r" % r.stderr)
    if elapsed > 5:
        errors.append("took %.1f s" % elapsed)
    for e in errors:
        print("FAIL: %s" % e)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
