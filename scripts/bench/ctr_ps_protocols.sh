#!/usr/bin/env bash
# ctr (Wide&Deep on Criteo-format data from ctr_data) end to end on 1 parameter server x 2 workers, sync mode, over
# every protocol side by side (issue 15): grpc, grpc with tensor_fuse, grpc++, star_server
# and star_server_lite, interleaved round after round with the order rotated; medians of ctr's own samples/s (test
# time left out), the test AUC each reached, and the ratios against grpc (of the medians, and per round).
# Issue 15's target: star_server >= 2x grpc. Also prints the sparse keys a worker's step pulls (and pushes): the
# distinct ids per slot in a batch of BATCH training rows, over the 26 slots, twice (a wide and a deep table each).
# Usage: scripts/bench/ctr_ps_protocols.sh [ROUNDS=3] [ROWS=100000] [BATCH=256]   (after ./mvnw -q package -DskipTests)
set -euo pipefail
cd "$(dirname "$0")/../.."
rounds=${1:-3}
rows=${2:-100000}
batch=${3:-256}
py=/usr/bin/python3
out=$(mktemp -d)
bin/fleetrun --log_dir "$out/gen" ctr_data --rows "$rows" --out "$out/data" >/dev/null 2>&1

sides="grpc grpc_fused grpc++ star_server star_server_lite"
for side in $sides; do
  protocol=${side%_fused}
  fuse=false
  [[ $side == *_fused ]] && fuse=true
  printf 'mode: ps\na_sync: false\nprotocol: %s\ntensor_fuse: %s\n' "$protocol" "$fuse" > "$out/$side.yaml"
done

. scripts/bench/rotate.sh

echo "start: $(date -u +%H:%M:%S) UTC, $(uptime | sed 's/.*load/load/')"
for r in $(seq 1 "$rounds"); do
  for side in $(rotate "$r" "$sides"); do
    bin/fleetrun --server_num 1 --worker_num 2 --strategy "$out/$side.yaml" --log_dir "$out/$side.$r" ctr \
      --data_dir "$out/data" --batch_size "$batch" >/dev/null 2>&1
  done
  echo "round $r done: $(date -u +%H:%M:%S) UTC, $(uptime | sed 's/.*load/load/')"
done
echo "end:   $(date -u +%H:%M:%S) UTC, $(uptime | sed 's/.*load/load/')"
$py - "$out" "$rounds" "$sides" "$batch" <<'PY'
import glob, gzip, json, statistics, sys
out, rounds, sides, batch = sys.argv[1], int(sys.argv[2]), sys.argv[3].split(), int(sys.argv[4])
med = statistics.median
def runs(side):
    return [json.load(open(f"{out}/{side}.{r}/summary.json")) for r in range(1, rounds + 1)]
g = runs("grpc")
print(f"rounds {rounds}; ctr, 1 server x 2 workers, sync; medians")
print(f"  {'protocol':17} {'samples/s':>10} {'test AUC':>9}  x grpc (per round)")
for side in sides:
    rs = runs(side)
    s = med(x["samples_per_sec"] for x in rs)
    per = ", ".join(f"{a['samples_per_sec'] / b['samples_per_sec']:.2f}" for a, b in zip(rs, g))
    each = ", ".join(f"{x['samples_per_sec']:,.0f}" for x in rs)
    print(f"  {side:17} {s:10,.0f} {med(x['auc'] for x in rs):9.4f}  {s / med(x['samples_per_sec'] for x in g):.2f} ({per})"
          f"   rounds: {each}")
keys, rows = [], []
for f in sorted(glob.glob(f"{out}/data/train*")):
    with (gzip.open(f, "rt") if f.endswith(".gz") else open(f)) as lines:
        for line in lines:
            rows.append(line.rstrip("\n").split("\t")[14:40])
            if len(rows) == batch:
                keys.append(2 * sum(len({r[slot] for r in rows}) for slot in range(26)))
                rows = []
print(f"  sparse keys per worker step (batch {batch}): {statistics.mean(keys):,.0f} on average over {len(keys)} batches"
      f" (26 slots x 2 tables, a missing value one key)")
PY
echo "logs: $out"
