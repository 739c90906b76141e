#!/usr/bin/env bash
# Two builds of Fleet4J side by side, round after round, so both see the same machine: mlp_perf on 1 and 2 ranks
# (3,000 warm-up steps, then the timed steps), allreduce_perf (shm, 64 KiB-2.6 MB) and ps_perf (1 server x 2
# workers, star_server), then the medians and the after/before ratios. For a refactoring that must not cost speed.
# Usage: scripts/bench/before_after.sh BEFORE_TREE AFTER_TREE [ROUNDS=4] [STEPS=1500] [WARMUP=3000]
#   PARTS="mlp allreduce ps" (the default) runs all three; e.g. PARTS=ps runs ps_perf alone, for more rounds of it
#   each tree is a checkout built with ./mvnw -q package -DskipTests (bin/fleetrun runs from its build/lib)
set -euo pipefail
before=$(cd "$1" && pwd)
after=$(cd "$2" && pwd)
rounds=${3:-4}
steps=${4:-1500}
warmup=${5:-3000}
parts=" ${PARTS:-mlp allreduce ps} "
sizes=64K,1M,1600K,2680K
out=$(mktemp -d)
echo "start: $(uptime)"
for r in $(seq 1 "$rounds"); do
  # alternate which build goes first, so neither always gets the cooler (or hotter) machine
  if (( r % 2 )); then order="before after"; else order="after before"; fi
  for side in $order; do
    tree=$before; [[ $side == after ]] && tree=$after
    if [[ $parts == *" mlp "* ]]; then
      for n in 1 2; do
        "$tree/bin/fleetrun" --nproc_per_node "$n" --log_dir "$out/$side.mlp$n.$r" mlp_perf --steps "$steps" \
          --warmup "$warmup" >/dev/null 2>&1
      done
    fi
    if [[ $parts == *" allreduce "* ]]; then
      "$tree/bin/fleetrun" --nproc_per_node 2 --log_dir "$out/$side.ar.$r" allreduce_perf --backend shm \
        --sizes "$sizes" --repeats 5 --ms_per_size 300 >/dev/null 2>&1
    fi
    if [[ $parts == *" ps "* ]]; then
      printf 'mode: ps\na_sync: true\nprotocol: star_server\n' > "$out/ps.yaml"
      "$tree/bin/fleetrun" --server_num 1 --worker_num 2 --strategy "$out/ps.yaml" --log_dir "$out/$side.ps.$r" \
        ps_perf --steps "$steps" --warmup "$warmup" >/dev/null 2>&1
    fi
  done
done
echo "end:   $(uptime)"
/usr/bin/python3 - "$out" "$rounds" "$parts" <<'PY'
import json, statistics, sys
out, rounds, parts = sys.argv[1], int(sys.argv[2]), sys.argv[3].split()
def mlp(side, n):
    return statistics.median(json.load(open(f"{out}/{side}.mlp{n}.{r}/summary.json"))["samples_per_sec"]
                             for r in range(1, rounds + 1))
def allreduce(side):
    rows = {}
    for r in range(1, rounds + 1):
        for row in json.load(open(f"{out}/{side}.ar.{r}/allreduce_perf.json")):
            rows.setdefault(row["bytes"], []).append(row["time_us"])
    return {b: statistics.median(v) for b, v in rows.items()}
print(f"rounds {rounds}; medians (before, after, after/before)")
if "mlp" in parts:
    for n in (1, 2):
        b, a = mlp("before", n), mlp("after", n)
        print(f"mlp_perf {n} rank(s), samples/s: {b:10,.0f} {a:10,.0f}  {a / b:.3f}")
def ps_rounds(side):
    return [json.load(open(f"{out}/{side}.ps.{r}/summary.json"))["keys_per_sec"] for r in range(1, rounds + 1)]
if "ps" in parts:
    b, a = ps_rounds("before"), ps_rounds("after")
    print(f"ps_perf star_server 1x2, keys/s: {statistics.median(b):12,.0f} {statistics.median(a):12,.0f}"
          f"  {statistics.median(a) / statistics.median(b):.3f}"
          f"  (rounds, M keys/s: before {' '.join(f'{v / 1e6:.2f}' for v in b)}; after {' '.join(f'{v / 1e6:.2f}' for v in a)})")
if "allreduce" in parts:
    ab, aa = allreduce("before"), allreduce("after")
    for size in sorted(ab):
        print(f"allreduce_perf shm {size:>8} B, us: {ab[size]:9.1f} {aa[size]:9.1f}  {aa[size] / ab[size]:.3f}")
PY
echo "logs: $out"
