"""What the PyTorch mlp_perf peers share: the MLP (Linear + ReLU, no ReLU after the last layer), the thread limit,
the SGD step and a timed loop."""
import ctypes
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


def set_threads(n):
    """Limits torch to n threads, OpenBLAS's own thread pool included; returns OpenBLAS's thread count.

    Debian's torch (BLAS_INFO=generic) runs its matrix products in OpenBLAS's pthread build, whose pool is sized by
    OPENBLAS_NUM_THREADS or the core count and which torch.set_num_threads does not touch: without this, a
    "1 thread" torch multiplies on every core."""
    torch.set_num_threads(n)
    try:
        blas = ctypes.CDLL("libopenblas.so.0")  # the copy torch already loaded: dlopen returns the same library
    except OSError:
        return None
    blas.openblas_set_num_threads(n)
    return blas.openblas_get_num_threads()


def sgd_step(model, opt, x, y, fetch_loss):
    """One training step as mlp_perf's: cross entropy, backward, SGD update. With fetch_loss the step reads the
    loss back (which waits for the device), as the single-process peers do; the DDP peer does not."""
    def step():
        loss = torch.nn.functional.cross_entropy(model(x), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        return loss.item() if fetch_loss else None
    return step


def time_steps(step, steps):
    """Runs step() `steps` times; returns (median ms per step, total seconds)."""
    ms = []
    t0 = time.perf_counter()
    for _ in range(steps):
        s = time.perf_counter()
        step()
        ms.append((time.perf_counter() - s) * 1e3)
    return statistics.median(ms), time.perf_counter() - t0
