"""torch.multiprocessing: two processes started with spawn (new
interpreters; through gvs each its own client and session), each
computing on the GPU from a seed of its rank and leaving its result in a
file of a temporary directory.  The parent prints both in rank order
(the children print nothing: their lines could interleave either way),
then computes the same on the GPU itself and checks that they agree."""
import os
import tempfile

import fwcheck
import torch
import torch.multiprocessing as mp


def compute(rank):
    torch.manual_seed(100 + rank)
    a = torch.randn(384, 384, device="cuda")
    return torch.tanh(a @ a.T / 20) @ a


def worker(rank, outdir):
    out = compute(rank)
    torch.save({"devices": torch.cuda.device_count(), "result": out.cpu()},
               os.path.join(outdir, f"rank{rank}.pt"))


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as d:
        mp.spawn(worker, args=(d,), nprocs=2, join=True)
        results = [torch.load(os.path.join(d, f"rank{r}.pt"))
                   for r in range(2)]
    for r, res in enumerate(results):
        print(f"rank {r}: devices {res['devices']}")
        fwcheck.show(f"rank {r}", res["result"], 5)
    print("ranks differ",
          not torch.equal(results[0]["result"], results[1]["result"]))
    for r, res in enumerate(results):
        print(f"rank {r} agrees with the parent",
              bool(torch.allclose(compute(r).cpu(), res["result"],
                                  rtol=1e-5, atol=1e-4)))
