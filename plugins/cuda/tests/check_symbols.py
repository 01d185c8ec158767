#!/usr/bin/env python3
"""cuda.symbols: our libcuda.so.1 exports exactly the functions
plugins/cuda/libcuda.exports lists, unversioned as the driver's, and
every driver API function (cu[A-Z]*) the toolkit's stub library exports
is among them under the same version.  Read with nm -D, independently of
the ELF reader the stub generator uses.

usage: check_symbols.py LIB EXPORTS STUB"""

import re
import subprocess
import sys

DRIVER_API = re.compile(r"^cu[A-Z]")


def exports(path):
    """{name: (version, nm kind)} of the defined dynamic symbols; version
    keeps nm's "@@" or "@" prefix, "" when unversioned."""
    out = subprocess.run(["nm", "-D", "--defined-only", "--with-symbol-versions", path],
                         check=True, capture_output=True, text=True).stdout
    syms = {}
    for line in out.splitlines():
        kind, sym = line.split()[-2:]
        at = sym.find("@")
        name, version = (sym, "") if at < 0 else (sym[:at], sym[at:])
        if kind == "A" and name == version.lstrip("@"):
            continue  # a version node's own definition
        syms[name] = (version, kind)
    return syms


def main(argv):
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    lib, listed, stub = argv
    with open(listed, encoding="utf-8") as f:
        names = {line.strip() for line in f if line.strip() and not line.startswith("#")}
    ours, theirs = exports(lib), exports(stub)
    errors = ["%s is listed but not exported" % n for n in sorted(names - set(ours))]
    errors += ["%s is exported but not listed" % n for n in sorted(set(ours) - names)]
    errors += ["%s%s is exported as %s, not as an unversioned function"
               % (n, v, k) for n, (v, k) in sorted(ours.items()) if (v, k) != ("", "T")]
    api = {n: v for n, v in theirs.items() if DRIVER_API.match(n)}
    errors += ["the stub exports %s, not in %s" % (n, listed)
               for n in sorted(set(api) - names)]
    errors += ["the stub exports %s%s, we %s%s" % (n, api[n][0], n, ours[n][0])
               for n in sorted(set(api) & set(ours)) if api[n][0] != ours[n][0]]
    for e in errors:
        print("FAIL: %s" % e)
    if not errors:
        print("ok: %d functions exported, unversioned, as listed; the %d driver API "
              "functions of %s among them (not its %d others)"
              % (len(ours), len(api), stub, len(theirs) - len(api)))
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
