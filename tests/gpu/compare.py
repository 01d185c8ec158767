#!/usr/bin/env python3
"""Runs a CUDA program natively and through gvs, and compares the two runs.

The program's stdout and exit status must be identical.  In --mode gpu both
runs must also succeed (exit 0); in --mode e2e (a machine without a GPU)
they must fail the same way.  Through gvs the program runs with `gvs run`:
over a private Unix-socket gvsd, or over TCP, shared memory or a guest's
ivshmem region (its client a process of this host) to a gvsd this
script starts.  --transport takes a comma-separated list: the
program then runs through gvs once per transport, each run compared with
the one native run.  --gvsd-arg gives that gvsd an argument (a memory
quota, a device list), and then a gvsd is started here over unix too;
--native-env sets a variable for the native run alone.  --copies N runs N
copies of the program at once, natively and through one gvsd, and
--cpu-load K keeps K busy processes running meanwhile: every copy must
print the same, which a client whose threads' requests gvsd ran out of
order (under load, when its threads are preempted) does not.

With GVS_TEST_NOGPU naming ../shared/tools/nogpu.sh (the GPU machine, as
root), the gvs client runs as on a machine without a GPU: in a private
mount namespace where the GPU's device nodes and NVIDIA's driver libraries
are masked, while gvsd, started here for every transport, runs outside it.
The program is then also run natively inside that namespace, and must not
give the native run's result there: the mask is shown to hold, so a pass
through gvs cannot come from the local driver.
"""
import argparse
import os
import socket
import subprocess
import sys
import time

TIMEOUT_S = 600


def native_env():
    env = {k: v for k, v in os.environ.items() if not k.startswith("GVS_")}
    env.pop("LD_LIBRARY_PATH", None)
    return env


COPIES = 1
CPU_LOAD = 0


def run(cmd, env):
    """cmd run COPIES times at once beside CPU_LOAD busy processes: the
    first copy's result, or a failed one naming the copy that differs."""
    start = time.monotonic()
    load = [subprocess.Popen([sys.executable, "-c", "while True: pass"])
            for _ in range(CPU_LOAD)]
    try:
        procs = [subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE)
                 for _ in range(COPIES)]
        outs = [p.communicate(timeout=TIMEOUT_S) for p in procs]
    finally:
        for p in load:
            p.kill()
            p.wait()
    res = [subprocess.CompletedProcess(cmd, p.returncode, o, e)
           for p, (o, e) in zip(procs, outs)]
    for i, r in enumerate(res[1:], 2):
        if (r.returncode, r.stdout) != (res[0].returncode, res[0].stdout):
            why = ("copy %d of %d printed otherwise than copy 1 (exit %d):\n"
                   % (i, COPIES, r.returncode)).encode()
            return subprocess.CompletedProcess(
                cmd, 1, why + r.stdout, r.stderr), time.monotonic() - start
    return res[0], time.monotonic() - start


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# ivshmem: a guest's region, its client here a process of the host; on
# tmpfs, as docs/vm.md has it, so that the worker can pin its pages; and
# with data areas that hold what the GPU tests pin (sparse: a page takes
# memory once written).
IVSHMEM_DIR = "/dev/shm" if os.access("/dev/shm", os.W_OK) else "/tmp"
IVSHMEM_CONFIG = "ivshmem_slots = 16\nivshmem_area = 512M\n"


