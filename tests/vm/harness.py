#!/usr/bin/env python3
"""vm.harness: tools/vm/gvs-vm itself.  A guest runs a command in this
directory and hands back its output and exit status; it has no GPU
device, writes into this host's /tmp, and reaches this host at 10.0.2.2; a guest that hangs is
killed at --timeout with status 124, as timeout(1) does; a command that
is not found gives 127.

usage: harness.py   (exit 0 passed, 1 failed, 77 skipped as run_vm_e2e.py)"""

import os
import socket
import subprocess
import sys
import tempfile
import threading

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from run_vm_e2e import GVS_VM, missing  # noqa: E402


def vm(args, timeout=600):
    p = subprocess.run([sys.executable, GVS_VM] + args, capture_output=True,
                       text=True, timeout=timeout)
    return p.returncode, p.stdout, p.stderr


def serve_once(sock):
    """Answers one connection with a line, so that the guest can show it
    reaches this host."""
    conn, _ = sock.accept()
    with conn:
        conn.sendall(b"hello from the host\n")


def main():
    why = missing()
    if why:
        print("vm test: " + why)
        return 1 if os.environ.get("GVS_REQUIRE_VM") == "1" else 77
    failures = []

    def check(cond, what, detail=""):
        print("%s: %s" % ("ok" if cond else "FAILED", what))
        if not cond:
            failures.append(what)
            if detail:
                print(detail)

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(1)
    port = sock.getsockname()[1]
    t = threading.Thread(target=serve_once, args=(sock,), daemon=True)
    t.start()
    shared = tempfile.mkdtemp(prefix="gvs-vm-harness-", dir="/tmp")
    mark = os.path.join(shared, "mark")
    script = ("pwd; ls /dev | grep -c '^nvidia' ; echo mark > %s; "
              "cat %s; %s -c \"import socket; print(socket.create_connection("
              "('10.0.2.2', %d)).recv(64).decode(), end='')\"; echo err >&2; "
              "exit 3" % (mark, mark, sys.executable, port))
    rc, out, err = vm(["--", "sh", "-c", script])
    lines = out.splitlines()
    check(rc == 3, "the command's exit status comes back (%d)" % rc, err)
    check(lines[:1] == [os.getcwd()], "it runs in this directory", out)
    check(lines[1:2] == ["0"], "the guest has no /dev/nvidia*", out)
    check("mark" in lines and os.path.exists(mark),
          "it writes into this host's /tmp", out)
    if os.path.exists(mark):
        os.unlink(mark)
    os.rmdir(shared)
    check("hello from the host" in lines, "it reaches this host at 10.0.2.2", out)
    check(err.endswith("err\n"), "its stderr comes back", err)
    rc, out, err = vm(["--", "no-such-command-here"])
    check(rc == 127, "a command not found gives 127 (%d)" % rc, err)
    rc, out, err = vm(["--timeout", "30", "--", "sleep", "600"])
    check(rc == 124 and "killed after" in err,
          "a hung guest is killed at --timeout (%d)" % rc, err)
    sock.close()
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
