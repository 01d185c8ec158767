#!/usr/bin/env python3
"""prometheus.scrape: gvsd's metrics as a real Prometheus reads them.

A private gvsd, whose cudart plugin runs on the CUDA runtime mock and
which finds the GPUs of the NVML stand-in (NVML_DIR: tests/nvml),
serves SESSIONS sessions of sessions.cu one after the other, while a
Prometheus scrapes its metrics_listen endpoint every second with the
example alerts (docs/prometheus/gvs-alerts.yml) loaded; the test then
asks Prometheus, through its HTTP API, for the cumulative counters,
which must count every session although each worker has exited, and,
while one more session holds memory, for the per-GPU gauges.
`promtool check metrics` must pass on the endpoint's own output, and
`promtool check rules` and `promtool test rules` (gvs-alerts.test.yml)
on the alerts, as `cmake --install` of BUILD_DIR puts them under
share/doc/gvs.

usage: run_prometheus.py GVSD MOCK_PLUGIN_DIR NVML_DIR FRONTEND_DIR NVCC
                         SOURCE RULES RULES_TEST CMAKE BUILD_DIR

prometheus and promtool come from Debian's `prometheus` package.  When
they are missing the test is skipped with exit status 77, which CTest
reports as skipped, unless GVS_REQUIRE_PROMETHEUS=1, which CI sets after
installing them (.ci/run): then their absence is a failure."""

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request

SESSIONS = 3
SKIP = 77
# What the held session has on the mock's device 0: 4096 ints, a quarter
# of each session's quota.
HELD_BYTES = 16384
QUOTA = "64K"
GPU0 = 'gpu="0",uuid="GPU-00000000-0000-0000-0000-000000000000"'


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def get(url, timeout=5):
    with urllib.request.urlopen(url, timeout=timeout) as r:
        return r.read().decode()


def query(base, expr):
    """The instant vector expr evaluates to, as {labels: value}."""
    url = "%s/api/v1/query?%s" % (base, urllib.parse.urlencode({"query": expr}))
    reply = json.loads(get(url))
    if reply.get("status") != "success":
        raise RuntimeError("query %s: %s" % (expr, reply))
    return {json.dumps(r["metric"], sort_keys=True): float(r["value"][1])
            for r in reply["data"]["result"]}


