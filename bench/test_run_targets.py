#!/usr/bin/env python3
"""bench/run.py's command for a client in a guest: gvs-vm gets the guest
image and QEMU that GVS_VM_DIR and GVS_VM_QEMU name (a copy carried to a
machine without QEMU), although the programs' environment drops every
GVS_ variable; without them, gvs-vm's own defaults.  And what
--gvsd-env gives gvsd's environment."""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import run  # noqa: E402


def guest_cmd(env):
    for var in ("GVS_VM_DIR", "GVS_VM_QEMU"):
        os.environ.pop(var, None)
    os.environ.update(env)
    t = run.Target("vm-tcp", "/build", None)
    t.guest_uri = "tcp://10.0.2.2:7300"
    return t.cmd(["/build/bench/micro"])


def after(cmd, opt):
    return cmd[cmd.index(opt) + 1] if opt in cmd else None


def main():
    failed = 0
    cmd = guest_cmd({"GVS_VM_DIR": "/carried/gvs-vm",
                     "GVS_VM_QEMU": "/carried/qemu-system-x86_64"})
    for opt, want in (("--image-dir", "/carried/gvs-vm"),
                      ("--qemu", "/carried/qemu-system-x86_64")):
        if after(cmd, opt) != want:
            print("FAILED: %s: %r, want %r in %s" % (opt, after(cmd, opt), want, cmd))
            failed = 1
    if after(cmd, "--") != "/build/bin/gvs" or "GVS_VM_DIR" in run.native_env():
        print("FAILED: the guest's command or environment: %s" % cmd)
        failed = 1
    cmd = guest_cmd({})
    if "--image-dir" in cmd or "--qemu" in cmd:
        print("FAILED: options without their variables: %s" % cmd)
        failed = 1
    t = run.Target("tcp", "/build", None, ["GVS_COPY_KERNEL=0", "A=b=c"])
    if t.gvsd_env != {"GVS_COPY_KERNEL": "0", "A": "b=c"}:
        print("FAILED: gvsd's variables: %s" % t.gvsd_env)
        failed = 1
    if not failed:
        print("ok")
    return failed


if __name__ == "__main__":
    sys.exit(main())
