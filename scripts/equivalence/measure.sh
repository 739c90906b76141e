#!/usr/bin/env bash
# Measures the float32 noise of mnist's 50-step SGD training (the setting of DataParallelMnistIT) and how far
# correct and mistaken data-parallel runs drift from one rank, in multiples of it. Usage: measure.sh [SEED...]
# (default 1 2 3 4). Needs the jars, fleet-core's test jar included: ./mvnw -q package -DskipTests. Prints one block per seed.
set -eu
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
printf 'gradient_scale_configs:\n  scale_strategy: sum\n' > "$WORK/sum.yaml"
JAVA="$(FLEETRUN_PRINT_JAVA=1 "$ROOT/bin/fleetrun")"  # the JDK 25 the jobs run on (the jars are class version 69)

run() { # NAME NPROC [launcher options --] [mnist options]
  local name="$1" nproc="$2" launcher=()
  shift 2
  if [ "${1:-}" = "--strategy" ]; then launcher=(--strategy "$2"); shift 3; fi
  "$ROOT/bin/fleetrun" --nproc_per_node "$nproc" --log_dir "$WORK/$name" "${launcher[@]}" mnist --steps 50 \
    --global_batch 64 --optimizer sgd --save_checkpoint "$WORK/$name/ck.safetensors" "$@" > "$WORK/$name.out" 2>&1 \
    || { echo "run $name failed:"; tail -5 "$WORK/$name.out"; exit 1; }
}

for seed in "${@:-1 2 3 4}"; do
  for s in $seed; do
    run "s$s-one" 1 --seed "$s"
    run "s$s-noise" 1 --seed "$s" --perturb_init_ulps 1
    run "s$s-2-ranks" 2 --seed "$s"
    run "s$s-4-ranks" 4 --seed "$s"
    run "s$s-lr-1pct-2-ranks" 2 --seed "$s" --lr 0.0505
    run "s$s-summed-2-ranks" 2 --strategy "$WORK/sum.yaml" -- --seed "$s"
    run "s$s-no-bias-2-ranks" 2 --seed "$s" --freeze '.*\.b_0'
    (cd "$WORK" && "$JAVA" --enable-native-access=ALL-UNNAMED --add-modules=jdk.incubator.vector -cp "$ROOT/build/lib/*:$ROOT/fleet-core/target/fleet4j-core-0.1.0-SNAPSHOT-tests.jar" \
      "$ROOT/scripts/equivalence/DriftReport.java" "s$s-one" "s$s-noise" "s$s-2-ranks" "s$s-4-ranks" \
      "s$s-lr-1pct-2-ranks" "s$s-summed-2-ranks" "s$s-no-bias-2-ranks" 2>&1 | grep -v '^WARNING')
  done
done
