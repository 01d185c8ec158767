#!/usr/bin/env python3
"""gpu.nvml_view, gpu.nvml_view_quota: the GPUs NVML shows, through
pynvml (NVIDIA's Python binding, which loads libnvidia-ml.so.1 as the
frameworks do): natively NVIDIA's, through gvs the session's view, which
must be the same where nothing narrows it.  With --total it prints only
the memory totals: under a memory quota, the quota; natively, QUOTA_MIB
of the environment (compare.py's --native-env: what gvsd's
--memory-quota stands for natively) once NVML answered."""
import os
import sys

import pynvml

pynvml.nvmlInit()
n = pynvml.nvmlDeviceGetCount()
totals = sys.argv[1:] == ["--total"]
quota = os.environ.get("QUOTA_MIB") if totals else None
print("driver", pynvml.nvmlSystemGetDriverVersion(),
      "cuda", pynvml.nvmlSystemGetCudaDriverVersion_v2())
print("devices", n)
for i in range(n):
    h = pynvml.nvmlDeviceGetHandleByIndex(i)
    mem = pynvml.nvmlDeviceGetMemoryInfo(h)
    total = int(quota) if quota else mem.total >> 20
    if totals:
        print(i, "memory.total", total, "MiB")
        continue
    pci = pynvml.nvmlDeviceGetPciInfo(h)
    same = pynvml.nvmlDeviceGetHandleByPciBusId(pci.busId)
    print(i, pynvml.nvmlDeviceGetName(h), pynvml.nvmlDeviceGetUUID(h),
          pci.busId, "memory.total", total, "MiB",
          "cc", pynvml.nvmlDeviceGetCudaComputeCapability(h),
          "by bus id", pynvml.nvmlDeviceGetIndex(same) == i)
    # What changes from moment to moment is read, not printed.
    pynvml.nvmlDeviceGetTemperature(h, pynvml.NVML_TEMPERATURE_GPU)
    pynvml.nvmlDeviceGetUtilizationRates(h)
    pynvml.nvmlDeviceGetPowerUsage(h)
    pynvml.nvmlDeviceGetClockInfo(h, pynvml.NVML_CLOCK_SM)
pynvml.nvmlShutdown()
sys.exit(0)
