#!/usr/bin/env bash
# Where a parameter-server step's CPU goes (issue 15): ps_perf, 1 server x WORKERS workers on the sparse workload, for
# each protocol in turn (order rotated round by round); the CPU time of every thread of the job's JVMs is read from
# /proc/PID/task/TID/stat at worker 0's progress lines for steps S/10 and 9S/10 of S timed steps, and the difference is
# split by role (PSERVER, TRAINER) and thread kind (the thread's name without its number). Prints, per protocol, the
# medians over the rounds of the cores busy and the CPU nanoseconds per unique key, in all and per (role, kind).
# Keys in the window: worker 0's 8S/10 steps x workers x the run's mean unique ids per step (summary.json); the
# workers run side by side, so the other workers' steps in the window differ from worker 0's by a few.
# Linux only (/proc). Usage: scripts/bench/ps_cpu_split.sh [ROUNDS=3] [STEPS=30000] [WARMUP=12000] [WORKERS=2]
#   [PROTOCOLS="grpc grpc++ star_server star_server_lite"]   (after ./mvnw -q package -DskipTests)
#   A protocol "P/N" is P with NETWORK_WORKER_CORE_NUMBER=N ("P/0": the worker's calling threads do the I/O).
set -euo pipefail
cd "$(dirname "$0")/../.."
rounds=${1:-3}
steps=${2:-30000}
warmup=${3:-12000}
workers=${4:-2}
protocols=${5:-"grpc grpc++ star_server star_server_lite"}
out=$(mktemp -d)
(( steps % 10 == 0 )) || { echo "STEPS must be a multiple of 10, got $steps" >&2; exit 2; }

. scripts/bench/rotate.sh

# snap FILE: "pid role kind ticks" for every thread of the job's JVMs (role from TRAINING_ROLE, kind: the thread's
# name without its number, ticks: utime + stime), then the time; one quick pass, so the window's ends are sharp
snap() {
  python3 - "$1" <<'SNAP'
import re, sys, time
sys.path.insert(0, "scripts/bench")
from job_threads import job_threads
lines = []
for pid, role, _, name, ticks, _, _ in job_threads():
    kind = re.sub(r"[-_#]*\d*$", "", name.replace(" ", "_")) or "?"
    lines.append(f"{pid} {role} {kind} {ticks}")
lines.append(repr(time.time()))
open(sys.argv[1], "w").write("\n".join(lines) + "\n")
SNAP
}

first=$(( steps / 10 ))
last=$(( 9 * steps / 10 ))
echo "start: $(date -u +%H:%M:%S) UTC; $rounds round(s), $workers worker(s), window steps $first..$last of $steps"
for r in $(seq 1 "$rounds"); do
  for p in $(rotate "$r" "$protocols"); do
    dir="$out/${p//\//+}.$r"
    threads=()
    [[ $p == */* ]] && threads=(NETWORK_WORKER_CORE_NUMBER="${p##*/}")
    env "${threads[@]}" bin/fleetrun --server_num 1 --worker_num "$workers" --log_dir "$dir" ps_perf \
      --protocol "${p%/*}" --steps "$steps" --warmup "$warmup" 2>&1 | while IFS= read -r line; do
        case "$line" in
          *"ps_perf: step $first/$steps "*) snap "$dir.a" ;;
          *"ps_perf: step $last/$steps "*) snap "$dir.b" ;;
        esac
      done || { echo "ps_cpu_split: the $p run of round $r failed; its logs: $dir" >&2; exit 1; }
    [[ -f $dir.a && -f $dir.b ]] || { echo "ps_cpu_split: the $p run of round $r printed no progress line for"\
      "step $first or $last of $steps; its logs: $dir" >&2; exit 1; }
  done
  echo "round $r done: $(date -u +%H:%M:%S) UTC"
done
python3 - "$out" "$rounds" "$workers" "$(( last - first ))" "$protocols" <<'PY'
import collections, json, statistics, sys
out, rounds, workers, window, protocols = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5].split()
hz = 100  # USER_HZ: the ticks of /proc/PID/task/TID/stat
def load(path):
    lines = open(path).read().split("\n")
    ticks = collections.Counter()
    for line in lines[:-2]:
        pid, role, kind, t = line.split()
        ticks[(pid, role, kind)] += int(t)
    return ticks, float(lines[-2])
print(f"{rounds} round(s); medians; CPU ns per unique key (all threads of the job's JVMs over the window)")
for p in protocols:
    per = collections.defaultdict(list); total, cores = [], []
    for r in range(1, rounds + 1):
        d = f"{out}/{p.replace('/', '+')}.{r}"
        a, ta = load(f"{d}.a"); b, tb = load(f"{d}.b")
        keys = window * workers * json.load(open(f"{d}/summary.json"))["unique_per_step"]
        split = collections.Counter()
        for k, v in b.items():
            split[(k[1], k[2])] += v - a.get(k, 0)
        spent = sum(split.values()) / hz
        total.append(spent * 1e9 / keys); cores.append(spent / (tb - ta))
        for k in set(split) | set(per):
            per[k].append(split.get(k, 0) / hz * 1e9 / keys)
    med = statistics.median
    print(f"{p}: {med(total):.0f} ns/key, {med(cores):.2f} cores busy (rounds: "
          + ", ".join(f"{t:.0f}" for t in total) + ")")
    for k, v in sorted(per.items(), key=lambda kv: -med(kv[1])):
        if med(v) >= 5:
            print(f"    {k[0]:8s} {k[1]:22s} {med(v):5.0f}")
PY
