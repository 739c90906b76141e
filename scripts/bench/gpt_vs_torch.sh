#!/usr/bin/env bash
# Training throughput of the gpt program's model and recipe (nanoGPT's GPT: N_LAYER blocks, n_embd 128, 4 heads,
# block 64, batch 64 per rank = 4,096 tokens a step per rank; AdamW with clipping) against PyTorch 1.13 on the same
# model, batch and update, interleaved round after round so both see the same machine:
#   1 rank:  Fleet4J gpt_perf, one thread          vs  PyTorch, one thread (torch and OpenBLAS)  (issue 38: >= 1.3x)
#   2 ranks: Fleet4J gpt_perf on fleetrun, shm     vs  PyTorch DDP over Gloo, one thread a rank  (issue 38: >= 2x)
# Each run warms up WARMUP steps untimed, then times STEPS; figures are medians of the steps, then of the rounds.
# Wall time and the stepping thread's CPU time are both reported: on a loaded machine other processes inflate wall
# time more. Memory: Fleet4J's peak off-heap bytes per rank (tensors; sampled after every step) against PyTorch's
# peak resident set per process (everything: the interpreter, libraries and tensors).
# Usage: scripts/bench/gpt_vs_torch.sh [ROUNDS=3] [STEPS=40] [WARMUP=100] [N_LAYER=4]  (after ./mvnw -q package -DskipTests)
set -euo pipefail
cd "$(dirname "$0")/../.."
rounds=${1:-3}
steps=${2:-40}
warmup=${3:-100}
layers=${4:-4}
py=/usr/bin/python3
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
model=(--n_layer "$layers" --n_head 4 --n_embd 128 --block_size 64 --batch_size 64 --steps "$steps" --warmup "$warmup")
echo "$(date -u '+%F %H:%M') UTC, build $(git rev-parse --short HEAD), $(nproc) cores; start: load $(cut -d' ' -f1-3 /proc/loadavg)"
for r in $(seq 1 "$rounds"); do
  OMP_NUM_THREADS=1 bin/fleetrun --nproc_per_node 1 --log_dir "$out/f1.$r" gpt_perf "${model[@]}" >"$out/f1.$r.log" 2>&1 \
    || { cat "$out/f1.$r.log"; exit 1; }
  OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 $py scripts/peers/torch_gpt_perf.py --nproc 1 "${model[@]}" > "$out/t1.$r"
  OMP_NUM_THREADS=1 bin/fleetrun --nproc_per_node 2 --log_dir "$out/f2.$r" gpt_perf "${model[@]}" >"$out/f2.$r.log" 2>&1 \
    || { cat "$out/f2.$r.log"; exit 1; }
  OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 $py scripts/peers/torch_gpt_perf.py --nproc 2 "${model[@]}" > "$out/t2.$r"
  echo "round $r done: load $(cut -d' ' -f1-3 /proc/loadavg)"
done
$py - "$out" "$rounds" <<'PY'
import json, statistics, sys
out, rounds = sys.argv[1], int(sys.argv[2])
def load(kind, n):
    rows = []
    for r in range(1, rounds + 1):
        path = f"{out}/f{n}.{r}/summary.json" if kind == "fleet" else f"{out}/t{n}.{r}"
        rows.append(json.load(open(path)) if kind == "fleet" else json.loads(open(path).read().strip().splitlines()[-1]))
    return rows
for n, peer in ((1, "PyTorch, 1 thread"), (2, "PyTorch DDP (Gloo)")):
    f, t = load("fleet", n), load("torch", n)
    tokens = f[0]["tokens_per_step"]
    for label, key in (("wall", "step_ms"), ("CPU", "cpu_ms")):
        fm, tm = [x[key] for x in f], [x[key] for x in t]
        print(f"{n} rank(s), {tokens:,} tokens a step, {label} time: Fleet4J median {statistics.median(fm):.1f} ms"
              f" ({min(fm):.1f}..{max(fm):.1f}) = {tokens / statistics.median(fm) * 1e3:,.0f} tokens/s;"
              f" {peer} {statistics.median(tm):.1f} ms ({min(tm):.1f}..{max(tm):.1f})"
              f" = {tokens / statistics.median(tm) * 1e3:,.0f} tokens/s; ratio {statistics.median(tm) / statistics.median(fm):.2f}x"
              f" (per round: {' '.join('%.2f' % (b / a) for a, b in zip(fm, tm))})")
    mem = statistics.median(x["peak_offheap_bytes"] for x in f) / 2**20
    rss = statistics.median(max(x["peak_rss_bytes"]) for x in t) / 2**20
    print(f"{n} rank(s), memory per rank: Fleet4J peak off-heap {mem:.1f} MiB; PyTorch peak resident {rss:.1f} MiB")
PY
echo "end: load $(cut -d' ' -f1-3 /proc/loadavg)"
