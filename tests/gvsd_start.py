"""What the test scripts that start their own gvsd share: an endpoint of
a transport, and gvsd started on it and waited for (its --ready-fd)."""

import os
import socket
import subprocess


def endpoint(transport, tmp):
    """A URI of transport to listen on: a free loopback port for tcp and
    tls, a socket in the directory tmp otherwise."""
    if transport in ("tcp", "tls"):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            return "%s://127.0.0.1:%d" % (transport, s.getsockname()[1])
    return "%s://%s/gvsd.sock" % (transport, tmp)


def start(gvsd, uri, tmp, args=(), config=""):
    """gvsd listening on uri, with a config file in tmp holding config,
    once it said it is ready; None (after killing it) if it did not."""
    conf = os.path.join(tmp, "gvs.conf")
    with open(conf, "w") as f:
        f.write(config or "# empty: the command line says it all\n")
    r, w = os.pipe()
    proc = subprocess.Popen([gvsd, "--listen", uri, "--config", conf,
                             "--ready-fd", str(w)] + list(args), pass_fds=(w,))
    os.close(w)
    with os.fdopen(r) as ready:
        if ready.read().strip() == "ready":
            return proc
    proc.kill()
    proc.wait()
    return None
