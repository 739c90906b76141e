"""ps_perf's workload on a PyTorch RPC parameter server, the peer of bin/fleetrun ... ps_perf.
One server process holds one ids x dim float32 tensor and serves pulls with index_select and pushes with index_add_
(SGD: table[ids] -= lr * grads), the fastest form a PyTorch user would write (no lock: concurrent pushes to a hot
row may lose updates, which Fleet4J's servers never do). W worker processes each draw batches of Zipf(1.1) ids over
[0, ids), deduplicate them (torch.unique) before timing, and then pull the rows and push gradients of the same shape,
step after step. TensorPipe runs over TCP ("uv" transport, "basic" channel: tensors go through the socket, as between
hosts); --tensorpipe default lets TensorPipe pick (on one host: shared memory and cross-memory attach, no socket).
Bytes on the wire are the server process's TCP sockets' bytes_sent + bytes_received (`ss -ti`) over the timed steps.
Usage: /usr/bin/python3 scripts/peers/torch_rpc_ps_perf.py --workers 2 [--ids 1000000] [--dim 16] [--batch 4096]
       [--steps 2000] [--warmup 3000] [--batches 64] [--lr 0.01] [--seed 1] [--tensorpipe tcp|default] [--out FILE]
Prints one JSON object with ps_perf's summary fields."""
import argparse, json, os, re, socket, subprocess, threading, time
import numpy as np
import torch
import torch.distributed.rpc as rpc
import torch.multiprocessing as mp

ZIPF_EXPONENT = 1.1
_table = None
_lr = None
_barrier = None
_done = None
_wire = {}


def pull(ids):
    return _table.index_select(0, ids)


def push(ids, grads):
    _table.index_add_(0, ids, grads, alpha=-_lr)


def socket_bytes(pid):
    """bytes_sent + bytes_received of every TCP socket of process pid, by its local and peer address."""
    out = subprocess.run(["ss", "-tinpH"], capture_output=True, text=True, check=True).stdout
    lines, counts, key = out.splitlines(), {}, None
    for line in lines:
        if not line.startswith((" ", "\t")):
            fields = line.split()
            key = (fields[3], fields[4]) if f"pid={pid}," in line else None
        elif key is not None:
            sent = re.search(r"bytes_sent:(\d+)", line)
            received = re.search(r"bytes_received:(\d+)", line)
            counts[key] = (int(sent.group(1)) if sent else 0) + (int(received.group(1)) if received else 0)
    return counts


def _snapshot(name):
    _wire[name] = socket_bytes(os.getpid())


def arrive():
    """Waits until every worker has finished its warm-up; the last to come takes the wire's first count."""
    _barrier.wait(timeout=600)


def finish():
    """A worker has finished its timed steps; the last takes the wire's second count and returns the bytes between."""
    _done.wait(timeout=600)
    start, end = _wire["start"], _wire["end"]
    return sum(v - start.get(k, 0) for k, v in end.items())


def zipf_batches(a, rank):
    cdf = np.cumsum(np.arange(1, a.ids + 1, dtype=np.float64) ** -ZIPF_EXPONENT)
    cdf /= cdf[-1]
    rng = np.random.default_rng(a.seed * 1000003 + rank)
    batches = []
    for _ in range(a.batches):
        ranks = np.minimum(np.searchsorted(cdf, rng.random(a.batch)), a.ids - 1)
        batches.append(torch.unique(torch.from_numpy(ranks.astype(np.int64))))
    return batches


def backend(a, port):
    kw = dict(num_worker_threads=max(16, 2 * a.workers), init_method=f"tcp://127.0.0.1:{port}", rpc_timeout=600)
    if a.tensorpipe == "tcp":
        kw.update(_transports=["uv"], _channels=["basic"])
    return rpc.TensorPipeRpcBackendOptions(**kw)


