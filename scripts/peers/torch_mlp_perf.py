"""The mlp_perf program's step in PyTorch (forward, cross entropy, backward, SGD update) on random data, one thread
(torch's and OpenBLAS's).
Usage: /usr/bin/python3 scripts/peers/torch_mlp_perf.py [--layers 784,512,512,10] [--batch_size 64] [--steps 200]"""
import argparse
import torch
from mlp_peer import build_mlp, set_threads, sgd_step, time_steps

p = argparse.ArgumentParser()
p.add_argument("--layers", default="784,512,512,10")
p.add_argument("--batch_size", type=int, default=64)
p.add_argument("--steps", type=int, default=200)
p.add_argument("--warmup", type=int, default=50)
p.add_argument("--threads", type=int, default=1)
a = p.parse_args()
blas_threads = set_threads(a.threads)
torch.manual_seed(1)
model, w = build_mlp(a.layers)
opt = torch.optim.SGD(model.parameters(), lr=0.01)
x = torch.rand(a.batch_size, w[0])
y = torch.randint(0, w[-1], (a.batch_size,))

step = sgd_step(model, opt, x, y, fetch_loss=True)

for _ in range(a.warmup):
    step()
median_ms, total = time_steps(step, a.steps)
print(f"torch {torch.__version__} ({torch.get_num_threads()} thread, OpenBLAS {blas_threads}): layers {a.layers} batch {a.batch_size}: "
      f"{median_ms:.3f} ms/step (median of {a.steps}), {a.batch_size * a.steps / total:,.0f} samples/s")
