#!/usr/bin/env python3
"""bench/stats_ops.py on a made-up build tree: operations named from the
apigen descriptions, unknown ones by number, a shorter run subtracted,
counts and times divided per unit, rows sorted by round trips; a line
without times (an older build's) counts none."""
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))

OPS_H = """/* Generated */
#define DEMO_PLUGIN_ID 9u
/*   plugin demo 9
 *   op 1 demoLaunch fe=rpc be=auto device : in uint
 *   op 2 demoGet fe=auto be=auto device : out int
 */
"""


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


def main():
    with tempfile.TemporaryDirectory() as d:
        write(os.path.join(d, "plugins", "demo", "gen", "demo_ops.h"), OPS_H)
        run = os.path.join(d, "run.err")
        base = os.path.join(d, "base.err")
        write(run, "noise\ngvs-stats: round_trips=9 posts=8\n"
              "gvs-stats: plugin=9 op=1 calls=10 posts=40 send_us=4400 "
              "wait_us=8000\n"
              "gvs-stats: plugin=9 op=2 calls=30 posts=0 send_us=400 "
              "wait_us=60000\n"
              "gvs-stats: plugin=5 op=7 calls=2 posts=0\n")
        write(base, "gvs-stats: plugin=9 op=1 calls=2 posts=8 send_us=400 "
              "wait_us=2000\n"
              "gvs-stats: plugin=9 op=2 calls=6 posts=0 send_us=0 "
              "wait_us=20000\n")
        out = subprocess.run(
            [sys.executable, os.path.join(HERE, "stats_ops.py"), "--build", d,
             run, "--minus", base, "--per", "4"],
            check=True, capture_output=True, text=True).stdout.splitlines()
    want = ["| operation | calls (round trips) | posts | waiting, ms | "
            "sending, ms |", "|---|---|---|---|---|",
            "| demo.demoGet | 6 | 0 | 10 | 0.1 |",
            "| demo.demoLaunch | 2 | 8 | 1.5 | 1 |",
            "| plugin 5 op 7 | 0.5 | 0 | 0 | 0 |",
            "| all | 8.5 | 8 | 11.5 | 1.1 |"]
    if out != want:
        print("got:\n%s\nwant:\n%s" % ("\n".join(out), "\n".join(want)))
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
