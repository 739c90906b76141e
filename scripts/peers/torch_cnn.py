"""Fleet4J's lenet and resnet in PyTorch 1.13, layer for layer and with the same module names, on the shipped MNIST
digits (or noisy copies of them): the reference of the parity tests (tests: CnnTorchParityIT).

    torch_cnn.py parity CASES.json DIR     one training per case and dtype (see parity())

The recipe is Fleet4J's: momentum SGD (PyTorch's SGD, momentum 0.9, coupled weight decay) or AdamW (betas 0.9 and
0.999, epsilon 1e-8, decoupled decay of every weight but biases and batch-norm parameters), optionally clipped by the
global norm as Paddle's ClipGradByGlobalNorm does (scaled by clip / norm when the norm exceeds clip, without
clip_grad_norm_'s 1e-6), at a constant learning rate or a linear warm-up from 0 then half a cosine down to 0 at the
last step. Batch norm updates its running variance with the biased batch variance, as Paddle and Fleet4J do (PyTorch
uses the unbiased one), with PyTorch's momentum 0.1 (Paddle's 0.9). safetensors files go through
fleet-core/src/test/resources/interop/safetensors_io.py.
"""
import argparse
import gzip
import json
import math
import os
import struct
import sys

import numpy as np
import torch
import torch.nn.functional as F

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "fleet-core", "src", "test", "resources", "interop"))
from safetensors_io import write  # noqa: E402


def idx(path):
    if not os.path.exists(path) and os.path.exists(path + ".gz"):
        path += ".gz"
    with (gzip.open if path.endswith(".gz") else open)(path, "rb") as f:
        data = f.read()
    ndim = data[3]
    shape = struct.unpack(">" + "I" * ndim, data[4:4 + 4 * ndim])
    return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * ndim).reshape(shape)


def digits(split, data_dir=None):
    """Images float32 [N, 1, rows, cols] scaled as Fleet4J scales them (grey / 255 in float32), labels int64 [N], from
    the four MNIST IDX files (gzipped or not) in data_dir, by default the shipped data/mnist."""
    d = data_dir or os.path.join(ROOT, "data", "mnist")
    prefix = "train" if split == "train" else "t10k"
    x = idx(os.path.join(d, prefix + "-images-idx3-ubyte")).astype(np.float32) / np.float32(255)
    y = idx(os.path.join(d, prefix + "-labels-idx1-ubyte")).astype(np.int64)
    return torch.from_numpy(x[:, None, :, :].copy()), torch.from_numpy(y.copy())


class PaddleBatchNorm2d(torch.nn.BatchNorm2d):
    """BatchNorm2d whose running variance follows the biased batch variance, as Fleet4J's (and Paddle's) batch_norm.
    mistake="bn_unbiased" normalises with the unbiased variance instead: a wrong statistic for the tests to catch."""

    def __init__(self, channels, mistake=None):
        super().__init__(channels)
        self.mistake = mistake

    def forward(self, x):
        if not self.training:
            return super().forward(x)
        if self.mistake == "bn_unbiased":
            mean = x.mean((0, 2, 3), keepdim=True)
            var = x.var((0, 2, 3), unbiased=True, keepdim=True)
            y = (x - mean) / torch.sqrt(var + self.eps) * self.weight[None, :, None, None] + self.bias[None, :, None, None]
        else:
            y = F.batch_norm(x, None, None, self.weight, self.bias, True, 0.0, self.eps)
        with torch.no_grad():
            self.running_mean.mul_(1 - self.momentum).add_(self.momentum * x.mean((0, 2, 3)))
            self.running_var.mul_(1 - self.momentum).add_(self.momentum * x.var((0, 2, 3), unbiased=False))
            self.num_batches_tracked.add_(1)
        return y


class LeNet(torch.nn.Module):
    """Fleet4J's core.models.LeNet. mistake="padding" pads conv1's input by 1 and 3 instead of 2 and 2 (padding off by
    one: the same output size, the image shifted by a pixel)."""

    def __init__(self, mistake=None):
        super().__init__()
        self.mistake = mistake
        self.conv1 = torch.nn.Conv2d(1, 6, 5, padding=2)
        self.conv2 = torch.nn.Conv2d(6, 16, 5)
        self.fc1 = torch.nn.Linear(16 * 5 * 5, 120)
        self.fc2 = torch.nn.Linear(120, 84)
        self.fc3 = torch.nn.Linear(84, 10)

    def forward(self, x):
        if self.mistake == "padding":
            h = F.conv2d(F.pad(x, (1, 3, 1, 3)), self.conv1.weight, self.conv1.bias)
        else:
            h = self.conv1(x)
        h = F.max_pool2d(F.relu(h), 2)
        h = F.max_pool2d(F.relu(self.conv2(h)), 2)
        h = F.relu(self.fc1(torch.flatten(h, 1)))
        return self.fc3(F.relu(self.fc2(h)))


