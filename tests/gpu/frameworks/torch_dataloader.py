"""A DataLoader with two worker processes and pin_memory=True over a
small TensorDataset.  The workers are forked (multiprocessing_context
"fork") after the parent's CUDA is up, through gvs its connection to
gvsd: they must not touch CUDA, and their exits must leave the parent's
session working.  pin_memory copies each batch into page-locked memory
(cudaHostAlloc, from the loader's pin thread); the batches go to the
GPU with non_blocking=True and through a small model.  The sampler is
seeded and the loader delivers batches in order, so each batch's output
is printed; two epochs, each with new workers."""
import fwcheck
import torch
from torch.utils.data import DataLoader, TensorDataset


def main():
    torch.manual_seed(7)
    x = torch.randn(512, 32)
    y = (x[:, 0] + x[:, 1] > 0).long()
    model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(),
                                torch.nn.Linear(64, 2)).cuda()
    loader = DataLoader(TensorDataset(x, y), batch_size=64, shuffle=True,
                        generator=torch.Generator().manual_seed(0),
                        num_workers=2, pin_memory=True,
                        multiprocessing_context="fork")
    for epoch in range(2):
        pinned, batches, correct = True, 0, 0
        loss_sum = torch.zeros((), device="cuda")
        for xb, yb in loader:
            pinned = pinned and xb.is_pinned() and yb.is_pinned()
            xb = xb.cuda(non_blocking=True)
            yb = yb.cuda(non_blocking=True)
            with torch.no_grad():
                out = model(xb)
                loss_sum += torch.nn.functional.cross_entropy(out, yb)
                correct += int((out.argmax(1) == yb).sum())
            if epoch == 0:
                fwcheck.show(f"batch {batches}", out, 5)
            batches += 1
        print(f"epoch {epoch}: batches {batches} pinned {pinned} "
              f"correct {correct} loss {loss_sum.item() / batches:.5f}")
    # The parent's CUDA after the workers have gone.
    w = model[0].weight
    fwcheck.show("after the workers", w @ w.T, 5)


if __name__ == "__main__":
    main()
