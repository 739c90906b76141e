#!/usr/bin/env bash
# ps_perf over every parameter-server protocol side by side (issue 15): interleaved rounds, each protocol in turn with
# the order rotated round by round, 2 and 4 workers x 1 server on the sparse workload (1M x 16 table, 4,096 Zipf(1.1)
# ids per worker and step); the PyTorch RPC peer (scripts/peers/torch_rpc_ps_perf.py) in the same rounds; then the
# dense-heavy variant (--dense 100: tensors of 4-256 KB, 2 workers x 1 server) over every protocol: grpc and grpc++
# with tensor_fuse on and off, star_server and star_server_lite (which always fuse).
# Prints medians of keys/s, MB/s, p50/p99 and wire bytes per step, the ratios
# against grpc and the peer (of the medians, and per round), and the machine's limits from plain programs: loopback
# TCP bandwidth (scripts/peers/loopback_bw.c) and one core's memcpy bandwidth (scripts/peers/memcpy_bw.c).
# Usage: scripts/bench/ps_protocols.sh [ROUNDS=3] [STEPS=6000] [WARMUP=12000] [WORKERS="2 4"]
#   The warm-up is long on purpose: on 2 busy cores C2 compiles the methods that run once a step (a frame's
#   assembly, the step loop) only after thousands of steps; ps_perf's own progress lines (rate per 3,000 steps, from
#   step 0) settle at about step 12,000 for every protocol (star_server 3.6, 1.8, 1.4, 0.81, 0.75, 0.76, 0.73 ms per
#   step; grpc 6.2, 2.0, 1.7, 1.6, 1.3, 1.4, 1.4), where 3,000 steps of warm-up timed a mix of both.
#   The dense variant runs STEPS/20 timed steps after WARMUP/8 (each step moves ~11 MB a worker): a fused step makes
#   2 calls where an unfused one makes 202, so its once-a-call code reaches C2 a hundred times later in steps; grpc++
#   fused, ms per step over windows of 240 steps from step 0 (2026-11-28): 39, 21, 18, 17, 15, 16, 14, 14, 13, 12.5,
#   where unfused was level after 480. (Before 2026-11-28 it was STEPS/40 after WARMUP/40: 300 steps of warm-up
#   timed fused steps well before their steady state.) DENSE=0 in the environment leaves it out (for a second run
#   with other WORKERS); SPARSE=0 leaves out the sparse runs (the dense-heavy variant alone).
#   A side "P/N" is protocol P with NETWORK_WORKER_CORE_NUMBER=N ("P/0": no worker network threads, the calling threads do
#   the I/O); SIDES="..." in the environment replaces the sparse runs' list of sides, DENSE_SIDES="P:FUSE ..." the
#   dense-heavy variant's (the ratios are against grpc:false, which it must hold).
#   (after ./mvnw -q package -DskipTests; the peer needs python3-torch, scripts/install-deps.sh)
set -euo pipefail
cd "$(dirname "$0")/../.."
rounds=${1:-3}
steps=${2:-6000}
warmup=${3:-12000}
workers=${4:-"2 4"}
[[ ${SPARSE:-1} == 0 ]] && workers=""
dense_steps=$(( steps / 20 > 0 ? steps / 20 : 1 ))
dense_warmup=$(( warmup / 8 ))
py=/usr/bin/python3
out=$(mktemp -d)
cc -O2 -o "$out/loopback_bw" scripts/peers/loopback_bw.c
cc -O2 -o "$out/memcpy_bw" scripts/peers/memcpy_bw.c

sides=${SIDES:-"grpc grpc++ grpc++/2 star_server star_server/2 star_server_lite torch"}
# protocol:tensor_fuse for the dense-heavy variant (the star protocols fuse whatever tensor_fuse says)
dense_sides=${DENSE_SIDES:-"grpc:true grpc:false grpc++:true grpc++:false grpc++/2:true star_server:true star_server/2:true star_server_lite:true"}

. scripts/bench/rotate.sh

