#!/usr/bin/env python3
"""cuda.link: libcuda.so stands beside the frontend's libcuda.so.1 and
leads to it, so that `-lcuda` links a program against the frontend (as
Triton builds its launchers).  The sample is linked so in both default
stream modes; it must import the ABI names cuda.h maps its calls to,
need libcuda.so.1, and run against the frontend.

usage: run_link.py FRONTEND_DIR CC SAMPLE.c INCLUDE_DIR..."""

import os
import subprocess
import sys
import tempfile

# (compiler flags, names the sample must import for them)
MODES = (
    ([], {"cuArrayCreate_v2", "cuMemcpy3D_v2", "cuGraphicsMapResources"}),
    (["-DCUDA_API_PER_THREAD_DEFAULT_STREAM"],
     {"cuArrayCreate_v2", "cuMemcpy3D_v2_ptds",
      "cuGraphicsMapResources_ptsz"}),
)


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


def check_mode(frontend, cc, sample, includes, flags, imports, tmp):
    exe = os.path.join(tmp, "sample")
    r = run([cc, "-std=c11", "-Wall", "-Wextra", "-Werror"] + flags
            + ["-I" + d for d in includes] + [sample, "-o", exe, "-L", frontend, "-lcuda"])
    if r.returncode != 0:
        return ["`-lcuda` does not link the sample (%s):\n%s" % (" ".join(flags), r.stderr)]
    errors = []
    needed = run(["readelf", "-d", exe]).stdout
    if "[libcuda.so.1]" not in needed:
        errors.append("the sample does not need libcuda.so.1:\n" + needed)
    undefined = set(run(["nm", "-D", "--undefined-only", exe]).stdout.split())
    errors += ["the sample (%s) does not import %s" % (" ".join(flags), n)
               for n in sorted(imports - undefined)]
    r = run([exe], env=dict(os.environ, LD_LIBRARY_PATH=frontend), timeout=60)
    if r.returncode != 0 or r.stdout != "ok\n":
        errors.append("the sample (%s) against the frontend: status %d, %r %r"
                      % (" ".join(flags), r.returncode, r.stdout, r.stderr))
    return errors


def main(argv):
    if len(argv) < 4:
        print(__doc__, file=sys.stderr)
        return 2
    frontend, cc, sample, includes = argv[0], argv[1], argv[2], argv[3:]
    link, lib = os.path.join(frontend, "libcuda.so"), os.path.join(frontend, "libcuda.so.1")
    errors = []
    if not os.path.islink(link) or os.path.realpath(link) != os.path.realpath(lib):
        errors.append("%s is not a link to %s" % (link, lib))
    else:
        with tempfile.TemporaryDirectory() as tmp:
            for flags, imports in MODES:
                errors += check_mode(frontend, cc, sample, includes, flags, imports, tmp)
    for e in errors:
        print("FAIL: %s" % e)
    if not errors:
        print("ok: -lcuda links %s, in both default stream modes" % lib)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
