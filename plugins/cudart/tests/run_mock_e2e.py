#!/usr/bin/env python3
"""cudart.mock_e2e: builds mock_e2e.cu with nvcc -cudart shared, serves it
with a private gvsd whose plugin dir holds the mock-backed gvs-cudart.so,
and runs it against our libcudart.so.13.

usage: run_mock_e2e.py GVSD MOCK_PLUGIN_DIR FRONTEND_DIR NVCC SOURCE
                      [--transport unix|shm|tcp|tls|ivshmem]
                      [--gvsd-arg ARG]...
                      [--env NAME=VALUE]... [--arg ARG]...
--transport picks the communicator (unix by default; tls: on a free
loopback port, with mutual TLS and throwaway certificates from
bench/tls_certs.py, the client's given through GVS_TLS_*), --gvsd-arg adds an argument to gvsd's command line, --env sets a variable
in the program's environment, --arg passes an argument to the program.
A program nvcc cannot build is a failure: the test would check nothing."""

import argparse
import os
import socket
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "..", "bench"))
import tls_certs  # noqa: E402


def parse(argv):
    ap = argparse.ArgumentParser()
    for name in ("gvsd", "plugin_dir", "frontend_dir", "nvcc", "source"):
        ap.add_argument(name)
    ap.add_argument("--transport",
                    choices=("unix", "shm", "tcp", "tls", "ivshmem"),
                    default="unix")
    ap.add_argument("--gvsd-arg", action="append", default=[])
    ap.add_argument("--env", action="append", default=[])
    ap.add_argument("--arg", action="append", default=[])
    return ap.parse_args(argv)


def main(argv):
    a = parse(argv)
    gvsd, plugin_dir, frontend_dir, nvcc, source = (
        a.gvsd, a.plugin_dir, a.frontend_dir, a.nvcc, a.source)
    with tempfile.TemporaryDirectory() as tmp:
        exe = os.path.join(tmp, "mock_e2e")
        r = subprocess.run([nvcc, "-cudart", "shared", "-o", exe, source],
                           capture_output=True, text=True)
        if r.returncode != 0:
            sys.stderr.write(r.stderr)
            print("FAILED: nvcc could not build the program")
            return 1
        sock = "%s://%s/gvsd.sock" % (a.transport, tmp)
        conf = os.path.join(tmp, "gvs.conf")
        with open(conf, "w") as f:
            f.write("# empty: the command line says it all\n")
        gvsd_conf, tls_env = conf, {}
        if a.transport == "tcp":
            with socket.socket() as s:
                s.bind(("127.0.0.1", 0))
                sock = "tcp://127.0.0.1:%d" % s.getsockname()[1]
        if a.transport == "tls":
            certs = tls_certs.make(tmp)
            with socket.socket() as s:
                s.bind(("127.0.0.1", 0))
                sock = "tls://127.0.0.1:%d" % s.getsockname()[1]
            gvsd_conf = os.path.join(tmp, "gvsd.conf")
            with open(gvsd_conf, "w") as f:
                f.write(tls_certs.gvsd_config(certs))
            tls_env = tls_certs.client_env(certs)
        rfd, wfd = os.pipe()
        server = subprocess.Popen(
            [gvsd, "--listen", sock, "--plugin-dir", plugin_dir,
             "--log-level", "warn", "--ready-fd", str(wfd),
             "--config", gvsd_conf] + a.gvsd_arg,
            pass_fds=(wfd,))
        os.close(wfd)
        try:
            with os.fdopen(rfd) as ready:
                if not ready.read().startswith("ready"):
                    print("FAIL: gvsd did not get ready")
                    return 1
            env = dict(os.environ)
            env["GVS_SERVER"] = sock
            env["GVS_CONFIG"] = conf
            env["LD_LIBRARY_PATH"] = frontend_dir
            env.update(tls_env)
            for kv in a.env:
                name, _, value = kv.partition("=")
                env[name] = value
            r = subprocess.run([exe] + a.arg, env=env, capture_output=True,
                               text=True, timeout=240)
        finally:
            server.terminate()
            server.wait(timeout=30)
        sys.stdout.write(r.stdout)
        sys.stderr.write(r.stderr)
        if r.returncode != 0 or r.stdout.strip().splitlines()[-1:] != ["ok"]:
            print("FAIL: exit status %d" % r.returncode)
            return 1
        return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
