#!/usr/bin/env bash
# The run-to-run spread of the 2-rank shared-memory allreduce (issue: a slow mode in about half the runs): ROUNDS
# back-to-back `allreduce_perf` jobs of Fleet4J's shm backend, each followed by Open MPI's shared-memory
# MPI_Allreduce (same sizes, same method), then per size: every run's time, min / median / max, max/min, and the
# median ratio against Open MPI. Extra words are passed to fleetrun (e.g. --cpu_bind none).
# Usage: scripts/bench/shm_allreduce_spread.sh [ROUNDS=10] [SIZES=4K,64K,1M,16M,64M] [FLEETRUN OPTIONS...]
# Needs: ./mvnw -q package -DskipTests (bin/fleetrun), scripts/install-peers.sh (mpicc, mpirun; else Fleet4J only).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
ROUNDS="${1:-10}"
SIZES="${2:-4K,64K,1M,16M,64M}"
shift $(( $# < 2 ? $# : 2 ))
OUT="$(mktemp -d /tmp/fleet4j-spread.XXXXXX)"
COMMON=(--sizes "$SIZES" --repeats 5 --ms_per_size 300)
MPI=""
if command -v mpicc >/dev/null && command -v mpirun >/dev/null; then
  mpicc -O2 -o "$OUT/mpi_allreduce_perf" "$ROOT/scripts/peers/mpi_allreduce_perf.c"
  MPI="$OUT/mpi_allreduce_perf"
fi
ROOT_FLAG=""
[ "$(id -u)" = 0 ] && ROOT_FLAG="--allow-run-as-root"
echo "# start: $(uptime); fleetrun options: ${*:-(none)}"
table() {  # the data rows of an allreduce_perf-style table: bytes count time_us algbw busbw
  grep -E '^(\[rank 0\] )?( +[0-9]+ +[0-9]+ )' | sed 's/^\[rank 0\] //'
}
for r in $(seq 1 "$ROUNDS"); do
  "$ROOT/bin/fleetrun" --nproc_per_node 2 --log_dir "$OUT/log" "$@" allreduce_perf --backend shm "${COMMON[@]}" 2>&1 \
    | table > "$OUT/fleet4j.$r.txt"
  if [ -n "$MPI" ]; then
    mpirun $ROOT_FLAG -np 2 "$MPI" "${COMMON[@]}" 2>&1 | table > "$OUT/openmpi.$r.txt"
  fi
  echo "round $r: fleet4j $(awk '{printf "%s ", $3}' "$OUT/fleet4j.$r.txt")${MPI:+| openmpi $(awk '{printf "%s ", $3}' "$OUT/openmpi.$r.txt")}"
done
echo "# end: $(uptime)"
/usr/bin/python3 - "$OUT" "$ROUNDS" <<'PY'
import glob, os, statistics, sys
out, rounds = sys.argv[1], int(sys.argv[2])
def times(tool):
    t = {}
    for f in sorted(glob.glob(os.path.join(out, tool + ".*.txt"))):
        for line in open(f):
            p = line.split()
            if len(p) == 5 and p[0].isdigit():
                t.setdefault(int(p[0]), []).append(float(p[2]))
    return t
f, m = times("fleet4j"), times("openmpi")
print(f"\n| bytes | fleet4j min / median / max µs | max/min | Open MPI median µs | median ratio (MPI/fleet4j, >1: fleet4j faster) |")
print("|---|---|---|---|---|")
for s in sorted(f):
    x = f[s]
    mpi = f"{statistics.median(m[s]):.1f}" if s in m else "n/a"
    ratio = f"{statistics.median(m[s]) / statistics.median(x):.2f}" if s in m else "n/a"
    print(f"| {s} | {min(x):.1f} / {statistics.median(x):.1f} / {max(x):.1f} | {max(x)/min(x):.2f} | {mpi} | {ratio} |")
print(f"\n{len(next(iter(f.values())))} of {rounds} Fleet4J runs read; raw tables: {out}")
PY
