#!/usr/bin/env python3
"""Where a running parameter-server job's CPU goes over a window (docs/performance/pserver.md):
the machine's idle share (/proc/stat) and, for each thread of the job's JVMs that used CPU or switched, its role
(TRAINING_ROLE), name, share of a CPU and context switches per second, voluntary and involuntary
(/proc/PID/task/TID/{stat,status}). Linux only.
Usage: scripts/bench/ps_proc_window.py SECONDS   (while a bin/fleetrun job runs, in its steady state)"""
import os, re, sys, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from job_threads import job_threads


def snap():
    threads = {(pid, role, tid, name): (vol, invol, ticks)
               for pid, role, tid, name, ticks, vol, invol in job_threads()}
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
