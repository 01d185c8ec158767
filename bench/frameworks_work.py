#!/usr/bin/env python3
"""One framework workload, run by bench/frameworks.py natively or through
gvs: `frameworks_work.py WORKLOAD [NAME=INT ...]` (the pairs override
the workload's sizes, for traces: `gpt2_b1 new=16`).  It prints one
result line, `GVSBENCH {json}`: the throughput (value, unit), the wall-clock time
(time.time()) at which its first CUDA operation finished (t_first_op: the
driver subtracts the moment it spawned the process), the seconds of
warm-up (warm_s; compilation included for compile) and from the first
operation to the result (run_s), the peak resident memory of this
process (rss_mib, VmHWM) and the device's name.

Every workload starts the same way: `import torch`, a first kernel, a
synchronization; then it builds its model (random weights, seed 0),
warms up and times.  Warm-ups repeat the timed work's calls at its shapes
(a generate with the same arguments, the same training step), so that
the kernels and libraries loaded lazily at first use are loaded before
the clock starts.
"""
import json
import sys
import time

import torch

WORK = {}
INFO = {"warm_s": 0.0}


def workload(fn):
    WORK[fn.__name__.rstrip("_")] = fn
    return fn


def timed(fn, n):
    torch.cuda.synchronize()
    t = time.perf_counter()
    for _ in range(n):
        fn()
    torch.cuda.synchronize()
    return time.perf_counter() - t


def warm_up(fn, n):
    INFO["warm_s"] += timed(fn, n)


@workload
def startup():
    return 0.0, "s"  # the driver computes it from t_first_op


@workload
def gemm(n=100):
    a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
    warm_up(lambda: a @ a, 5)
    return 2 * 8192 ** 3 * n / timed(lambda: a @ a, n) / 1e12, "TFLOP/s"


@workload
def resnet50(batch=64, warm=5, n=30):
    import torchvision
    m = torchvision.models.resnet50().cuda().train()
    opt = torch.optim.SGD(m.parameters(), lr=0.01, momentum=0.9)
    x = torch.randn(batch, 3, 224, 224, device="cuda")
    y = torch.randint(0, 1000, (batch,), device="cuda")

    def step():
        opt.zero_grad(set_to_none=True)
        torch.nn.functional.cross_entropy(m(x), y).backward()
        opt.step()
    warm_up(step, warm)
    return batch * n / timed(step, n), "img/s"


@workload
def compile_(warm=3, n=30):
    """A 4-layer transformer encoder (d 512, 8 heads, batch 32 x 256
    tokens) compiled with torch.compile's default mode, AdamW; the warm-up
    includes the compilation of forward and backward."""
    layer = torch.nn.TransformerEncoderLayer(512, 8, 2048, batch_first=True)
    m = torch.nn.TransformerEncoder(layer, 4, enable_nested_tensor=False).cuda()
    cm = torch.compile(m)
    opt = torch.optim.AdamW(m.parameters(), lr=1e-4)
    x = torch.randn(32, 256, 512, device="cuda")

    def step():
        opt.zero_grad(set_to_none=True)
        cm(x).square().mean().backward()
        opt.step()
    warm_up(step, warm)
    return n / timed(step, n), "steps/s"


def gpt2(batch, new=128, warm_new=16, prompt=16):
    from transformers import GPT2Config, GPT2LMHeadModel
    m = GPT2LMHeadModel(GPT2Config()).cuda().half().eval()
    ids = torch.randint(0, 50257, (batch, prompt), device="cuda")
    mask = torch.ones_like(ids)

    def generate(k):
        return m.generate(ids, attention_mask=mask, do_sample=False,
                          min_new_tokens=k, max_new_tokens=k,
                          pad_token_id=50256)
    with torch.no_grad():
        warm_up(lambda: generate(warm_new), 1)
        t = time.perf_counter()
        out = generate(new)
        torch.cuda.synchronize()
        dt = time.perf_counter() - t
    tokens = batch * (out.shape[1] - prompt)
    assert tokens == batch * new, out.shape
    return tokens / dt, "tok/s"


@workload
def gpt2_b1(**kw):
    return gpt2(1, **kw)


@workload
def gpt2_b16(**kw):
    return gpt2(16, **kw)


def vm_hwm_mib():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024.0
    return None


def main():
    name = sys.argv[1]
    sizes = {k: int(v) for k, v in (a.split("=", 1) for a in sys.argv[2:])}
    x = torch.ones(1, device="cuda") * 2
    torch.cuda.synchronize()
    t_first_op = time.time()
    del x
    torch.manual_seed(0)
    t = time.perf_counter()
    value, unit = WORK[name](**sizes)
    res = {"workload": name, "value": value, "unit": unit,
           "t_first_op": t_first_op,
           "warm_s": INFO["warm_s"], "run_s": time.perf_counter() - t,
           "rss_mib": vm_hwm_mib(),
           "device": torch.cuda.get_device_name(), "torch": torch.__version__}
    print("GVSBENCH " + json.dumps(res), flush=True)


if __name__ == "__main__":
    main()
