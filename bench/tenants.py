#!/usr/bin/env python3
"""Four PyTorch training processes sharing one GPU, natively and as four
tenants of one gvsd, and one tenant killed with SIGKILL mid-step (issue
10, item 4).

    bench/tenants.py [--gvs build/bin/gvs] [--gvsd build/bin/gvsd]
        [--client-wrap CMD] [--transport shm] [--memory-quota 16G]
        [--steps 200] [--warmup 10] [--batch 32] [--timeout 240]
        [--out tenants.json]

Each process (`tenants.py --worker RANK`, or the script --work names)
trains ResNet-50 (torchvision, random weights and data, seed RANK, cuDNN
deterministic, the same four batches in turn, all on the GPU, SGD),
--warmup steps, then says it is ready and waits for the driver's go on
stdin, so that the four time the same span; it prints one line per step
(`GVSBENCH {"ev": "step", ...}`: wall-clock time, loss) and at the end
a checksum of its whole loss curve.  A process's rate is its images per
second between its first and last step ending inside the window common to
all four (from the last go to the first finish); the aggregate is their
sum.

Three phases, one after another: four native processes; four through gvs
(`CLIENT_WRAP gvs run --server URI --`) to one gvsd started here with
`--memory-quota`; four through the same gvsd again, of which the last is
killed (SIGKILL to its process group: the wrapper, `gvs run` and the
Python process it forks) half a step after its step --steps/3 ended.  Of
the kill: the survivors' loss checksums against their own in the second
phase; each survivor's rate after the kill against before it; and
`gvs status --bytes` just before the kill and then every 0.2 s until the
killed process's sessions are gone: the memory they held and the GPU's
used memory (NVML) before and after.  Prints a Markdown summary; --out
gets every step of every process and every status taken.
"""
import argparse
import hashlib
import json
import os
import shlex
import shutil
import signal
import statistics
import struct
import subprocess
import sys
import tempfile
import threading
import time

# The gvsd the framework benchmark starts, its marker and its log; the
# environment of a native run (bench/frameworks.py, bench/run.py).
from frameworks import MARK, Gvsd, add_gvs_args, log
from run import native_env

NPROC = 4
GiB = float(1 << 30)

# The survivors' speed after the kill counts as kept above this share of
# their speed before it: with one tenant fewer it should rise, and runs
# move by a few percent on their own.
SPEED_KEPT = 0.95


def emit(ev, **kw):
    print(MARK + json.dumps(dict(ev=ev, t=time.time(), **kw)), flush=True)


def checksum(losses):
    return hashlib.sha256(struct.pack("%dd" % len(losses), *losses)).hexdigest()[:16]