def conv3x3(cin, cout, stride, depthwise):
    if not depthwise:
        return torch.nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
    return torch.nn.Sequential(torch.nn.Conv2d(cin, cin, 3, stride, 1, groups=cin, bias=False),
                               torch.nn.Conv2d(cin, cout, 1, bias=False))


class BasicBlock(torch.nn.Module):
    def __init__(self, cin, cout, stride, depthwise, bn):
        super().__init__()
        self.conv1 = conv3x3(cin, cout, stride, depthwise)
        self.bn1 = bn(cout)
        self.conv2 = conv3x3(cout, cout, 1, depthwise)
        self.bn2 = bn(cout)
        self.downsample = None
        if stride != 1 or cin != cout:
            self.downsample = torch.nn.Sequential(torch.nn.Conv2d(cin, cout, 1, stride, bias=False), bn(cout))

    def forward(self, x):
        h = F.relu(self.bn1(self.conv1(x)))
        h = self.bn2(self.conv2(h))
        return F.relu(h + (x if self.downsample is None else self.downsample(x)))


class ResNet(torch.nn.Module):
    """Fleet4J's core.models.ResNet (torchvision's module names). mistake="padding" pads the stem's input by 0 and 2
    instead of 1 and 1; mistake="bn_unbiased" normalises every batch norm with the unbiased variance."""

    def __init__(self, depth, width, depthwise, mistake=None):
        super().__init__()
        n = (depth - 2) // 6
        self.mistake = mistake

        def bn(c):
            return PaddleBatchNorm2d(c, mistake)

        self.conv1 = torch.nn.Conv2d(1, width, 3, 1, 1, bias=False)
        self.bn1 = bn(width)
        c = width
        for stage in (1, 2, 3):
            out = width * 2 ** (stage - 1)
            blocks = []
            for b in range(n):
                blocks.append(BasicBlock(c, out, 2 if stage > 1 and b == 0 else 1, depthwise, bn))
                c = out
            setattr(self, "layer%d" % stage, torch.nn.Sequential(*blocks))
        self.fc = torch.nn.Linear(c, 10)

    def forward(self, x):
        if self.mistake == "padding":
            h = F.conv2d(F.pad(x, (0, 2, 0, 2)), self.conv1.weight)
        else:
            h = self.conv1(x)
        h = F.relu(self.bn1(h))
        h = self.layer3(self.layer2(self.layer1(h)))
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(h, 1), 1))


def build(case, mistake=None):
    if case["model"] == "lenet":
        return LeNet(mistake)
    return ResNet(case["depth"], case["width"], case.get("depthwise", False), mistake)


def rate(case, step):
    """Fleet4J's LrSchedule: constant, or warm-up from 0 over warmup steps then a cosine to 0 at the last step."""
    lr = case["lr"]
    if case.get("schedule", "constant") == "constant":
        return lr
    warmup, total = case["warmup"], case["steps"]
    if step < warmup:
        return lr * step / warmup
    t = min(step - warmup, total - warmup) / (total - warmup)
    return 0.5 * lr * (1 + math.cos(math.pi * t))


def optimizer(case, model):
    wd = case.get("weight_decay", 0.0)
    if case["optimizer"] == "momentum":
        return torch.optim.SGD(model.parameters(), lr=case["lr"], momentum=0.9, weight_decay=wd)
    norms = {n for n, m in model.named_modules() if isinstance(m, torch.nn.BatchNorm2d)}
    decayed, kept = [], []
    for n, p in model.named_parameters():
        (kept if n.endswith(".bias") or n.rsplit(".", 1)[0] in norms else decayed).append(p)
    return torch.optim.AdamW([{"params": decayed, "weight_decay": wd}, {"params": kept, "weight_decay": 0.0}],
                             lr=case["lr"], betas=(0.9, 0.999), eps=1e-8)


def clip(params, norm_max):
    """Paddle's ClipGradByGlobalNorm: every gradient times clip / norm when the global norm exceeds clip."""
    grads = [p.grad for p in params if p.grad is not None]
    norm = torch.sqrt(sum((g * g).sum() for g in grads))
    if norm > norm_max:
        for g in grads:
            g.mul_(norm_max / norm)


