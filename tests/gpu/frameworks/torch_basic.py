"""PyTorch: device discovery and properties, tensor ops, matmul (cuBLAS
and cuBLASLt; fp32, bf16, fp16), FFT, sparse matmul, linalg.solve,
streams with events, copies both ways."""
import fwcheck
import torch

torch.use_deterministic_algorithms(True)
print("available", torch.cuda.is_available(), "devices",
      torch.cuda.device_count())
p = torch.cuda.get_device_properties(0)
print("device", p.name, f"sm_{p.major}{p.minor}", p.multi_processor_count,
      "SMs")
free, total = torch.cuda.mem_get_info()
print("memory", 0 < free <= total)

torch.manual_seed(0)
a = torch.randn(512, 512, device="cuda")
b = torch.randn(512, 512, device="cuda")
fwcheck.show("add", a + b)
fwcheck.show("exp", torch.exp(a / 8))
fwcheck.show("rowsum", a.sum(1))
fwcheck.show("softmax", torch.softmax(a, 1))
for dt in (torch.float32, torch.bfloat16, torch.float16):
    fwcheck.show(f"matmul {dt}", a.to(dt) @ b.to(dt), 4)
# addmm with a bias goes through cuBLASLt's epilogue.
bias = torch.randn(512, device="cuda")
fwcheck.show("addmm (cuBLASLt)", torch.nn.functional.linear(a, b, bias), 5)
fwcheck.show("bmm", torch.bmm(a.view(8, 64, 512), b.view(8, 512, 64)), 5)
x = torch.randn(1 << 16, device="cuda")
fwcheck.show("fft", torch.fft.fft(x).abs(), 5)
fwcheck.show("rfft2", torch.fft.rfft2(a).abs(), 5)
sparse = torch.relu(a - 1.5).to_sparse()
fwcheck.show("sparse mm", torch.sparse.mm(sparse, b), 5)
A = (torch.randn(128, 128, device="cuda", dtype=torch.float64) +
     128 * torch.eye(128, device="cuda", dtype=torch.float64))
B = torch.randn(128, 8, device="cuda", dtype=torch.float64)
X = torch.linalg.solve(A, B)
fwcheck.show("solve", X)
print("solve residual small", float((A @ X - B).abs().max()) < 1e-9)

s1, s2 = torch.cuda.Stream(), torch.cuda.Stream()
done = torch.cuda.Event()
with torch.cuda.stream(s1):
    y = a @ b
    done.record()
s2.wait_event(done)
with torch.cuda.stream(s2):
    z = y * 2 + 1
torch.cuda.synchronize()
fwcheck.show("two streams", z, 5)
host = torch.arange(1000, dtype=torch.float32).pin_memory()
back = host.to("cuda", non_blocking=True).mul_(3).to("cpu")
print("pinned round trip", bool(torch.equal(back, host * 3)))
print("to host", a[0, :3].cpu().tolist() == a.cpu()[0, :3].tolist())
