#!/usr/bin/env bash
# Forward + backward of one GPT transformer block (nanoGPT's; n_embd 128, n_head 4, seq 64, batch 64: 4,096 tokens per
# step), one thread each: Fleet4J (benchmarks' TransformerOpsBench) against PyTorch (scripts/peers/torch_gpt_block.py).
# Both processes start and warm up once (WARMUP steps each), then take turns: ROUNDS rounds of STEPS timed steps each,
# Fleet4J then PyTorch, so both see the same machine load. Prints each round's median step time, then per side the
# median of the round medians, their spread (min..max) and tokens/s, and the ratio, in wall time and in the stepping
# thread's CPU time (which other processes on a loaded machine inflate less); with PROFILE=1 also each side's time per
# op type. Usage (after ./mvnw -q package -DskipTests -pl benchmarks -am):
#   scripts/bench/gpt_ops_vs_torch.sh [ROUNDS=5] [STEPS=100] [WARMUP=2000]
set -euo pipefail
cd "$(dirname "$0")/../.."
rounds=${1:-5}
steps=${2:-100}
warmup=${3:-2000}
java_bin="$(FLEETRUN_PRINT_JAVA=1 bin/fleetrun)"
work=$(mktemp -d)
trap 'rm -rf "$work"; kill $(jobs -p) 2>/dev/null || true' EXIT
mkfifo "$work/fleet.in" "$work/fleet.out" "$work/torch.in" "$work/torch.out"
OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 "$java_bin" --enable-native-access=ALL-UNNAMED \
  --add-modules=jdk.incubator.vector -cp 'build/bench/*' org.fleet4j.bench.ops.TransformerOpsBench \
  <"$work/fleet.in" >"$work/fleet.out" 2>"$work/fleet.err" &
OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 /usr/bin/python3 scripts/peers/torch_gpt_block.py \
  <"$work/torch.in" >"$work/torch.out" 2>"$work/torch.err" &
exec 3>"$work/fleet.in" 4<"$work/fleet.out" 5>"$work/torch.in" 6<"$work/torch.out"
ask() {  # ask SIDE COMMAND: send a command, print the answer's lines up to the last one
  local w r line
  if [ "$1" = fleet ]; then w=3; r=4; else w=5; r=6; fi
  echo "$2" >&$w
  while read -r line <&$r; do
    echo "$line"
    case "$line" in op\ *) ;; *) break ;; esac
  done
}
read -r fleet_ready <&4 || { cat "$work/fleet.err" >&2; exit 1; }
read -r torch_ready <&6 || { cat "$work/torch.err" >&2; exit 1; }
echo "Fleet4J: ${fleet_ready#ready }"
echo "PyTorch: ${torch_ready#ready }"
echo "$(date -u +%F), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg); warm-up $warmup steps each, $rounds rounds of $steps steps"
ask fleet "warmup $warmup" >/dev/null
ask torch "warmup $warmup" >/dev/null
fleet_ms=()
torch_ms=()
fleet_cpu=()
torch_cpu=()
for r in $(seq 1 "$rounds"); do
  f=$(ask fleet "measure $steps")
  t=$(ask torch "measure $steps")
  fleet_ms+=("$(echo "$f" | cut -d' ' -f2)")
  torch_ms+=("$(echo "$t" | cut -d' ' -f2)")
  fleet_cpu+=("$(echo "$f" | cut -d' ' -f8)")
  torch_cpu+=("$(echo "$t" | cut -d' ' -f8)")
  echo "round $r: Fleet4J $f | PyTorch $t"
done
if [ "${PROFILE:-0}" = 1 ]; then
  echo "Fleet4J ms per step by op type:"; ask fleet "profile $steps" | grep '^op ' | head -25
  echo "PyTorch ms per step by op (self time):"; ask torch "profile $steps" | grep '^op ' | head -25
fi
ask fleet quit >/dev/null || true
ask torch quit >/dev/null || true
/usr/bin/python3 - "${fleet_ms[*]}" "${torch_ms[*]}" "${fleet_cpu[*]}" "${torch_cpu[*]}" <<'PY'
import statistics, sys
fleet, torch, fleet_cpu, torch_cpu = ([float(v) for v in a.split()] for a in sys.argv[1:5])
tokens = 64 * 64
for label, f, t in (("wall", fleet, torch), ("CPU", fleet_cpu, torch_cpu)):
    for name, ms in (("Fleet4J", f), ("PyTorch", t)):
        m = statistics.median(ms)
        print("%s time, %s: median %.2f ms per step (rounds %.2f..%.2f), %.0f tokens/s"
              % (label, name, m, min(ms), max(ms), tokens / m * 1e3))
    print("%s time, Fleet4J / PyTorch tokens/s: %.2fx (per round: %s)" % (label, statistics.median(t) / statistics.median(f),
          " ".join("%.2f" % (b / a) for a, b in zip(f, t))))
PY
