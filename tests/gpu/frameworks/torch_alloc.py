"""PyTorch's caching allocator on expandable segments
(PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True, set before torch is
imported): the driver's virtual memory API, cuMemAddressReserve,
cuMemCreate, cuMemMap and cuMemSetAccess as segments grow, cuMemUnmap
and cuMemRelease at empty_cache.  Tensors of growing sizes kept, their
values; memory_allocated and memory_stats' allocated bytes, exact (every
size a multiple of 512 bytes, so the allocator rounds none); freed space
reused without growing memory_reserved; everything given back by
empty_cache; mem_get_info.

mem_get_info's numbers differ between the runs (through gvs the session
sees its quota, when gvsd sets one, as the total, and the free memory
of the GPU moves with whatever else runs on it), so only relations that
hold in both are printed: 0 < free <= total, and that mapping 1 GiB
lowers free by at least 1 GiB and empty_cache raises it again (of three
tries, one must show it: another process freeing memory meanwhile can
spoil one).  CMake runs this script alone (RUN_SERIAL)."""
import os

os.environ["PYTORCH_CUDA_ALLOC_CONF"] = "expandable_segments:True"

import fwcheck  # noqa: E402
import torch  # noqa: E402

MiB, GiB = 1 << 20, 1 << 30
torch.manual_seed(6)
torch.cuda.init()
start = torch.cuda.memory_allocated()
print("allocated at start", start)

kept, expected = [], 0
for mib in (1, 4, 16, 64, 256):
    t = torch.randn(mib * MiB // 4, device="cuda")
    kept.append(t)
    expected += t.nbytes
    fwcheck.show(f"{mib} MiB", t, 5)
    print(f"{mib} MiB: allocated exact",
          torch.cuda.memory_allocated() - start == expected)
stats = torch.cuda.memory_stats()
print("stats allocated exact",
      stats["allocated_bytes.all.current"] - start == expected)
print("stats ooms", stats["num_ooms"], "retries", stats["num_alloc_retries"])
print("reserved >= allocated",
      torch.cuda.memory_reserved() >= torch.cuda.memory_allocated())
segments = torch.cuda.memory_snapshot()
print("segments expandable",
      bool(segments) and all(s["is_expandable"] for s in segments))

# Free the 4 and the 64 MiB tensors: a new 64 MiB one fits in the space freed.
reserved = torch.cuda.memory_reserved()
kept = [kept[0], kept[2], kept[4]]
again = torch.randn(64 * MiB // 4, device="cuda")
print("freed space reused", torch.cuda.memory_reserved() == reserved)
fwcheck.show("reallocated 64 MiB", again, 5)
fwcheck.show("kept 256 MiB", kept[2], 5)

del kept, again, t
print("all freed", torch.cuda.memory_allocated() == start)
torch.cuda.empty_cache()
print("empty_cache: reserved", torch.cuda.memory_reserved())

free, total = torch.cuda.mem_get_info()
print("mem_get_info", 0 < free <= total)
filled, lowered, raised = True, False, False
for _ in range(3):
    before = torch.cuda.mem_get_info()[0]
    big = torch.empty(GiB, dtype=torch.uint8, device="cuda")
    mapped = torch.cuda.mem_get_info()[0]
    big.fill_(7)
    filled = filled and int(big[::4096].sum()) == 7 * (GiB // 4096)
    del big
    torch.cuda.empty_cache()
    released = torch.cuda.mem_get_info()[0]
    lowered = lowered or before - mapped >= GiB
    raised = raised or released - mapped >= GiB
print("1 GiB filled", filled)
print("1 GiB lowers free by 1 GiB", lowered)
print("empty_cache raises it again", raised)

# Grow again after everything was unmapped, and compute on it.
a = torch.randn(2048, 2048, device="cuda")
b = torch.randn(2048, 2048, device="cuda")
fwcheck.show("matmul after regrowth", a @ b, 5)
print("reserved >= allocated >= a and b",
      torch.cuda.memory_reserved() >= torch.cuda.memory_allocated() >=
      start + a.nbytes + b.nbytes)
