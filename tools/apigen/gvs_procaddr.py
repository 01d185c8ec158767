#!/usr/bin/env python3
"""cuGetProcAddress's table for the driver frontend (libcuda.so.1), from
what NVIDIA's driver answered to the probe (plugins/cuda/probe/README.md).

    gvs_procaddr.py --exports FILE --out-c FILE PROCADDR_TXT

PROCADDR_TXT is a probe's procaddr.txt; --exports the functions the
frontend exports (plugins/cuda/libcuda.exports), the only ones the table
may point to.  --out-c gets the tables plugins/cuda/frontend/procaddr.h
declares: per name and flag kind (0 and 1 legacy, 2 per-thread default
stream), cuGetProcAddress_v2's answers as steps over cudaVersion, each
found one pointing to the frontend's own export of the name the driver
gave.

The frontend derives the v1 answers and flag 1's from those steps
(procaddr.h says how); this script checks that the data agrees, record
by record, and stops the build where it does not: an answer the frontend
cannot give (a function it does not export, an answer that differs
before cuInit, an unstable series), or a v1 answer or flag 1 unlike what
it derives.  Standard library only; output is deterministic.
"""

import argparse
import json
import os
import re
import sys

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gvs_unsupported as gu  # noqa: E402

INT_MIN, INT_MAX = -2**31, 2**31 - 1
ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")

# cuGetProcAddress_v2's answers other than a function (procaddr.h).
INVALID, TOO_OLD, NOT_FOUND = "PROCADDR_INVALID", "PROCADDR_TOO_OLD", "PROCADDR_NOT_FOUND"
V2_ANSWER = {("1", "u", "unset"): INVALID,
             ("0", "2", "NULL"): TOO_OLD,
             ("0", "1", "NULL"): NOT_FOUND}
# What v1 answers where v2 answers that (a function: "0,-,NAME").
V1_ANSWER = {INVALID: ("1", "-", "unset"),
             TOO_OLD: ("500", "-", "unset"),
             NOT_FOUND: ("500", "-", "unset")}
FLAG_KINDS = (0, 2)  # PROCADDR_LEGACY (flags 0, 1), PROCADDR_PER_THREAD


class GenError(Exception):
    pass


def token(t):
    return json.loads(t) if t.startswith('"') else t


def bound(s, inf):
    return inf if s == "*" else int(s)


def read_series(path):
    """{(name, flags, api): [(lo, hi, (rc, status, pfn))]} of the proc
    records; pfn is the preferred of the names sharing the address."""
    series = {}
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            words = line.split()
            where = "%s:%d" % (path, n)
            if not words or words[0] not in ("proc", "unstable"):
                continue
            if words[0] == "unstable":
                raise GenError("%s: the driver's answers are not a step function: %s"
                               % (where, line.strip()))
            head, sep, ranges = line.rstrip("\n").partition(" : ")
            fields = head.split(" ")
            if not sep or len(fields) != 5:
                raise GenError("%s: expected proc NAME FLAGS API PHASE : RANGES" % where)
            _, name, flags, api, phase = fields
            if phase != "init":
                raise GenError("%s: the driver answers otherwise before cuInit, which "
                               "the frontend cannot tell" % where)
            steps, expect = [], INT_MIN
            try:
                for r in ranges.split(" "):
                    span, _, out = r.partition("=")
                    lo, _, hi = span.partition("..")
                    rc, status, pfn = out.split(",", 2)
                    lo, hi = bound(lo, INT_MIN), bound(hi, INT_MAX)
                    if lo != expect or hi < lo:
                        raise GenError("%s: range %s does not follow the previous one"
                                       % (where, r))
                    expect = hi + 1
                    steps.append((lo, hi, (rc, status, pfn.split("|")[0])))
                series[(token(name), int(flags), api)] = steps
            except ValueError as e:
                raise GenError("%s: %s" % (where, e))
            if expect != INT_MAX + 1:
                raise GenError("%s: the ranges do not cover every version" % where)
    if not series:
        raise GenError("%s: no proc records" % path)
    return series


def v2_steps(series, name, flags, exports, where):
    """[(from, answer)] of one v2 series, answer a name or a PROCADDR_ code,
    after checking that v1 answers alike."""
    v2, v1 = series[(name, flags, "v2")], series.get((name, flags, "v1"))
    if v1 is None or [s[:2] for s in v1] != [s[:2] for s in v2]:
        raise GenError("%s: the v1 series has other ranges than the v2 one" % where)
    steps = []
    for (lo, hi, out), (_, _, out1) in zip(v2, v1):
        rc, status, pfn = out
        if out in V2_ANSWER:
            answer, want1 = V2_ANSWER[out], V1_ANSWER[V2_ANSWER[out]]
        elif (rc, status) == ("0", "0") and pfn in exports:
            answer, want1 = pfn, ("0", "-", pfn)
        elif (rc, status) == ("0", "0"):
            raise GenError("%s: %d..%d gives %s, which the frontend does not export"
                           % (where, lo, hi, pfn))
        else:
            raise GenError("%s: %d..%d: no such answer in procaddr.h: %s"
                           % (where, lo, hi, ",".join(out)))
        if out1 != want1:
            raise GenError("%s: v1 answers %s at %d..%d, not %s"
                           % (where, ",".join(out1), lo, hi, ",".join(want1)))
        steps.append((lo, answer))
    return tuple(steps)


