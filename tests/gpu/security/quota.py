#!/usr/bin/env python3
"""gpu.security.quota: quota.cu on a private gvsd started with
--memory-quota 256M, twice at once: the quota is each session's own."""

import sys

import common


def scenario(a, gvsd, env):
    clients = [common.Client(a.program, [], env) for _ in range(2)]
    for i, c in enumerate(clients):
        rc = c.finish(120, "client %d" % i)
        out = "".join(c.out)
        if rc != 0 or out.splitlines()[-1:] != ["ok"]:
            common.fail("client %d: exit status %d\n%s" %
                        (i, rc, c.transcript()))
        sys.stdout.write(out)


if __name__ == "__main__":
    sys.exit(common.driver_main(scenario, ["--memory-quota", "256M"], say_ok=False))
