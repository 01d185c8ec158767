"""PyTorch with cuDNN: a convolution forward and backward, batch norm,
pooling; deterministic algorithms."""
import fwcheck
import torch

torch.backends.cudnn.deterministic = True
torch.backends.cudnn.benchmark = False
torch.use_deterministic_algorithms(True)
print("cudnn", torch.backends.cudnn.is_available(),
      torch.backends.cudnn.version() > 0)
torch.manual_seed(1)
net = torch.nn.Sequential(
    torch.nn.Conv2d(3, 16, 3, padding=1), torch.nn.BatchNorm2d(16),
    torch.nn.ReLU(), torch.nn.MaxPool2d(2),
    torch.nn.Conv2d(16, 32, 3, padding=1), torch.nn.ReLU(),
    torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(),
    torch.nn.Linear(32, 10)).cuda()
x = torch.randn(16, 3, 64, 64, device="cuda", requires_grad=True)
y = net(x)
fwcheck.show("forward", y, 5)
y.square().mean().backward()
fwcheck.show("input grad", x.grad, 4)
fwcheck.show("first conv weight grad", net[0].weight.grad, 4)
with torch.autocast("cuda", dtype=torch.float16):
    h = net(x.detach())
print("autocast dtype", h.dtype)
fwcheck.show("forward fp16", h.float(), 3)
