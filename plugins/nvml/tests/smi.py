#!/usr/bin/env python3
"""gpu.nvml_smi, gpu.nvml_smi_quota: NVIDIA's own nvidia-smi, natively
and through gvs (where `gvs run` puts gvs's libnvidia-ml.so.1 first in
its library path): `nvidia-smi -L`, a CSV query of the GPUs' names,
PCI addresses and compute capabilities, and the GPUs' rows of the table
view (index, name; the rest are readings that move) print the same.  With --total it
prints only the memory totals: under a memory quota, the quota;
natively, QUOTA_MIB of the environment (compare.py's --native-env)."""
import os
import re
import subprocess
import sys


def smi(*args):
    r = subprocess.run(["nvidia-smi", *args], capture_output=True, text=True,
                       timeout=60)
    if r.returncode != 0:
        sys.exit("nvidia-smi %s: exit %d: %s" % (" ".join(args), r.returncode,
                                                  r.stderr.strip()))
    return r.stdout


if sys.argv[1:] == ["--total"]:
    quota = os.environ.get("QUOTA_MIB")
    for line in smi("--query-gpu=index,memory.total", "--format=csv,noheader,nounits").splitlines():
        index, total = (f.strip() for f in line.split(","))
        print(index, "memory.total", quota or total, "MiB")
else:
    sys.stdout.write(smi("-L"))
    sys.stdout.write(smi("--query-gpu=index,name,uuid,pci.bus_id,compute_cap",
                         "--format=csv"))
    for line in smi().splitlines():
        m = re.match(r"\|\s+(\d+)\s+(.*?)\s+(On|Off|N/A)\s+\|", line)
        if m:
            print("table: GPU", m.group(1), m.group(2))