def run(rank, a, port, results):
    global _table, _lr, _barrier, _done
    torch.set_num_threads(1)
    if rank == 0:
        torch.manual_seed(a.seed)
        _table = torch.empty(a.ids, a.dim).uniform_(-0.01, 0.01)
        _lr = a.lr
        _barrier = threading.Barrier(a.workers, action=lambda: _snapshot("start"))
        _done = threading.Barrier(a.workers, action=lambda: _snapshot("end"))
        rpc.init_rpc("ps", rank=0, world_size=a.workers + 1, rpc_backend_options=backend(a, port))
        rpc.shutdown()
        return
    rpc.init_rpc(f"worker{rank - 1}", rank=rank, world_size=a.workers + 1, rpc_backend_options=backend(a, port))
    batches = zipf_batches(a, rank - 1)
    gen = torch.Generator().manual_seed(a.seed + rank)
    most = max(len(b) for b in batches)
    grads = (torch.rand(most, a.dim, generator=gen) - 0.5) * 1e-3

    def step(i):
        ids = batches[i % len(batches)]
        rows = rpc.rpc_sync("ps", pull, args=(ids,))
        rpc.rpc_sync("ps", push, args=(ids, grads[: len(ids)]))
        return len(ids), rows

    for i in range(a.warmup):
        step(i)
    rpc.rpc_sync("ps", arrive)
    times, keys = np.empty(a.steps), 0
    t0 = time.perf_counter()
    for i in range(a.steps):
        s = time.perf_counter()
        n, _ = step(a.warmup + i)
        times[i] = time.perf_counter() - s
        keys += n
    seconds = time.perf_counter() - t0
    wire = rpc.rpc_sync("ps", finish)
    ordered = np.sort(times)
    pct = lambda q: ordered[min(len(ordered) - 1, max(0, int(np.ceil(q * len(ordered))) - 1))] * 1e3
    results.put(dict(keys=keys, seconds=seconds, p50=pct(0.5), p99=pct(0.99), wire=wire))
    rpc.shutdown()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


if __name__ == "__main__":
    p = argparse.ArgumentParser()
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--ids", type=int, default=1_000_000)
    p.add_argument("--dim", type=int, default=16)
    p.add_argument("--batch", type=int, default=4096)
    p.add_argument("--steps", type=int, default=2000)
    p.add_argument("--warmup", type=int, default=3000)
    p.add_argument("--batches", type=int, default=64)
    p.add_argument("--lr", type=float, default=0.01)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--tensorpipe", choices=["tcp", "default"], default="tcp")
    p.add_argument("--out")
    a = p.parse_args()
    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    port = free_port()
    procs = [ctx.Process(target=run, args=(r, a, port, q)) for r in range(a.workers + 1)]
    for pr in procs:
        pr.start()
    got = [q.get(timeout=1800) for _ in range(a.workers)]
    for pr in procs:
        pr.join(timeout=120)
    keys = sum(g["keys"] for g in got)
    seconds = max(g["seconds"] for g in got)
    steps = a.steps * a.workers
    payload = 2 * keys * (8 + 4 * a.dim)
    summary = dict(program="torch_rpc_ps_perf", protocol=f"torch-rpc tensorpipe {a.tensorpipe}",
                   torch=torch.__version__, servers=1, workers=a.workers, ids=a.ids, dim=a.dim, batch=a.batch,
                   steps=a.steps, warmup=a.warmup, seed=a.seed, unique_per_step=keys / steps,
                   keys_per_sec=keys / seconds, mb_per_sec=payload / seconds / 1e6,
                   p50_ms=max(g["p50"] for g in got), p99_ms=max(g["p99"] for g in got), seconds=seconds,
                   wire_bytes_per_step=got[0]["wire"] / steps if a.tensorpipe == "tcp" else None,
                   wire_measured_by="the server process's TCP sockets, bytes_sent + bytes_received (ss -ti)"
                   if a.tensorpipe == "tcp" else "not counted: TensorPipe's shared-memory channels have no socket")
    text = json.dumps(summary, indent=2)
    if a.out:
        with open(a.out, "w") as f:
            f.write(text + "\n")
    print(text)
