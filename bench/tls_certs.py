#!/usr/bin/env python3
"""Throwaway certificates for a tls:// run (bench/run.py, the cudart mock
end-to-end test, the VM tests): a CA, a server certificate for 127.0.0.1,
localhost and 10.0.2.2 (this host as a QEMU guest sees it),
and a client certificate, made with the openssl command.

    bench/tls_certs.py DIR    writes ca.pem, server.pem, server.key,
                              client.pem and client.key into DIR

Without the openssl command it fails: a tls run would measure or check
nothing."""
import os
import shutil
import subprocess
import sys

CNF = """[req]
distinguished_name = dn
[dn]
[ca_ext]
basicConstraints = critical,CA:TRUE
keyUsage = critical,keyCertSign,cRLSign
subjectKeyIdentifier = hash
[server_ext]
basicConstraints = CA:FALSE
extendedKeyUsage = serverAuth
subjectAltName = IP:127.0.0.1,DNS:localhost,IP:10.0.2.2
[client_ext]
basicConstraints = CA:FALSE
extendedKeyUsage = clientAuth
"""
NEW_KEY = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"]


def _openssl(d, args):
    r = subprocess.run(["openssl"] + args, cwd=d, capture_output=True,
                       text=True)
    if r.returncode != 0:
        raise RuntimeError("openssl %s failed: %s" % (args[0], r.stderr))


def make(d):
    """Writes the files into directory d; returns their paths by role:
    ca, server_cert, server_key, client_cert, client_key."""
    if shutil.which("openssl") is None:
        raise RuntimeError("the openssl command, which makes the tls:// "
                           "certificates, is missing")
    with open(os.path.join(d, "x.cnf"), "w") as f:
        f.write(CNF)
    _openssl(d, ["req", "-x509", "-new"] + NEW_KEY +
             ["-keyout", "ca.key", "-out", "ca.pem", "-days", "2",
              "-subj", "/CN=gvs-throwaway-ca", "-config", "x.cnf",
              "-extensions", "ca_ext"])
    for name in ("server", "client"):
        _openssl(d, ["req", "-new"] + NEW_KEY +
                 ["-keyout", name + ".key", "-out", name + ".csr",
                  "-subj", "/CN=gvs-throwaway-" + name, "-config", "x.cnf"])
        _openssl(d, ["x509", "-req", "-in", name + ".csr", "-out",
                     name + ".pem", "-CA", "ca.pem", "-CAkey", "ca.key",
                     "-set_serial", "7", "-days", "2", "-extfile", "x.cnf",
                     "-extensions", name + "_ext"])
    files = {"ca": "ca.pem", "server_cert": "server.pem",
             "server_key": "server.key", "client_cert": "client.pem",
             "client_key": "client.key"}
    return {k: os.path.join(d, v) for k, v in files.items()}


def gvsd_config(certs, mutual=True):
    """gvsd's config lines for them; mutual: clients need a certificate."""
    lines = ["tls_cert = %s" % certs["server_cert"],
             "tls_key = %s" % certs["server_key"]]
    if mutual:
        lines.append("tls_ca = %s" % certs["ca"])
    return "".join(l + "\n" for l in lines)


def client_env(certs):
    """The client's environment for them (GVS_TLS_*)."""
    return {"GVS_TLS_CA": certs["ca"], "GVS_TLS_CERT": certs["client_cert"],
            "GVS_TLS_KEY": certs["client_key"]}


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    for role, path in sorted(make(sys.argv[1]).items()):
        print("%s %s" % (role, path))
