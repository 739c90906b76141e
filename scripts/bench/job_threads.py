"""The threads of a running Fleet4J job's JVMs, read from /proc (Linux only): what ps_cpu_split.sh and
ps_proc_window.py measure. Imported by them; not a command."""
import os, re


def job_threads():
    """Each thread of every JVM whose command line names org.fleet4j: (pid, role, tid, name, cpu ticks, voluntary and
    involuntary context switches). role is the process's TRAINING_ROLE ("launcher" without one), name the thread's
    name as /proc/PID/task/TID/stat has it, cpu ticks its utime + stime. A process or thread that ends meanwhile is
    left out."""
    out = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if b"org.fleet4j" not in open(f"/proc/{pid}/cmdline", "rb").read():
                continue
            env = open(f"/proc/{pid}/environ", "rb").read().split(b"\0")
            role = next((e[14:].decode() for e in env if e.startswith(b"TRAINING_ROLE=")), "launcher")
            for tid in os.listdir(f"/proc/{pid}/task"):
                stat = open(f"/proc/{pid}/task/{tid}/stat").read()
                status = open(f"/proc/{pid}/task/{tid}/status").read()
                name = stat[stat.index("(") + 1:stat.rindex(")")]
                fields = stat[stat.rindex(")") + 2:].split()
                vol = int(re.search(r"^voluntary_ctxt_switches:\s+(\d+)", status, re.M).group(1))
                invol = int(re.search(r"^nonvoluntary_ctxt_switches:\s+(\d+)", status, re.M).group(1))
                out.append((pid, role, tid, name, int(fields[11]) + int(fields[12]), vol, invol))
        except OSError:
            continue
    return out
