"""PyTorch CUDA graphs: capture a small model's forward on a side
stream, replay it with new inputs copied into the static input."""
import fwcheck
import torch

torch.manual_seed(2)
model = torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.GELU(),
                            torch.nn.Linear(512, 64)).cuda()
static_in = torch.randn(32, 256, device="cuda")
side = torch.cuda.Stream()
side.wait_stream(torch.cuda.current_stream())
with torch.cuda.stream(side), torch.no_grad():
    for _ in range(3):
        model(static_in)
torch.cuda.current_stream().wait_stream(side)
graph = torch.cuda.CUDAGraph()
with torch.no_grad(), torch.cuda.graph(graph):
    static_out = model(static_in)
for i in range(3):
    static_in.copy_(torch.randn(32, 256, device="cuda"))
    graph.replay()
    with torch.no_grad():
        eager = model(static_in)
    torch.cuda.synchronize()
    fwcheck.show(f"replay {i}", static_out, 5)
    print(f"replay {i} equals eager", bool(torch.allclose(static_out, eager,
                                                          atol=1e-5)))