def build(series, exports):
    """({name: (legacy steps, per-thread steps)} of the names the driver
    knows, the steps of the names it does not)."""
    names = sorted({k[0] for k in series})
    table = {}
    for name in names:
        for flags in (0, 1, 2):
            for api in ("v1", "v2"):
                if (name, flags, api) not in series:
                    raise GenError("%s: no series for flags %d, %s" % (name, flags, api))
        if any(series[(name, 0, api)] != series[(name, 1, api)] for api in ("v1", "v2")):
            raise GenError("%s: flags 1 answers otherwise than flags 0" % name)
        table[name] = tuple(v2_steps(series, name, f, exports, "%s flags %d" % (name, f))
                            for f in FLAG_KINDS)
    # A name the driver does not know answers as every name it never
    # finds, whatever the version: those must agree.
    unknown = {v for v in table.values()
               if all(a in (NOT_FOUND, INVALID) for steps in v for _, a in steps)}
    if len(unknown) != 1:
        raise GenError("the names never found answer in %d ways, not one" % len(unknown))
    unknown = unknown.pop()
    return {n: v for n, v in table.items() if v != unknown}, unknown


def c_string(name):
    if not IDENT.match(name):
        raise GenError("%r: not a C identifier" % name)
    return '"%s\\0"' % name


def c_steps(steps, fn_index):
    return ", ".join("{%s, %s}" % ("INT32_MIN" if lo == INT_MIN else lo,
                                    fn_index.get(a, a)) for lo, a in steps)


def gen_c(table, unknown, source):
    fns = sorted({a for v in table.values() for steps in v for _, a in steps
                  if a not in (INVALID, TOO_OLD, NOT_FOUND)})
    fn_index = {f: i for i, f in enumerate(fns)}
    # Each distinct series once; a name's two often coincide.
    first, step_lines, nsteps = {}, [], 0

    def place(steps, label):
        nonlocal nsteps
        if steps not in first:
            first[steps] = nsteps
            nsteps += len(steps)
            step_lines.append("    /* %s */ %s,\n" % (label, c_steps(steps, fn_index)))
        return "{%d, %d}" % (first[steps], len(steps))

    unknown_c = [place(s, "unknown names") for s in unknown]
    name_lines, offset = [], 0
    for name in sorted(table):
        series = [place(s, name) for s in table[name]]
        name_lines.append("    {%d, {%s}}, /* %s */\n" % (offset, ", ".join(series), name))
        offset += len(name) + 1
    if len(fns) >= 0xfffd or nsteps > 0xffff:
        raise GenError("%d functions, %d steps: too many for procaddr.h" % (len(fns), nsteps))
    headers = [h for h, _ in gu.CUDA.headers if h != gu.CUDA.base_header]
    out = ["/* Generated by tools/apigen/gvs_procaddr.py from %s.\n"
           " * Do not edit. */\n" % source,
           '#include "fe.h"\n#include "procaddr.h"\n\n#include <stdint.h>\n\n',
           "/* The interop functions' declarations, as the stubs see them. */\n",
           "#pragma GCC visibility push(default)\n"]
    out += gu.include_lines(gu.CUDA, headers)
    out.append("#pragma GCC visibility pop\n\n")
    out.append("const char procaddr_text[] =\n")
    out += ["    %s\n" % c_string(n) for n in sorted(table)]
    out.append("    ;\n\nconst struct procaddr_name procaddr_names[] = {\n")
    out += name_lines
    out.append("};\n\nconst size_t procaddr_nnames = %d;\n\n" % len(table))
    out.append("const struct procaddr_series procaddr_unknown[2] = {%s};\n\n"
               % ", ".join(unknown_c))
    out.append("const struct procaddr_step procaddr_steps[] = {\n")
    out += step_lines
    out.append("};\n\nvoid *const procaddr_fns[] = {\n")
    out += ["    (void *)&%s, /* %d */\n" % (f, i) for i, f in enumerate(fns)]
    out.append("};\n")
    return "".join(out)


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--exports", required=True, help="the functions the frontend exports")
    ap.add_argument("--out-c", required=True, help="the table to write")
    ap.add_argument("data", help="the probe's procaddr.txt")
    ns = ap.parse_args(argv)
    try:
        exports = gu.read_exports(ns.exports)
        table, unknown = build(read_series(ns.data), exports)
        source = os.path.relpath(os.path.abspath(ns.data), ROOT)
        gu.write_file(ns.out_c, gen_c(table, unknown, source))
    except (GenError, gu.GenError, OSError) as e:
        print("gvs_procaddr: %s" % e, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
