#!/usr/bin/env python3
"""Where a request's time goes: joins the request timelines a client and
its gvsd worker wrote under GVS_TRACE_DIR (docs/config.md: one client
traced at a time) by request id, and prints per operation the medians,
in microseconds, of each step between the stamps:

  send      the client's send (SEND -> SENT)
  to gvsd   from the send's start until gvsd has read it (SEND -> READ)
  queued    READ -> RUN
  run       the handler (RUN -> RAN)
  reply     RAN -> REPLIED (the reply written)
  to client RAN -> REPLY_READ (the client has read its header)
  return    REPLY_READ -> RETURN (the waiter has it)
  total     SEND -> RETURN

Posted requests have no reply steps.

  trace_rt.py --build BUILD DIR [--skip N]

--skip leaves out each operation's first N requests (warm-up).
"""
import argparse
import glob
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import stats_ops  # noqa: E402  (op names from the build tree)

POINTS = ("SEND", "SENT", "REPLY_READ", "RETURN", "READ", "RUN", "RAN",
          "REPLIED")
STEPS = (("send", "SEND", "SENT"), ("to gvsd", "SEND", "READ"),
         ("queued", "READ", "RUN"), ("run", "RUN", "RAN"),
         ("reply", "RAN", "REPLIED"), ("to client", "RAN", "REPLY_READ"),
         ("return", "REPLY_READ", "RETURN"), ("total", "SEND", "RETURN"))


def load(directory):
    """{id: (plugin, op, [stamps])}, both sides' stamps merged."""
    reqs = {}
    for path in sorted(glob.glob(os.path.join(directory, "gvs-trace-*.txt"))):
        with open(path) as f:
            for line in f:
                x = line.split()
                if len(x) != 3 + len(POINTS):
                    sys.exit("%s: not a trace line: %r" % (path, line))
                rid, plugin, op = int(x[0]), int(x[1]), int(x[2])
                t = [int(v) for v in x[3:]]
                old = reqs.get(rid)
                if old is not None:
                    t = [a or b for a, b in zip(t, old[2])]
                    plugin, op = (plugin, op) if plugin or op else old[:2]
                reqs[rid] = (plugin, op, t)
    return reqs


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", required=True)
    ap.add_argument("--skip", type=int, default=0)
    ap.add_argument("dir")
    a = ap.parse_args()
    names = stats_ops.op_names(a.build)
    by_op = {}
    for _, (plugin, op, t) in sorted(load(a.dir).items()):
        by_op.setdefault((plugin, op), []).append(t)
    print("| operation | requests | " + " | ".join(s[0] for s in STEPS) + " |")
    print("|---|---|" + "---|" * len(STEPS))
    for key, ts in sorted(by_op.items(), key=lambda kv: -len(kv[1])):
        ts = ts[a.skip:]
        cells = []
        for _, p, q in STEPS:
            i, j = POINTS.index(p), POINTS.index(q)
            d = [t[j] - t[i] for t in ts if t[i] and t[j]]
            cells.append("%.2f" % (statistics.median(d) / 1e3) if d else "-")
        name = names.get(key, "plugin %d op %d" % key)
        print("| %s | %d | %s |" % (name, len(ts), " | ".join(cells)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
