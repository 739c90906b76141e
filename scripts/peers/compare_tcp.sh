#!/usr/bin/env bash
# Fleet4J's forced tcp backend against Open MPI over tcp (--mca btl tcp,self), 2 ranks on loopback, taking turns
# for ROUNDS rounds so that both see the same machine conditions; the order within a round alternates from round to
# round. Prints each round's time per size with the load average, then per size the median time and busbw of each
# tool and the ratio Fleet4J / Open MPI (busbw), both of the medians and as the median of the per-round ratios.
# Usage: [VARIANTS="name=/checkout ..."] scripts/peers/compare_tcp.sh [ROUNDS=9] [SIZES=512K,1M,2M] [MS_PER_SIZE=300]
# VARIANTS: further built checkouts (e.g. git worktrees of other commits) whose tcp backend runs in every round
# too, each under its name, for before/after comparisons in the same run.
# Needs: ./mvnw -q package -DskipTests (bin/fleetrun runs build/lib), scripts/install-peers.sh (Open MPI).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
ROUNDS="${1:-9}"
SIZES="${2:-512K,1M,2M}"
MS="${3:-300}"
OUT="$(mktemp -d /tmp/fleet4j-compare-tcp.XXXXXX)"
ROOT_FLAG=""
[ "$(id -u)" = 0 ] && ROOT_FLAG="--allow-run-as-root"
mpicc -O2 -o "$OUT/mpi_allreduce_perf" "$ROOT/scripts/peers/mpi_allreduce_perf.c"
COMMON=(--sizes "$SIZES" --repeats 5 --ms_per_size "$MS")

declare -A FLEET=([fleet4j]="$ROOT")
TOOLS=(fleet4j)
for v in ${VARIANTS:-}; do
  name="${v%%=*}"
  FLEET[$name]="${v#*=}"
  TOOLS+=("$name")
done
TOOLS+=(openmpi)

run() {  # run TOOL ROUND: one table, rank 0's rows only
  local tool="$1" round="$2"
  if [ "$tool" = openmpi ]; then
    mpirun $ROOT_FLAG --mca btl tcp,self -np 2 "$OUT/mpi_allreduce_perf" "${COMMON[@]}"
  else
    "${FLEET[$tool]}/bin/fleetrun" --nproc_per_node 2 --log_dir "$OUT/log" allreduce_perf --backend tcp "${COMMON[@]}"
  fi 2>&1 | grep -E '^(\[rank 0\] )? +[0-9]+ +[0-9]+ ' | sed 's/^\[rank 0\] //' > "$OUT/$tool.$round.txt"
  echo "round $round $tool: $(awk '{printf "%s B %s us  ", $1, $3}' "$OUT/$tool.$round.txt")| load $(cut -d' ' -f1 /proc/loadavg)"
}

echo "# start: $(uptime)"
for r in $(seq 1 "$ROUNDS"); do
  order=("${TOOLS[@]}")
  if [ $((r % 2)) = 0 ]; then
    order=()
    for ((i = ${#TOOLS[@]} - 1; i >= 0; i--)); do order+=("${TOOLS[$i]}"); done
  fi
  for tool in "${order[@]}"; do
    run "$tool" "$r"
  done
done
echo "# end: $(uptime)"

/usr/bin/python3 - "$OUT" "$ROUNDS" "${TOOLS[@]}" <<'PY'
import statistics, sys
out, rounds, tools = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
t, b = {}, {}
for tool in tools:
    for r in range(1, rounds + 1):
        for line in open(f"{out}/{tool}.{r}.txt"):
            p = line.split()
            t[(tool, int(p[0]), r)] = float(p[2])
            b[(tool, int(p[0]), r)] = float(p[4])
sizes = sorted({s for (_, s, _) in t})
fleets = [x for x in tools if x != "openmpi"]
med = statistics.median
print(f"\nmedians of {rounds} rounds, time µs / busbw GB/s; ratio = busbw / Open MPI's (median of the rounds' ratios in brackets)")
print("| bytes | " + " | ".join(tools) + " | " + " | ".join(f"{x} / openmpi" for x in fleets) + " |")
print("|" + "---|" * (1 + len(tools) + len(fleets)))
for s in sizes:
    cells = [f"{med([t[(x, s, r)] for r in range(1, rounds + 1)]):.1f} / {med([b[(x, s, r)] for r in range(1, rounds + 1)]):.3f}" for x in tools]
    mpi = med([b[("openmpi", s, r)] for r in range(1, rounds + 1)])
    ratios = [f"{med([b[(x, s, r)] for r in range(1, rounds + 1)]) / mpi:.2f} ({med([b[(x, s, r)] / b[('openmpi', s, r)] for r in range(1, rounds + 1)]):.2f})" for x in fleets]
    print(f"| {s} | " + " | ".join(cells) + " | " + " | ".join(ratios) + " |")
print(f"\nraw tables: {out}")
PY