def wait_for(what, check, timeout=60):
    """Calls check() until it returns something true; that, or None."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            got = check()
        except (OSError, ValueError, RuntimeError):
            got = None
        if got:
            return got
        time.sleep(0.25)
    print("FAIL: %s within %d s" % (what, timeout))
    return None


def run(cmd, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    sys.stdout.write(r.stdout)
    sys.stdout.write(r.stderr)
    return r.returncode


def check_rules(promtool, rules, rules_test, cmake, build_dir, tmp):
    """The alerts as installed: the file of the source tree, under
    share/doc/gvs, which promtool accepts and whose unit tests pass."""
    prefix = os.path.join(tmp, "prefix")
    r = subprocess.run([cmake, "--install", build_dir, "--prefix", prefix],
                       capture_output=True, text=True)
    installed = os.path.join(prefix, "share", "doc", "gvs",
                             os.path.basename(rules))
    if r.returncode != 0 or not os.path.isfile(installed):
        sys.stdout.write(r.stdout + r.stderr)
        print("FAIL: cmake --install put no %s" % installed)
        return False
    with open(rules) as a, open(installed) as b:
        if a.read() != b.read():
            print("FAIL: %s is not %s" % (installed, rules))
            return False
    print("$ promtool check rules <prefix>/share/doc/gvs/%s"
          % os.path.basename(rules))
    if run([promtool, "check", "rules", installed]) != 0:
        return False
    print("$ promtool test rules %s" % rules_test)
    # rule_files in the test are relative to it.
    return run([promtool, "test", "rules", os.path.basename(rules_test)],
               cwd=os.path.dirname(rules_test)) == 0


def start_gvsd(gvsd, plugin_dir, nvml_dir, tmp, metrics_port):
    conf = os.path.join(tmp, "gvsd.conf")
    with open(conf, "w") as f:
        f.write("metrics_listen = tcp://127.0.0.1:%d\n" % metrics_port)
    sock = "unix://%s/gvsd.sock" % tmp
    rfd, wfd = os.pipe()
    log = open(os.path.join(tmp, "gvsd.log"), "w")
    env = dict(os.environ)
    env["LD_LIBRARY_PATH"] = nvml_dir
    server = subprocess.Popen(
        [gvsd, "--listen", sock, "--plugin-dir", plugin_dir, "--config",
         conf, "--log-level", "warn", "--memory-quota", QUOTA,
         "--ready-fd", str(wfd)],
        pass_fds=(wfd,), stderr=log, env=env)
    os.close(wfd)
    with os.fdopen(rfd) as ready:
        if not ready.read().startswith("ready"):
            server.wait(timeout=30)
            return None, sock
    return server, sock


def start_prometheus(prometheus, tmp, rules, metrics_port, web_port):
    conf = os.path.join(tmp, "prometheus.yml")
    with open(conf, "w") as f:
        f.write("global:\n"
                "  scrape_interval: 1s\n"
                "  evaluation_interval: 1s\n"
                "rule_files: [%s]\n"
                "scrape_configs:\n"
                "  - job_name: gvsd\n"
                "    static_configs:\n"
                "      - targets: ['127.0.0.1:%d']\n" % (rules, metrics_port))
    log = open(os.path.join(tmp, "prometheus.log"), "w")
    return subprocess.Popen(
        [prometheus, "--config.file", conf,
         "--storage.tsdb.path", os.path.join(tmp, "data"),
         "--web.listen-address", "127.0.0.1:%d" % web_port,
         "--log.level", "warn"],
        stdout=log, stderr=subprocess.STDOUT)


def client_env(sock, frontend_dir, tmp):
    conf = os.path.join(tmp, "client.conf")
    with open(conf, "w") as f:
        f.write("# empty: GVS_SERVER says it all\n")
    env = dict(os.environ)
    env["GVS_SERVER"] = sock
    env["GVS_CONFIG"] = conf
    env["LD_LIBRARY_PATH"] = frontend_dir
    return env


def sessions(exe, env):
    for i in range(SESSIONS):
        r = subprocess.run([exe], env=env, capture_output=True, text=True,
                           timeout=120)
        if r.returncode != 0 or r.stdout.strip().splitlines()[-1:] != ["ok"]:
            sys.stdout.write(r.stdout + r.stderr)
            print("FAIL: session %d exited with %d" % (i + 1, r.returncode))
            return False
    return True


def check_endpoint(promtool, metrics_port):
    """promtool's linter on what gvsd serves: silent when it passes."""
    text = get("http://127.0.0.1:%d/metrics" % metrics_port)
    r = subprocess.run([promtool, "check", "metrics"], input=text,
                       capture_output=True, text=True)
    print("$ promtool check metrics < http://127.0.0.1:%d/metrics: exit %d%s"
          % (metrics_port, r.returncode, (r.stdout + r.stderr).rstrip()))
    return r.returncode == 0 and (r.stdout + r.stderr).strip() == ""


def check_prometheus(base):
    """Prometheus's own view: gvsd up, every session counted, the alerts
    loaded and healthy."""
    want = float(SESSIONS)
    started = wait_for(
        "gvs_sessions_started_total reaching %d in Prometheus" % SESSIONS,
        lambda: [v for v in query(base, "gvs_sessions_started_total").values()
                 if v == want])
    if not started:
        print(query(base, "gvs_sessions_started_total"))
        return False
    ok = True
    for expr, test in (
            ('up{job="gvsd"}', lambda v: v == 1),
            ("gvs_sessions_started_total", lambda v: v == want),
            ('gvs_sessions_ended_total{reason="closed"}', lambda v: v == want),
            ('gvs_calls_total{plugin="cudart"}', lambda v: v >= 5 * want),
            ('gvs_bytes_total{direction="in"}', lambda v: v > 0),
            ("gvs_sessions", lambda v: v == 0)):
        got = query(base, expr)
        print("query %s -> %s" % (expr, list(got.values())))
        if len(got) != 1 or not test(list(got.values())[0]):
            print("FAIL: %s is %s" % (expr, got))
            ok = False
    for expr in ("gvs_sessions_quota_used_max_ratio",
                 "gvs_gpu_memory_bytes{%s}" % GPU0,
                 "gvs_gpu_sessions{%s}" % GPU0):
        print("query %s -> %s" % (expr, list(query(base, expr).values())))
    groups = json.loads(get(base + "/api/v1/rules"))["data"]["groups"]
    rules = [r for g in groups for r in g["rules"]]
    print("alert rules loaded: %s" % ", ".join(
        "%s (%s)" % (r["name"], r["health"]) for r in rules))
    if len(rules) != 4 or any(r["health"] != "ok" for r in rules):
        print("FAIL: the alerts are not all loaded and healthy")
        ok = False
    return ok


