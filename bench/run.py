#!/usr/bin/env python3
"""Runs the benchmark programs natively and through gvs over each transport
in one go, and prints one table of ratios to native (markdown).

    bench/run.py --build BUILD_DIR [--transports unix,tcp,shm,tls] [--repeat 3]
                 [--level runtime|driver]

--transports may also name ivshmem: a guest's region on /dev/shm, the
client a process of the host (the guest's path without its VM); and
vm-ivshmem and vm-tcp: the client in a QEMU guest without a GPU
(tools/vm/gvs-vm, docs/vm.md), reaching gvsd on this host through an
ivshmem device or QEMU's user-mode network.  Those run the seeds' rows
alone (--seeds).

--seeds runs the micro benchmarks and histogram, matrixMul and scalarProd
only: the table of the seed papers, redone (docs/vm.md).

--level driver runs the programs built with the static runtime
(BUILD_DIR/bench/static): through gvs, NVIDIA's runtime inside them
reaches the GPU by gvs's libcuda.so.1, the driver-level frontend, where
the default, runtime, has them call gvs's libcudart.so.13.

Every number in the table comes from this run: native and gvs side by
side on the same machine, never from different runs.  The runs are
interleaved, a round of every program on each target after another
(--repeat rounds, every gvsd up throughout), and each cell is the median
of its rounds: host-bound work varies from one run to the next, and a
slow spell then falls on every column alike.  libs is a cuBLAS SGEMM loop
and cuFFT plans and transforms (bench/libs.cu): the libraries reach the
GPU by the driver frontend at either level.  The row
socket_bulk_256MiB is each transport's own bulk rate (bench/sockbulk.c,
no GPU, no gvsd), measured in each round after the transport's copies:
the mean of its two directions, client to server (c2s) and back (s2c),
each the median of sockbulk's rounds and then of the rounds, as every
cell (the best round is kept as _best, not shown).  The copy rates of unix, tcp and tls are also given as a
share of the direction they use ("of socket": h2d of c2s, d2h of s2c), the
part of the socket a copy through gvs achieves.

Copies at every size (bench/sweep.cu): a table per kind of copy (pinned
and pageable, each direction, device to device; cudaMemcpy and
cudaMemcpyAsync), a row per power of two from 4 B to 512 MiB, each cell
the rate, its ratio to native and the CPU seconds per GB moved (the
program's, and for gvs gvsd's and its workers' too); then a pipeline of
blocks of 64 KiB to 16 MiB on 4 streams; and the cells that miss the
copy targets, per transport (bench/sweep_targets.py).  --json FILE also
writes every median, which bench/sweep_plot.py draws; --sweep-only runs
the sweep and the transports' bulk rates alone.

tls runs on loopback with throwaway certificates made for the run
(bench/tls_certs.py, in a temporary directory): gvsd asks for the client's
certificate (mutual TLS), given to the program through GVS_TLS_*.
"""
import argparse
import contextlib
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time

import sweep_table
import sweep_targets
import tls_certs

APPS = ("histogram", "matrixMul", "scalarProd")
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GVS_VM = os.path.join(ROOT, "tools", "vm", "gvs-vm")
# What a guest of gvs-vm names: this host's loopback, and the ivshmem
# device's memory at the PCI address gvs-vm gives it.
GUEST_HOST = "10.0.2.2"
GUEST_IVSHMEM = "ivshmem:///sys/bus/pci/devices/0000:00:10.0/resource2"
CLIENTS = (1, 4, 16, 64)
# Connected sessions that do nothing, and how long their cost is taken.
IDLE_SESSIONS, IDLE_WINDOW_S = 64, 10.0
SOCKET_ROW = "socket_bulk_256MiB"
# Transports whose copy rows are also given as a share of SOCKET_ROW: shm
# copies are meant to bypass its byte stream.
SOCKET_SHARE = ("unix", "tcp", "tls")


def native_env():
    env = {k: v for k, v in os.environ.items() if not k.startswith("GVS_")}
    env.pop("LD_LIBRARY_PATH", None)
    return env


