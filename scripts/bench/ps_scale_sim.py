#!/usr/bin/env python3
"""How many workers one parameter server carries, by simulation (issue 15's "scale past this machine").

A discrete-event simulation of W asynchronous workers against one server with K network threads, driven by the
costs measured on this machine (docs/performance/pserver.md, "What one server core sustains"): a request of n unique ids
costs a server thread a + b * n microseconds. Each worker loops: compute for C microseconds (the part of its step
that is not the parameter server), pull its step's ids, wait for the rows, push its gradients and wait for the reply
(star_server; a worker of star_server_lite or with an async communicator would overlap the push, which only helps).

How a request meets the server's threads:
  whole  one thread serves the whole request (star_server's frame, served on its connection's thread); a request
         waits for the first free thread.
  split  the worker splits it by owner into K parts of n/K ids, each served by its own thread (grpc++'s
         sharing-nothing routing); the request is done when its last part is.
Service times vary by +-JITTER (uniform, seeded), and the network adds a fixed round trip L per request. With
--link_gbps the server's link is a resource too, one queue each way: a push's ids and gradients come in over it
before a thread serves them, a pull's rows go out over it after (BYTES_PER_ID each way).

Prints, for each K, the steps/s of all workers, each worker's speed against a worker alone, the busiest thread's
load, and the most workers each of whom keeps at least 90 % of its speed alone: the worker:server ratio, to compare
with DeepRec's 8-10 workers per StarServer server.

Usage: scripts/bench/ps_scale_sim.py [--a 98] [--b 0.155] [--ids 2434] [--compute 16000] [--rtt 60]
                                     [--threads 1,2,4,8] [--workers 1,2,4,...] [--mode whole|split] [--seconds 20]
Defaults: star_server's a and b from ps_server_core.sh and a ctr Wide&Deep worker (2,434 unique ids a pull and a push,
59 steps/s alone, so ~16 ms of compute a step); the figures it printed are in docs/performance/pserver.md.
"""
import argparse
import heapq
import random


