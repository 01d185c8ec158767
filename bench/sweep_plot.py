#!/usr/bin/env python3
"""Draws the copy sweep of a bench/run.py --json FILE as a PNG: one panel
per kind of copy (rows) and call (columns: cudaMemcpy, cudaMemcpyAsync),
bandwidth against size on log scales, a line per target; the pipeline's
rates in the last row.

usage: sweep_plot.py RESULTS.json OUT.png   (needs matplotlib:
python3 -m pip install matplotlib)"""
import json
import sys

import sweep_table

KINDS = [("pinned_h2d", "pinned, host to device"),
         ("pinned_d2h", "pinned, device to host"),
         ("pageable_h2d", "pageable, host to device"),
         ("pageable_d2h", "pageable, device to host"),
         ("device_d2d", "device to device")]


def series(results, prefix):
    sizes = sweep_table.rows(results, prefix)
    return ([sweep_table.size_bytes(s) for s in sizes],
            [results[prefix + s][0] for s in sizes])


def main(argv):
    if len(argv) != 2 or argv[0] in ("-h", "--help"):
        sys.stdout.write(__doc__)
        return 0 if argv[:1] in (["-h"], ["--help"]) else 2
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    with open(argv[0]) as f:
        run = json.load(f)
    names, results = run["names"], run["results"]
    fig, axes = plt.subplots(len(KINDS) + 1, 2, figsize=(11, 4 * (len(KINDS) + 1)),
                             squeeze=False)
    panels = [(r, c, "sweep_%s_%s_" % (k, mode), "%s, %s" % (title, call))
              for r, (k, title) in enumerate(KINDS)
              for c, (mode, call) in enumerate((("sync", "cudaMemcpy"),
                                                ("async", "cudaMemcpyAsync")))]
    panels.append((len(KINDS), 0, "pipeline_",
                   "pipeline on 4 streams (block size; both ways)"))
    for r, c, prefix, title in panels:
        ax = axes[r][c]
        for n in names:
            x, y = series(results[n], prefix)
            if x:
                ax.plot(x, y, marker=".", label=n)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_title(title, fontsize=10)
        ax.set_xlabel("bytes per copy")
        ax.set_ylabel("GB/s")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
    axes[len(KINDS)][1].axis("off")
    fig.suptitle("Copies through gvs against native: %s" % run.get("device", ""))
    fig.tight_layout(rect=(0, 0, 1, 0.98))
    fig.savefig(argv[1], dpi=90)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
