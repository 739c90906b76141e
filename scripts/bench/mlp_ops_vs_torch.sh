#!/usr/bin/env bash
# mlp_perf's step op by op (784-512-512-10, batch 64, 1 thread): the median time of each op of Fleet4J's step, from
# the executor's timeline, beside PyTorch's calls for the same work (scripts/bench/mlp_ops.py pairs them), in
# interleaved rounds; with BASE_ROOT, the same from a second checkout's build/lib (for before/after tables).
# Usage: scripts/bench/mlp_ops_vs_torch.sh [ROUNDS=5] [STEPS=300] [BASE_ROOT]   (after ./mvnw -q package -DskipTests)
set -euo pipefail
cd "$(dirname "$0")/../.."
rounds=${1:-5}
steps=${2:-300}
base=${3:-}
py=/usr/bin/python3
out=$(mktemp -d)
mkdir -p "$out/fleet" "$out/base"
for r in $(seq 1 "$rounds"); do
  if [ -n "$base" ]; then
    "$base/bin/fleetrun" --nproc_per_node 1 --log_dir "$out/log" mlp_perf --steps "$steps" --warmup 300 \
      --timeline "$out/base/$r.json" >/dev/null 2>&1
  fi
  bin/fleetrun --nproc_per_node 1 --log_dir "$out/log" mlp_perf --steps "$steps" --warmup 300 \
    --timeline "$out/fleet/$r.json" >/dev/null 2>&1
  $py scripts/bench/mlp_ops.py torch "$out/torch.$r.json"
done
columns=()
[ -n "$base" ] && columns+=("base=$out/base")
columns+=("Fleet4J=$out/fleet")
torch_args=()
for r in $(seq 1 "$rounds"); do torch_args+=(--torch "$out/torch.$r.json"); done
echo "rounds $rounds, $steps steps each; $(uptime)"
$py scripts/bench/mlp_ops.py table "${columns[@]}" "${torch_args[@]}"
