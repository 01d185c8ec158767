#!/usr/bin/env python3
"""gpu.security.fault: client A (fault bad) faults on an illegal address
while client B (fault good), started at the same time on the same gvsd,
computes; B's results must be right, and a new client C afterwards must
work normally."""

import sys

import common


def scenario(a, gvsd, env):
    good = common.Client(a.program, ["good"], env)
    bad = common.Client(a.program, ["bad"], env)
    rc = bad.finish(120, "bad")
    if rc != 0 or "".join(bad.out).strip() != \
            "fault cudaErrorIllegalAddress sticky":
        common.fail("bad: exit status %d\n%s" % (rc, bad.transcript()))
    print("A: " + "".join(bad.out).strip())
    if good.read_line(120, "B: ready") != "ready":
        common.fail("B:\n" + good.transcript())
    good.say("go")
    good.finish_ok(120, "B")
    print("B: ok")
    after = common.Client(a.program, ["good"], env)
    after.say("go")
    after.finish_ok(120, "C")
    print("C: ok")


if __name__ == "__main__":
    sys.exit(common.driver_main(scenario))
