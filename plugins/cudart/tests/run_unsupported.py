#!/usr/bin/env python3
"""cudart.unsupported: runs the unsupported test program against a private
gvsd on the mock backend and checks that each missing function said so
exactly once on stderr, in call order.

usage: run_unsupported.py GVSD MOCK_PLUGIN_DIR PROGRAM"""

import os
import subprocess
import sys
import tempfile

EXPECTED_ERR = ["gvs: %s is not supported yet" % f for f in (
    "cudaGraphicsGLRegisterBuffer", "cudaVDPAUGetDevice",
    "cudaEGLStreamConsumerDisconnect", "__cudaGetProcAddress",
    "__cudaRegisterUnifiedTable")]


def main(argv):
    gvsd, plugin_dir, program = argv
    with tempfile.TemporaryDirectory() as tmp:
        sock = "unix://%s/gvsd.sock" % tmp
        conf = os.path.join(tmp, "gvs.conf")
        with open(conf, "w") as f:
            f.write("# empty: the command line says it all\n")
        rfd, wfd = os.pipe()
        server = subprocess.Popen(
            [gvsd, "--listen", sock, "--plugin-dir", plugin_dir,
             "--log-level", "warn", "--ready-fd", str(wfd), "--config", conf],
            pass_fds=(wfd,))
        os.close(wfd)
        try:
            with os.fdopen(rfd) as ready:
                if not ready.read().startswith("ready"):
                    print("FAIL: gvsd did not get ready")
                    return 1
            env = dict(os.environ, GVS_SERVER=sock, GVS_CONFIG=conf)
            r = subprocess.run([program], env=env, capture_output=True, text=True,
                               timeout=60)
        finally:
            server.terminate()
            server.wait(timeout=30)
    sys.stdout.write(r.stdout)
    errors = []
    if r.returncode != 0 or r.stdout.strip().splitlines()[-1:] != ["ok"]:
        errors.append("exit status %d" % r.returncode)
    if r.stderr.splitlines() != EXPECTED_ERR:
        errors.append("stderr %r, expected the lines %r" % (r.stderr, EXPECTED_ERR))
    for e in errors:
        print("FAIL: %s" % e)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
