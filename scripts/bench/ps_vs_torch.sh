#!/usr/bin/env bash
# ps_perf over grpc against the PyTorch RPC parameter server (scripts/peers/torch_rpc_ps_perf.py), interleaved round
# after round so both see the same machine, with 2 and 4 workers x 1 server; then medians and ratios. The workload on
# both sides: a 1M x 16 float32 table, batches of 4,096 Zipf(1.1) ids per worker and step, deduplicated before timing,
# a pull of the rows and a push of gradients of the same shape per step (SGD on the server, applied as they come).
# Issue 14's targets: grpc keys/s >= the peer's with 2 workers x 1 server; wire bytes per pull <= 1.1 x unique ids x
# (8 + 4 dim). Both sides run their untimed warm-up steps first (the JIT needs thousands on two busy cores).
# Usage: scripts/bench/ps_vs_torch.sh [ROUNDS=3] [STEPS=2000] [WARMUP=3000] [WORKERS="2 4"]
#   (after ./mvnw -q package -DskipTests; the peer needs python3-torch, scripts/install-deps.sh)
set -euo pipefail
cd "$(dirname "$0")/../.."
rounds=${1:-3}
steps=${2:-2000}
warmup=${3:-3000}
workers=${4:-"2 4"}
py=/usr/bin/python3
out=$(mktemp -d)
echo "start: $(uptime)"
for r in $(seq 1 "$rounds"); do
  for w in $workers; do
    # alternate which side goes first, so neither always gets the cooler (or hotter) machine
    if (( r % 2 )); then order="fleet torch"; else order="torch fleet"; fi
    for side in $order; do
      if [[ $side == fleet ]]; then
        bin/fleetrun --server_num 1 --worker_num "$w" --log_dir "$out/fleet.$w.$r" ps_perf --steps "$steps" \
          --warmup "$warmup" >/dev/null 2>&1
      else
        $py scripts/peers/torch_rpc_ps_perf.py --workers "$w" --steps "$steps" --warmup "$warmup" \
          --out "$out/torch.$w.$r.json" >/dev/null 2>&1
      fi
    done
  done
done
echo "end:   $(uptime)"
$py - "$out" "$rounds" "$workers" <<'PY'
import json, statistics, sys
out, rounds, workers = sys.argv[1], int(sys.argv[2]), [int(w) for w in sys.argv[3].split()]
def runs(side, w):
    f = (lambda r: f"{out}/fleet.{w}.{r}/summary.json") if side == "fleet" else (lambda r: f"{out}/torch.{w}.{r}.json")
    return [json.load(open(f(r))) for r in range(1, rounds + 1)]
def med(rs, key):
    return statistics.median(x[key] for x in rs)
print(f"rounds {rounds}; medians; ratio = grpc / peer (keys/s: higher is better; latency: lower is better)")
for w in workers:
    f, t = runs("fleet", w), runs("torch", w)
    per_round = ", ".join(f"{a['keys_per_sec'] / b['keys_per_sec']:.2f}" for a, b in zip(f, t))
    print(f"{w} workers x 1 server:")
    print(f"  unique keys/s   grpc {med(f, 'keys_per_sec'):12,.0f}   peer {med(t, 'keys_per_sec'):12,.0f}"
          f"   ratio {med(f, 'keys_per_sec') / med(t, 'keys_per_sec'):.2f}"
          f"   (per round: {per_round})")
    print(f"  MB/s payload    grpc {med(f, 'mb_per_sec'):12.1f}   peer {med(t, 'mb_per_sec'):12.1f}")
    print(f"  step p50 ms     grpc {med(f, 'p50_ms'):12.3f}   peer {med(t, 'p50_ms'):12.3f}")
    print(f"  step p99 ms     grpc {med(f, 'p99_ms'):12.3f}   peer {med(t, 'p99_ms'):12.3f}")
    print(f"  wire bytes/step grpc {med(f, 'wire_bytes_per_step'):12,.0f}   peer {med(t, 'wire_bytes_per_step'):12,.0f}")
    print(f"  grpc wire bytes per pull {med(f, 'wire_bytes_per_pull'):,.0f} = {med(f, 'pull_wire_over_payload'):.4f}"
          f" x its payload (unique ids x (8 + 4 dim), {med(f, 'pull_payload_bytes'):,.0f}); bound 1.1")
PY
echo "logs: $out"
