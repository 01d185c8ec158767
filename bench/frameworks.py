#!/usr/bin/env python3
"""Framework workloads (bench/frameworks_work.py) natively and through gvs
over shm, unix and tcp in one run, as one Markdown table of medians and
their ratios to native.

    bench/frameworks.py [--gvs build/bin/gvs] [--gvsd build/bin/gvsd]
        [--client-wrap CMD] [--only W,W] [--transports shm,unix,tcp]
        [--rounds 3] [--timeout 300] [--budget S] [--out FILE]
    bench/frameworks.py --table FILE [FILE ...]

Workloads: gemm, resnet50, compile, gpt2_b16, gpt2_b1, and startup
(only when --only names it: a process that stops after its first
operation).  Every run reports the client's peak resident memory (VmHWM)
and when its first CUDA operation finished (`import torch`, a first
kernel, a synchronization: seconds from the spawn of the process), and
the table's startup row is the median of that over every run of a
target, whatever its workload.

The driver starts one gvsd per transport (on a socket in a temporary
directory, or a free loopback port) and keeps it up throughout.  Every
gvs client runs as `CLIENT_WRAP gvs run --server URI -- python3
frameworks_work.py W`; on the GPU machine --client-wrap names a script
that hides the GPU from its command (default: $GVS_TEST_NOGPU, as
bench/run.py).  Native runs are never wrapped.  Host-bound work varies by
a third from run to run, so the runs are interleaved: each round runs
every workload natively and then over each transport, and each cell is
the median over the rounds.  Each run is a fresh process with a time
limit; a run that fails or times out is recorded as failed and the
others go on.  Every run's numbers are written to --out as soon as it
ends, so a driver stopped early loses nothing: --table prints the table
of one or more such files (several calls of --only merged).
"""
import argparse
import json
import os
import shlex
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

# The environment of a native run and a free TCP port, as the C benchmarks'
# driver makes them.
from run import free_port, native_env  # noqa: E402  (bench/run.py)

HERE = os.path.dirname(os.path.abspath(__file__))
WORKLOADS = {  # name: table label
    "gpt2_b1": "GPT-2 small greedy decode, batch 1, 128 tokens, fp16",
    "gpt2_b16": "GPT-2 small greedy decode, batch 16, 128 tokens, fp16",
    "resnet50": "ResNet-50 training, batch 64, fp32, SGD",
    "compile": "torch.compile'd transformer encoder, training step",
    "gemm": "bf16 GEMM 8192³, 100 in a row",
    "startup": "process start to first finished CUDA op",
}
ORDER = ("gemm", "resnet50", "compile", "gpt2_b16", "gpt2_b1")
STARTUP = "process start to first finished CUDA op (every run)"
TRANSPORTS = ("shm", "unix", "tcp")
MARK = "GVSBENCH "


def log(msg):
    print(msg, file=sys.stderr, flush=True)


class Gvsd:
    """A gvsd serving one transport, started again if it has died."""

    def __init__(self, a, transport, sock_dir, logf):
        self.a, self.transport, self.dir, self.logf = a, transport, sock_dir, logf
        self.proc = None

    def ensure(self):
        if self.proc and self.proc.poll() is None:
            return
        if self.proc:
            log("gvsd for %s exited (%s): starting it again"
                % (self.transport, self.proc.returncode))
        if self.transport == "tcp":
            self.uri = "tcp://127.0.0.1:%d" % free_port()
        else:
            self.uri = "%s://%s/%s.sock" % (self.transport, self.dir, self.transport)
        r, w = os.pipe()
        self.proc = subprocess.Popen(
            [self.a.gvsd, "--listen", self.uri, "--ready-fd", str(w),
             "--max-sessions", "64"] + self.a.gvsd_arg,
            pass_fds=(w,), env=native_env(), stdout=self.logf, stderr=self.logf)
        os.close(w)
        with os.fdopen(r) as ready:
            if ready.read().strip() != "ready":
                self.proc.kill()
                sys.exit("gvsd did not start on %s" % self.uri)

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()


