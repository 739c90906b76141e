"""What the PyTorch mlp_perf peers share: the MLP (Linear + ReLU, no ReLU after the last layer) and a timed loop."""
import statistics
import time

import torch


def build_mlp(layers):
    """torch.nn.Sequential for widths like "784,512,512,10"."""
    w = [int(x) for x in layers.split(",")]
    mods = []
    for i in range(1, len(w)):
        mods.append(torch.nn.Linear(w[i - 1], w[i]))
        if i < len(w) - 1:
            mods.append(torch.nn.ReLU())
    return torch.nn.Sequential(*mods), w


def time_steps(step, steps):
    """Runs step() `steps` times; returns (median ms per step, total seconds)."""
    ms = []
    t0 = time.perf_counter()
    for _ in range(steps):
        s = time.perf_counter()
        step()
        ms.append((time.perf_counter() - s) * 1e3)
    return statistics.median(ms), time.perf_counter() - t0
