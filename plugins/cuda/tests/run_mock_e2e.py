#!/usr/bin/env python3
"""cuda.mock_*: runs a driver API program (linked with -lcuda) against the
build's libcuda.so.1 and a private gvsd whose plugin dir holds the
mock-driver gvs-cuda.so and the remoting layer, over one transport; the
program checks the mock's answers itself and prints "ok" last, or, for a
program of tests/gpu, prints each line --expect names.

usage: run_mock_e2e.py GVSD PLUGIN_DIR FRONTEND_DIR PROGRAM
                       [--transport unix|tcp|shm|ivshmem] [--arg ARG]...
                       [--gvsd-arg ARG]... [--expect LINE]..."""

import argparse
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "..", "tests"))
import gvsd_start  # noqa: E402  (tests/gvsd_start.py)


def main(argv):
    ap = argparse.ArgumentParser()
    for name in ("gvsd", "plugin_dir", "frontend_dir", "program"):
        ap.add_argument(name)
    ap.add_argument("--transport", choices=("unix", "tcp", "shm", "ivshmem"),
                    default="unix")
    ap.add_argument("--arg", action="append", default=[])
    ap.add_argument("--gvsd-arg", action="append", default=[])
    ap.add_argument("--expect", action="append", default=[])
    a = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        uri = gvsd_start.endpoint(a.transport, tmp)
        gvsd = gvsd_start.start(a.gvsd, uri, tmp,
                                ["--plugin-dir", a.plugin_dir] + a.gvsd_arg)
        if gvsd is None:
            print("FAILED: gvsd did not start on %s" % uri)
            return 1
        env = dict(os.environ, GVS_SERVER=uri,
                   LD_LIBRARY_PATH=a.frontend_dir)
        try:
            p = subprocess.run([a.program] + a.arg, env=env,
                               capture_output=True, text=True, timeout=120)
        finally:
            gvsd.terminate()
            gvsd.wait(timeout=30)
        sys.stdout.write(p.stdout)
        sys.stderr.write(p.stderr)
        lines = p.stdout.splitlines()
        if a.expect:
            done = all(e in lines for e in a.expect)
        else:
            done = p.stdout.endswith("ok\n")
        if p.returncode != 0 or not done:
            print("FAILED: %s exited %d" % (a.program, p.returncode))
            return 1
        return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
