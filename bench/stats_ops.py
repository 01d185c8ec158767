#!/usr/bin/env python3
"""Names and sorts the requests by operation that a client printed under
GVS_STATS=ops (`gvs-stats: plugin=P op=O calls=C posts=N` lines on its
stderr), from the descriptions apigen wrote into the build tree
(`plugins/*/gen/*_ops.h`).

  stats_ops.py --build BUILD RUN.err [--minus BASE.err] [--per N]

--minus subtracts a shorter run of the same program (say 16 tokens from
144), so that what remains is the work in between; --per divides by the
number of units of that work (128 tokens), giving calls and posts per
unit.
"""
import argparse
import glob
import os
import re
import sys

LINE = re.compile(r"gvs-stats: plugin=(\d+) op=(\d+) calls=(\d+) posts=(\d+)")
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
                c, p = out.get(key, (0, 0))
                out[key] = (c + int(m.group(3)), p + int(m.group(4)))
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
        c, p = run.get(key, (0, 0))
        bc, bp = base.get(key, (0, 0))
        rows.append((c - bc, p - bp, key))
    rows.sort(key=lambda r: (-r[0], -r[1], r[2]))
    total_c = sum(r[0] for r in rows)
    total_p = sum(r[1] for r in rows)
    print("| operation | calls (round trips) | posts |")
    print("|---|---|---|")
    for c, p, key in rows:
        if c == 0 and p == 0:
            continue
        name = names.get(key, f"plugin {key[0]} op {key[1]}")
        print(f"| {name} | {c / a.per:g} | {p / a.per:g} |")
    print(f"| all | {total_c / a.per:g} | {total_p / a.per:g} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
