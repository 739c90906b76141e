#!/usr/bin/env bash
# What one server core sustains (issue 15, "scale past this machine"): ps_perf with W workers x 1 server, the workers
# (and the launcher) pinned to core 0 and the server process, all of its threads, to core 1 (taskset); the server's CPU
# time is sampled from /proc every 0.1 s, and over the timed steps (the summary's `seconds`, ending when summary.json
# is written) gives its busy fraction of that core. Requests per second are 2 calls (a pull, a push) per worker-step
# for the sparse workload; served per core-second = served per second / busy fraction. Prints one line per run and the
# medians per protocol, W and batch (two batch sizes separate a request's fixed cost from its cost per key).
# Usage: scripts/bench/ps_server_core.sh [ROUNDS=2] [STEPS=2000] [WARMUP=2000] [WORKERS="1 4"] [PROTOCOLS="grpc star_server"]
#        [BATCHES="4096 256"]
#   (after ./mvnw -q package -DskipTests; needs taskset and 2 cores)
set -euo pipefail
cd "$(dirname "$0")/../.."
rounds=${1:-2}
steps=${2:-2000}
warmup=${3:-2000}
workers=${4:-"1 4"}
protocols=${5:-"grpc star_server"}
batches=${6:-"4096 256"}
out=$(mktemp -d)
echo "start: $(date -u +%H:%M:%S) UTC, $(uptime | sed 's/.*load/load/')"
/usr/bin/python3 - "$out" "$rounds" "$steps" "$warmup" "$workers" "$protocols" "$batches" <<'PY'
import json, os, statistics, subprocess, sys, time
out, rounds, steps, warmup = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
workers, protocols = [int(w) for w in sys.argv[5].split()], sys.argv[6].split()
batches = sys.argv[7].split()
tick = os.sysconf("SC_CLK_TCK")

def descendants(pid):
    kids = []
    for p in os.listdir("/proc"):
        if p.isdigit():
            try:
                ppid = int(open(f"/proc/{p}/stat").read().rsplit(")", 1)[1].split()[1])
            except OSError:
                continue
            if ppid == pid:
                kids += [int(p)] + descendants(int(p))
    return kids

def server_of(pid):
    for k in descendants(pid):
        try:
            if b"TRAINING_ROLE=PSERVER" in open(f"/proc/{k}/environ", "rb").read().split(b"\0"):
                return k
        except OSError:
            pass
    return None

def cpu_seconds(pid):
    f = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / tick

results = {}
for r in range(1, rounds + 1):
    for w, batch in [(w, b) for b in batches for w in workers]:
        order = protocols if r % 2 else protocols[::-1]
        for proto in order:
            log = f"{out}/{proto}.{w}.{batch}.{r}"
            job = subprocess.Popen(["taskset", "-c", "0", "bin/fleetrun", "--server_num", "1", "--worker_num", str(w),
                                    "--log_dir", log, "ps_perf", "--protocol", proto, "--steps", steps,
                                    "--warmup", warmup, "--batch", batch], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            server, samples, deadline = None, [], time.time() + 60
            while server is None and job.poll() is None and time.time() < deadline:
                server = server_of(job.pid)
                time.sleep(0.05)
            if server is None:
                job.kill()
                sys.exit(f"ps_server_core: no server process of job {log} within 60 s")
            subprocess.run(["taskset", "-a", "-p", "-c", "1", str(server)], check=True, stdout=subprocess.DEVNULL)
            while job.poll() is None:
                try:
                    samples.append((time.time(), cpu_seconds(server)))
                except OSError:
                    pass
                time.sleep(0.1)
            if job.wait(timeout=600) != 0:
                sys.exit(f"ps_server_core: job {log} failed; see its logs")
            s = json.load(open(f"{log}/summary.json"))
            end = os.path.getmtime(f"{log}/summary.json")
            window = [x for x in samples if end - s["seconds"] <= x[0] <= end]
            busy = (window[-1][1] - window[0][1]) / (window[-1][0] - window[0][0])
            rps = 2 * w * s["steps"] / s["seconds"]
            row = dict(busy=busy, keys=s["keys_per_sec"], rps=rps, keys_core=s["keys_per_sec"] / busy,
                       rps_core=rps / busy, p50=s["p50_ms"], unique=s["unique_per_step"])
            results.setdefault((proto, int(batch), w), []).append(row)
            print(f"round {r} {proto:12} {w} worker(s), batch {batch}, {s['unique_per_step']:.0f} unique: {s['keys_per_sec']:10,.0f} keys/s, {rps:8,.0f} requests/s,"
                  f" server busy {busy:5.2f} of its core -> {row['keys_core']:10,.0f} keys and {row['rps_core']:7,.0f}"
                  f" requests per core-second; p50 {s['p50_ms']:.3f} ms  ({time.strftime('%H:%M:%S', time.gmtime())}"
                  f" UTC, load {os.getloadavg()[0]:.1f})", flush=True)
med = statistics.median
print("\nmedians: protocol, batch, unique ids per request, workers, keys/s, requests/s, server core busy, keys per"
      " core-second, requests per core-second, step p50 ms")
for (proto, batch, w), rows in sorted(results.items()):
    print(f"  {proto:12} {batch:5} {med(x['unique'] for x in rows):6.0f} {w}  {med(x['keys'] for x in rows):10,.0f}  {med(x['rps'] for x in rows):8,.0f}"
          f"  {med(x['busy'] for x in rows):5.2f}  {med(x['keys_core'] for x in rows):10,.0f}"
          f"  {med(x['rps_core'] for x in rows):8,.0f}  {med(x['p50'] for x in rows):7.3f}")
PY
echo "end:   $(date -u +%H:%M:%S) UTC, $(uptime | sed 's/.*load/load/')"
echo "logs: $out"
