#!/usr/bin/env python3
"""vm.*: driver API programs of the mock end-to-end tests, run inside a
QEMU guest without a GPU (tools/vm/gvs-vm) against a gvsd on this host
with the mock backend, as a remote machine uses gvs: over tcp:// with a
token, and over tls:// with a token and mutual TLS; or as a guest of this
host does, over ivshmem:// (gvsd's region file given to the guest as an
ivshmem device, gvs-vm --ivshmem) with a token.  The guest reaches
this host's loopback at 10.0.2.2 through QEMU's user-mode network.  Each
program must print "ok" last; a guest that presents a wrong token must
be refused; the first also runs through `gvs run`.  Over ivshmem the
guest then writes random bytes over its whole region, as a hostile guest
may, and its next program must fail; gvsd, serving a second region too,
must still serve a client of this host through that one.

usage: run_vm_e2e.py GVS GVSD PLUGIN_DIR FRONTEND_DIR PROGRAM...
                     [--transport tcp|tls|ivshmem] [--timeout S]

Exit status 0 passed, 1 failed, 77 skipped: no QEMU or no guest image
(tools/vm/setup.sh), unless GVS_REQUIRE_VM=1 (as in CI), which makes
those a failure."""

import argparse
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
sys.path.insert(0, os.path.join(ROOT, "tests"))
sys.path.insert(0, os.path.join(ROOT, "bench"))
import gvsd_start  # noqa: E402
import tls_certs  # noqa: E402

GVS_VM = os.path.join(ROOT, "tools", "vm", "gvs-vm")
TOKEN = "vm-test-token-0123456789abcdef"
GUEST_HOST = "10.0.2.2"
# Where gvs-vm --ivshmem puts the device in the guest.
IVSHMEM_URI = "ivshmem:///sys/bus/pci/devices/0000:00:10.0/resource2"
SCRIBBLE = os.path.join(HERE, "scribble.py")


def guest_script(runs):
    """A shell script that runs each (label, command) of runs in turn,
    each framed by markers that guest_results reads back."""
    return "".join("echo '== %s'; %s; echo \"== rc $?\"\n" % (label, cmd)
                   for label, cmd in runs)


def guest_results(stdout):
    """{label: (output, exit status)} of what guest_script's runs printed."""
    return {m.group(1): (m.group(2), int(m.group(3))) for m in re.finditer(
        r"^== (.+)\n((?:(?!== ).*\n)*)== rc (\d+)$", stdout, re.M)}


def missing():
    """What keeps a guest from booting here, or None."""
    qemu = os.environ.get("GVS_VM_QEMU", "qemu-system-x86_64")
    image = os.environ.get("GVS_VM_DIR", "/opt/gvs-vm")
    copy = os.path.join(image, "qemu", "lib", "ld-linux-x86-64.so.2")
    if shutil.which(qemu) is None and not os.path.exists(copy):
        return "%s not found (apt-get install qemu-system-x86)" % qemu
    if not os.path.exists(os.path.join(image, "vmlinuz")):
        return "no guest image in %s (tools/vm/setup.sh)" % image
    return None