def vm_options():
    """gvs-vm's guest image and QEMU where the environment names them
    (GVS_VM_DIR, GVS_VM_QEMU: a copy carried to a machine without QEMU,
    docs/vm.md), as options: native_env() keeps no GVS_ variable."""
    opts = []
    for var, opt in (("GVS_VM_DIR", "--image-dir"), ("GVS_VM_QEMU", "--qemu")):
        if os.environ.get(var):
            opts += [opt, os.environ[var]]
    return opts


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Target:
    """How to run a program: natively, or through gvs over a transport.
    tls: the Tls of the run."""

    def __init__(self, name, build, tls, gvsd_env=()):
        self.name, self.build, self.daemon, self.uri = name, build, None, None
        self.gvsd_env = dict(v.split("=", 1) for v in gvsd_env)
        self.tls = tls if name == "tls" else None
        self.conf = None
        self.guest_uri, self.region = None, None

    def __enter__(self):
        if self.name in ("tcp", "tls", "vm-tcp"):
            self.uri = "%s://127.0.0.1:%d" % (self.name[-3:], free_port())
            self.guest_uri = self.uri.replace("127.0.0.1", GUEST_HOST)
        elif self.name in ("ivshmem", "vm-ivshmem"):
            # A guest's region lives on tmpfs (docs/vm.md): the worker pins
            # its pages for the GPU's copies.  On the host, slots for the
            # 64 clients, areas that hold the sweep's 512 MiB of pinned
            # memory (a sparse 64 GiB file: pages take memory once
            # written); for a guest, whose BAR it is (1 GiB), two slots
            # whose areas hold the micro benchmark's 256 MiB.
            self.region = "/dev/shm/gvs-bench-%s-%d.region" % (self.name,
                                                                os.getpid())
            self.uri = "ivshmem://" + self.region
            self.guest_uri = GUEST_IVSHMEM
            self.conf = tempfile.NamedTemporaryFile("w", suffix=".conf")
            self.conf.write("ivshmem_slots = 64\nivshmem_area = 512M\n"
                            if self.name == "ivshmem" else
                            "ivshmem_slots = 2\nivshmem_area = 384M\n")
            self.conf.flush()
        elif self.name != "native":
            self.uri = "%s:///tmp/gvs-bench-%s-%d.sock" % (self.name, self.name, os.getpid())
        if self.uri:
            r, w = os.pipe()
            extra = (["--config", self.tls.gvsd_conf] if self.tls else
                     ["--config", self.conf.name] if self.conf else [])
            self.daemon = subprocess.Popen(
                [os.path.join(self.build, "bin", "gvsd"), "--listen", self.uri,
                 "--ready-fd", str(w), "--max-sessions", "128"] + extra,
                pass_fds=(w,), env=dict(native_env(), **self.gvsd_env))
            os.close(w)
            with os.fdopen(r) as ready:
                if ready.read().strip() != "ready":
                    sys.exit("gvsd did not start on %s" % self.uri)
        return self

    def __exit__(self, *exc):
        if self.daemon:
            self.daemon.terminate()
            self.daemon.wait(timeout=30)

    def cmd(self, prog):
        if self.name == "native":
            return prog
        gvs = os.path.join(os.path.abspath(self.build), "bin", "gvs")
        if self.name.startswith("vm-"):
            return ([sys.executable, GVS_VM, "--timeout", "900"] + vm_options() +
                    (["--ivshmem", self.region] if self.region else []) +
                    ["--", gvs, "run", "--server", self.guest_uri, "--"] +
                    [os.path.abspath(prog[0])] + prog[1:])
        # GVS_TEST_NOGPU (tests/gpu/compare.py): the client runs where the
        # GPU is hidden from it, gvsd outside.
        nogpu = os.environ.get("GVS_TEST_NOGPU")
        return ([nogpu] if nogpu else []) + [gvs, "run", "--server",
                                             self.uri, "--"] + prog

    def start(self, prog):
        env = native_env()
        if self.daemon:
            # The sweep's CPU cost counts gvsd's and its workers' time.
            env["GVS_BENCH_SERVER_PID"] = str(self.daemon.pid)
        if self.tls:
            env.update(tls_certs.client_env(self.tls.certs))
        return subprocess.Popen(self.cmd(prog), env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)


