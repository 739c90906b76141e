#!/usr/bin/env bash
# Per-operation latency of Fleet4J's forced tcp allreduce against Open MPI over tcp (--mca btl tcp,self), 2 ranks on
# loopback, taking turns for ROUNDS rounds (order alternating). Each tool times OPS single operations per size
# (OpLatency.java, mpi_op_latency.c) and reports percentiles; on a shared host the 10th-50th percentiles show
# each path's cost while both ranks are on a core, which the mean over back-to-back operations of
# compare_tcp.sh mixes with the other jobs' scheduling. Prints each round, then per size the median over the rounds
# of each percentile and the ratio Open MPI p50 / Fleet4J p50 (above 1: Fleet4J faster).
# Usage: [VARIANTS="name=/checkout ..."] scripts/peers/tcp_op_latency.sh [ROUNDS=9] [SIZES=524288,1048576,2097152] [OPS=1500]
# Needs: ./mvnw -q package -DskipTests (build/lib), scripts/install-peers.sh (Open MPI).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
ROUNDS="${1:-9}"
SIZES="${2:-524288,1048576,2097152}"
OPS="${3:-1500}"
JAVAC="${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}/bin/javac"
OUT="$(mktemp -d /tmp/fleet4j-tcp-latency.XXXXXX)"
ROOT_FLAG=""
[ "$(id -u)" = 0 ] && ROOT_FLAG="--allow-run-as-root"
mpicc -O2 -o "$OUT/mpi_op_latency" "$ROOT/scripts/peers/mpi_op_latency.c"
"$JAVAC" -nowarn -cp "$ROOT/build/lib/*" -d "$OUT/classes" "$ROOT/scripts/peers/OpLatency.java"

declare -A FLEET=([fleet4j]="$ROOT")
TOOLS=(fleet4j)
for v in ${VARIANTS:-}; do
  FLEET[${v%%=*}]="${v#*=}"
  TOOLS+=("${v%%=*}")
done
TOOLS+=(openmpi)

echo "# start: $(uptime)"
for r in $(seq 1 "$ROUNDS"); do
  order=("${TOOLS[@]}")
  if [ $((r % 2)) = 0 ]; then
    order=()
    for ((i = ${#TOOLS[@]} - 1; i >= 0; i--)); do order+=("${TOOLS[$i]}"); done
  fi
  for tool in "${order[@]}"; do
    if [ "$tool" = openmpi ]; then
      mpirun $ROOT_FLAG --mca btl tcp,self -np 2 "$OUT/mpi_op_latency" "$SIZES" "$OPS"
    else
      CLASSPATH="$OUT/classes" "${FLEET[$tool]}/bin/fleetrun" --nproc_per_node 2 --log_dir "$OUT/log" OpLatency "$SIZES" "$OPS"
    fi 2>&1 | grep -o 'latency .*' > "$OUT/$tool.$r.txt"
    echo "round $r $tool: $(awk '{printf "%s B p10/p25/p50 %s/%s/%s us  ", $2, $4, $6, $8}' "$OUT/$tool.$r.txt")| load $(cut -d' ' -f1 /proc/loadavg)"
  done
done
echo "# end: $(uptime)"

/usr/bin/python3 - "$OUT" "$ROUNDS" "${TOOLS[@]}" <<'PY'
import statistics, sys
out, rounds, tools = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
p = {}
for tool in tools:
    for r in range(1, rounds + 1):
        for line in open(f"{out}/{tool}.{r}.txt"):
            f = line.split()
            p.setdefault((tool, int(f[1])), []).append((float(f[3]), float(f[5]), float(f[7])))
sizes = sorted({s for (_, s) in p})
fleets = [x for x in tools if x != "openmpi"]
med = lambda tool, s, i: statistics.median(v[i] for v in p[(tool, s)])
print(f"\nmedians over {rounds} rounds of each percentile, µs (p10 / p25 / p50); ratio = Open MPI p50 / tool p50")
print("| bytes | " + " | ".join(tools) + " | " + " | ".join(f"{x} ratio" for x in fleets) + " |")
print("|" + "---|" * (1 + len(tools) + len(fleets)))
for s in sizes:
    cells = [" / ".join(f"{med(x, s, i):.1f}" for i in range(3)) for x in tools]
    ratios = [f"{med('openmpi', s, 2) / med(x, s, 2):.2f}" for x in fleets]
    print(f"| {s} | " + " | ".join(cells) + " | " + " | ".join(ratios) + " |")
print(f"\nraw: {out}")
PY
