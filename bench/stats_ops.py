#!/usr/bin/env python3
"""Names and sorts the requests by operation that a client printed under
GVS_STATS=ops (`gvs-stats: plugin=P op=O calls=C posts=N send_us=S
wait_us=W` lines on its stderr), from the descriptions apigen wrote into
the build tree (`plugins/*/gen/*_ops.h`), with the time the client spent
sending them and waiting for their replies (ms; lines of builds that
printed no times count 0).

  stats_ops.py --build BUILD RUN.err [--minus BASE.err] [--per N]

--minus subtracts a shorter run of the same program (say 16 tokens from
144), so that what remains is the work in between; --per divides by the
number of units of that work (128 tokens), giving calls and posts per
unit, the times too.
"""
import argparse
import glob
import os
import re
import sys

LINE = re.compile(r"gvs-stats: plugin=(\d+) op=(\d+) calls=(\d+) posts=(\d+)"
                  r"(?: send_us=(\d+) wait_us=(\d+))?")
PLUGIN = re.compile(r"#define \w+_PLUGIN_ID (\d+)u")
OP = re.compile(r"^ \*   op (\d+) (\w+) ")


def op_names(build):
    names = {}
    for path in glob.glob(os.path.join(build, "plugins", "*", "gen",
                                       "*_ops.h")):
        plugin = None
        plugin_name = os.path.basename(path)[:-len("_ops.h")]
        with open(path) as f:
            for line in f:
                m = PLUGIN.match(line)
                if m:
                    plugin = int(m.group(1))
                m = OP.match(line)
                if m and plugin is not None:
                    names[(plugin, int(m.group(1)))] = \
                        f"{plugin_name}.{m.group(2)}"
    return names


def counts(path):
    out = {}
    with open(path, errors="replace") as f:
        for line in f:
            m = LINE.search(line)
            if m:
                key = (int(m.group(1)), int(m.group(2)))
                got = [int(g or 0) for g in m.groups()[2:]]
                out[key] = [a + b for a, b in
                            zip(out.get(key, [0, 0, 0, 0]), got)]
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", required=True)
    ap.add_argument("--minus")
    ap.add_argument("--per", type=float, default=1.0)
    ap.add_argument("run")
    a = ap.parse_args()
    names = op_names(a.build)
    run = counts(a.run)
    base = counts(a.minus) if a.minus else {}
    rows = []
    for key in set(run) | set(base):
        r, b = run.get(key, [0] * 4), base.get(key, [0] * 4)
        rows.append(([x - y for x, y in zip(r, b)], key))
    rows.sort(key=lambda r: (-r[0][0], -r[0][1], r[1]))
    totals = [sum(r[0][i] for r in rows) for i in range(4)]
    print("| operation | calls (round trips) | posts | waiting, ms | "
          "sending, ms |")
    print("|---|---|---|---|---|")
    for (c, p, s, w), key in rows:
        if c == 0 and p == 0:
            continue
        name = names.get(key, f"plugin {key[0]} op {key[1]}")
        print(f"| {name} | {c / a.per:g} | {p / a.per:g} | "
              f"{w / 1000 / a.per:.3g} | {s / 1000 / a.per:.3g} |")
    c, p, s, w = totals
    print(f"| all | {c / a.per:g} | {p / a.per:g} | {w / 1000 / a.per:.3g} | "
          f"{s / 1000 / a.per:.3g} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
