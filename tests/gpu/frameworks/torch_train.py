"""Training: an MLP for 50 steps (its loss curve), then mixed precision
with torch.autocast and GradScaler."""
import fwcheck
import torch

torch.use_deterministic_algorithms(True)
torch.manual_seed(4)
model = torch.nn.Sequential(torch.nn.Linear(64, 256), torch.nn.ReLU(),
                            torch.nn.Linear(256, 256), torch.nn.ReLU(),
                            torch.nn.Linear(256, 1)).cuda()
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
x = torch.randn(1024, 64, device="cuda")
target = x[:, :1].sin() + x[:, 1:2] * 0.5
for step in range(50):
    opt.zero_grad()
    loss = torch.nn.functional.mse_loss(model(x), target)
    loss.backward()
    opt.step()
    if step % 10 == 9:
        print(f"step {step + 1} loss {loss.item():.6f}")
scaler = torch.amp.GradScaler("cuda")
for step in range(10):
    opt.zero_grad()
    with torch.autocast("cuda", dtype=torch.float16):
        loss = torch.nn.functional.mse_loss(model(x), target)
    scaler.scale(loss).backward()
    scaler.step(opt)
    scaler.update()
print(f"mixed precision loss {loss.item():.4f}")
fwcheck.show("weights", model[0].weight.detach(), 5)