def check_held(exe, env, base):
    """One more session holds memory on the mock's device 0: Prometheus
    sees it on NVML's GPU 0, and no longer once the session ends."""
    held = subprocess.Popen([exe, "hold"], env=env, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)
    try:
        ok = held.stdout.readline().strip() == "holding"
        for expr, want in (("gvs_gpu_memory_bytes{%s}" % GPU0, HELD_BYTES),
                           ("gvs_gpu_sessions{%s}" % GPU0, 1),
                           ("gvs_sessions_quota_used_max_ratio", 0.25),
                           ("gvs_sessions", 1)):
            got = ok and wait_for(
                "%s reaching %g in Prometheus" % (expr, want),
                lambda: [v for v in query(base, expr).values() if v == want])
            print("query %s -> %s" % (expr, got))
            ok = ok and bool(got)
    finally:
        held.stdin.close()
        out = held.stdout.read()
        held.wait(timeout=60)
    if held.returncode != 0 or out.strip().splitlines()[-1:] != ["ok"]:
        print("FAIL: the held session exited with %d: %s" %
              (held.returncode, out))
        return False
    return ok and bool(wait_for(
        "gvs_gpu_sessions{%s} back to 0" % GPU0,
        lambda: [v for v in query(base, "gvs_gpu_sessions{%s}" % GPU0
                                  ).values() if v == 0]))


def main(argv):
    if len(argv) != 10:
        print(__doc__)
        return 2
    (gvsd, plugin_dir, nvml_dir, frontend_dir, nvcc, source, rules,
     rules_test, cmake, build_dir) = argv
    prometheus, promtool = shutil.which("prometheus"), shutil.which("promtool")
    if prometheus is None or promtool is None:
        if os.environ.get("GVS_REQUIRE_PROMETHEUS") == "1":
            print("FAIL: prometheus and promtool are required "
                  "(apt-get install prometheus)")
            return 1
        print("SKIP: no prometheus or promtool on PATH "
              "(apt-get install prometheus)")
        return SKIP
    with tempfile.TemporaryDirectory() as tmp:
        if not check_rules(promtool, rules, rules_test, cmake, build_dir,
                           tmp):
            print("FAIL: the example alerts")
            return 1
        exe = os.path.join(tmp, "sessions")
        if run([nvcc, "-cudart", "shared", "-o", exe, source]) != 0:
            print("FAIL: nvcc could not build the program")
            return 1
        metrics_port, web_port = free_port(), free_port()
        server, sock = start_gvsd(gvsd, plugin_dir, nvml_dir, tmp,
                                  metrics_port)
        if server is None:
            print("FAIL: gvsd did not get ready")
            return 1
        prom = start_prometheus(prometheus, tmp, rules, metrics_port,
                                web_port)
        base = "http://127.0.0.1:%d" % web_port
        env = client_env(sock, frontend_dir, tmp)
        try:
            ok = (wait_for("Prometheus to get ready",
                           lambda: get(base + "/-/ready"))
                  and sessions(exe, env)
                  and check_endpoint(promtool, metrics_port)
                  and check_prometheus(base)
                  and check_held(exe, env, base))
        finally:
            prom.terminate()
            server.terminate()
            prom.wait(timeout=30)
            server.wait(timeout=30)
        if not ok:
            for name in ("gvsd.log", "prometheus.log"):
                with open(os.path.join(tmp, name)) as f:
                    print("--- %s\n%s" % (name, f.read()[-4000:]))
            return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