class Tls:
    """Throwaway certificates for the run, and gvsd's config using them."""

    def __enter__(self):
        self.dir = tempfile.TemporaryDirectory(prefix="gvs-bench-tls-")
        self.certs = tls_certs.make(self.dir.name)
        self.gvsd_conf = os.path.join(self.dir.name, "gvsd.conf")
        with open(self.gvsd_conf, "w") as f:
            f.write(tls_certs.gvsd_config(self.certs))
        return self

    def __exit__(self, *exc):
        self.dir.cleanup()


def parse(out):
    res = {}
    for line in out.decode().splitlines():
        parts = line.split()
        if len(parts) == 3:
            try:
                res[parts[0]] = (float(parts[1]), parts[2])
            except ValueError:
                pass
    return res


def run(target, prog):
    p = target.start(prog)
    out, err = p.communicate(timeout=600)
    if p.returncode != 0:
        sys.exit("%s via %s failed (%d): %s" % (prog[0], target.name,
                                                 p.returncode, err.decode()[-2000:]))
    return parse(out)


def socket_bulk(target, bench_dir):
    """The transport's own rates, on an address of its own, run once a
    round beside the target's copies: each direction's median round (the
    statistic of a copy's cell) and their mean (SOCKET_ROW), and each
    direction's best round (_best)."""
    name, env = target.name, native_env()
    if name in ("tcp", "tls"):
        uri = "%s://127.0.0.1:0" % name
    else:
        uri = "%s:///tmp/gvs-sockbulk-%d.sock" % (name, os.getpid())
    if target.tls:
        # sockbulk's server shows GVS_TLS_CERT, its client checks it
        # against GVS_TLS_CA.
        certs = target.tls.certs
        env.update({"GVS_TLS_CA": certs["ca"],
                    "GVS_TLS_CERT": certs["server_cert"],
                    "GVS_TLS_KEY": certs["server_key"]})
    p = subprocess.run([os.path.join(bench_dir, "sockbulk"), uri],
                       capture_output=True, timeout=600, env=env)
    if p.returncode != 0:
        sys.exit("sockbulk over %s failed: %s" % (name, p.stderr.decode()))
    out = parse(p.stdout)
    return {k: out[k] for k in (SOCKET_ROW, SOCKET_ROW + "_c2s",
                                SOCKET_ROW + "_s2c", SOCKET_ROW + "_c2s_best",
                                SOCKET_ROW + "_s2c_best")}


def socket_share(metric, res):
    """A copy's rate as a share of the socket direction it uses."""
    way = "_c2s" if metric.startswith("h2d_") else "_s2c"
    return ", %.0f%% of socket" % (100.0 * res[metric][0] /
                                   res[SOCKET_ROW + way][0])


def measure_round(target, bench_dir, mode):
    """One round of every program on target: {metric: (value, unit)};
    mode quick: launch + synchronize, the streams' overlap and the
    concurrent clients only; sweep: the copy sweep only; seeds: the micro
    benchmarks and the three applications."""
    micro = [os.path.join(bench_dir, "micro")]
    if mode == "seeds":
        res = run(target, micro)
        for app in APPS:
            res[app] = run(target, [os.path.join(bench_dir, app)])[app]
        return res
    sweep = run(target, [os.path.join(bench_dir, "sweep")]) \
        if mode != "quick" else {}
    if mode == "sweep":
        return sweep
    if mode == "quick":
        res = run(target, micro + ["quick"])
        concurrent(target, micro, res, CLIENTS[2:])
        return res
    res = run(target, micro)
    res.update(sweep)
    for app in APPS:
        res[app] = run(target, [os.path.join(bench_dir, app)])[app]
    res.update(run(target, [os.path.join(bench_dir, "libs")]))
    concurrent(target, micro, res, CLIENTS)
    return res


