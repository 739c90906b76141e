#!/usr/bin/env python3
"""Where a running parameter-server job's CPU goes over a window (issue 15, twelfth session in docs/PERFORMANCE.md):
the machine's idle share (/proc/stat) and, for each thread of the job's JVMs that used CPU or switched, its role
(TRAINING_ROLE), name, share of a CPU and context switches per second, voluntary and involuntary
(/proc/PID/task/TID/{stat,status}). Linux only.
Usage: scripts/bench/ps_proc_window.py SECONDS   (while a bin/fleetrun job runs, in its steady state)"""
import os, re, sys, time

def snap():
    threads = {}
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if b"org.fleet4j" not in open(f"/proc/{pid}/cmdline", "rb").read():
                continue
            env = open(f"/proc/{pid}/environ", "rb").read().split(b"\0")
            role = next((e[14:].decode() for e in env if e.startswith(b"TRAINING_ROLE=")), "launcher")
            for tid in os.listdir(f"/proc/{pid}/task"):
                status = open(f"/proc/{pid}/task/{tid}/status").read()
                name = re.search(r"Name:\s+(.*)", status).group(1)
                vol = int(re.search(r"^voluntary_ctxt_switches:\s+(\d+)", status, re.M).group(1))
                invol = int(re.search(r"nonvoluntary_ctxt_switches:\s+(\d+)", status).group(1))
                stat = open(f"/proc/{pid}/task/{tid}/stat").read()
                fields = stat[stat.rindex(")") + 2:].split()
                threads[(pid, role, tid, name)] = (vol, invol, int(fields[11]) + int(fields[12]))
        except OSError:
            continue  # a process or thread that ended meanwhile
    cpu = [int(x) for x in open("/proc/stat").readline().split()[1:]]
    return threads, cpu, time.time()

if len(sys.argv) != 2 or not re.fullmatch(r"\d+(\.\d+)?", sys.argv[1]) or float(sys.argv[1]) <= 0:
    print("usage: ps_proc_window.py SECONDS (a positive number), while a bin/fleetrun job runs", file=sys.stderr)
    sys.exit(2)
a, cpu_a, t_a = snap()
time.sleep(float(sys.argv[1]))
b, cpu_b, t_b = snap()
if not b:
    print("ps_proc_window: no JVM of a Fleet4J job is running", file=sys.stderr)
    sys.exit(1)
ticks = [y - x for x, y in zip(cpu_a, cpu_b)]
print(f"idle {100 * ticks[3] / sum(ticks):.1f}% of all CPUs over {t_b - t_a:.1f} s")
hz = os.sysconf("SC_CLK_TCK")
for key in sorted(b):
    if key not in a:
        continue
    vol, invol, cpu = (y - x for x, y in zip(a[key], b[key]))
    seconds = t_b - t_a
    if vol + invol > 50 or cpu > 0.1 * hz * seconds:
        print(f"  {key[1]:<8} {key[3]:<16} cpu {100 * cpu / hz / seconds:4.0f}%  switches/s voluntary {vol / seconds:6.0f}"
              f"  involuntary {invol / seconds:6.0f}")
