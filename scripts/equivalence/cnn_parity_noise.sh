#!/usr/bin/env bash
# Measures CnnTorchParityIT's figures for several seeds: for each case, how far Fleet4J's float32 training is from
# PyTorch's float64 one in multiples of PyTorch's own float32 noise, and how far the planted mistakes are. Runs the IT
# with FLEET_PARITY_MEASURE=1 (it prints every figure and asserts none) and FLEET_PARITY_SEED. Usage:
# cnn_parity_noise.sh [SEED...] (default 1 2 3 4). Builds what the IT needs (offline). Prints one block per seed.
set -eu
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"
for seed in "${@:-1 2 3 4}"; do
  for s in $seed; do
    echo "seed $s"
    FLEET_PARITY_MEASURE=1 FLEET_PARITY_SEED="$s" ./mvnw -q -o -pl tests -am verify -Dtest=none \
      -Dsurefire.failIfNoSpecifiedTests=false -Dit.test=CnnTorchParityIT -Dfailsafe.failIfNoSpecifiedTests=false \
      > /dev/null 2>&1 || echo "  (the IT failed: see tests/target/failsafe-reports)"
    sed -n 's/^CnnTorchParityIT /  /p' tests/target/failsafe-reports/org.fleet4j.examples.CnnTorchParityIT-output.txt
  done
done