def main(argv):
    ap = argparse.ArgumentParser()
    for name in ("gvs", "gvsd", "plugin_dir", "frontend_dir"):
        ap.add_argument(name)
    ap.add_argument("programs", nargs="+")
    ap.add_argument("--transport", choices=("tcp", "tls", "ivshmem"),
                    default="tcp")
    ap.add_argument("--timeout", type=float, default=600)
    a = ap.parse_args(argv)
    why = missing()
    if why:
        print("vm test: " + why)
        return 1 if os.environ.get("GVS_REQUIRE_VM") == "1" else 77
    with tempfile.TemporaryDirectory(prefix="vm-e2e-") as tmp:
        vm_args, extra = [], []
        if a.transport == "ivshmem":
            region = os.path.join(tmp, "region")
            uri = "ivshmem://" + region
            other = "ivshmem://" + os.path.join(tmp, "other")
            vm_args = ["--ivshmem", region]
            extra = ["--listen", other]
        else:
            uri = gvsd_start.endpoint("tcp", tmp).replace(
                "tcp://", a.transport + "://")
        config = "token = %s name=vm\n" % TOKEN
        env = {"GVS_TOKEN": TOKEN, "LD_LIBRARY_PATH": a.frontend_dir}
        if a.transport == "tls":
            certs = tls_certs.make(tmp)
            config += tls_certs.gvsd_config(certs)
            env.update(tls_certs.client_env(certs))
        gvsd = gvsd_start.start(a.gvsd, uri, tmp,
                                ["--plugin-dir", a.plugin_dir] + extra,
                                config)
        if gvsd is None:
            print("FAILED: gvsd did not start on %s" % uri)
            return 1
        guest_uri = (IVSHMEM_URI if a.transport == "ivshmem"
                     else uri.replace("127.0.0.1", GUEST_HOST))
        env["GVS_SERVER"] = guest_uri
        assign = " ".join("%s=%s" % (k, shlex.quote(v)) for k, v in env.items())
        # Each program; the first again through `gvs run` (which puts
        # the frontends first in the library path itself), and with a
        # wrong token, which gvsd must refuse.
        first = shlex.quote(os.path.abspath(a.programs[0]))
        runs = [(os.path.basename(p), "env %s %s" % (
            assign, shlex.quote(os.path.abspath(p))), True) for p in a.programs]
        runs.append(("gvs run", "env %s %s run --server %s -- %s" % (
            assign, shlex.quote(os.path.abspath(a.gvs)), guest_uri, first),
            True))
        runs.append(("wrong token", "env %s GVS_TOKEN=not-the-token-0123456789 %s"
                     % (assign, first), False))
        if a.transport == "ivshmem":
            runs.append(("scribble", "%s %s %s" % (
                shlex.quote(sys.executable), shlex.quote(SCRIBBLE),
                shlex.quote(guest_uri[len("ivshmem://"):])), None))
            runs.append(("after scribble", "env %s %s" % (assign, first),
                         False))
        script = guest_script([(label, cmd) for label, cmd, _ in runs])
        try:
            p = subprocess.run([sys.executable, GVS_VM, "--timeout",
                                str(a.timeout)] + vm_args +
                               ["--", "sh", "-c", script],
                               capture_output=True, text=True)
            host = None
            if a.transport == "ivshmem" and gvsd.poll() is None:
                host = subprocess.run(
                    [a.programs[0]],
                    env=dict(os.environ, **dict(env, GVS_SERVER=other)),
                    capture_output=True, text=True, timeout=120)
        finally:
            gvsd.terminate()
            gvsd.wait(timeout=30)
        sys.stdout.write(p.stdout)
        sys.stderr.write(p.stderr)
        if a.transport == "ivshmem" and (
                host is None or host.returncode != 0 or
                not host.stdout.endswith("ok\n")):
            print("FAILED: gvsd did not serve its other region after the "
                  "guest wrote over its own")
            if host is not None:
                sys.stdout.write(host.stdout + host.stderr)
            return 1
        if p.returncode != 0:
            print("FAILED: the guest's script exited %d" % p.returncode)
            return 1
        seen = guest_results(p.stdout)
        ok = True
        for label, _, good in runs:
            out, rc = seen.get(label, (None, None))
            if out is None:
                print("FAILED: %s: no result from the guest" % label)
                ok = False
            elif good is None and rc != 0:
                print("FAILED: %s in the guest exited %d" % (label, rc))
                ok = False
            elif good is False and rc == 0:
                print("FAILED: %s did not fail" % label)
                ok = False
            elif good and (rc != 0 or not out.endswith("ok\n")):
                print("FAILED: %s in the guest exited %d" % (label, rc))
                ok = False
        return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
