#!/usr/bin/env python3
"""gpu.security.reclaim: client A (reclaim hog) holds 4 GiB and is
SIGKILLed while it copies; client B (reclaim watch), another session of
the same gvsd, must see the memory back within 10 s of the kill."""

import signal
import sys
import time

import common


def scenario(a, gvsd, env):
    watch = common.Client(a.program, ["watch"], env)
    print(watch.read_line(60, "watch: baseline"))
    hog = common.Client(a.program, ["hog"], env)
    if hog.read_line(120, "hog: ready") != "ready":
        common.fail("hog:\n" + hog.transcript())
    watch.say("held")
    print(watch.read_line(60, "watch: held"))
    # Mid-copy: the hog copies in a loop from "ready" on.
    time.sleep(0.2)
    hog.proc.send_signal(signal.SIGKILL)
    hog.finish(30, "hog")
    watch.say("killed")
    line = watch.read_line(30, "watch: reclaimed")
    print(line)
    rc = watch.finish(30, "watch")
    if rc != 0 or not line.startswith("reclaimed"):
        common.fail("watch: exit status %d\n%s" % (rc, watch.transcript()))


if __name__ == "__main__":
    sys.exit(common.driver_main(scenario))
