#!/usr/bin/env bash
# Forward + backward of every conv layer of lenet (28x28 MNIST: 5x5, 6 and 16 channels) and of the small ResNet of
# basic blocks (3x3, 16-64 channels, 28x28, with the 1x1 stride-2 shortcuts), batch 64, one thread: Fleet4J's
# conv2d + conv2d_grad (ConvBench, OpenBLAS on 1 thread) against PyTorch's F.conv2d + autograd
# (scripts/peers/torch_conv_perf.py, torch.set_num_threads(1), oneDNN), in interleaved rounds. Each round is a fresh
# process that warms every layer up for WARMUP_S seconds, then times STEPS steps of each; the table gives, per layer,
# the median over rounds of each round's median step, the spread (lowest and highest round median), GFLOPS
# (2 flops a multiply-add; forward, filter gradient and input gradient, or no input gradient for a layer that reads
# the data) and that against each side's GEMM peak (a 1024^3 sgemm, OpenBLAS's and torch.mm's, in the same round).
# Usage: scripts/bench/conv_vs_torch.sh [ROUNDS=3] [WARMUP_S=60] [STEPS=200]
#        (after ./mvnw -q -pl benchmarks -am package -DskipTests)
set -euo pipefail
cd "$(dirname "$0")/../.."
rounds=${1:-3}
warmup=${2:-60}
steps=${3:-200}
java=${JAVA:-$(ls -d /usr/lib/jvm/*25*/bin/java 2>/dev/null | head -1)}
java=${java:-java}
py=/usr/bin/python3
layers=(
  lenet.conv1:1:6:5:1:2:28:first lenet.conv2:6:16:5:1:0:14
  resnet.stem:1:16:3:1:1:28:first resnet.s1:16:16:3:1:1:28
  resnet.s2.down:16:32:3:2:1:28 resnet.s2.short:16:32:1:2:0:28 resnet.s2:32:32:3:1:1:14
  resnet.s3.down:32:64:3:2:1:14 resnet.s3.short:32:64:1:2:0:14 resnet.s3:64:64:3:1:1:7
)
if ! ls build/bench/fleet4j-benchmarks-*.jar >/dev/null 2>&1; then
  echo "build/bench is empty: run ./mvnw -q -pl benchmarks -am package -DskipTests first" >&2
  exit 2
fi
out=$(mktemp -d)
for r in $(seq 1 "$rounds"); do
  OPENBLAS_NUM_THREADS=1 "$java" --enable-native-access=ALL-UNNAMED --add-modules=jdk.incubator.vector \
    -cp "build/bench/*" org.fleet4j.bench.ops.ConvBench --batch 64 --warmup_s "$warmup" --steps "$steps" \
    "${layers[@]}" 2>/dev/null >"$out/fleet.$r.txt"
  OMP_NUM_THREADS=1 $py scripts/peers/torch_conv_perf.py --batch 64 --warmup_s "$warmup" --steps "$steps" \
    "${layers[@]}" >"$out/torch.$r.txt"
done
echo "$rounds rounds, warm-up ${warmup} s, $steps steps each; $(date -u +%F); $(uptime)"
grep -h '^#' "$out/fleet.1.txt" "$out/torch.1.txt"
$py - "$out" "$rounds" <<'PY'
import statistics, sys
folder, rounds = sys.argv[1], int(sys.argv[2])

def read(side):
    layers, peaks = {}, []
    for r in range(1, rounds + 1):
        for line in open("%s/%s.%d.txt" % (folder, side, r)):
            f = line.split()
            if f and f[0] == "gemm_peak_gflops":
                peaks.append(float(f[1]))
            elif f and f[0] == "layer":
                layers.setdefault(f[1], []).append((float(f[3]), float(f[9])))
    return layers, statistics.median(peaks)

fleet, fleet_peak = read("fleet")
torch, torch_peak = read("torch")
print("GEMM peak (1024^3, median of rounds): Fleet4J/OpenBLAS %.1f GFLOPS, PyTorch torch.mm %.1f GFLOPS" % (fleet_peak, torch_peak))
print()
print("| layer | Fleet4J ms (spread) | PyTorch ms (spread) | Fleet4J GFLOPS | of peak | PyTorch GFLOPS | of peak | PyTorch ms / Fleet4J ms |")
print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
tf = tt = 0
for name in fleet:
    fm = [m for m, _ in fleet[name]]
    tm = [m for m, _ in torch[name]]
    fmed, tmed = statistics.median(fm), statistics.median(tm)
    fg = statistics.median([g for _, g in fleet[name]])
    tg = statistics.median([g for _, g in torch[name]])
    tf, tt = tf + fmed, tt + tmed
    print("| %s | %.3f (%.3f-%.3f) | %.3f (%.3f-%.3f) | %.1f | %.0f%% | %.1f | %.0f%% | %.2f |"
          % (name, fmed, min(fm), max(fm), tmed, min(tm), max(tm), fg, 100 * fg / fleet_peak, tg,
             100 * tg / torch_peak, tmed / fmed))
print("| all layers | %.3f | %.3f | | | | | %.2f |" % (tf, tt, tt / tf))
PY
