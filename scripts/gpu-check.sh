#!/usr/bin/env bash
# The GPU check of issue 7, in two halves:
#
#   scripts/gpu-check.sh pack   # here (needs Maven Central): builds fleet-gpu and packs a jlink'd JDK 25, the jars and
#                               # a JUnit console into gpu-carry/ (git-ignored, under 64 MiB)
#   scripts/gpu-check.sh run    # on the GPU machine (no network needed): finds the CUDA 13 and NCCL libraries, runs the
#                               # GPU tests (the NVRTC compile check among them, with CUDA 13's NVRTC), mnist (fp32 and
#                               # AMP bf16) and mlp_perf on the GPU through fleetrun (--gpus 0), the cuBLAS/NCCL
#                               # benchmark and the PyTorch peers (GEMM, the MLP step); results go under $OUT
#
# With the device tool: run(command="scripts/gpu-check.sh run", carry=["gpu-carry"]).
# `run` also works on a machine without a GPU: every GPU test skips with "no CUDA device: <reason>".
set -euo pipefail
# every step runs under a timeout (the device machine is lent for minutes): a hang costs that step, not the run
root="$(cd "$(dirname "$0")/.." && pwd)"
carry="$root/gpu-carry"
jdk="${FLEET4J_JDK:-/usr/lib/jvm/temurin-25-jdk-amd64}"
junit_console="org.junit.platform:junit-platform-console-standalone:1.13.4"
flags=(--enable-native-access=ALL-UNNAMED --add-modules=jdk.incubator.vector)

die() { echo "gpu-check: $*" >&2; exit 2; }

