"""mlp_perf's step under PyTorch DDP (Gloo, one thread per rank) on random data, for the data-parallel comparison.
Usage: /usr/bin/python3 scripts/peers/torch_ddp_mlp_perf.py --nproc 2 [--batch_size 64] [--steps 200] [--warmup 50]
Starts the ranks itself (torch.multiprocessing) on a free loopback port; prints rank 0's step time and samples/s."""
import argparse, os, socket
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from mlp_peer import build_mlp, set_threads, sgd_step, time_steps


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def worker(rank, a, port, out):
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    set_threads(1)  # torch's and OpenBLAS's pools: one thread per rank, as Fleet4J's ranks
    dist.init_process_group("gloo", rank=rank, world_size=a.nproc)
    torch.manual_seed(1)
    mlp, w = build_mlp(a.layers)
    model = torch.nn.parallel.DistributedDataParallel(mlp)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    torch.manual_seed(100 + rank)
    x = torch.rand(a.batch_size, w[0])
    y = torch.randint(0, w[-1], (a.batch_size,))
    step = sgd_step(model, opt, x, y, fetch_loss=False)

    for _ in range(a.warmup):
        step()
    dist.barrier()
    median_ms, total = time_steps(step, a.steps)
    if rank == 0:
        out.put((median_ms, a.batch_size * a.nproc * a.steps / total))
    dist.destroy_process_group()


if __name__ == "__main__":
    p = argparse.ArgumentParser()
    p.add_argument("--nproc", type=int, default=2)
    p.add_argument("--layers", default="784,512,512,10")
    p.add_argument("--batch_size", type=int, default=64)
    p.add_argument("--steps", type=int, default=200)
    p.add_argument("--warmup", type=int, default=50)
    a = p.parse_args()
    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    port = free_port()
    procs = [ctx.Process(target=worker, args=(r, a, port, q)) for r in range(a.nproc)]
    for pr in procs:
        pr.start()
    med, sps = q.get(timeout=600)
    for pr in procs:
        pr.join(timeout=60)
    print(f"torch {torch.__version__} DDP gloo {a.nproc} ranks x 1 thread: layers {a.layers} batch {a.batch_size} "
          f"per rank: {med:.3f} ms/step (rank 0 median of {a.steps}), {sps:,.0f} samples/s")