def worker(a):
    """One training process: see the module's description."""
    os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
    import torch
    import torchvision
    from frameworks_work import vm_hwm_mib
    torch.manual_seed(a.worker)
    torch.backends.cudnn.benchmark = False
    torch.backends.cudnn.deterministic = True
    torch.use_deterministic_algorithms(True, warn_only=True)
    m = torchvision.models.resnet50().cuda().train()
    opt = torch.optim.SGD(m.parameters(), lr=0.01, momentum=0.9)
    g = torch.Generator(device="cuda").manual_seed(a.worker)
    data = [(torch.randn(a.batch, 3, 224, 224, device="cuda", generator=g),
             torch.randint(0, 1000, (a.batch,), device="cuda", generator=g))
            for _ in range(4)]
    losses = []

    def step():
        x, y = data[len(losses) % len(data)]
        opt.zero_grad(set_to_none=True)
        loss = torch.nn.functional.cross_entropy(m(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    for _ in range(a.warmup):
        step()
    emit("ready", rank=a.worker, pid=os.getpid(),
         device=torch.cuda.get_device_name(), torch=torch.__version__)
    sys.stdin.readline()
    emit("go")
    t = time.perf_counter()
    for i in range(a.steps):
        step()
        now = time.perf_counter()
        emit("step", i=i, loss=losses[-1], img_s=a.batch / (now - t))
        t = now
    emit("done", checksum=checksum(losses), losses=losses, rss_mib=vm_hwm_mib())


class Client:
    """One training process, its lines read as they come."""

    def __init__(self, rank, cmd, env):
        self.rank, self.ev, self.steps, self.eof, self.reaped = rank, {}, [], False, False
        self.err = tempfile.TemporaryFile()
        self.cond = threading.Condition()
        self.p = subprocess.Popen(cmd, env=env, stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=self.err,
                                  start_new_session=True)
        threading.Thread(target=self.read, daemon=True).start()

    def read(self):
        for line in self.p.stdout:
            line = line.decode(errors="replace")
            if not line.startswith(MARK):
                continue
            rec = json.loads(line[len(MARK):])
            with self.cond:
                if rec["ev"] == "step":
                    self.steps.append(rec)
                else:
                    self.ev[rec["ev"]] = rec
                self.cond.notify_all()
        with self.cond:
            self.eof = True
            self.cond.notify_all()

    def wait_for(self, pred, deadline):
        """Whether pred(self) came true before the deadline (monotonic)."""
        with self.cond:
            while not pred(self):
                left = deadline - time.monotonic()
                if self.eof or left <= 0:
                    return pred(self)
                self.cond.wait(min(left, 1.0))
            return True

    def go(self):
        try:
            self.p.stdin.write(b"go\n")
            self.p.stdin.close()
        except OSError:
            pass

    def kill(self):
        """SIGKILL to the whole group, the leader still unreaped (so the
        group's id is not reused), then reaped."""
        if not self.reaped:
            try:
                os.killpg(self.p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.p.wait()
            self.reaped = True

    def result(self):
        self.err.seek(0)
        done = self.ev.get("done")
        res = {"rank": self.rank, "rc": self.p.returncode, "ok": bool(done) and
               self.p.returncode == 0, "steps": [(s["t"], s["loss"]) for s in self.steps],
               "t_go": self.ev.get("go", {}).get("t"), "ready": self.ev.get("ready")}
        if done:
            res.update(checksum=done["checksum"], losses=done["losses"],
                       rss_mib=done["rss_mib"])
        if not res["ok"]:
            res["stderr_tail"] = self.err.read().decode(errors="replace")[-3000:]
        return res


def gvs_status(a, uri):
    """`gvs status --bytes` read: the GPUs' used memory and the sessions."""
    p = subprocess.run([a.gvs, "status", "--server", uri, "--bytes"],
                       env=native_env(), capture_output=True, text=True, timeout=30)
    snap = {"t": time.time(), "rc": p.returncode, "gpus": [], "sessions": []}
    part = None
    for line in p.stdout.splitlines():
        f = line.split()
        if not f:
            part = None
        elif f[:2] == ["GPU", "NAME"] or f[0] == "SESSION":
            part = f[0]
        elif part == "GPU" and len(f) >= 4 and f[-2] == "/":
            snap["gpus"].append({"used": int(f[-3]), "total": int(f[-1])})
        elif part == "SESSION" and len(f) >= 9 and f[0].isdigit():
            snap["sessions"].append({"id": int(f[0]), "worker_pid": int(f[1]),
                                     "calls": int(f[3]), "memory": int(f[6]),
                                     "quota": f[8], "identity": " ".join(f[9:])})
    return snap


def mem(snap, ids=None):
    return sum(s["memory"] for s in snap["sessions"] if ids is None or s["id"] in ids)


def gpu_used(snap):
    return sum(g["used"] for g in snap["gpus"]) if snap["gpus"] else None


def kill_one(a, c, uri, deadline):
    """Kills c half a step after its step --steps/3, and watches gvs
    status until its sessions are gone."""
    at = max(2, a.steps // 3)
    if not c.wait_for(lambda s: len(s.steps) >= at, deadline):
        return {"error": "rank %d never reached step %d" % (c.rank, at)}
    before = gvs_status(a, uri)
    pid = c.ev["ready"]["pid"]
    ids = {s["id"] for s in before["sessions"] if "pid=%d" % pid in s["identity"].split()}
    with c.cond:
        ts = [s["t"] for s in c.steps]
    dt = statistics.median(y - x for x, y in zip(ts, ts[1:]))
    time.sleep(max(0.0, ts[-1] + dt / 2 - time.time()))
    t_kill = time.time()
    c.kill()
    c.wait_for(lambda s: s.eof, deadline)  # its last lines read
    k = {"rank": c.rank, "pid": pid, "t_kill": t_kill, "step": len(c.steps),
         "into_step_s": t_kill - c.steps[-1]["t"], "median_step_s": dt,
         "status_before": before, "session_ids": sorted(ids)}
    # Over tcp a session names no pid: the victim's sessions are then
    # those gone from the list.
    after = before
    while time.time() - t_kill < a.reclaim_timeout:
        time.sleep(0.2)
        after = gvs_status(a, uri)
        now = {s["id"] for s in after["sessions"]}
        if ids and not ids & now:
            break
        if not ids and len(now) < len(before["sessions"]):
            ids = {s["id"] for s in before["sessions"]} - now
            k["session_ids"] = sorted(ids)
            break
    now = {s["id"] for s in after["sessions"]}
    k.update(status_after=after, reclaim_s=after["t"] - t_kill,
             reclaimed=bool(ids) and not ids & now,
             victim_mem_before=mem(before, ids), victim_mem_after=mem(after, ids),
             others_mem_before=mem(before) - mem(before, ids),
             others_mem_after=mem(after) - mem(after, ids),
             gpu_used_before=gpu_used(before), gpu_used_after=gpu_used(after))
    return k


def run_phase(a, name, prefix, status_uri=None, victim=None):
    def cmd(rank):
        return prefix + [a.python, a.work, "--worker", str(rank), "--steps", str(a.steps),
                         "--warmup", str(a.warmup), "--batch", str(a.batch)]
    env = native_env()
    env.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
    t0 = time.monotonic()
    deadline = t0 + a.timeout
    clients = [Client(r, cmd(r), env) for r in range(NPROC)]
    res = {"phase": name, "cmd": cmd(0)}
    try:
        if not all(c.wait_for(lambda s: "ready" in s.ev, deadline) for c in clients):
            res["error"] = "not every process got ready"
        else:
            for c in clients:
                c.go()
            if victim is not None:
                res["kill"] = kill_one(a, clients[victim], status_uri, deadline)
            for c in clients:
                if not c.wait_for(lambda s: s.eof, deadline):
                    res["error"] = "timed out after %d s" % a.timeout
    finally:
        for c in clients:
            c.kill()
    res["wall_s"] = time.monotonic() - t0
    res["procs"] = [c.result() for c in clients]
    if status_uri:  # the sessions of the processes gone, within a few seconds
        for _ in range(25):
            res["status_end"] = gvs_status(a, status_uri)
            if not res["status_end"]["sessions"]:
                break
            time.sleep(0.2)
    log("%s: %.0f s, %s" % (name, res["wall_s"], ", ".join(
        "rank %d %s" % (p["rank"], "ok" if p["ok"] else "FAILED (rc %s)" % p["rc"])
        for p in res["procs"])))
    for p in res["procs"]:
        if not p["ok"] and not (victim == p["rank"] and "kill" in res):
            log("rank %d stderr: %s" % (p["rank"], p["stderr_tail"][-600:]))
    return res


def rate(p, batch, t0, t1):
    """Images per second between p's first and last step ends in [t0, t1]."""
    ts = [t for t, _ in p["steps"] if t0 <= t <= t1]
    return batch * (len(ts) - 1) / (ts[-1] - ts[0]) if len(ts) > 1 and ts[-1] > ts[0] else None


def window_rates(a, ph):
    procs = ph["procs"]
    if not all(p["ok"] for p in procs):
        return None
    t0, t1 = max(p["t_go"] for p in procs), min(p["steps"][-1][0] for p in procs)
    rates = [rate(p, a.batch, t0, t1) for p in procs]
    ph["window"] = {"t0": t0, "t1": t1, "rates": rates,
                    "aggregate": None if None in rates else sum(rates)}
    return ph["window"]


def analyse_kill(a, ph, ref):
    k = ph.get("kill")
    if not k or "t_kill" not in k:
        return None
    surv = [p for p in ph["procs"] if p["rank"] != k["rank"]]
    t0 = max(p["t_go"] for p in ph["procs"] if p["t_go"])
    t1 = min(p["steps"][-1][0] for p in surv) if all(p["steps"] for p in surv) else 0
    rows = []
    for p in surv:
        r = next((q for q in (ref or {}).get("procs", []) if q["rank"] == p["rank"]), {})
        before, after = rate(p, a.batch, t0, k["t_kill"]), rate(p, a.batch, k["t_kill"], t1)
        diff = (max(abs(x - y) for x, y in zip(p["losses"], r["losses"]))
                if p.get("losses") and r.get("losses") else None)
        rows.append({"rank": p["rank"], "ok": p["ok"], "checksum": p.get("checksum"),
                     "ref_checksum": r.get("checksum"),
                     "equal": p["ok"] and p.get("checksum") == r.get("checksum"),
                     "max_loss_diff": diff, "before": before, "after": after})
    ok = all(x["before"] and x["after"] for x in rows)
    b = sum(x["before"] for x in rows) if ok else None
    f = sum(x["after"] for x in rows) if ok else None
    k["survivors"] = rows
    k["aggregate_before"], k["aggregate_after"] = b, f
    k["ratio"] = f / b if ok else None
    return k


def fmt(v, f="{:,.0f}"):
    return "-" if v is None else f.format(v)


def gib(v):
    return "-" if v is None else "%.2f GiB" % (v / GiB)


def summary(a, phases):
    nat, gvs, kil = (phases.get(n) for n in ("native", "gvs", "kill"))
    wn, wg = (window_rates(a, p) if p else None for p in (nat, gvs))
    ready = next((p["ready"] for ph in (nat, gvs) if ph for p in ph["procs"] if p["ready"]), {})
    lines = ["device: %s, torch %s; %d ResNet-50 training processes, batch %d, "
             "%d steps after %d of warm-up; gvs over %s, --memory-quota %s"
             % (ready.get("device", "?"), ready.get("torch", "?"), NPROC, a.batch,
                a.steps, a.warmup, a.transport, a.memory_quota), "",
             "| | native | gvs (%s) |" % a.transport, "|---|---|---|"]
    agg_n, agg_g = (w and w["aggregate"] for w in (wn, wg))
    ratio = " (%.0f%%)" % (100 * agg_g / agg_n) if agg_n and agg_g else ""
    lines.append("| aggregate img/s, common window | %s | %s%s |"
                 % (fmt(agg_n), fmt(agg_g), ratio))
    lines.append("| img/s per process | %s | %s |" % tuple(
        ", ".join(fmt(r) for r in w["rates"]) if w else "failed" for w in (wn, wg)))
    same = ("yes" if all(p["checksum"] == q["checksum"] for p, q in
                         zip(nat["procs"], gvs["procs"])) else "no") if wn and wg else "-"
    lines.append("| loss curves bitwise equal to native | | %s |" % same)
    k = analyse_kill(a, kil, gvs) if kil else None
    if k:
        rows = k["survivors"]
        lines += ["", "Kill: rank %d SIGKILLed %.0f ms into its step %d (median step %.0f ms)."
                  % (k["rank"], 1000 * k["into_step_s"], k["step"] + 1,
                     1000 * k["median_step_s"]), "",
                  "| | |", "|---|---|",
                  "| survivors' loss checksums equal to the gvs phase | %s (%s) |" % (
                      "yes" if all(x["equal"] for x in rows) else "no",
                      ", ".join("%d: %s vs %s%s" % (
                          x["rank"], x["checksum"], x["ref_checksum"],
                          "" if x["equal"] or x["max_loss_diff"] is None
                          else ", max loss difference %.3g" % x["max_loss_diff"])
                          for x in rows)),
                  "| survivors' img/s after / before the kill | %s, not lower: %s (%s) |" % (
                      fmt(k["ratio"], "{:.2f}"),
                      "yes" if k["ratio"] and k["ratio"] >= SPEED_KEPT else "no", ", ".join(
                          "%d: %s -> %s" % (x["rank"], fmt(x["before"]), fmt(x["after"]))
                          for x in rows)),
                  "| killed session's memory before / after | %s / %s (%s in %.1f s) |" % (
                      gib(k["victim_mem_before"]), gib(k["victim_mem_after"]),
                      "session gone" if k["reclaimed"] else "NOT gone", k["reclaim_s"]),
                  "| other sessions' memory before / after | %s / %s |" % (
                      gib(k["others_mem_before"]), gib(k["others_mem_after"])),
                  "| GPU memory used (NVML) before / after | %s / %s |" % (
                      gib(k["gpu_used_before"]), gib(k["gpu_used_after"]))]
    elif kil:
        lines += ["", "Kill phase failed: %s" % (kil.get("kill", {}).get("error")
                                                 or kil.get("error"))]
    # Passed: every phase run went through, and the kill as item 4 says.
    ok = all(w for w, p in ((wn, nat), (wg, gvs)) if p) and (not kil or bool(
        k and k["reclaimed"] and k["ratio"] and k["ratio"] >= SPEED_KEPT and
        all(x["equal"] for x in k["survivors"])))
    return "\n".join(lines), ok


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_gvs_args(ap)
    ap.add_argument("--transport", default="shm", choices=("shm", "unix", "tcp"))
    ap.add_argument("--memory-quota", default="16G", help="gvsd's quota per session")
    ap.add_argument("--steps", type=int, default=200, help="timed steps per process")
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--timeout", type=int, default=240, help="seconds per phase")
    ap.add_argument("--reclaim-timeout", type=float, default=15,
                    help="seconds to wait for the killed session to go")
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--work", default=os.path.abspath(__file__),
                    help="the training script, called with --worker RANK ...")
    ap.add_argument("--phases", default="native,gvs,kill")
    ap.add_argument("--out", default="tenants.json")
    ap.add_argument("--worker", type=int, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.worker is not None:
        return worker(a)
    a.gvs, a.gvsd = os.path.abspath(a.gvs), os.path.abspath(a.gvsd)
    a.gvsd_arg = ["--memory-quota", a.memory_quota] + a.gvsd_arg
    wrap = shlex.split(a.client_wrap)
    if not wrap:
        log("warning: no --client-wrap: gvs clients run with the GPU visible")
    sock_dir = tempfile.mkdtemp(prefix="gvs-tenants-")
    # gvs status over a Unix socket: as the same uid it sees every
    # session; over tcp it would see none.
    status_uri = "unix://%s/status.sock" % sock_dir
    a.gvsd_arg += ["--listen", status_uri]
    logf = open(os.path.splitext(a.out)[0] + "-gvsd.log", "ab")
    gvsd = Gvsd(a, a.transport, sock_dir, logf)
    out = {"meta": {"argv": sys.argv, "started": time.strftime("%Y-%m-%d %H:%M:%S")},
           "phases": {}}
    try:
        for name in a.phases.split(","):
            if name == "native":
                ph = run_phase(a, name, [])
            else:
                gvsd.ensure()
                ph = run_phase(a, name, wrap + [a.gvs, "run", "--server", gvsd.uri, "--"],
                               status_uri, NPROC - 1 if name == "kill" else None)
                ph["gvsd_alive"] = gvsd.proc.poll() is None
            out["phases"][name] = ph
            text, ok = summary(a, out["phases"])
            out["summary"], out["ok"] = text, ok
            with open(a.out + ".tmp", "w") as f:
                json.dump(out, f, indent=1)
            os.replace(a.out + ".tmp", a.out)
    finally:
        gvsd.stop()
        logf.close()
        shutil.rmtree(sock_dir, ignore_errors=True)
    print(out["summary"])
    return 0 if out["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
