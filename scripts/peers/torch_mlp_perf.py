"""The mlp_perf program's step in PyTorch (forward, cross entropy, backward, SGD update) on random data, one thread.
Usage: /usr/bin/python3 scripts/peers/torch_mlp_perf.py [--layers 784,512,512,10] [--batch_size 64] [--steps 200]"""
import argparse, statistics, time
import torch

p = argparse.ArgumentParser()
p.add_argument("--layers", default="784,512,512,10")
p.add_argument("--batch_size", type=int, default=64)
p.add_argument("--steps", type=int, default=200)
p.add_argument("--warmup", type=int, default=50)
p.add_argument("--threads", type=int, default=1)
a = p.parse_args()
torch.set_num_threads(a.threads)
torch.manual_seed(1)
w = [int(x) for x in a.layers.split(",")]
mods = []
for i in range(1, len(w)):
    mods.append(torch.nn.Linear(w[i - 1], w[i]))
    if i < len(w) - 1:
        mods.append(torch.nn.ReLU())
model = torch.nn.Sequential(*mods)
opt = torch.optim.SGD(model.parameters(), lr=0.01)
x = torch.rand(a.batch_size, w[0])
y = torch.randint(0, w[-1], (a.batch_size,))


def step():
    loss = torch.nn.functional.cross_entropy(model(x), y)
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
    return loss.item()


for _ in range(a.warmup):
    step()
ms = []
t0 = time.perf_counter()
for _ in range(a.steps):
    s = time.perf_counter()
    step()
    ms.append((time.perf_counter() - s) * 1e3)
total = time.perf_counter() - t0
print(f"torch {torch.__version__} ({torch.get_num_threads()} thread): layers {a.layers} batch {a.batch_size}: "
      f"{statistics.median(ms):.3f} ms/step (median of {a.steps}), {a.batch_size * a.steps / total:,.0f} samples/s")