def run_one(cmd, timeout):
    """Runs one workload process: its result, or why it failed."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        t0 = time.time()
        p = subprocess.Popen(cmd, env=native_env(), stdout=out, stderr=err,
                             start_new_session=True)
        timed_out = False
        try:
            p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
        finally:
            wall = time.time() - t0
            # What the workload left (compile workers) goes with it, and
            # all of it if the driver is interrupted.
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            p.wait()
        out.seek(0)
        err.seek(0)
        out, err = out.read(), err.read()
    lines = [l for l in out.decode(errors="replace").splitlines() if l.startswith(MARK)]
    if p.returncode != 0 or not lines:
        why = "timed out after %d s" % timeout if timed_out else "exit %s" % p.returncode
        if not lines:
            why += ", no result line"
        return {"ok": False, "error": why, "wall_s": wall,
                "stderr_tail": err.decode(errors="replace")[-3000:]}
    res = json.loads(lines[-1][len(MARK):])
    res.update(ok=True, wall_s=wall, startup_s=res["t_first_op"] - t0)
    if res["workload"] == "startup":
        res["value"] = res["startup_s"]
    return res


def fmt(v, unit):
    digits = {"TFLOP/s": 1, "tok/s": 1, "img/s": 0, "steps/s": 2, "s": 2, "MiB": 0}
    return "{:,.{}f} {}".format(v, digits.get(unit, 2), unit)


def table(runs, names):
    """The Markdown table of the runs: medians of the successful runs of
    each workload and target, and their ratio to native."""
    cells = {}
    for r in runs:
        cells.setdefault((r["workload"], r["target"]), []).append(r)
    for r in runs:
        cells.setdefault((None, r["target"]), []).append(r)
    done = [w for w in ("startup",) + ORDER
            if any((w, n) in cells for n in names)]
    rows = ([(None, STARTUP, "startup_s")] +
            [(w, WORKLOADS[w], "value") for w in done if w != "startup"] +
            [(w, "peak host memory, " + w, "rss_mib") for w in done])
    lines = ["| workload | " + " | ".join(names) + " |",
             "|---|" + "---|" * len(names)]
    for w, label, key in rows:
        out, nat = [], None
        for n in names:
            rs = cells.get((w, n), [])
            ok = [r for r in rs if r["ok"]]
            if not ok:
                out.append("failed (%d)" % len(rs) if rs else "-")
                continue
            unit = {"rss_mib": "MiB", "startup_s": "s"}.get(key, ok[0]["unit"])
            med = statistics.median(r[key] for r in ok)
            text = fmt(med, unit)
            if n == "native":
                nat = med
            elif nat:
                if unit in ("s", "MiB"):  # lower is better
                    text += " (%.2fx)" % (med / nat)
                else:
                    text += " (%.0f%%)" % (100.0 * med / nat)
            if len(ok) < len(rs):
                text += " [%d of %d failed]" % (len(rs) - len(ok), len(rs))
            out.append(text)
        lines.append("| %s | %s |" % (label, " | ".join(out)))
    return "\n".join(lines)


def header(runs, names):
    nat = [r for r in runs if r["ok"] and r["target"] == "native"] or \
          [r for r in runs if r["ok"]]
    dev = "%s, torch %s" % (nat[0]["device"], nat[0]["torch"]) if nat else "?"
    rounds = max([r["round"] for r in runs] or [0])
    return ("device: %s; medians of up to %d interleaved rounds (%s); "
            "ratios to native: throughput gvs/native, time and memory x native"
            % (dev, rounds, ", ".join(names)))


def save(path, meta, runs):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump({"meta": meta, "runs": runs}, f, indent=1)
    os.replace(tmp, path)


def print_table(runs):
    names = ["native"] + [t for t in TRANSPORTS if any(r["target"] == t for r in runs)]
    print(header(runs, names))
    print()
    print(table(runs, names))


def add_gvs_args(ap):
    """The options of the programs a framework benchmark runs: gvs, gvsd,
    gvsd's extra arguments, and what every gvs client runs under."""
    ap.add_argument("--gvs", default="build/bin/gvs")
    ap.add_argument("--gvsd", default="build/bin/gvsd")
    ap.add_argument("--gvsd-arg", action="append", default=[],
                    help="an argument for every gvsd (repeatable)")
    ap.add_argument("--client-wrap", default=os.environ.get("GVS_TEST_NOGPU", ""),
                    help="command every gvs client runs under (default $GVS_TEST_NOGPU)")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_gvs_args(ap)
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--work", default=os.path.join(HERE, "frameworks_work.py"),
                    help="the workload script")
    ap.add_argument("--only", default=",".join(ORDER), help="workloads, in this order")
    ap.add_argument("--transports", default=",".join(TRANSPORTS))
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--timeout", type=int, default=300, help="seconds per run")
    ap.add_argument("--budget", type=float, default=0,
                    help="stop before a run that would end past this many "
                         "seconds, going by its earlier runs (0: no limit)")
    ap.add_argument("--resume", action="store_true",
                    help="keep the runs already in --out and do the rest")
    ap.add_argument("--out", default="frameworks-bench.json")
    ap.add_argument("--table", nargs="+", metavar="FILE",
                    help="print the table of these --out files and exit")
    a = ap.parse_args()
    if a.table:
        runs = []
        for path in a.table:
            with open(path) as f:
                runs += json.load(f)["runs"]
        print_table(runs)
        return 0
    work = [w for w in a.only.split(",") if w]
    transports = [t for t in a.transports.split(",") if t]
    for w in work:
        if w not in WORKLOADS:
            ap.error("unknown workload %r (%s)" % (w, ", ".join(WORKLOADS)))
    for t in transports:
        if t not in TRANSPORTS:
            ap.error("unknown transport %r" % t)
    a.gvs, a.gvsd = os.path.abspath(a.gvs), os.path.abspath(a.gvsd)
    wrap = shlex.split(a.client_wrap)
    if transports and not wrap:
        log("warning: no --client-wrap: gvs clients run with the GPU visible")
    meta, runs = {"calls": []}, []
    if a.resume and os.path.exists(a.out):
        with open(a.out) as f:
            saved = json.load(f)
        meta, runs = saved["meta"], saved["runs"]
    meta["calls"].append({"argv": sys.argv,
                          "started": time.strftime("%Y-%m-%d %H:%M:%S")})
    done = {(r["round"], r["workload"], r["target"]) for r in runs}
    start = time.monotonic()
    sock_dir = tempfile.mkdtemp(prefix="gvs-fwbench-")
    logf = open(os.path.splitext(a.out)[0] + "-gvsd.log", "ab")
    daemons = {t: Gvsd(a, t, sock_dir, logf) for t in transports}
    plan = [(rnd, w, target) for rnd in range(1, a.rounds + 1) for w in work
            for target in ["native"] + transports]
    plan = [p for p in plan if p not in done]
    try:
        for i, (rnd, w, target) in enumerate(plan):
            elapsed = time.monotonic() - start
            est = max([r["wall_s"] for r in runs
                       if (r["workload"], r["target"]) == (w, target)] or [0])
            if a.budget and elapsed + est > a.budget:
                log("budget of %.0f s: stopping with %d runs left (--resume "
                    "goes on)" % (a.budget, len(plan) - i))
                break
            cmd = [a.python, a.work, w]
            if target != "native":
                daemons[target].ensure()
                cmd = wrap + [a.gvs, "run", "--server", daemons[target].uri,
                              "--"] + cmd
            res = run_one(cmd, a.timeout)
            res.update(round=rnd, workload=w, target=target)
            runs.append(res)
            save(a.out, meta, runs)
            if res["ok"]:
                note = "%s, first op %.2f s, %.0f MiB" % (
                    fmt(res["value"], res["unit"]), res["startup_s"], res["rss_mib"])
            else:
                last = res["stderr_tail"].strip().splitlines()[-1:] or [""]
                note = "FAILED (%s): %s" % (res["error"], last[0][:200])
            log("[t+%4.0fs run %d/%d, round %d] %s %s: %s (%.1f s)" % (
                elapsed, i + 1, len(plan), rnd, w, target, note, res["wall_s"]))
    finally:
        for d in daemons.values():
            d.stop()
        logf.close()
        shutil.rmtree(sock_dir, ignore_errors=True)
    print_table(runs)
    return 0 if runs and all(r["ok"] for r in runs) else 1


if __name__ == "__main__":
    sys.exit(main())
