"""torch.compile (Inductor, Triton kernels built and launched through
the driver frontend): a small model's forward and backward."""
import fwcheck
import torch

torch.manual_seed(3)
model = torch.nn.Sequential(torch.nn.Linear(128, 256), torch.nn.SiLU(),
                            torch.nn.LayerNorm(256),
                            torch.nn.Linear(256, 16)).cuda()
compiled = torch.compile(model)
x = torch.randn(64, 128, device="cuda")
out = compiled(x)
fwcheck.show("compiled forward", out, 5)
print("matches eager", bool(torch.allclose(out, model(x), atol=1e-4)))
out.sum().backward()
fwcheck.show("compiled backward", model[0].weight.grad, 4)
f = torch.compile(lambda t: torch.sin(t) * 2 + t.square())
fwcheck.show("compiled function", f(torch.linspace(0, 1, 1 << 20,
                                                    device="cuda")), 6)