def simulate(workers, threads, a, b, ids, compute, rtt, mode, seconds, jitter, seed, link_us=0.0):
    """link_us: microseconds a request's payload holds the server's link in its direction (0: no link limit)."""
    rnd = random.Random(seed)
    link_free = [0.0, 0.0]             # when the link in (pushes) and out (pull replies) is next free
    free_at = [0.0] * threads          # when each server thread is next free (us)
    busy = [0.0] * threads             # its busy time inside the measured window
    horizon = seconds * 1e6
    warm = horizon * 0.1               # the first 10 % is left out of the counts
    steps = [0] * workers
    events = []                        # (time, worker, phase): phase 0 = starts a pull, 1 = starts a push
    for w in range(workers):
        heapq.heappush(events, (rnd.uniform(0, compute), w, 0))

    def over_link(direction, at):
        if link_us == 0:
            return at
        link_free[direction] = max(at, link_free[direction]) + link_us
        return link_free[direction]

    def serve(arrival, n, push):
        """Runs one request arriving at `arrival` (us); returns when its reply is back at the worker."""
        if push:
            arrival = over_link(0, arrival)
        if mode == "whole":
            t = min(range(threads), key=lambda i: free_at[i])
            cost = (a + b * n) * rnd.uniform(1 - jitter, 1 + jitter)
            begin = max(arrival, free_at[t])
            free_at[t] = begin + cost
            if warm <= begin < horizon:
                busy[t] += min(cost, horizon - begin)
            return (free_at[t] if push else over_link(1, free_at[t])) + rtt / 2
        done = 0.0
        for t in range(threads):
            cost = (a + b * n / threads) * rnd.uniform(1 - jitter, 1 + jitter)
            begin = max(arrival, free_at[t])
            free_at[t] = begin + cost
            if warm <= begin < horizon:
                busy[t] += min(cost, horizon - begin)
            done = max(done, free_at[t])
        return (done if push else over_link(1, done)) + rtt / 2

    while events:
        now, w, phase = heapq.heappop(events)
        if now > horizon:
            break
        back = serve(now + rtt / 2, ids, phase == 1)
        if phase == 0:
            heapq.heappush(events, (back, w, 1))
        else:
            if back >= warm:
                steps[w] += 1
            heapq.heappush(events, (back + compute, w, 0))
    window = (horizon - warm) / 1e6
    return sum(steps) / window, max(busy) / (horizon - warm)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--a", type=float, default=98.0, help="a request's fixed server cost, us (star_server: 98)")
    p.add_argument("--b", type=float, default=0.155, help="server cost per unique id, us (star_server: 0.155)")
    p.add_argument("--ids", type=int, default=2434, help="unique ids a pull and a push carry (ctr: 2,434)")
    p.add_argument("--compute", type=float, default=16000.0, help="a worker's compute a step, us (ctr: ~16,000)")
    p.add_argument("--rtt", type=float, default=60.0, help="network round trip a request, us")
    p.add_argument("--threads", default="1,2,4,8")
    p.add_argument("--workers", default="1,2,4,6,8,10,12,14,16,18,20,24,32,48,64")
    p.add_argument("--mode", choices=["whole", "split"], default="whole")
    p.add_argument("--seconds", type=float, default=20.0, help="simulated seconds per point")
    p.add_argument("--jitter", type=float, default=0.3, help="service times vary by +- this fraction")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--link_gbps", type=float, default=0.0, help="the server's link, Gbit/s each way (0: no limit)")
    p.add_argument("--bytes_per_id", type=float, default=40.0,
                   help="payload bytes a unique id carries each way (ctr: 8-byte id + 1 to 8 floats; 40 is 8)")
    o = p.parse_args()
    if o.a < 0 or o.b < 0 or o.ids <= 0 or o.compute < 0 or o.rtt < 0 or not 0 <= o.jitter < 1:
        p.error("--a, --b, --compute and --rtt must be >= 0, --ids > 0, --jitter in [0, 1)")
    if o.link_gbps < 0 or o.bytes_per_id <= 0:
        p.error("--link_gbps must be >= 0 and --bytes_per_id > 0")
    link_us = 0.0 if o.link_gbps == 0 else o.ids * o.bytes_per_id * 8 / (o.link_gbps * 1e3)
    threads = [int(x) for x in o.threads.split(",")]
    workers = [int(x) for x in o.workers.split(",")]
    if min(threads) < 1 or min(workers) < 1:
        p.error("--threads and --workers must be positive")
    alone, _ = simulate(1, 1, o.a, o.b, o.ids, o.compute, o.rtt, o.mode, o.seconds, 0.0, o.seed, link_us)
    print(f"server cost a request: {o.a:g} + {o.b:g} x {o.ids} ids = {o.a + o.b * o.ids:.0f} us ({o.mode});"
          f" worker compute {o.compute:g} us a step, round trip {o.rtt:g} us"
          + (f", link {o.link_gbps:g} Gbit/s ({link_us:.0f} us a request)" if link_us else ", no link limit")
          + f"; a worker alone: {alone:.1f} steps/s")
    for k in threads:
        print(f"\n{k} server thread(s)")
        print(f"  {'workers':>7} {'steps/s':>9} {'per worker vs alone':>20} {'busiest thread':>15}")
        ratio = 0
        for w in workers:
            total, load = simulate(w, k, o.a, o.b, o.ids, o.compute, o.rtt, o.mode, o.seconds, o.jitter, o.seed,
                                   link_us)
            speed = total / w / alone
            if speed >= 0.9:
                ratio = max(ratio, w)
            print(f"  {w:7d} {total:9.1f} {speed:20.2f} {load:15.0%}")
        print(f"  most workers at >= 90 % of their speed alone: {ratio}"
              + (" (or more: the largest count simulated)" if ratio == max(workers) else ""))


if __name__ == "__main__":
    main()
