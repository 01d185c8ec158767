#!/usr/bin/env python3
"""The README's commands, as CI runs them, so that the README cannot rot.

usage: readme-commands.py [--run] [--readme FILE] NAME...

A fenced code block right after a line `<!-- ci: NAME -->` (an HTML
comment: a reader of the rendered README does not see it) is the command
block NAME.  Prints the blocks named, in the order given, or with --run
runs each with bash (-e, -u, pipefail) from the README's folder, after
printing it, stopping at the first that fails, whose status it exits
with.  A NAME the README lacks, or has twice, or a marker with no block
under it, is an error: a block renamed or removed fails CI instead of
being skipped."""

import argparse
import os
import re
import subprocess
import sys

MARKER = re.compile(r"^<!--\s*ci:\s*([A-Za-z0-9_-]+)\s*-->\s*$")
FENCE = re.compile(r"^(```+|~~~+)")


class ReadmeError(Exception):
    pass


def blocks(text):
    """{name: commands} of the marked blocks of a README's text."""
    found = {}
    lines = text.splitlines()
    for i, line in enumerate(lines):
        m = MARKER.match(line.strip())
        if not m:
            continue
        name = m.group(1)
        if name in found:
            raise ReadmeError("block %s marked twice (line %d)" % (name, i + 1))
        j = i + 1
        while j < len(lines) and not lines[j].strip():
            j += 1
        fence = FENCE.match(lines[j].strip()) if j < len(lines) else None
        if fence is None:
            raise ReadmeError("marker %s (line %d) is not followed by a "
                              "fenced code block" % (name, i + 1))
        body = []
        for k in range(j + 1, len(lines)):
            if lines[k].strip().startswith(fence.group(1)):
                break
            body.append(lines[k])
        else:
            raise ReadmeError("block %s (line %d) is not closed"
                              % (name, j + 1))
        found[name] = "\n".join(body) + "\n"
    return found


def select(text, names):
    found = blocks(text)
    missing = [n for n in names if n not in found]
    if missing:
        raise ReadmeError("no block marked <!-- ci: %s --> (found: %s)"
                          % (missing[0], ", ".join(sorted(found)) or "none"))
    return [(n, found[n]) for n in names]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--run", action="store_true",
                    help="run the blocks instead of printing them")
    ap.add_argument("--readme", default=os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "README.md"))
    ap.add_argument("names", nargs="+", metavar="NAME")
    a = ap.parse_args()
    with open(a.readme, encoding="utf-8") as f:
        text = f.read()
    try:
        chosen = select(text, a.names)
    except ReadmeError as e:
        sys.exit("readme-commands: %s: %s" % (a.readme, e))
    root = os.path.dirname(os.path.abspath(a.readme))
    for name, commands in chosen:
        if not a.run:
            sys.stdout.write(commands)
            continue
        print("=== README, %s:\n%s" % (name, commands), end="", flush=True)
        rc = subprocess.run(["bash", "-euo", "pipefail", "-c", commands],
                            cwd=root).returncode
        if rc != 0:
            print("=== README, %s: exit status %d" % (name, rc), flush=True)
            sys.exit(rc if rc > 0 else 128 - rc)  # -N: killed by signal N


if __name__ == "__main__":
    main()
