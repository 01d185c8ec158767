#!/usr/bin/env python3
"""bench.sweep_mock.TRANSPORT: bench/sweep.cu through gvs on the mock
backend (no GPU), small sizes, so that the sweep and its tables cannot
rot where CI has no GPU.  Every cell and pipeline row must be there with
a positive rate and a CPU cost, and sweep_table.py must lay them out.

usage: test_sweep.py GVSD MOCK_PLUGIN_DIR FRONTEND_DIR SWEEP --transport T"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests"))
import gvsd_start  # noqa: E402  (tests/gvsd_start.py)
import run  # noqa: E402  (bench/run.py: its parser of "metric value unit")
import sweep_table  # noqa: E402
import sweep_targets  # noqa: E402
import tls_certs  # noqa: E402

MAX = 1 << 20


def expected():
    names, size = [], 4
    while size <= MAX:
        label = ("%dMiB" % (size >> 20) if size >= 1 << 20 else
                 "%dKiB" % (size >> 10) if size >= 1024 else "%dB" % size)
        for key, _ in sweep_table.TABLES:
            names += ["sweep_%s_%s" % (key, label), "cpu_%s_%s" % (key, label)]
        size *= 2
    for label in ("64KiB", "256KiB", "1MiB"):
        names += ["pipeline_" + label, "cpu_pipeline_" + label]
    return names


def main(argv):
    ap = argparse.ArgumentParser(description="the copy sweep on the mock")
    ap.add_argument("gvsd", help="gvsd to start")
    ap.add_argument("plugin_dir", help="the mock backend's plugins")
    ap.add_argument("frontend_dir", help="gvs's frontend libraries")
    ap.add_argument("sweep", help="bench/sweep.cu built")
    ap.add_argument("--transport", default="unix",
                    choices=("unix", "tcp", "tls", "shm", "ivshmem"))
    a = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        # tls: throwaway certificates, gvsd's in its config, the client's
        # in its environment.
        config, tls_env = "", {}
        if a.transport == "tls":
            certs = tls_certs.make(tmp)
            config = tls_certs.gvsd_config(certs)
            tls_env = tls_certs.client_env(certs)
        uri = gvsd_start.endpoint(a.transport, tmp)
        gvsd = gvsd_start.start(a.gvsd, uri, tmp, ["--plugin-dir", a.plugin_dir],
                                config)
        if gvsd is None:
            print("FAILED: gvsd did not start on %s" % uri)
            return 1
        env = dict(os.environ, GVS_SERVER=uri, LD_LIBRARY_PATH=a.frontend_dir,
                   GVS_BENCH_SERVER_PID=str(gvsd.pid), **tls_env)
        try:
            p = subprocess.run([a.sweep, "--max", "1M", "--bytes", "256K",
                                "--min-reps", "1"], env=env,
                               capture_output=True, timeout=240)
        finally:
            gvsd.terminate()
            gvsd.wait(timeout=30)
    err = p.stderr.decode(errors="replace")
    sys.stderr.write(err)
    if p.returncode != 0:
        print("FAILED: sweep exited %d" % p.returncode)
        return 1
    # gvsd's CPU time from its processes' clocks, not /proc's ticks, which
    # a cell of ten milliseconds would round to a tick or two.
    m = re.search(r"the server's CPU time: (\d+) reading\(s\) of process CPU "
                  r"clocks, (\d+) of /proc ticks", err)
    if m is None or int(m.group(1)) == 0 or int(m.group(2)) != 0:
        print("FAILED: the server's CPU time was not read from its clocks")
        return 1
    res = run.parse(p.stdout)
    bad = [m for m in expected()
           if m not in res or not (res[m][0] > 0 if not m.startswith("cpu_")
                                   else res[m][0] >= 0)]
    if bad:
        print("FAILED: missing or not positive: %s" % ", ".join(bad[:10]))
        return 1
    lines = sweep_table.tables({"native": res, a.transport: res},
                               ["native", a.transport])
    rows = [l for l in lines if l.startswith("| 4B |")]
    if len(rows) != len(sweep_table.TABLES) or "(100%)" not in rows[0]:
        print("FAILED: tables:\n" + "\n".join(lines[:20]))
        return 1
    # The same results as native and as the transport: nothing missed.
    targets = sweep_targets.lines({"native": res, a.transport: res},
                                  ["native", a.transport])
    if not any(l.startswith("* **%s**: 0 of " % a.transport)
               for l in targets):
        print("FAILED: targets:\n" + "\n".join(targets))
        return 1
    print("%d metrics, %d table lines: ok" % (len(res), len(lines)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
