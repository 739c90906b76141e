"""PyTorch's peer of ConvBench: forward + backward of single conv layers, one thread, in steady state.

    torch_conv_perf.py [--batch 64] [--warmup_s 30] [--steps 200] NAME:CIN:COUT:K:STRIDE:PAD:SIZE[:first] ...

For each layer: F.conv2d and torch.autograd.grad of the output against the filter and (unless the layer is marked
first, as the data needs none) the input, with a fixed output gradient. Every layer is run for the warm-up time, all
layers in turn, then each layer's steps are timed one by one. Prints the same lines as ConvBench: the GEMM peak
(torch.mm of 1024 x 1024 matrices) and, per layer, the median, 10th and 90th percentile in ms and GFLOPS.
"""
import sys
import time

import torch
import torch.nn.functional as F


def parse(spec):
    p = spec.split(":")
    name, cin, cout, k, stride, pad, size = p[0], *map(int, p[1:7])
    return name, cin, cout, k, stride, pad, size, len(p) > 7 and p[7] == "first"


def main(argv):
    torch.set_num_threads(1)
    batch, warmup_s, steps, layers = 64, 30.0, 200, []
    i = 0
    while i < len(argv):
        if argv[i] == "--batch":
            batch, i = int(argv[i + 1]), i + 1
        elif argv[i] == "--warmup_s":
            warmup_s, i = float(argv[i + 1]), i + 1
        elif argv[i] == "--steps":
            steps, i = int(argv[i + 1]), i + 1
        else:
            layers.append(parse(argv[i]))
        i += 1
    torch.manual_seed(1)
    a = torch.rand(1024, 1024)
    best = min(timed(lambda: torch.mm(a, a)) for _ in range(20))
    print("# torch %s, %d thread, %s" % (torch.__version__, torch.get_num_threads(),
                                         torch.backends.mkldnn.is_available() and "oneDNN" or "no oneDNN"))
    print("gemm_peak_gflops %.1f" % (2 * 1024 ** 3 / best / 1e9))
    built = []
    for name, cin, cout, k, stride, pad, size, first in layers:
        x = torch.rand(batch, cin, size, size) * 2 - 1
        x.requires_grad_(not first)
        w = (torch.rand(cout, cin, k, k) * 2 - 1).requires_grad_(True)
        out = (size + 2 * pad - k) // stride + 1
        g = torch.rand(batch, cout, out, out) * 2 - 1
        wrt = (w,) if first else (x, w)

        def step(x=x, w=w, g=g, wrt=wrt, stride=stride, pad=pad):
            y = F.conv2d(x, w, stride=stride, padding=pad)
            torch.autograd.grad(y, wrt, g)

        flops = 2.0 * batch * cout * cin * k * k * out * out * (2 if first else 3)
        built.append((name, step, flops))
    end = time.perf_counter() + warmup_s
    warm = 0
    while True:
        for _, step, _ in built:
            step()
        warm += 1
        if time.perf_counter() >= end:
            break
    print("# warm-up: %d steps of every layer" % warm)
    for name, step, flops in built:
        ms = sorted(timed(step) * 1e3 for _ in range(steps))
        median = ms[steps // 2]
        print("layer %s median_ms %.4f p10_ms %.4f p90_ms %.4f gflops %.1f"
              % (name, median, ms[steps // 10], ms[steps * 9 // 10], flops / median / 1e6))


def timed(f):
    t0 = time.perf_counter()
    f()
    return time.perf_counter() - t0


if __name__ == "__main__":
    main(sys.argv[1:])
