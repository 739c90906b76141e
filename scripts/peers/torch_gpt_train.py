"""The gpt program's recipe in PyTorch, for the accuracy comparison (scripts/bench/gpt_accuracy_vs_torch.sh): nanoGPT's
GPT (fleet-core/src/test/resources/interop/torch_gpt.py) trained on the batches of DIR/windows.txt over the character
ids of DIR/corpus.safetensors (both written by org.fleet4j.bench.gpt.GptRecipeInputs), with AdamW (betas 0.9, 0.99;
the 2-D weights decayed), clipping by global norm as Paddle and Fleet4J clip (scale clip / norm above clip), and
gpt's warm-up cosine rate computed as its lr_schedule op computes it (float32 attributes and result).
Usage: /usr/bin/python3 scripts/peers/torch_gpt_train.py DIR --vocab_size V [--n_layer 4] [--n_head 4] [--n_embd 64]
       [--block_size 32] [--steps 2000] [--lr 3e-3] [--warmup_steps 100] [--min_lr 3e-4] [--weight_decay 0.1]
       [--grad_clip 1.0] [--seed 1]
Writes DIR/init.safetensors (the initial state_dict, seeded, before any step) and prints one JSON line: the training
and validation loss in nats per character over the windows gpt measures them on, and the seconds the steps took."""
import argparse
import json
import math
import os
import sys
import time

import numpy as np
import torch

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
sys.path.insert(0, os.path.join(here, "../../fleet-core/src/test/resources/interop"))
from mlp_peer import set_threads  # noqa: E402
from safetensors_io import read, write  # noqa: E402
from torch_gpt import GPT, batches, clip_, decayed  # noqa: E402

EVAL_BATCH = 64


def rate(step, a):
    """Fleet4J's LrSchedule.at for warmupCosine(lr, warmup, steps, min_lr, lr / (warmup + 1)), float32 in and out."""
    f = lambda v: float(np.float32(v))
    base, floor, start = f(a.lr), f(a.min_lr), f(a.lr / (a.warmup_steps + 1))
    if step < a.warmup_steps:
        return f(start + (base - start) * step / a.warmup_steps)
    span = a.steps - a.warmup_steps
    t = min(step - a.warmup_steps, span) / span
    return f(floor + 0.5 * (base - floor) * (1 + math.cos(math.pi * t)))


def mean_loss(model, text, starts, block):
    total = 0.0
    with torch.no_grad():
        for i in range(0, len(starts), EVAL_BATCH):
            chunk = starts[i:i + EVAL_BATCH]
            idx, tgt = next(batches(text, [chunk], block))
            total += model(idx, tgt).item() * len(chunk)
    return total / len(starts)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("dir")
    for name, kind, default in (("vocab_size", int, None), ("n_layer", int, 4), ("n_head", int, 4), ("n_embd", int, 64),
                                ("block_size", int, 32), ("steps", int, 2000), ("lr", float, 3e-3),
                                ("warmup_steps", int, 100), ("min_lr", float, 3e-4), ("weight_decay", float, 0.1),
                                ("grad_clip", float, 1.0), ("seed", int, 1)):
        p.add_argument("--" + name, type=kind, default=default, required=default is None)
    a = p.parse_args()
    set_threads(1)
    corpus = read(a.dir + "/corpus.safetensors")
    with open(a.dir + "/windows.txt") as f:
        windows = [[int(s) for s in line.split()] for line in f if line.strip()][:a.steps]
    torch.manual_seed(a.seed)
    model = GPT(a.vocab_size, a.block_size, a.n_layer, a.n_head, a.n_embd)
    write(a.dir + "/init.safetensors", model.state_dict())
    params = dict(model.named_parameters())
    opt = torch.optim.AdamW([{"params": [p for n, p in params.items() if decayed(n)], "weight_decay": a.weight_decay},
                             {"params": [p for n, p in params.items() if not decayed(n)], "weight_decay": 0.0}],
                            lr=a.lr, betas=(0.9, 0.99), eps=1e-8)
    t0 = time.perf_counter()
    for step, (idx, tgt) in enumerate(batches(corpus["train"], windows, a.block_size)):
        for g in opt.param_groups:
            g["lr"] = rate(step, a)
        opt.zero_grad(set_to_none=True)
        model(idx, tgt).backward()
        clip_([p.grad for p in params.values()], a.grad_clip)
        opt.step()
    seconds = time.perf_counter() - t0
    print(json.dumps({"torch": torch.__version__, "steps": len(windows),
                      "train_loss": mean_loss(model, corpus["train"], corpus["train_eval"].tolist(), a.block_size),
                      "val_loss": mean_loss(model, corpus["validation"], corpus["validation_eval"].tolist(), a.block_size),
                      "train_seconds": seconds}))


if __name__ == "__main__":
    main()