echo "start: $(date -u +%H:%M:%S) UTC, $(uptime | sed 's/.*load/load/')"
for r in $(seq 1 "$rounds"); do
  "$out/loopback_bw" > "$out/loopback.$r.txt"
  "$out/memcpy_bw" $((64 << 20)) > "$out/memcpy.$r.txt"
  for w in $workers; do
    for side in $(rotate "$r" "$sides"); do
      if [[ $side == torch ]]; then
        $py scripts/peers/torch_rpc_ps_perf.py --workers "$w" --steps "$steps" --warmup "$warmup" \
          --out "$out/torch.$w.$r.json" >/dev/null 2>&1
      else
        threads=()
        [[ $side == */* ]] && threads=(NETWORK_WORKER_CORE_NUMBER="${side##*/}")
        env "${threads[@]}" bin/fleetrun --server_num 1 --worker_num "$w" --log_dir "$out/${side//\//+}.$w.$r" \
          ps_perf --protocol "${side%/*}" --steps "$steps" --warmup "$warmup" >/dev/null 2>&1
      fi
    done
  done
  [[ ${DENSE:-1} == 0 ]] && dense_sides=""
  for dense in $(rotate "$r" "$dense_sides"); do
    protocol=${dense%:*}
    fuse=${dense#*:}
    threads=()
    [[ $protocol == */* ]] && threads=(NETWORK_WORKER_CORE_NUMBER="${protocol##*/}")
    env "${threads[@]}" bin/fleetrun --server_num 1 --worker_num 2 --log_dir "$out/dense.${protocol//\//+}.$fuse.$r" \
      ps_perf --protocol "${protocol%/*}" --dense 100 --tensor_fuse "$fuse" --steps "$dense_steps" \
      --warmup "$dense_warmup" >/dev/null 2>&1
  done
  echo "round $r done: $(date -u +%H:%M:%S) UTC, $(uptime | sed 's/.*load/load/')"
done
echo "end:   $(date -u +%H:%M:%S) UTC, $(uptime | sed 's/.*load/load/')"
$py - "$out" "$rounds" "$workers" "$sides" "$dense_sides" <<'PY'
import json, re, statistics, sys
out, rounds = sys.argv[1], int(sys.argv[2])
workers, sides = [int(w) for w in sys.argv[3].split()], sys.argv[4].split()
dense_sides = [tuple(d.split(":")) for d in sys.argv[5].split()]
med = statistics.median
def run(name):
    name = name.replace("/", "+")
    return json.load(open(f"{out}/{name}.json" if name.startswith("torch") else f"{out}/{name}/summary.json"))
def runs(side, w):
    return [run(f"{side}.{w}.{r}") for r in range(1, rounds + 1)]
def gbps(kind):
    return med(float(re.search(r"([\d.]+) GB/s", open(f"{out}/{kind}.{r}.txt").read()).group(1))
               for r in range(1, rounds + 1))
loop, mem = gbps("loopback"), gbps("memcpy")
print(f"rounds {rounds}; medians; ratios of keys/s (higher is better), per round in brackets")
print(f"machine: loopback TCP {loop:.2f} GB/s one direction (loopback_bw), memcpy {mem:.2f} GB/s one core (memcpy_bw)")
for w in workers:
    print(f"\n{w} workers x 1 server")
    print(f"  {'protocol':17} {'keys/s':>11} {'MB/s':>8} {'p50 ms':>8} {'p99 ms':>8} {'wire B/step':>12}"
          f" {'x grpc':>24} {'x torch':>24} {'loopback':>9}")
    # a column against a side that did not run (SIDES without grpc or torch) shows "-"
    g, t = (runs(b, w) if b in sides else None for b in ("grpc", "torch"))
    for side in sides:
        rs = runs(side, w)
        k = med(x["keys_per_sec"] for x in rs)
        def ratio(base):
            if base is None:
                return "-"
            rounds_ = ", ".join(f"{a['keys_per_sec'] / b['keys_per_sec']:.2f}" for a, b in zip(rs, base))
            return f"{k / med(x['keys_per_sec'] for x in base):.2f} ({rounds_})"
        mb = med(x["mb_per_sec"] for x in rs)
        wire = med(x.get("wire_bytes_per_step", float("nan")) for x in rs)
        # the payload crosses loopback twice per step's worth (a pull's rows back, a push's rows in): MB/s against
        # one direction's bandwidth
        print(f"  {side:17} {k:11,.0f} {mb:8.1f} {med(x['p50_ms'] for x in rs):8.3f} {med(x['p99_ms'] for x in rs):8.3f}"
              f" {wire:12,.0f} {ratio(g):>24} {ratio(t):>24} {mb / 1e3 / loop:8.1%}")
if not dense_sides:
    sys.exit(0)
dense = {d: [run(f"dense.{d[0]}.{d[1]}.{r}") for r in range(1, rounds + 1)] for d in dense_sides}
first = next(iter(dense.values()))[0]
print(f"\ndense-heavy: 2 workers x 1 server, {first['dense']} dense tensors ({first['dense_bytes']:,} bytes)"
      f" + the sparse batch per step; MB/s = steps/s x bytes per step, so ratios of MB/s are ratios of steps/s")
base = dense[("grpc", "false")]
def mbs(rs):
    return med(x['mb_per_sec'] for x in rs)
for (protocol, fuse), rs in dense.items():
    name = f"{protocol}, fused" if rs[0]['tensor_fuse'] else f"{protocol}, unfused"
    unfused = dense.get((protocol, "false"))
    vs_own = "" if unfused is None or unfused is rs else (
        f"  x own unfused {mbs(rs) / mbs(unfused):.2f} ("
        + ", ".join(f"{a['mb_per_sec'] / b['mb_per_sec']:.2f}" for a, b in zip(rs, unfused)) + ")")
    print(f"  {name:26} {mbs(rs):8.1f} MB/s  p50 {med(x['p50_ms'] for x in rs):8.3f} ms"
          f"  p99 {med(x['p99_ms'] for x in rs):8.3f} ms  {med(x['calls_per_step'] for x in rs):5.0f} calls/step"
          f"  wire {med(x['wire_bytes_per_step'] for x in rs):12,.0f} B/step  {mbs(rs) / 1e3 / loop:6.1%} of loopback"
          f"  x grpc unfused {mbs(rs) / mbs(base):.2f} ("
          + ", ".join(f"{a['mb_per_sec'] / b['mb_per_sec']:.2f}" for a, b in zip(rs, base)) + ")" + vs_own)
PY
echo "logs: $out"
