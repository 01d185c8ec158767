"""An allocation past the memory the process may have, raised as
torch.OutOfMemoryError, after which the process keeps working: what it
held is intact, memory_allocated is what it was, and a later 64 MiB
allocation and computation succeed.

Both runs must fail the same way, though through gvs the session has a
memory quota (CMake gives gvsd --memory-quota=4G for this script) and
natively there is none.  The script asks for 1 GiB more than the total
that mem_get_info reports: through gvs that total is the quota (total =
min(the GPU's, quota), docs/cudart.md), so the request passes the quota
and the backend refuses it before CUDA is asked; natively the total is
the GPU's, and the same request passes the GPU itself and CUDA refuses
it.  Either way cudaMalloc answers cudaErrorMemoryAllocation and
PyTorch, after freeing its cache and trying again, raises
OutOfMemoryError.  No per-process memory fraction is set: it would make
PyTorch refuse the request itself, before cudaMalloc, and the quota
would go untested.  Without a quota (gvsd run by hand) the script passes
all the same, the request then past the GPU in both runs.  Only the
exception's type and facts true in both runs are printed, never the
sizes (its message names them)."""
import fwcheck
import torch

GiB = 1 << 30
torch.manual_seed(8)
a = torch.randn(1024, 1024, device="cuda")
# The first matmul allocates cuBLAS's workspace: before base is taken.
fwcheck.show("before", a @ a, 5)
kept = torch.randn(32 << 20, device="cuda")
fwcheck.show("kept", kept, 5)
base = torch.cuda.memory_allocated()
free, total = torch.cuda.mem_get_info()
print("memory", 0 < free <= total)

try:
    huge = torch.empty(total + GiB, dtype=torch.uint8, device="cuda")
    print("no error: allocated", huge.numel() > total)
except Exception as e:  # the name shows in both runs whatever it is
    print("raised", type(e).__name__,
          isinstance(e, torch.OutOfMemoryError))

print("allocated unchanged", torch.cuda.memory_allocated() == base)
print("ooms counted", torch.cuda.memory_stats()["num_ooms"])
fwcheck.show("kept", kept, 5)
x = torch.full((16 << 20,), 0.5, device="cuda")
print("64 MiB allocated", x.nbytes == 64 << 20,
      torch.cuda.memory_allocated() >= base + x.nbytes)
fwcheck.show("64 MiB", x * 3 + kept[:16 << 20], 5)
fwcheck.show("after", a @ a, 5)
del x
print("allocated back", torch.cuda.memory_allocated() == base)
