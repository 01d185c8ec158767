#!/usr/bin/env python3
"""install.layout: `cmake --install BUILD --prefix P` gives the FHS layout
of docs/operating.md, and the installed programs find their plugins and
frontends from their own location, with nothing of the build tree left
in them: the installed gvsd takes the installed example config and
loads every plugin from P/lib/gvs/plugins,
and an end-to-end run through the installed `gvs run` gives what the
program gives natively (tests/gpu/compare.py --mode e2e, on a machine
without a GPU: both fail the same way).

usage: test_install.py CMAKE BUILD_DIR [PROGRAM]"""

import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
FRONTENDS = ("libcudart.so.13", "libcuda.so.1", "libnvidia-ml.so.1",
             "libgvs-remote.so.0", "libgvs-client.so.0")
FILES = (["bin/gvs", "bin/gvsd", "etc/gvs/gvs.conf.example",
          "share/doc/gvs/README.md", "share/man/man1/gvs.1",
          "share/man/man8/gvsd.8", "share/man/man5/gvs.conf.5",
          "lib/gvs/frontend/libcuda.so", "lib/systemd/system/gvsd.service",
          "lib/sysusers.d/gvsd.conf"] +
         ["lib/gvs/frontend/" + f for f in FRONTENDS] +
         ["lib/gvs/plugins/gvs-%s.so" % p for p in ("remote", "cudart", "cuda", "nvml")])


def fail(msg):
    print("FAILED: " + msg)
    return 1


def dynamic(path):
    return subprocess.run(["readelf", "-d", path], capture_output=True,
                          text=True, check=True).stdout


def plugins_loaded(prefix):
    """The plugins the installed gvsd says it loaded, and from where, with
    the installed example config (its listen keys replaced by the command
    line's): a key gvsd does not take would stop it."""
    sock = os.path.join(prefix, "gvsd.sock")
    r, w = os.pipe()
    gvsd = subprocess.Popen([os.path.join(prefix, "bin", "gvsd"), "--config",
                             os.path.join(prefix, "etc", "gvs", "gvs.conf.example"),
                             "--listen", "unix://" + sock, "--ready-fd", str(w)],
                            pass_fds=(w,), stderr=subprocess.PIPE, text=True)
    os.close(w)
    with os.fdopen(r) as ready:
        ok = ready.read().strip() == "ready"
    gvsd.terminate()
    err = gvsd.communicate(timeout=30)[1]
    return ok, [line for line in err.splitlines() if ": loaded " in line]


def main(argv):
    if len(argv) not in (2, 3):
        print(__doc__.strip(), file=sys.stderr)
        return 2
    cmake, build = argv[0], os.path.abspath(argv[1])
    with tempfile.TemporaryDirectory() as prefix:
        p = subprocess.run([cmake, "--install", build, "--prefix", prefix],
                           capture_output=True, text=True)
        if p.returncode != 0:
            return fail("cmake --install: %s" % (p.stdout + p.stderr))
        for f in FILES:
            if not os.path.exists(os.path.join(prefix, f)):
                return fail("%s not installed" % f)
        for root, _, names in os.walk(prefix):
            for n in names:
                path = os.path.join(root, n)
                with open(path, "rb") as f:
                    if f.read(4) != b"\x7fELF":
                        continue
                d = dynamic(path)
                if build in d:
                    return fail("%s still names the build tree:\n%s" % (path, d))
                if ("/frontend/" in path and "Shared library: [libgvs-" in d and
                        "runpath: [$ORIGIN]" not in d):
                    return fail("%s: no $ORIGIN run path for its siblings" % path)
                if "path: [" in d and "::" in d.split("path: [", 1)[1].split("]")[0] + ":":
                    return fail("%s: an empty run path entry (the current directory)"
                                % path)
        with open(os.path.join(prefix, "lib/systemd/system/gvsd.service")) as f:
            if "ExecStart=%s/bin/gvsd\n" % prefix not in f.read():
                return fail("gvsd.service does not start the installed gvsd")
        ok, loaded = plugins_loaded(prefix)
        want = os.path.join(prefix, "bin", "..", "lib", "gvs", "plugins")
        if not ok or len(loaded) != 4 or any(want not in l for l in loaded):
            return fail("installed gvsd: ready %s, loaded %s" % (ok, loaded))
        out = subprocess.run([os.path.join(prefix, "bin", "gvs"), "run", "--",
                              "/bin/sh", "-c", "echo $LD_LIBRARY_PATH"],
                             capture_output=True, text=True)
        if out.stdout.split(":")[0].strip() != os.path.join(prefix, "bin", "..",
                                                             "lib", "gvs", "frontend"):
            return fail("installed gvs run: LD_LIBRARY_PATH %r" % out.stdout)
        if len(argv) == 3:
            p = subprocess.run([sys.executable, os.path.join(HERE, "..", "tests", "gpu",
                                                            "compare.py"),
                                "--gvs", os.path.join(prefix, "bin", "gvs"),
                                "--gvsd", os.path.join(prefix, "bin", "gvsd"),
                                "--mode", "e2e", "--transport", "unix,shm", "--", argv[2]],
                               capture_output=True, text=True)
            sys.stdout.write(p.stdout + p.stderr)
            if p.returncode != 0:
                return fail("e2e run from the installed tree")
    print("ok: %d files, 4 plugins, frontends by $ORIGIN" % len(FILES))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
