#!/usr/bin/env python3
"""gpu.security.quota: quota.cu on a private gvsd started with
--memory-quota 256M, twice at once: the quota is each session's own."""

import sys
import tempfile

import common


def main(argv):
    a = common.parse(argv)
    with tempfile.TemporaryDirectory() as tmp:
        gvsd = common.Gvsd(a.gvsd, tmp, ["--memory-quota", "256M"])
        gvsd.start()
        try:
            env = gvsd.client_env(a.frontend)
            clients = [common.Client(a.program, [], env) for _ in range(2)]
            for i, c in enumerate(clients):
                rc = c.finish(120, "client %d" % i)
                out = "".join(c.out)
                if rc != 0 or out.splitlines()[-1:] != ["ok"]:
                    common.fail("client %d: exit status %d\n%s" %
                                (i, rc, c.transcript()))
                sys.stdout.write(out)
        finally:
            gvsd.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
