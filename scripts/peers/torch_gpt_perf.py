"""gpt_perf's step in PyTorch: nanoGPT's GPT (fleet-core/src/test/resources/interop/torch_gpt.py, the model the
parity test compares with) trained on random token ids with AdamW (the 2-D weights decayed; betas 0.9, 0.99) and
clip_grad_norm_(1.0), one thread per process; with --nproc 2 under DDP over Gloo, each rank its own batch.
Usage: /usr/bin/python3 scripts/peers/torch_gpt_perf.py [--nproc 1] [--n_layer 4] [--n_head 4] [--n_embd 128]
       [--block_size 64] [--vocab_size 64] [--batch_size 64] [--steps 50] [--warmup 100]
Prints one JSON line: rank 0's median step (ms), p10, p90, median CPU time of the stepping thread (ms), tokens/s
over all ranks from the median step, and each rank's peak resident memory (bytes, getrusage's ru_maxrss)."""
import argparse
import json
import os
import resource
import socket
import statistics
import sys
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
sys.path.insert(0, os.path.join(here, "../../fleet-core/src/test/resources/interop"))
from mlp_peer import set_threads  # noqa: E402
from torch_gpt import GPT, decayed  # noqa: E402

BATCHES = 4


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run(rank, a, port, out):
    set_threads(1)
    if a.nproc > 1:
        os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
        dist.init_process_group("gloo", rank=rank, world_size=a.nproc)
    torch.manual_seed(1)
    gpt = GPT(a.vocab_size, a.block_size, a.n_layer, a.n_head, a.n_embd)
    model = torch.nn.parallel.DistributedDataParallel(gpt) if a.nproc > 1 else gpt
    params = dict(gpt.named_parameters())
    opt = torch.optim.AdamW([{"params": [p for n, p in params.items() if decayed(n)], "weight_decay": 0.1},
                             {"params": [p for n, p in params.items() if not decayed(n)], "weight_decay": 0.0}],
                            lr=1e-3, betas=(0.9, 0.99), eps=1e-8)
    g = torch.Generator().manual_seed(31 + rank)
    batches = [(torch.randint(0, a.vocab_size, (a.batch_size, a.block_size), generator=g),
                torch.randint(0, a.vocab_size, (a.batch_size, a.block_size), generator=g)) for _ in range(BATCHES)]

    def step(i):
        idx, tgt = batches[i % BATCHES]
        loss = model(idx, tgt)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(gpt.parameters(), 1.0)
        opt.step()
        return loss.item()

    for i in range(a.warmup):
        step(i)
    if a.nproc > 1:
        dist.barrier()
    ms, cpu = [], []
    for i in range(a.steps):
        c0 = time.thread_time()
        t0 = time.perf_counter()
        step(i)
        ms.append((time.perf_counter() - t0) * 1e3)
        cpu.append((time.thread_time() - c0) * 1e3)
    ms.sort()
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    out.put((rank, statistics.median(ms), ms[a.steps // 10], ms[a.steps * 9 // 10], statistics.median(cpu), rss))
    if a.nproc > 1:
        dist.destroy_process_group()


def main():
    p = argparse.ArgumentParser()
    for name, default in (("nproc", 1), ("n_layer", 4), ("n_head", 4), ("n_embd", 128), ("block_size", 64),
                          ("vocab_size", 64), ("batch_size", 64), ("steps", 50), ("warmup", 100)):
        p.add_argument("--" + name, type=int, default=default)
    a = p.parse_args()
    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    port = free_port()
    procs = [ctx.Process(target=run, args=(r, a, port, q)) for r in range(a.nproc)]
    for pr in procs:
        pr.start()
    results = sorted(q.get(timeout=3600) for _ in range(a.nproc))
    for pr in procs:
        pr.join(timeout=60)
    _, median, p10, p90, cpu, _ = results[0]
    median = max(r[1] for r in results)
    tokens = a.batch_size * a.block_size * a.nproc
    print(json.dumps({"torch": torch.__version__, "world_size": a.nproc, "step_ms": median, "step_ms_p10": p10,
                      "step_ms_p90": p90, "cpu_ms": max(r[4] for r in results), "tokens_per_sec": tokens / median * 1e3,
                      "peak_rss_bytes": [r[5] for r in results]}))


if __name__ == "__main__":
    main()
