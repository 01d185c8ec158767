"""What the drivers of tests/gpu/security share: a private gvsd on a Unix
socket of a temporary directory, and clients pointed at it through our
libcudart.so.13 (GVS_SERVER, LD_LIBRARY_PATH), as tests/gpu/compare.py
runs them.  Every driver takes --gvsd GVSD --frontend DIR --program EXE."""

import argparse
import os
import queue
import subprocess
import sys
import tempfile
import threading
import time


def parse(argv):
    ap = argparse.ArgumentParser()
    ap.add_argument("--gvsd", required=True)
    ap.add_argument("--frontend", required=True)
    ap.add_argument("--program", required=True)
    return ap.parse_args(argv)


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def with_gvsd(argv, scenario, extra=()):
    """Parses argv, starts a private gvsd (with the extra arguments) in a
    temporary directory, runs scenario(args, gvsd, env), env being what
    its clients run with, and stops gvsd whatever happened."""
    a = parse(argv)
    with tempfile.TemporaryDirectory() as tmp:
        gvsd = Gvsd(a.gvsd, tmp, extra)
        gvsd.start()
        try:
            scenario(a, gvsd, gvsd.client_env(a.frontend))
        finally:
            gvsd.stop()


def driver_main(scenario, extra=(), say_ok=True):
    """A driver's main: with_gvsd on the command line, then "ok" (unless
    not say_ok); the exit status."""
    with_gvsd(sys.argv[1:], scenario, extra)
    if say_ok:
        print("ok")
    return 0


class Gvsd:
    """gvsd listening on unix://TMP/gvsd.sock with an empty config file
    (nothing of the machine's configuration applies)."""

    def __init__(self, gvsd, tmp, extra=()):
        self.gvsd, self.tmp, self.extra = gvsd, tmp, list(extra)
        self.sock = os.path.join(tmp, "gvsd.sock")
        self.uri = "unix://" + self.sock
        self.conf = os.path.join(tmp, "gvs.conf")
        with open(self.conf, "w") as f:
            f.write("# empty: the command line says it all\n")
        self.proc = None

    def start(self):
        r, w = os.pipe()
        env = {k: v for k, v in os.environ.items() if not k.startswith("GVS_")}
        env.pop("LD_LIBRARY_PATH", None)
        self.proc = subprocess.Popen(
            [self.gvsd, "--listen", self.uri, "--config", self.conf,
             "--log-level", "warn", "--ready-fd", str(w)] + self.extra,
            pass_fds=(w,), env=env)
        os.close(w)
        with os.fdopen(r) as ready:
            if ready.read().strip() != "ready":
                self.proc.kill()
                fail("gvsd did not start on " + self.uri)

    def stop(self):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def client_env(self, frontend):
        env = {k: v for k, v in os.environ.items() if not k.startswith("GVS_")}
        env["GVS_SERVER"] = self.uri
        env["GVS_CONFIG"] = self.conf
        env["LD_LIBRARY_PATH"] = frontend
        return env


class Client:
    """A client program with its stdin open; its stdout is read line by
    line by a thread of its own (so that waiting for a line has a
    deadline), its stderr kept whole."""

    def __init__(self, program, args, env):
        self.proc = subprocess.Popen(
            [program] + list(args), env=env, stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            bufsize=1)
        self.lines = queue.Queue()
        self.out, self.err = [], []
        self.readers = [
            threading.Thread(target=self._read_out, daemon=True),
            threading.Thread(target=self._read_err, daemon=True)]
        for t in self.readers:
            t.start()

    def _read_out(self):
        for line in self.proc.stdout:
            self.out.append(line)
            self.lines.put(line.strip())
        self.lines.put(None)

    def _read_err(self):
        for line in self.proc.stderr:
            self.err.append(line)

    def say(self, line):
        """Sends the client a line; fails the test if it has ended."""
        try:
            self.proc.stdin.write(line + "\n")
            self.proc.stdin.flush()
        except BrokenPipeError:
            rc = self.finish(30, "client")
            fail("the client ended (status %d) before '%s'\n%s" %
                 (rc, line, self.transcript()))

    def read_line(self, timeout_s, what):
        """The next stdout line, within timeout_s; fails the test (after
        killing the client) when the client ends, says nothing or says
        FAIL."""
        try:
            line = self.lines.get(timeout=timeout_s)
        except queue.Empty:
            line = None
        if line is None or line.startswith("FAIL"):
            self.proc.kill()
            self.finish(30, what)
            fail("%s: %s within %.0f s\n%s" %
                 (what, line or "no line from the client", timeout_s,
                  self.transcript()))
        return line

    def finish(self, timeout_s, what):
        """Waits for the client to end; its exit status."""
        try:
            self.proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            for t in self.readers:
                t.join(timeout=10)
            fail("%s: still running after %.0f s\n%s" %
                 (what, timeout_s, self.transcript()))
        for t in self.readers:
            t.join(timeout=10)
        return self.proc.returncode

    def finish_ok(self, timeout_s, what):
        """Waits for the client to end; fails the test unless it exited 0
        with "ok" as its last stdout line."""
        rc = self.finish(timeout_s, what)
        if rc != 0 or self.out[-1:] != ["ok\n"]:
            fail("%s: exit status %d\n%s" % (what, rc, self.transcript()))

    def transcript(self):
        return ("---- stdout ----\n" + "".join(self.out) +
                "---- stderr ----\n" + "".join(self.err))


def now():
    return time.monotonic()