pack() {
  [ -x "$jdk/bin/jlink" ] || die "no JDK 25 at $jdk (set FLEET4J_JDK)"
  cd "$root"
  echo "== building fleet-gpu and what it needs"
  # every module, installed (fleet-gpu's dependencies are copied from the local repository) and packaged: examples
  # fills build/lib with the launcher, the built-in programs and their dependencies; no test is run
  ./mvnw -B -q -DskipTests install
  rm -rf "$carry"
  mkdir -p "$carry/lib"
  # build/lib: the examples, the launcher and their dependencies, which the install just refreshed
  cp build/lib/*.jar "$carry/lib/"
  ./mvnw -B -q -pl fleet-gpu dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory="$carry/lib"
  cp fleet-gpu/target/fleet4j-gpu-*.jar "$carry/lib/"
  "$jdk/bin/jar" --create --file "$carry/lib/fleet4j-gpu-tests.jar" -C fleet-gpu/target/test-classes .
  ./mvnw -B -q dependency:copy -Dartifact="$junit_console" -DoutputDirectory="$carry/junit"
  echo "== jlink runtime"
  local jrt
  jrt="$(mktemp -d)/jrt"
  # modules left uncompressed by jlink: xz then packs the runtime to 21 MiB instead of 35 MiB (zip-6 inside)
  "$jdk/bin/jlink" --add-modules java.base,java.logging,jdk.incubator.vector,java.desktop,jdk.unsupported,java.management,java.xml,jdk.zipfs \
    --strip-debug --no-header-files --no-man-pages --compress=zip-0 --output "$jrt"
  # jlink keeps the symbol tables of native libraries; without them libjvm.so is 5 MiB smaller
  strip --strip-unneeded "$jrt"/lib/server/libjvm.so "$jrt"/lib/*.so
  tar -C "$(dirname "$jrt")" -cf - jrt | xz -T0 -9 > "$carry/jrt.tar.xz"
  rm -rf "$(dirname "$jrt")"
  local size
  size=$(du -sm "$carry" | cut -f1)
  echo "== gpu-carry/: ${size} MiB"
  [ "$size" -lt 64 ] || die "gpu-carry/ is ${size} MiB; the device machine takes 64 MiB"
}

# Library directories of the CUDA 13 and NCCL wheels of the machine's Python (nvidia/cu13/lib, nvidia/*/lib),
# then the toolkit's. The driver (libcuda.so.1) comes from the system.
cuda_library_path() {
  local dirs=()
  local site
  for site in $(python3 -c 'import site, sys; print("\n".join(site.getsitepackages() + [site.getusersitepackages()]))' 2>/dev/null); do
    for d in "$site"/nvidia/cu13/lib "$site"/nvidia/*/lib; do
      [ -d "$d" ] && dirs+=("$d")
    done
  done
  for d in /usr/local/cuda/lib64 /usr/local/cuda/lib; do
    [ -d "$d" ] && dirs+=("$d")
  done
  local IFS=:
  echo "${dirs[*]}"
}

run() {
  [ -f "$carry/jrt.tar.xz" ] || die "no gpu-carry/jrt.tar.xz: run 'scripts/gpu-check.sh pack' first and carry gpu-carry"
  local out="${OUT:-$root/gpu-check-out}"
  mkdir -p "$out"
  local work="${TMPDIR:-/tmp}/fleet4j-gpu-check"
  rm -rf "$work"
  mkdir -p "$work"
  xz -dc "$carry/jrt.tar.xz" | tar -C "$work" -xf -
  local java="$work/jrt/bin/java"
  local extra
  extra="$(cuda_library_path)"
  export LD_LIBRARY_PATH="${extra}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  export FLEET_KERNEL_CACHE="$work/kernels"
  local jvm=("${flags[@]}" -Dorg.bytedeco.javacpp.cachedir="$work/javacpp")
  {
    echo "date: $(date -u +%FT%TZ)"
    echo "LD_LIBRARY_PATH=$LD_LIBRARY_PATH"
    echo "FLEET_GPU_COLLECTIVES=${FLEET_GPU_COLLECTIVES:-} (unset: nccl)"
    nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv 2>&1 || echo "nvidia-smi: not available"
    "$java" -version 2>&1
  } | tee "$out/environment.txt"

  echo "== GPU tests (fleet-gpu's whole suite; GPU tests skip without a GPU)"
  local tests_rc=0
  # the console on the JVM's own class path, so tests that start child JVMs can hand theirs on; run from fleet-gpu/,
  # whose tests read docs/GPU.md and the executor's sources
  (cd "$root/fleet-gpu" && timeout -k 5 "${GPU_CHECK_TEST_TIMEOUT:-300}" "$java" "${jvm[@]}" -cp "$carry/lib/*:$carry/junit/*" org.junit.platform.console.ConsoleLauncher \
    execute --select-package org.fleet4j.gpu --fail-if-no-tests --reports-dir "$out/junit" \
    --details=tree --disable-banner --disable-ansi-colors) 2>&1 | tee "$out/tests.txt" || tests_rc=$?

  echo "== mnist on the GPU through fleetrun --gpus 0 (one epoch)"
  # the launcher as bin/fleetrun starts it, on the carried jars; its ranks use the same java and inherit LD_LIBRARY_PATH
  local fleetrun=("$java" -XX:TieredStopAtLevel=1 --enable-native-access=ALL-UNNAMED -cp "$carry/lib/*"
    org.fleet4j.launch.FleetRun --jvm_args "-Dorg.bytedeco.javacpp.cachedir=$work/javacpp")
  local mnist_rc=0
  (cd "$root" && timeout -k 5 120 "${fleetrun[@]}" --gpus 0 --log_dir "$out/mnist-gpu" mnist --epochs 1) 2>&1 \
    | tee "$out/mnist-gpu.txt" || mnist_rc=$?

  echo "== mnist with AMP in bfloat16 on the GPU (one epoch): casts, bf16 GEMMs, unscale and skipped steps on the device"
  local amp_rc=0
  (cd "$root" && timeout -k 5 120 "${fleetrun[@]}" --gpus 0 --strategy docs/performance/amp_bf16.yaml --log_dir "$out/mnist-gpu-amp" \
    mnist --epochs 1) 2>&1 | tee "$out/mnist-gpu-amp.txt" || amp_rc=$?

  echo "== mlp_perf: Fleet4J on the GPU, PyTorch on the GPU, Fleet4J on the CPU; three rounds, taking turns"
  local mlp_rc=0 round
  for round in 1 2 3; do
    (cd "$root" && timeout -k 5 90 "${fleetrun[@]}" --gpus 0 --log_dir "$out/mlp-gpu-$round" mlp_perf --steps 500 --warmup 100) 2>&1 \
      | tee -a "$out/mlp-perf.txt" || mlp_rc=$?
    timeout -k 5 90 bash -c "$(declare -f torch_mlp); root='$root'; torch_mlp $round" 2>&1 | tee -a "$out/mlp-perf.txt" || true
    (cd "$root" && timeout -k 5 90 "${fleetrun[@]}" --log_dir "$out/mlp-cpu-$round" mlp_perf --steps 500 --warmup 100) 2>&1 \
      | tee -a "$out/mlp-perf.txt" || mlp_rc=$?
  done
  grep -h "ms/step" "$out/mlp-perf.txt" | tee "$out/mlp-perf-summary.txt" || true

  echo "== cuBLAS GEMM and NCCL allreduce (Fleet4J)"
  local bench_rc=0
  timeout -k 5 120 "$java" "${jvm[@]}" -cp "$carry/lib/*" org.fleet4j.bench.gpu.GpuBench --out "$out/fleet4j-gpu-bench.jsonl" \
    2>&1 | tee "$out/fleet4j-gpu-bench.txt" || bench_rc=$?

  echo "== PyTorch peer: the same GEMMs on the same GPU"
  local torch_rc=0
  timeout -k 5 120 python3 - "$out/torch-gemm.jsonl" <<'PY' 2>&1 | tee "$out/torch-gemm.txt" || torch_rc=$?
import json, sys
try:
    import torch
except ImportError:
    print("torch is not installed: no PyTorch figures"); sys.exit(3)
if not torch.cuda.is_available():
    print("torch sees no CUDA device: no PyTorch figures"); sys.exit(3)
torch.backends.cuda.matmul.allow_tf32 = False  # full f32, as cublasSgemm with default math
rows = []
name = torch.cuda.get_device_name(0)
for n in (1024, 2048, 4096, 8192):
    for dtype in (torch.float32, torch.bfloat16):
        a = torch.zeros(n, n, device="cuda", dtype=dtype)
        b = torch.zeros(n, n, device="cuda", dtype=dtype)
        for _ in range(3):
            a @ b
        torch.cuda.synchronize()
        times = []
        for _ in range(20):
            s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            s.record(); a @ b; e.record(); e.synchronize()
            times.append(s.elapsed_time(e))
        ms = sorted(times)[len(times) // 2]
        tflops = 2 * n ** 3 / (ms * 1e-3) / 1e12
        label = "F32" if dtype == torch.float32 else "BF16"
        print(f"torch gemm {label:4s} {n:5d}^3 {ms:8.3f} ms {tflops:7.1f} TFLOPS")
        rows.append({"bench": "torch_gemm", "device": name, "dtype": label, "n": n, "median_ms": round(ms, 4),
                     "tflops": round(tflops, 2), "reps": 20, "torch": torch.__version__})
with open(sys.argv[1], "w") as f:
    f.write("\n".join(json.dumps(r) for r in rows) + "\n")
PY
  echo "tests rc=$tests_rc mnist rc=$mnist_rc mnist-amp rc=$amp_rc mlp_perf rc=$mlp_rc bench rc=$bench_rc torch rc=$torch_rc" \
    | tee "$out/summary.txt"
  [ "$tests_rc" = 0 ] || exit "$tests_rc"
  [ "$mnist_rc" = 0 ] || exit "$mnist_rc"
  [ "$amp_rc" = 0 ] || exit "$amp_rc"
  [ "$mlp_rc" = 0 ] || exit "$mlp_rc"
}

# PyTorch's MLP step on the GPU, as mlp_perf times it: same layers, batch, SGD, random data, the loss read back every
# step (mlp_perf fetches it), median of the timed steps. Round $1 goes into the label.
torch_mlp() {
  (cd "$root/scripts/peers" && python3 - "$1" <<'PY'
import sys
try:
    import torch
except ImportError:
    print("torch is not installed: no PyTorch MLP figure"); sys.exit(3)
if not torch.cuda.is_available():
    print("torch sees no CUDA device: no PyTorch MLP figure"); sys.exit(3)
from mlp_peer import build_mlp, sgd_step, time_steps
torch.backends.cuda.matmul.allow_tf32 = False  # full f32, as Fleet4J's cublasSgemm
torch.manual_seed(1)
model, w = build_mlp("784,512,512,10")
model = model.cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.01)
x = torch.rand(64, w[0], device="cuda")
y = torch.randint(0, w[-1], (64,), device="cuda")
step = sgd_step(model, opt, x, y, fetch_loss=True)
for _ in range(100):
    step()
median_ms, total = time_steps(step, 500)
print(f"torch {torch.__version__} cuda round {sys.argv[1]} ({torch.cuda.get_device_name(0)}): layers 784,512,512,10 "
      f"batch 64: {median_ms:.3f} ms/step (median of 500), {64 * 500 / total:,.0f} samples/s")
PY
  )
}

case "${1:-}" in
  pack) pack ;;
  run) run ;;
  *) die "usage: scripts/gpu-check.sh pack|run" ;;
esac