def concurrent(target, micro, res, counts):
    """Aggregate launch rates of n processes at once, for n in counts."""
    for n in counts:
        procs = [target.start(micro + ["launch"]) for _ in range(n)]
        total = 0.0
        for p in procs:
            out, err = p.communicate(timeout=600)
            if p.returncode != 0:
                sys.exit("concurrent micro via %s failed: %s" % (target.name, err.decode()))
            total += parse(out)["launch_async"][0]
        res["clients_%d" % n] = (total, "launch/s")


def cpu_seconds(pid):
    """CPU time of pid and of its living children (gvsd and its session
    workers), in seconds."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0.0
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % entry) as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        # After the name: state, ppid, ..., utime and stime (14th and 15th
        # fields of the whole line).
        if int(entry) == pid or int(fields[1]) == pid:
            total += (int(fields[11]) + int(fields[12])) / tick
    return total


def idle_cost(target, bench_dir):
    """{idle_64: (percent of one core, "%")}: gvsd and its workers' CPU
    time over IDLE_WINDOW_S while IDLE_SESSIONS connected sessions sleep;
    natively, that of IDLE_SESSIONS such processes (each a CUDA context,
    whose driver threads the workers hold through gvs)."""
    micro = os.path.join(bench_dir, "micro")
    procs = [target.start([micro, "idle", str(int(IDLE_WINDOW_S) + 60)])
             for _ in range(IDLE_SESSIONS)]
    # Measured once every session has made its context and launched
    # (64 contexts take seconds to make, natively too), and settled.
    for p in procs:
        if p.stdout.readline().strip() != b"ready":
            sys.exit("idle micro via %s did not start" % target.name)
    time.sleep(2.0)
    pids = [target.daemon.pid] if target.daemon else [p.pid for p in procs]
    before = sum(cpu_seconds(pid) for pid in pids)
    time.sleep(IDLE_WINDOW_S)
    spent = sum(cpu_seconds(pid) for pid in pids) - before
    for p in procs:
        p.terminate()
    for p in procs:
        p.communicate(timeout=120)
    return {"idle_%d" % IDLE_SESSIONS: (100.0 * spent / IDLE_WINDOW_S, "%")}


def medians(rounds):
    """Each metric's median over the rounds, in the first round's order."""
    return {k: (statistics.median(r[k][0] for r in rounds), unit)
            for k, (_, unit) in rounds[0].items()}


def fmt(v, unit):
    if unit == "TFLOP/s":
        return "%.1f TFLOP/s" % v
    if unit == "launch/s":
        return "%.0f/s" % v
    if unit == "GB/s":
        return "%.2f GB/s" % v
    if unit == "us":
        return "%.2f us" % v
    return "%.4f s" % v


def ratio(metric, nat, val, unit):
    if unit in ("launch/s", "GB/s", "TFLOP/s"):
        return "%.0f%%" % (100.0 * val / nat)
    if metric == "launch_sync" or unit == "us":
        return "%.2fx (+%.2f us)" % (val / nat, val - nat)
    return "%.3fx" % (val / nat)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--transports", default="unix,tcp,shm,tls")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--level", choices=("runtime", "driver"), default="runtime")
    ap.add_argument("--quick", action="store_true",
                    help="launch + synchronize, stream overlap, 16 and 64 "
                         "clients and the idle sessions only")
    ap.add_argument("--sweep-only", action="store_true",
                    help="the copy sweep and the transports' bulk rates only")
    ap.add_argument("--seeds", action="store_true",
                    help="the micro benchmarks and the three applications "
                         "only (any transport, vm-* too)")
    ap.add_argument("--json", metavar="FILE",
                    help="also write every median here (bench/sweep_plot.py)")
    ap.add_argument("--gvsd-env", metavar="NAME=VALUE", action="append",
                    default=[],
                    help="a variable for gvsd's environment (which keeps "
                         "no GVS_ variable of this one's), e.g. "
                         "GVS_COPY_KERNEL=0; repeatable")
    a = ap.parse_args()
    if any("=" not in v for v in a.gvsd_env):
        ap.error("--gvsd-env takes NAME=VALUE")
    sock_dir = bench_dir = os.path.join(a.build, "bench")
    if a.level == "driver":
        bench_dir = os.path.join(bench_dir, "static")
    names = ["native"] + [t for t in a.transports.split(",") if t]
    mode = ("quick" if a.quick else "sweep" if a.sweep_only else
            "seeds" if a.seeds else "all")
    if mode != "seeds" and any(n.startswith("vm-") for n in names):
        ap.error("vm-ivshmem and vm-tcp run with --seeds only")
    rounds = {n: [] for n in names}
    results = {}
    with contextlib.ExitStack() as stack:
        tls = stack.enter_context(Tls()) if "tls" in names else None
        targets = [stack.enter_context(Target(n, a.build, tls, a.gvsd_env))
                   for n in names]
        for _ in range(a.repeat):
            for t in targets:
                rounds[t.name].append(measure_round(t, bench_dir, mode))
                if t.name != "native" and mode in ("all", "sweep"):
                    rounds[t.name][-1].update(socket_bulk(t, sock_dir))
                # Each round as it ends, for a run cut short.
                print(t.name, rounds[t.name][-1], file=sys.stderr, flush=True)
        for t in targets:
            results[t.name] = medians(rounds[t.name])
            if mode in ("all", "quick"):
                results[t.name].update(idle_cost(t, bench_dir))
            print(t.name, results[t.name], file=sys.stderr, flush=True)
    gpu = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version",
                          "--format=csv,noheader"], capture_output=True,
                         text=True).stdout.strip()
    print("device: %s; %s; frontend: %s; medians of %d interleaved rounds" % (
        gpu, time.strftime("%Y-%m-%d %H:%M"),
        "libcuda.so.1 (static runtime)" if a.level == "driver"
        else "libcudart.so.13 (-cudart shared)", a.repeat))
    print()
    print("| metric | native | " + " | ".join("%s (ratio)" % n for n in names[1:]) + " |")
    print("|---|---|" + "---|" * (len(names) - 1))
    socket_done = mode in ("quick", "seeds")
    for metric, (nat, unit) in results["native"].items():
        if not socket_done and (mode == "sweep" or
                                metric.startswith(("h2d_", "d2h_"))):
            socket_done = True
            cells = ["n/a"] + ["%s (c2s %.2f, s2c %.2f)" % (
                fmt(results[n][SOCKET_ROW][0], "GB/s"),
                results[n][SOCKET_ROW + "_c2s"][0],
                results[n][SOCKET_ROW + "_s2c"][0]) for n in names[1:]]
            print("| %s | %s |" % (SOCKET_ROW, " | ".join(cells)))
        if sweep_table.is_sweep(metric) or metric.startswith("idle_"):
            continue
        cells = [fmt(nat, unit)]
        for n in names[1:]:
            v = results[n].get(metric)
            if not v:
                cells.append("-")
                continue
            r = ratio(metric, nat, v[0], unit)
            if (n in SOCKET_SHARE and unit == "GB/s"
                    and metric.startswith(("h2d_", "d2h_"))):
                r += socket_share(metric, results[n])
            cells.append("%s (%s)" % (fmt(v[0], unit), r))
        print("| %s | %s |" % (metric, " | ".join(cells)))
    idle = "idle_%d" % IDLE_SESSIONS
    if mode in ("all", "quick"):
        print("| %s: CPU over %.0f s (native: the processes; gvs: gvsd and "
              "its workers) | %s |" % (idle, IDLE_WINDOW_S, " | ".join(
                  "%.2f%% of a core" % results[n][idle][0] for n in names)))
    if any(sweep_table.is_sweep(m) for m in results["native"]):
        print("\n".join(sweep_table.tables(results, names)))
        print("\n".join(sweep_targets.lines(results, names)))
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"device": gpu, "names": names, "results": results}, f,
                      indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
