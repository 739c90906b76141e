#!/usr/bin/env python3
"""A grpc++/star_server server's JFR execution samples over the later part of a run (docs/performance/pserver.md):
the top source lines by self samples, and, per network thread, the samples in its own part of a request (run in
place: under ServerCalls.pullMany or pushMany) against the parts the other threads queued to it (under Netty's
runAllTasks).
Usage: jfr print --stack-depth 40 --events jdk.ExecutionSample FILE.jfr > FILE.txt
       scripts/bench/jfr_server_split.py FILE.txt [FROM=0.5]   (FROM: the fraction of the run's time to skip)"""
import collections, re, sys

if len(sys.argv) not in (2, 3):
    print(__doc__.split("Usage: ")[1], file=sys.stderr)
    sys.exit(2)
try:
    skip = float(sys.argv[2]) if len(sys.argv) == 3 else 0.5
except ValueError:
    skip = -1
if not 0 <= skip < 1:
    print(f"FROM must be a number in [0, 1), got {sys.argv[2]}", file=sys.stderr)
    sys.exit(2)
try:
    text = open(sys.argv[1]).read()
except OSError as e:
    print(f"cannot read {sys.argv[1]}: {e.strerror}", file=sys.stderr)
    sys.exit(2)
samples = []
for event in text.split("jdk.ExecutionSample")[1:]:
    when = re.search(r"startTime = (\d+):(\d+):([\d.]+)", event)
    thread = re.search(r'sampledThread = "([^"]+)"', event)
    frames = re.findall(r"^\s+([\w.$<>]+)\(.*?line: (\d+)", event, re.M)
    if when and thread and frames:
        samples.append((int(when[1]) * 3600 + int(when[2]) * 60 + float(when[3]), thread[1], frames))
if not samples:
    print(f"no execution samples with stacks in {sys.argv[1]} (print it with jfr print --stack-depth 40"
          " --events jdk.ExecutionSample)", file=sys.stderr)
    sys.exit(1)
first, last = min(s[0] for s in samples), max(s[0] for s in samples)
later = [s for s in samples if s[0] >= first + skip * (last - first)]
lines = collections.Counter(f"{f[0][0]}:{f[0][1]}" for _, _, f in later)
print(f"{len(later)} samples over the last {last - (first + skip * (last - first)):.1f} s; top lines by self samples:")
for line, n in lines.most_common(12):
    print(f"  {100 * n / len(later):5.1f}%  {line}")
parts = collections.Counter()
for _, thread, frames in later:
    names = [f for f, _ in frames]
    if not thread.startswith("ps-grpcpp-server"):
        continue
    own = any(n.endswith(("ServerCalls.pullMany", "ServerCalls.pushMany")) for n in names)
    queued = any(n.endswith("runAllTasks") for n in names)
    parts[(thread, "own part, in place" if own else "queued to it" if queued else "other")] += 1
print("per network thread:")
for (thread, kind), n in sorted(parts.items()):
    print(f"  {thread:<28} {kind:<20} {n}")
