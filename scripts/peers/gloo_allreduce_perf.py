#!/usr/bin/env python3
"""PyTorch Gloo counterpart of Fleet4J's allreduce_perf: same sizes, method and columns.

Usage: python3 gloo_allreduce_perf.py --nproc 2 --sizes 4K,64K,1M,16M,64M [--op allreduce] [--repeats 5] [--ms_per_size 400]
Starts --nproc processes on this host, rendezvous over TCP on a free loopback port.
"""
import argparse
import multiprocessing as mp
import os
import socket
import statistics
import time


def parse_size(s):
    s = s.strip().upper().rstrip("B")
    mult = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(s[-1:], 1)
    return int(s[:-1] if mult > 1 else s) * mult


def rank_main(rank, world, port, args, out):
    import torch
    import torch.distributed as dist
    torch.set_num_threads(1)
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    dist.init_process_group("gloo", rank=rank, world_size=world)
    factor = {"allreduce": 2.0 * (world - 1) / world, "broadcast": 1.0}.get(args.op, (world - 1) / world)
    rows = []
    for size in [parse_size(s) for s in args.sizes.split(",")]:
        count = size // 4
        a = torch.ones(count, dtype=torch.float32)
        share = count // world
        outs = [torch.empty(share, dtype=torch.float32) for _ in range(world)]

        def once():
            if args.op == "allreduce":
                dist.all_reduce(a)
            elif args.op == "broadcast":
                dist.broadcast(a, 0)
            elif args.op == "allgather":
                dist.all_gather(outs, a[rank * share:(rank + 1) * share])
            else:
                dist.reduce_scatter(outs[0], list(a[: share * world].split(share)))

        for _ in range(max(5, min(5000, (64 << 20) // size))):
            once()
        probe = 1
        while True:
            t0 = time.perf_counter()
            for _ in range(probe):
                once()
            el = torch.tensor([time.perf_counter() - t0], dtype=torch.float64)
            dist.broadcast(el, 0)
            if el.item() >= args.ms_per_size / 1e4 or probe >= 100000:
                iters = max(3, int(probe * (args.ms_per_size / 1e3) / max(el.item(), 1e-9)))
                break
            probe *= 2
        times = []
        for _ in range(args.repeats):
            dist.barrier()
            t0 = time.perf_counter()
            for _ in range(iters):
                once()
            us = torch.tensor([(time.perf_counter() - t0) * 1e6 / iters], dtype=torch.float64)
            dist.all_reduce(us, op=dist.ReduceOp.MAX)
            times.append(us.item())
        us = statistics.median(times)
        algbw = size / us / 1e3
        rows.append((size, count, us, algbw, algbw * factor))
    if rank == 0:
        out.put(rows)
    dist.destroy_process_group()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--nproc", type=int, default=2)
    p.add_argument("--sizes", default="4K,64K,1M,16M,64M")
    p.add_argument("--op", default="allreduce", choices=["allreduce", "broadcast", "allgather", "reduce_scatter"])
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--ms_per_size", type=float, default=400)
    args = p.parse_args()
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    ctx = mp.get_context("spawn")
    out = ctx.Queue()
    procs = [ctx.Process(target=rank_main, args=(r, args.nproc, port, args, out)) for r in range(args.nproc)]
    for pr in procs:
        pr.start()
    rows = out.get()
    for pr in procs:
        pr.join()
    print(f"# gloo_allreduce_perf: {args.op}, {args.nproc} ranks, float32 sum, median of {args.repeats} repeats")
    print("%12s %12s %12s %10s %10s" % ("size(B)", "count", "time(us)", "algbw(GB/s)", "busbw(GB/s)"))
    for size, count, us, algbw, busbw in rows:
        print("%12d %12d %12.2f %10.3f %10.3f" % (size, count, us, algbw, busbw))


if __name__ == "__main__":
    main()
