#!/usr/bin/env python3
"""idle.sessions.TRANSPORT: what idle sessions cost the GPU host.  Starts
gvsd on TRANSPORT, connects N clients that each make one call and then
wait, and measures the CPU time gvsd and its workers use over a window
(Linux /proc/PID/stat, utime + stime): it must stay under LIMIT percent
of one core (issue 11: 64 idle sessions under 1%).

usage: idle.py GVSD FRONTEND_DIR CLIENT TRANSPORT [--clients N]
               [--seconds S] [--limit PCT]"""

import argparse
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import gvsd_start  # noqa: E402  (tests/gvsd_start.py)

TICK = os.sysconf("SC_CLK_TCK")


def cpu_ticks(pid):
    """utime + stime of pid and its children now alive."""
    pids = [pid]
    try:
        with open("/proc/%d/task/%d/children" % (pid, pid)) as f:
            pids += [int(p) for p in f.read().split()]
    except OSError:
        pass
    total = 0
    for p in pids:
        try:
            with open("/proc/%d/stat" % p) as f:
                fields = f.read().rsplit(")", 1)[1].split()
            total += int(fields[11]) + int(fields[12])
        except OSError:
            pass
    return total, len(pids) - 1


def main(argv):
    ap = argparse.ArgumentParser()
    for name in ("gvsd", "frontend_dir", "client", "transport"):
        ap.add_argument(name)
    ap.add_argument("--clients", type=int, default=64)
    ap.add_argument("--seconds", type=float, default=10.0)
    ap.add_argument("--limit", type=float, default=1.0)
    a = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        uri = gvsd_start.endpoint(a.transport, tmp)
        gvsd = gvsd_start.start(a.gvsd, uri, tmp, ["--log-level", "warn"],
                                "max_sessions = %d\n"
                                # All connect at once, from one uid: the
                                # handshake limits are not what is tested.
                                "max_handshakes = %d\n"
                                "max_handshakes_per_peer = %d\n"
                                % ((a.clients + 8,) * 3))
        if gvsd is None:
            print("FAILED: gvsd did not start on %s" % uri)
            return 1
        clients = []
        try:
            env = dict(os.environ, GVS_SERVER=uri, LD_LIBRARY_PATH=a.frontend_dir)
            for _ in range(a.clients):
                clients.append(subprocess.Popen([a.client], env=env, stdin=subprocess.PIPE,
                                                stdout=subprocess.PIPE, text=True))
            for c in clients:
                if c.stdout.readline() == "":
                    print("FAILED: a client ended before its call")
                    return 1
            time.sleep(1.0)  # the sessions' start is not what is measured
            t0, n0 = cpu_ticks(gvsd.pid)
            time.sleep(a.seconds)
            t1, n1 = cpu_ticks(gvsd.pid)
        finally:
            for c in clients:
                c.stdin.close()
            for c in clients:
                c.wait(timeout=60)
            gvsd.terminate()
            gvsd.wait(timeout=60)
    pct = 100.0 * (t1 - t0) / TICK / a.seconds
    print("%s: %d idle sessions (%d workers): gvsd and its workers used %.2f%% "
          "of one core over %.0f s (limit %.1f%%)"
          % (a.transport, a.clients, min(n0, n1), pct, a.seconds, a.limit))
    if min(n0, n1) < a.clients:
        print("FAILED: %d workers for %d clients" % (min(n0, n1), a.clients))
        return 1
    return 0 if pct < a.limit else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
