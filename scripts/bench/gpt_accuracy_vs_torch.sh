#!/usr/bin/env bash
# The gpt program's validation loss against PyTorch's on the same recipe: nanoGPT's GPT (4 layers, 4 heads, n_embd 64,
# block 32), the same initial weights (PyTorch's, loaded by name with --init_weights), the same batches (STEPS lines of
# 32 window starts into the shipped names, read by both: --windows), AdamW (betas 0.9, 0.99, weight decay 0.1 of the
# 2-D weights), clipping at 1.0, warm-up (100 steps) then cosine from 3e-3 to 3e-4; dropout 0. Both report the training
# and validation loss in nats per character over the same windows (all of the validation names'). Issue 38's target:
# validation loss within 0.02 nats of PyTorch's.
# Usage: scripts/bench/gpt_accuracy_vs_torch.sh [STEPS=2000] [SEED=1]   (after ./mvnw -q package -DskipTests)
set -euo pipefail
cd "$(dirname "$0")/../.."
steps=${1:-2000}
seed=${2:-1}
py=/usr/bin/python3
java_bin="$(FLEETRUN_PRINT_JAVA=1 bin/fleetrun)"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
model=(--n_layer 4 --n_head 4 --n_embd 64 --block_size 32)
recipe=(--lr 3e-3 --warmup_steps 100 --min_lr 3e-4 --weight_decay 0.1 --grad_clip 1.0)
echo "$(date -u '+%F %H:%M') UTC, build $(git rev-parse --short HEAD), load $(cut -d' ' -f1-3 /proc/loadavg); $steps steps, seed $seed"
vocab=$("$java_bin" --enable-native-access=ALL-UNNAMED --add-modules=jdk.incubator.vector -cp 'build/bench/*' \
  org.fleet4j.bench.gpt.GptRecipeInputs "$dir" "$steps" 32 32 "$seed" 2>/dev/null)
OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 $py scripts/peers/torch_gpt_train.py "$dir" --vocab_size "$vocab" \
  "${model[@]}" --steps "$steps" "${recipe[@]}" --seed "$seed" > "$dir/torch.json"
bin/fleetrun --nproc_per_node 1 --log_dir "$dir/fleet" gpt "${model[@]}" --global_batch 32 --steps "$steps" \
  --optimizer adamw --lr_schedule warmup_cosine "${recipe[@]}" --init_weights "$dir/init.safetensors" \
  --windows "$dir/windows.txt" --eval_steps 0 --sample 5 --seed "$seed" > "$dir/fleet.out" 2>&1 \
  || { cat "$dir/fleet.out"; exit 1; }
grep 'gpt: sample' "$dir/fleet.out" | sed 's/^\[rank 0\] /  /'
$py - "$dir" <<'PY'
import json, sys
d = sys.argv[1]
f = json.load(open(d + "/fleet/summary.json"))
t = json.loads(open(d + "/torch.json").read().strip().splitlines()[-1])
for key, what in (("train_loss", "training"), ("val_loss", "validation")):
    print(f"{what} loss (nats per character): Fleet4J {f[key]:.4f}, PyTorch {t[key]:.4f}, difference {f[key] - t[key]:+.4f}")
print(f"train time: Fleet4J {f['train_seconds']:.0f} s, PyTorch {t['train_seconds']:.0f} s")
PY
echo "end: load $(cut -d' ' -f1-3 /proc/loadavg)"