def start_gvsd(gvsd, transport, extra, mode):
    conf = []
    if transport == "tcp":
        uri = f"tcp://127.0.0.1:{free_port()}"
    elif transport == "ivshmem":
        uri = f"ivshmem://{IVSHMEM_DIR}/gvs-compare-{os.getpid()}.region"
        if mode == "gpu":
            path = f"/tmp/gvs-compare-{os.getpid()}.conf"
            with open(path, "w") as f:
                f.write(IVSHMEM_CONFIG)
            conf = ["--config", path]
    else:
        uri = f"{transport}:///tmp/gvs-compare-{os.getpid()}.sock"
    r, w = os.pipe()
    proc = subprocess.Popen([gvsd, "--listen", uri, "--ready-fd", str(w)] +
                            conf + extra, pass_fds=(w,), env=native_env())
    os.close(w)
    with os.fdopen(r) as ready:
        if ready.read().strip() != "ready":
            proc.kill()
            sys.exit(f"gvsd did not start on {uri}")
    return proc, uri


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gvs", required=True)
    ap.add_argument("--gvsd", required=True)
    ap.add_argument("--mode", choices=("gpu", "e2e"), required=True)
    ap.add_argument("--transport", type=transports, default=["unix"])
    # An argument for the gvsd this script starts; with it, the program
    # runs over unix too against a gvsd started here (not gvs run's own).
    ap.add_argument("--gvsd-arg", action="append", default=[])
    # NAME=VALUE for the native run only (what a gvsd argument stands for).
    ap.add_argument("--native-env", action="append", default=[])
    ap.add_argument("--copies", type=int, default=1)
    ap.add_argument("--cpu-load", type=int, default=0)
    ap.add_argument("program", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    global COPIES, CPU_LOAD
    COPIES, CPU_LOAD = max(a.copies, 1), max(a.cpu_load, 0)
    prog = [x for x in a.program if x != "--"]

    env = native_env()
    for kv in a.native_env:
        name, _, value = kv.partition("=")
        env[name] = value
    native, t_native = run(prog, env)
    nogpu = os.environ.get("GVS_TEST_NOGPU")
    if nogpu and a.mode == "gpu":
        masked, _ = run([nogpu] + prog, env)
        if (masked.returncode == native.returncode and
                masked.stdout == native.stdout):
            print(f"{os.path.basename(prog[0])}: the GPU is not hidden by "
                  f"{nogpu}: the native run gave the same result inside it")
            return 1
    for transport in a.transport:
        if not via_gvs(a, prog, transport, native, t_native, nogpu):
            return 1
    return 0


def transports(text):
    names = text.split(",")
    for n in names:
        if n not in ("unix", "tcp", "shm", "ivshmem"):
            raise argparse.ArgumentTypeError(f"unknown transport {n!r}")
    return names


def via_gvs(a, prog, transport, native, t_native, nogpu):
    """The program through gvs over transport, compared with the native
    run: whether they agree."""
    daemon = None
    cmd = [nogpu] if nogpu else []
    cmd += [a.gvs, "run"]
    if transport != "unix" or nogpu or a.gvsd_arg or COPIES > 1:
        daemon, uri = start_gvsd(a.gvsd, transport, a.gvsd_arg, a.mode)
        cmd += ["--server", uri]
    try:
        via, t_via = run(cmd + ["--"] + prog, native_env())
    finally:
        if daemon is not None:
            daemon.terminate()
            daemon.wait(timeout=30)
        if os.path.exists(f"/tmp/gvs-compare-{os.getpid()}.conf"):
            os.unlink(f"/tmp/gvs-compare-{os.getpid()}.conf")

    name = os.path.basename(prog[0])
    print(f"{name}: native rc={native.returncode} {t_native:.3f}s, "
          f"gvs/{transport} rc={via.returncode} {t_via:.3f}s")
    out_n = native.stdout.decode(errors="replace")
    out_v = via.stdout.decode(errors="replace")
    ok = out_n == out_v and native.returncode == via.returncode
    if a.mode == "gpu":
        ok = ok and native.returncode == 0
    if not ok:
        print("---- native stdout ----\n" + out_n)
        print("---- native stderr ----\n" + native.stderr.decode(errors="replace"))
        print(f"---- gvs/{transport} stdout ----\n" + out_v)
        print(f"---- gvs/{transport} stderr ----\n" +
              via.stderr.decode(errors="replace"))
        return False
    print(out_v, end="")
    return True


if __name__ == "__main__":
    sys.exit(main())
