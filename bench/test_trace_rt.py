#!/usr/bin/env python3
"""bench/trace_rt.py on made-up timelines: a client's file and its
worker's joined by request id, steps as medians in microseconds, a
posted request without reply steps, --skip dropping the first ones, an
operation named from the apigen description or by number."""
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from test_stats_ops import write  # noqa: E402  (the made-up build tree)

OPS_H = "#define DEMO_PLUGIN_ID 9u\n" \
        " *   op 1 demoSync fe=auto be=auto blocking : in uint\n"


def main():
    with tempfile.TemporaryDirectory() as d:
        write(os.path.join(d, "build", "plugins", "demo", "gen",
                           "demo_ops.h"), OPS_H)
        client, worker = [], []
        # Request i: send 1 us, read at 3, run 4..4+i, replied 1 us later,
        # reply read 2 us after the run, returned 0.5 us after that.
        for i in range(1, 6):
            b = i * 100000
            run = 1000 * i
            client.append("%d 9 1 %d %d %d %d 0 0 0 0" % (
                i, b, b + 1000, b + 4000 + run + 2000,
                b + 4000 + run + 2500))
            worker.append("%d 9 1 0 0 0 0 %d %d %d %d" % (
                i, b + 3000, b + 4000, b + 4000 + run, b + 5000 + run))
        # A posted request of another plugin: no reply.
        client.append("7 3 5 800000 800400 0 0 0 0 0 0")
        worker.append("7 3 5 0 0 0 0 801000 801500 802000 0")
        write(os.path.join(d, "t", "gvs-trace-10.txt"), "\n".join(client) + "\n")
        write(os.path.join(d, "t", "gvs-trace-11.txt"), "\n".join(worker) + "\n")
        cmd = [sys.executable, os.path.join(HERE, "trace_rt.py"), "--build",
               os.path.join(d, "build"), os.path.join(d, "t")]
        out = subprocess.run(cmd, capture_output=True, text=True, check=True)
        lines = out.stdout.splitlines()
        want = ["| demo.demoSync | 5 | 1.00 | 3.00 | 1.00 | 3.00 | 1.00 | "
                "2.00 | 0.50 | 9.50 |",
                "| plugin 3 op 5 | 1 | 0.40 | 1.00 | 0.50 | 0.50 | - | - | "
                "- | - |"]
        if lines[2:] != want:
            print("FAIL: got\n%s\nwant\n%s" % ("\n".join(lines[2:]),
                                               "\n".join(want)))
            return 1
        out = subprocess.run(cmd[:2] + ["--skip", "3"] + cmd[2:],
                             capture_output=True, text=True, check=True)
        row = out.stdout.splitlines()[2]
        if not row.startswith("| demo.demoSync | 2 | 1.00 | 3.00 | 1.00 | 4.50 |"):
            print("FAIL: --skip 3 gave %s" % row)
            return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
