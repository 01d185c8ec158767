#!/usr/bin/env python3
"""gpu.security.gvsd_death: gvsd is SIGKILLed while client D is between
calls (its worker dies with it, PR_SET_PDEATHSIG: if it lived on, D's
connection would still answer).  D's next call must fail within 2 s
with cudaErrorDevicesUnavailable and the client library must say so on
one stderr line; then a gvsd restarted on the same socket must serve a
new client at once."""

import signal
import sys

import common


def scenario(a, gvsd, env):
    d = common.Client(a.program, ["wait"], env)
    if d.read_line(60, "D: ready") != "ready":
        common.fail("D:\n" + d.transcript())
    gvsd.proc.send_signal(signal.SIGKILL)
    gvsd.proc.wait(timeout=30)
    d.say("go")
    line = d.read_line(10, "D: lost")
    rc = d.finish(30, "D")
    if rc != 0 or not line.startswith("lost cudaErrorDevicesUnavailable"):
        common.fail("D: exit status %d\n%s" % (rc, d.transcript()))
    said = [l for l in d.err if l.startswith("gvs:")]
    if len(said) != 1 or len(d.err) != 1:
        common.fail("D: expected one stderr line from gvs\n" +
                    d.transcript())
    print("D: " + line)
    print("D's stderr: " + said[0].strip())

    gvsd.start()
    fresh = common.Client(a.program, ["fresh"], env)
    fresh.finish_ok(60, "fresh client")
    print("fresh client: ok")


if __name__ == "__main__":
    sys.exit(common.driver_main(scenario))
