#!/usr/bin/env python3
"""gpu.security.fault: client A (fault bad) faults on an illegal address
while client B (fault good), started at the same time on the same gvsd,
computes; B's results must be right, and a new client C afterwards must
work normally."""

import sys
import tempfile

import common


def main(argv):
    a = common.parse(argv)
    with tempfile.TemporaryDirectory() as tmp:
        gvsd = common.Gvsd(a.gvsd, tmp)
        gvsd.start()
        try:
            env = gvsd.client_env(a.frontend)
            good = common.Client(a.program, ["good"], env)
            bad = common.Client(a.program, ["bad"], env)
            rc = bad.finish(120, "bad")
            if rc != 0 or "".join(bad.out).strip() != \
                    "fault cudaErrorIllegalAddress sticky":
                common.fail("bad: exit status %d\n%s" %
                            (rc, bad.transcript()))
            print("A: " + "".join(bad.out).strip())
            if good.read_line(120, "B: ready") != "ready":
                common.fail("B:\n" + good.transcript())
            good.say("go")
            rc = good.finish(120, "B")
            if rc != 0 or good.out[-1:] != ["ok\n"]:
                common.fail("B: exit status %d\n%s" % (rc, good.transcript()))
            print("B: ok")
            after = common.Client(a.program, ["good"], env)
            after.say("go")
            rc = after.finish(120, "C")
            if rc != 0 or after.out[-1:] != ["ok\n"]:
                common.fail("C: exit status %d\n%s" %
                            (rc, after.transcript()))
            print("C: ok")
        finally:
            gvsd.stop()
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