def train(case, init, images, labels, order, dtype, mistake=None):
    """case["steps"] steps on the batches of order; the loss of each step and the final state (float tensors)."""
    model = build(case, mistake)
    model.load_state_dict(init)
    model.to(dtype).train()
    opt = optimizer(case, model)
    params = list(model.parameters())
    b = case["batch"]
    losses = []
    for s in range(case["steps"]):
        i = torch.from_numpy(order[s * b:(s + 1) * b])
        x, y = images[i].to(dtype), labels[i]
        for g in opt.param_groups:
            g["lr"] = rate(case, s)
        opt.zero_grad()
        if mistake == "clip_before_allreduce":
            # two ranks that clip their own gradients, then average them
            halves = []
            for x_h, y_h in ((x[:b // 2], y[:b // 2]), (x[b // 2:], y[b // 2:])):
                opt.zero_grad()
                loss_h = F.cross_entropy(model(x_h), y_h)
                loss_h.backward()
                clip(params, case["clip"])
                halves.append((loss_h.item(), [p.grad.clone() for p in params]))
            for k, p in enumerate(params):
                p.grad = (halves[0][1][k] + halves[1][1][k]) / 2
            losses.append((halves[0][0] + halves[1][0]) / 2)
        else:
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            if case.get("clip", 0) > 0:
                clip(params, case["clip"])
            losses.append(loss.item())
        opt.step()
    state = {k: v for k, v in model.state_dict().items() if v.is_floating_point()}
    return losses, state


def one_ulp_away(state, seed):
    """state with every float weight moved one float32 ulp up or down (seeded): another float32 training of the same
    case, whose distance from the float64 one samples float32 noise again."""
    rs = np.random.RandomState(seed)
    moved = {}
    for k, v in state.items():
        if v.is_floating_point() and "running" not in k:
            a = v.numpy().astype(np.float32)
            toward = np.where(rs.randint(0, 2, a.shape) == 1, np.float32(np.inf), np.float32(-np.inf))
            moved[k] = torch.from_numpy(np.nextafter(a, toward).astype(np.float32))
        else:
            moved[k] = v
    return moved


def parity(cases_file, out):
    """For every case of the JSON list (its digits from the case's data_dir, by default the shipped ones):
    DIR/NAME/init.safetensors (PyTorch's initial state_dict, seeded),
    DIR/NAME/order.txt (the sample indices of every step's batch) and DIR/NAME/reference.safetensors: per dtype
    ("f64", "f32") the loss of every step ("f64/loss") and the final state ("f64/conv1.weight", ...), the case's
    perturbed_runs float32 runs started one ulp away ("f32_ulp1/loss", ...), and for each of the case's mistakes its
    float64 run ("padding/loss", ...)."""
    torch.set_num_threads(1)
    with open(cases_file) as f:
        cases = json.load(f)
    for case in cases:
        images, labels = digits("train", case.get("data_dir"))
        d = os.path.join(out, case["name"])
        os.makedirs(d, exist_ok=True)
        torch.manual_seed(case["seed"])
        init = build(case).state_dict()
        write(os.path.join(d, "init.safetensors"), init)
        order = np.random.RandomState(case["seed"]).permutation(len(images))[:case["steps"] * case["batch"]]
        with open(os.path.join(d, "order.txt"), "w") as f:
            f.write(" ".join(str(i) for i in order) + "\n")
        reference = {}
        runs = [("f64", torch.float64, None, init), ("f32", torch.float32, None, init)]
        runs += [("f32_ulp%d" % k, torch.float32, None, one_ulp_away(init, case["seed"] * 100 + k))
                 for k in range(1, case.get("perturbed_runs", 0) + 1)]
        runs += [(m, torch.float64, m, init) for m in case.get("mistakes", [])]
        for tag, dtype, mistake, start in runs:
            losses, state = train(case, start, images, labels, order, dtype, mistake)
            reference[tag + "/loss"] = torch.tensor(losses, dtype=torch.float64)
            for k, v in state.items():
                reference[tag + "/" + k] = v
        write(os.path.join(d, "reference.safetensors"), reference)


def main():
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="command", required=True)
    par = sub.add_parser("parity")
    par.add_argument("cases")
    par.add_argument("dir")
    a = p.parse_args()
    parity(a.cases, a.dir)


if __name__ == "__main__":
    main()
