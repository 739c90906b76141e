#!/usr/bin/env bash
# ctr (Wide&Deep on Criteo-format data from ctr_data) on 1 parameter server x 2 workers (sync mode, grpc) against the
# single-process run with local tables, on the same data, interleaved round after round; medians of samples/s (test
# time left out, as ctr's summary counts it) and the AUC each reached. Same flags on both sides; the workers each take
# --batch_size rows per step, so the ps run's global batch is twice the local one.
# Usage: scripts/bench/ctr_ps_vs_local.sh [ROUNDS=3] [ROWS=200000] [BATCH=256]   (after ./mvnw -q package -DskipTests)
set -euo pipefail
cd "$(dirname "$0")/../.."
rounds=${1:-3}
rows=${2:-200000}
batch=${3:-256}
py=/usr/bin/python3
out=$(mktemp -d)
bin/fleetrun --log_dir "$out/gen" ctr_data --rows "$rows" --out "$out/data" >/dev/null 2>&1
printf 'mode: ps\na_sync: false\n' > "$out/ps.yaml"
echo "start: $(uptime)"
for r in $(seq 1 "$rounds"); do
  if (( r % 2 )); then order="local ps"; else order="ps local"; fi
  for side in $order; do
    if [[ $side == local ]]; then
      bin/fleetrun --log_dir "$out/local.$r" ctr --data_dir "$out/data" --batch_size "$batch" >/dev/null 2>&1
    else
      bin/fleetrun --server_num 1 --worker_num 2 --strategy "$out/ps.yaml" --log_dir "$out/ps.$r" ctr \
        --data_dir "$out/data" --batch_size "$batch" >/dev/null 2>&1
    fi
  done
done
echo "end:   $(uptime)"
$py - "$out" "$rounds" <<'PY'
import json, statistics, sys
out, rounds = sys.argv[1], int(sys.argv[2])
def runs(side):
    return [json.load(open(f"{out}/{side}.{r}/summary.json")) for r in range(1, rounds + 1)]
loc, ps = runs("local"), runs("ps")
med = lambda rs, k: statistics.median(x[k] for x in rs)
print(f"rounds {rounds}; medians")
print(f"  samples/s  local 1 process {med(loc, 'samples_per_sec'):10,.0f}   ps 1 server x 2 workers (sync, grpc)"
      f" {med(ps, 'samples_per_sec'):10,.0f}   ratio ps/local {med(ps, 'samples_per_sec') / med(loc, 'samples_per_sec'):.2f}")
print("  per round: " + ", ".join(f"{a['samples_per_sec']:,.0f} / {b['samples_per_sec']:,.0f}" for a, b in zip(loc, ps)))
print(f"  test AUC   local {med(loc, 'auc'):.4f}   ps {med(ps, 'auc'):.4f}")
PY
echo "logs: $out"
