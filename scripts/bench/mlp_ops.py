"""mlp_perf's step op by op: Fleet4J's kernels (from executor timelines) against the same work in PyTorch, 1 thread.

  mlp_ops.py torch OUT.json [--reps 200]      times PyTorch's operations of the step (torch and OpenBLAS on 1 thread)
  mlp_ops.py table LABEL=DIR ... --torch T.json ...
        prints a markdown table: for each row, the median over runs of each run's per-step median in microseconds.
        A DIR holds Fleet4J timelines (*.json from `mlp_perf --timeline`), one per run.

Each row pairs Fleet4J ops (type and occurrence within the step, in program order) with the PyTorch calls that
do the same work on the same shapes (784-512-512-10, batch 64); PyTorch's weights are [out, in] as nn.Linear
keeps them, so its transposes differ from ours where the layouts do."""
import glob
import json
import statistics
import sys
import time
from collections import defaultdict

# label, Fleet4J (op type, occurrence) pairs, PyTorch operation (a key of torch_calls)
ROWS = [
    ("fc1 forward: X W + b", [("matmul", 0), ("elementwise_add", 0)], "addmm1"),
    ("relu 1", [("relu", 0)], "relu"),
    ("fc2 forward: H W + b", [("matmul", 1), ("elementwise_add", 1)], "addmm2"),
    ("relu 2", [("relu", 1)], "relu"),
    ("fc3 forward: H W + b", [("matmul", 2), ("elementwise_add", 2)], "addmm3"),
    ("softmax cross entropy + mean", [("softmax_with_cross_entropy", 0), ("mean", 0)], "xent"),
    ("loss gradient", [("fill_constant", 0), ("mean_grad", 0), ("softmax_with_cross_entropy_grad", 0)], "xent_grad"),
    ("fc3 bias grad", [("elementwise_add_grad", 0)], "bias_grad3"),
    ("fc3 dX and dW", [("matmul_grad", 0)], "mm3_grad"),
    ("relu 2 grad", [("relu_grad", 0)], "relu_grad"),
    ("fc2 bias grad", [("elementwise_add_grad", 1)], "bias_grad"),
    ("fc2 dX and dW", [("matmul_grad", 1)], "mm2_grad"),
    ("relu 1 grad", [("relu_grad", 1)], "relu_grad"),
    ("fc1 bias grad", [("elementwise_add_grad", 2)], "bias_grad"),
    ("fc1 dW", [("matmul_grad", 2)], "mm1_grad"),
    ("sgd, 6 parameters", [("sgd", i) for i in range(6)], "sgd"),
    ("other ops (accuracy, lr_schedule, increment)", [("accuracy", 0), ("lr_schedule", 0), ("increment", 0)], None),
]


def torch_calls():
    import torch
    sys.path.insert(0, __file__.rsplit("/", 3)[0] + "/scripts/peers")
    from mlp_peer import set_threads
    set_threads(1)
    torch.manual_seed(1)
    x, h = torch.rand(64, 784), torch.rand(64, 512)
    g, g3 = torch.rand(64, 512), torch.rand(64, 10)
    w1, w2, w3 = torch.rand(512, 784), torch.rand(512, 512), torch.rand(10, 512)
    b, b3 = torch.rand(512), torch.rand(10)
    y = torch.randint(0, 10, (64,))
    logits = torch.rand(64, 10, requires_grad=True)
    params = [torch.rand(512, 784), torch.rand(512), torch.rand(512, 512), torch.rand(512), torch.rand(10, 512),
              torch.rand(10)]
    grads = [torch.rand_like(p) for p in params]
    opt_params = [torch.nn.Parameter(p) for p in params]
    for p, gr in zip(opt_params, grads):
        p.grad = gr
    opt = torch.optim.SGD(opt_params, lr=1e-9)

    def xent_grad():
        loss = torch.nn.functional.cross_entropy(logits, y)
        loss.backward()

    return {
        "addmm1": lambda: torch.addmm(b, x, w1.t()),
        "addmm2": lambda: torch.addmm(b, h, w2.t()),
        "addmm3": lambda: torch.addmm(b3, h, w3.t()),
        "relu": lambda: torch.relu(h),
        "xent": lambda: torch.nn.functional.cross_entropy(logits.detach(), y),
        "xent_grad": xent_grad,  # forward and backward of the loss: the closest torch has to the backward alone
        "bias_grad3": lambda: g3.sum(0),
        "mm3_grad": lambda: (torch.mm(g3, w3), torch.mm(g3.t(), h)),
        "relu_grad": lambda: torch.ops.aten.threshold_backward(g, h, 0),
        "bias_grad": lambda: g.sum(0),
        "mm2_grad": lambda: (torch.mm(g, w2), torch.mm(g.t(), h)),
        "mm1_grad": lambda: torch.mm(g.t(), x),
        "sgd": opt.step,
    }


def time_torch(out, reps):
    calls = torch_calls()
    result = {}
    for name, f in calls.items():
        for _ in range(30):
            f()
        us = []
        for _ in range(reps):
            s = time.perf_counter()
            f()
            us.append((time.perf_counter() - s) * 1e6)
        result[name] = statistics.median(us)
    json.dump(result, open(out, "w"), indent=1)


def fleet_rows(timeline):
    """Per-row median over steps of the summed op durations, from one Fleet4J timeline."""
    events = [e for e in json.load(open(timeline))["traceEvents"] if e.get("ph") == "X"]
    steps, current, seen = [], {}, defaultdict(int)
    for e in events:
        if e["args"]["index"] == 0 and current:
            steps.append(current)
            current, seen = {}, defaultdict(int)
        key = (e["name"], seen[e["name"]])
        seen[e["name"]] += 1
        current[key] = e["dur"]
    steps.append(current)
    rows = {}
    for label, ops, _ in ROWS:
        rows[label] = statistics.median(sum(s.get(op, 0) for op in ops) for s in steps)
    return rows


def table(args):
    columns, torch_files, i = [], [], 0
    while i < len(args):
        if args[i] == "--torch":
            torch_files.append(args[i + 1])
            i += 2
        else:
            label, folder = args[i].split("=", 1)
            runs = [fleet_rows(f) for f in sorted(glob.glob(folder + "/*.json"))]
            columns.append((label, {k: statistics.median(r[k] for r in runs) for k in runs[0]}))
            i += 1
    torch_runs = [json.load(open(f)) for f in torch_files]
    torch_med = {k: statistics.median(r[k] for r in torch_runs) for k in torch_runs[0]} if torch_runs else {}
    head = ["op (median us per step)"] + [c[0] for c in columns] + (["PyTorch 1 thread"] if torch_med else [])
    print("| " + " | ".join(head) + " |")
    print("| --- |" + " ---: |" * (len(head) - 1))
    for label, _, key in ROWS:
        cells = [f"{c[1][label]:.0f}" for c in columns]
        if torch_med:
            cells.append(f"{torch_med[key]:.0f}" if key else "")
        print(f"| {label} | " + " | ".join(cells) + " |")
    # a sum of medians, not a step's median: one preempted step moves it less
    cells = [f"{sum(c[1].values()):.0f}" for c in columns]
    if torch_med:
        cells.append(f"{sum(torch_med[key] for _, _, key in ROWS if key):.0f}")
    print("| sum of the rows | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    if sys.argv[1] == "torch":
        reps = int(sys.argv[sys.argv.index("--reps") + 1]) if "--reps" in sys.argv else 200
        time_torch(sys.argv[2], reps)
    elif sys.argv[1] == "table":
        table(sys.argv[2:])
    else:
        sys.exit(__doc__)
