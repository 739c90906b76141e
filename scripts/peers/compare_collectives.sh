#!/usr/bin/env bash
# Side-by-side allreduce comparison behind docs/performance/collectives.md: Fleet4J (shm, tcp) against Open MPI
# (default shared-memory transport, and --mca btl tcp,self) and PyTorch Gloo, 2 ranks on this host, interleaved
# for ROUNDS rounds so that all tools see the same machine conditions. Prints every table, then the median per
# tool and size, and the ratios Fleet4J / peer.
# Usage: [BEFORE_ROOT=/other/checkout] scripts/peers/compare_collectives.sh [ROUNDS=3] [SIZES=4K,64K,1M,16M,64M]
# BEFORE_ROOT: a second, built checkout (e.g. a git worktree of an older commit) whose tcp backend also runs in
# every round, as fleet4j-tcp-before, for a before/after comparison under the same conditions.
# Needs: ./mvnw -q package -DskipTests (for bin/fleetrun), scripts/install-peers.sh.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
ROUNDS="${1:-3}"
SIZES="${2:-4K,64K,1M,16M,64M}"
OUT="$(mktemp -d /tmp/fleet4j-compare.XXXXXX)"
ROOT_FLAG=""
[ "$(id -u)" = 0 ] && ROOT_FLAG="--allow-run-as-root"
mpicc -O2 -o "$OUT/mpi_allreduce_perf" "$ROOT/scripts/peers/mpi_allreduce_perf.c"
cc -O2 -o "$OUT/memcpy_bw" "$ROOT/scripts/peers/memcpy_bw.c"
COMMON=(--sizes "$SIZES" --repeats 5 --ms_per_size 300)
echo "# start: $(uptime)"

run() {  # run TOOL ROUND COMMAND...
  local tool="$1" round="$2"
  shift 2
  echo "## $tool round $round: $*"
  "$@" 2>&1 | grep -E '^(\[rank 0\] )?( +[0-9]+ +[0-9]+ |#)' | sed 's/^\[rank 0\] //' | tee "$OUT/$tool.$round.txt"
}

for r in $(seq 1 "$ROUNDS"); do
  run fleet4j-shm "$r" "$ROOT/bin/fleetrun" --nproc_per_node 2 --log_dir "$OUT/log" allreduce_perf --backend shm "${COMMON[@]}"
  run openmpi-shm "$r" mpirun $ROOT_FLAG -np 2 "$OUT/mpi_allreduce_perf" "${COMMON[@]}"
  run fleet4j-tcp "$r" "$ROOT/bin/fleetrun" --nproc_per_node 2 --log_dir "$OUT/log" allreduce_perf --backend tcp "${COMMON[@]}"
  if [ -n "${BEFORE_ROOT:-}" ]; then
    run fleet4j-tcp-before "$r" "$BEFORE_ROOT/bin/fleetrun" --nproc_per_node 2 --log_dir "$OUT/log" allreduce_perf --backend tcp "${COMMON[@]}"
  fi
  run openmpi-tcp "$r" mpirun $ROOT_FLAG --mca btl tcp,self -np 2 "$OUT/mpi_allreduce_perf" "${COMMON[@]}"
  run gloo "$r" /usr/bin/python3 "$ROOT/scripts/peers/gloo_allreduce_perf.py" --nproc 2 "${COMMON[@]}"
  "$OUT/memcpy_bw" $((64 << 20)) | tee "$OUT/memcpy.$r.txt"
done

echo "# end: $(uptime)"
/usr/bin/python3 - "$OUT" <<'PY'
import glob, os, statistics, sys, re
out = sys.argv[1]
tools = ["fleet4j-shm", "openmpi-shm", "fleet4j-tcp", "openmpi-tcp", "gloo"]
if glob.glob(os.path.join(out, "fleet4j-tcp-before.*.txt")):
    tools.insert(3, "fleet4j-tcp-before")
t, b = {}, {}
for tool in tools:
    for f in glob.glob(os.path.join(out, tool + ".*.txt")):
        for line in open(f):
            p = line.split()
            if len(p) == 5 and p[0].isdigit():
                t.setdefault((tool, int(p[0])), []).append(float(p[2]))
                b.setdefault((tool, int(p[0])), []).append(float(p[4]))
mem = [float(re.search(r": ([0-9.]+) GB/s", open(f).read()).group(1)) for f in glob.glob(os.path.join(out, "memcpy.*.txt"))]
sizes = sorted({s for (_, s) in t})
med = lambda d, k: statistics.median(d[k]) if k in d else float("nan")
before = "fleet4j-tcp-before" in tools
print("\n| bytes | " + " | ".join(f"{x} time µs / busbw GB/s" for x in tools) + " | shm ratio (busbw F/MPI) | tcp ratio (busbw F/MPI) |"
      + (" tcp after/before (busbw) |" if before else ""))
print("|" + "---|" * (len(tools) + 3 + before))
for s in sizes:
    cells = [f"{med(t,(x,s)):.1f} / {med(b,(x,s)):.3f}" for x in tools]
    r1 = med(b, ("fleet4j-shm", s)) / med(b, ("openmpi-shm", s))
    r2 = med(b, ("fleet4j-tcp", s)) / med(b, ("openmpi-tcp", s))
    extra = f" {med(b, ('fleet4j-tcp', s)) / med(b, ('fleet4j-tcp-before', s)):.2f} |" if before else ""
    print(f"| {s} | " + " | ".join(cells) + f" | {r1:.2f} | {r2:.2f} |" + extra)
if mem:
    m = statistics.median(mem)
    print(f"\nmemcpy one core, 64 MiB: {m:.3f} GB/s (median of {len(mem)} rounds)")
    for x in ["fleet4j-shm", "openmpi-shm"]:
        s = max(sizes)
        print(f"{x} busbw at {s} B = {med(b,(x,s)):.3f} GB/s = {med(b,(x,s))/m:.2f} x memcpy")
print(f"\nraw tables: {out}")
PY
