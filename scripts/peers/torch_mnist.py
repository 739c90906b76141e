"""The mnist program's recipe in PyTorch, on the same shipped IDX files: a cross-check of the accuracy Fleet4J
reaches. Usage: /usr/bin/python3 scripts/peers/torch_mnist.py [--optimizer momentum|sgd|adam] [--lr 0.05]"""
import argparse, gzip, struct, time
import numpy as np
import torch


def idx(path):
    with gzip.open(path, "rb") as f:
        data = f.read()
    ndim = data[3]
    shape = struct.unpack(">" + "I" * ndim, data[4:4 + 4 * ndim])
    return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * ndim).reshape(shape)


p = argparse.ArgumentParser()
p.add_argument("--optimizer", default="momentum")
p.add_argument("--lr", type=float, default=0.05)
p.add_argument("--epochs", type=int, default=2)
p.add_argument("--batch_size", type=int, default=64)
p.add_argument("--seed", type=int, default=1)
a = p.parse_args()
torch.manual_seed(a.seed)
torch.set_num_threads(1)
d = "data/mnist/"
xtr = torch.tensor(idx(d + "train-images-idx3-ubyte.gz").reshape(-1, 784), dtype=torch.float32) / 255
ytr = torch.tensor(idx(d + "train-labels-idx1-ubyte.gz"), dtype=torch.long)
xte = torch.tensor(idx(d + "t10k-images-idx3-ubyte.gz").reshape(-1, 784), dtype=torch.float32) / 255
yte = torch.tensor(idx(d + "t10k-labels-idx1-ubyte.gz"), dtype=torch.long)
model = torch.nn.Sequential(torch.nn.Linear(784, 512), torch.nn.ReLU(), torch.nn.Linear(512, 512), torch.nn.ReLU(),
                            torch.nn.Linear(512, 10))
for m in model:
    if isinstance(m, torch.nn.Linear):
        torch.nn.init.xavier_uniform_(m.weight)
        torch.nn.init.zeros_(m.bias)
opt = {"sgd": lambda: torch.optim.SGD(model.parameters(), lr=a.lr),
       "momentum": lambda: torch.optim.SGD(model.parameters(), lr=a.lr, momentum=0.9),
       "adam": lambda: torch.optim.Adam(model.parameters(), lr=a.lr)}[a.optimizer]()
g = torch.Generator().manual_seed(a.seed)
t0 = time.time()
for epoch in range(a.epochs):
    perm = torch.randperm(len(xtr), generator=g)
    for s in range(len(xtr) // a.batch_size):
        i = perm[s * a.batch_size:(s + 1) * a.batch_size]
        loss = torch.nn.functional.cross_entropy(model(xtr[i]), ytr[i])
        opt.zero_grad()
        loss.backward()
        opt.step()
with torch.no_grad():
    acc = (model(xte).argmax(1) == yte).float().mean().item()
    tacc = (model(xtr).argmax(1) == ytr).float().mean().item()
print(f"torch {a.optimizer} lr {a.lr}: test accuracy {acc:.4f} (train {tacc:.4f}); final loss {loss.item():.4f}; "
      f"{time.time() - t0:.1f}s")
