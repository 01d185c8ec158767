#!/usr/bin/env python3
"""gpu.vm.TRANSPORT: CUDA programs of the GPU label run inside a QEMU
guest that has no GPU (tools/vm/gvs-vm) against a gvsd on this host with
the real GPU, and compared with the same programs run natively on this
host: the same stdout, both exiting 0.  Over ivshmem:// the guest reaches
gvsd through its region (on /dev/shm, page-locked memory in its slots'
data areas); over tcp:// through QEMU's user-mode network, 10.0.2.2 being
this host's loopback; a token either way, as a guest is a tenant.  The
guest runs the programs one after another in one boot.

usage: run_vm_gpu.py GVSD FRONTEND_DIR [PROGRAM...] [--python SCRIPT]...
                     [--transport ivshmem|tcp] [--timeout S]

--python SCRIPT: a framework script (tests/gpu/frameworks) run by the
python3 on PATH, natively and in the guest, which sees this host's file
system read-only and so its Python and packages; its NVIDIA libraries
find gvs's frontends first (LD_LIBRARY_PATH) and the guest has no GPU.

Exit status 0 passed, 1 failed, 77 skipped: no QEMU or no guest image
(tools/vm/setup.sh), unless GVS_REQUIRE_VM=1."""

import argparse
import os
import shlex
import subprocess
import sys
import tempfile

import run_vm_e2e as vm  # noqa: E402  (tests/vm/run_vm_e2e.py)

# Slots of 64 MiB areas at least, for the programs' page-locked memory
# (the region is a BAR of the guest: 1 GiB).
IVSHMEM_CONFIG = "ivshmem_slots = 8\nivshmem_area = 64M\n"


def native(argv):
    """The command on this host's GPU: (stdout, exit status)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GVS_")}
    env.pop("LD_LIBRARY_PATH", None)
    p = subprocess.run(argv, env=env, capture_output=True, text=True,
                       timeout=600, cwd=tempfile.gettempdir())
    return p.stdout, p.returncode


def main(argv):
    ap = argparse.ArgumentParser()
    ap.add_argument("gvsd")
    ap.add_argument("frontend_dir")
    ap.add_argument("programs", nargs="*")
    ap.add_argument("--python", action="append", default=[])
    ap.add_argument("--transport", choices=("ivshmem", "tcp"),
                    default="ivshmem")
    ap.add_argument("--timeout", type=float, default=840)
    a = ap.parse_args(argv)
    why = vm.missing()
    if why:
        print("vm test: " + why)
        return 1 if os.environ.get("GVS_REQUIRE_VM") == "1" else 77
    if not a.programs and not a.python:
        ap.error("nothing to run")
    # Each entry: its name, and the command as a list.
    cmds = [(os.path.basename(p), [os.path.abspath(p)]) for p in a.programs]
    if a.python:
        # The interpreter itself, not a launcher on PATH: the guest runs it
        # by the same path through the host's file system.
        py = subprocess.run(
            ["python3", "-c", "import sys; print(sys.executable)"],
            capture_output=True, text=True).stdout.strip()
        cmds += [(os.path.basename(s), [py, os.path.abspath(s)])
                 for s in a.python]
    want = {name: native(argv) for name, argv in cmds}
    with tempfile.TemporaryDirectory(prefix="vm-gpu-") as tmp:
        config = "token = %s name=vm\n" % vm.TOKEN
        vm_args = []
        if a.transport == "ivshmem":
            uri = "ivshmem:///dev/shm/gvs-vm-gpu-%d.region" % os.getpid()
            vm_args = ["--ivshmem", uri[len("ivshmem://"):]]
            config += IVSHMEM_CONFIG
        else:
            uri = vm.gvsd_start.endpoint("tcp", tmp)
        gvsd = vm.gvsd_start.start(a.gvsd, uri, tmp, [], config)
        if gvsd is None:
            print("FAILED: gvsd did not start on %s" % uri)
            return 1
        env = {"GVS_TOKEN": vm.TOKEN,
               "LD_LIBRARY_PATH": os.path.abspath(a.frontend_dir),
               "GVS_SERVER": (vm.IVSHMEM_URI if a.transport == "ivshmem"
                              else uri.replace("127.0.0.1", vm.GUEST_HOST))}
        assign = " ".join("%s=%s" % (k, shlex.quote(v))
                          for k, v in env.items())
        runs = [(name, "cd /tmp; env %s %s" % (
            assign, " ".join(shlex.quote(x) for x in argv)))
                for name, argv in cmds]
        try:
            p = subprocess.run([sys.executable, vm.GVS_VM, "--timeout",
                                str(a.timeout)] + vm_args +
                               ["--", "sh", "-c", vm.guest_script(runs)],
                               capture_output=True, text=True)
        finally:
            gvsd.terminate()
            gvsd.wait(timeout=30)
    sys.stderr.write(p.stderr)
    if p.returncode != 0:
        sys.stdout.write(p.stdout)
        print("FAILED: the guest's script exited %d" % p.returncode)
        return 1
    seen = vm.guest_results(p.stdout)
    bad = 0
    for name, (out, rc) in want.items():
        got, grc = seen.get(name, (None, None))
        agree = rc == 0 and grc == 0 and got == out
        print("%s: native rc=%d, guest over %s rc=%s%s" % (
            name, rc, a.transport, grc, "" if agree else ": DIFFERS"))
        if not agree:
            bad += 1
            print("---- native ----\n%s---- guest ----\n%s" % (out, got))
    print("%d of %d programs agree" % (len(want) - bad, len(want)))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
