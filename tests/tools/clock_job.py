#!/usr/bin/env python3
"""Small multi-node Kineto-like jobs for the clock alignment tests
(tests/pipeline/clock_alignment_test.cc), and a time shift of a real trace.

  clock_job.py make OUT --nodes N --gpus G --offsets-us a,b,... [--jitter-us J]
      [--collectives K] [--seed S] [--membership SPEC] [--drop RANK:EVERY]
      [--truncate RANK:BYTES] [--rank-skew-us RANK:US] [--steps] [--relative]
  clock_job.py shift IN OUT US

`make` writes rank<r>.json for N x G ranks. Collective k of a process group
ends at the same true instant on every member (plus a jitter uniform in
[-J, J] us); node n's clock reads true + offset[n] (+ the rank's skew, for a
rank whose clock disagrees with its node's). Each collective is an NCCL
kernel (`ncclDevKernel_AllReduce_Sum_f32_RING_LL`) with Kineto's process
group args, and a `nccl:all_reduce` CPU record. `--membership` gives each
node its groups and, per group, an extra offset that contradicts the node's
clock (a cycle that does not close): "0:A,B;1:A,C;2:B,C@700" (default: every
node in group "0"). Times are integer microseconds, exact.

`shift` adds US microseconds to every `ts` of a trace (plain or gzip; the
output is plain JSON unless OUT ends in .gz): another host's clock.
"""
import argparse
import gzip
import json
import random
import sys


def parse_membership(spec, nodes):
    if not spec:
        return {n: {"0": 0} for n in range(nodes)}
    out = {}
    for part in spec.split(";"):
        node, groups = part.split(":")
        out[int(node)] = {}
        for g in groups.split(","):
            name, _, extra = g.partition("@")
            out[int(node)][name] = int(extra or 0)
    return out


def make(args):
    offsets = [int(x) for x in args.offsets_us.split(",")]
    if len(offsets) != args.nodes:
        sys.exit("clock_job.py: --offsets-us needs one value per node")
    membership = parse_membership(args.membership, args.nodes)
    ranks = args.nodes * args.gpus
    rng = random.Random(args.seed)
    t0 = 1682725898000000  # us since the epoch
    # The true end of collective k of each group: 1-3 ms apart, the same on every member.
    groups = sorted({g for m in membership.values() for g in m})
    ends = {}
    for g in groups:
        t, ends[g] = t0, []
        for _ in range(args.collectives):
            t += rng.randint(1000, 3000)
            ends[g].append(t)
    drop = dict(tuple(int(v) for v in d.split(":")) for d in args.drop)
    skew = dict(tuple(int(v) for v in d.split(":")) for d in args.rank_skew_us)
    for r in range(ranks):
        node = r // args.gpus
        clock = offsets[node] + skew.get(r, 0)
        events = [{"ph": "M", "name": "process_name", "pid": 1000 + r, "tid": 0, "args": {"name": "python"}}]
        members = membership.get(node, {})
        jr = random.Random(args.seed * 7919 + r)
        for g in groups:
            if g not in members:
                continue
            group_ranks = [q for q in range(ranks) if g in membership.get(q // args.gpus, {})]
            for k, end in enumerate(ends[g]):
                if r in drop and k % drop[r] == 0:
                    continue
                jitter = jr.randint(-args.jitter_us, args.jitter_us)
                e = end + clock + members[g] + jitter
                dur = jr.randint(100, 900)
                pg = {"Process Group Name": g, "Process Group Description": "pg " + g,
                      "Process Group Ranks": str(group_ranks), "Collective name": "allreduce"}
                events.append({"ph": "X", "cat": "kernel", "name": "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)",
                               "pid": r % args.gpus, "tid": 28, "ts": e - dur, "dur": dur, "args": pg})
                events.append({"ph": "X", "cat": "user_annotation", "name": "nccl:all_reduce", "pid": 1000 + r,
                               "tid": 1000 + r, "ts": e - dur - 40, "dur": 30})
        if args.steps:
            for s in range(args.collectives // 10):
                start = t0 + s * 20000 + clock
                events.append({"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#%d" % (s + 1),
                               "pid": 1000 + r, "tid": 1000 + r, "ts": start, "dur": 19000})
        if args.relative:  # PyTorch 1.x: times from the rank's own start, no epoch base
            for e in events:
                if "ts" in e:
                    e["ts"] -= t0
        jr.shuffle(events)  # Kineto files are not sorted
        doc = {"schemaVersion": 1, "deviceProperties": [{"id": i, "name": "GPU"} for i in range(args.gpus)],
               "distributedInfo": {"backend": "nccl", "rank": r, "world_size": ranks}, "traceEvents": events}
        text = json.dumps(doc)
        path = "%s/rank%d.json" % (args.out, r)
        with open(path, "w") as f:
            f.write(text)
        for t in args.truncate:
            tr, nbytes = (int(v) for v in t.split(":"))
            if tr == r:
                with open(path, "r+") as f:
                    f.truncate(nbytes)


def shift(args):
    opener = gzip.open if args.inp.endswith(".gz") else open
    with opener(args.inp, "rt") as f:
        doc = json.load(f)
    events = doc["traceEvents"] if isinstance(doc, dict) else doc
    for e in events:
        if "ts" in e and e.get("ph") != "M":
            e["ts"] = e["ts"] + args.us
    opener = gzip.open if args.out.endswith(".gz") else open
    with opener(args.out, "wt") as f:
        json.dump(doc, f)


def main():
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="cmd", required=True)
    m = sub.add_parser("make")
    m.add_argument("out")
    m.add_argument("--nodes", type=int, required=True)
    m.add_argument("--gpus", type=int, default=2)
    m.add_argument("--offsets-us", required=True)
    m.add_argument("--jitter-us", type=int, default=2)
    m.add_argument("--collectives", type=int, default=100)
    m.add_argument("--seed", type=int, default=1)
    m.add_argument("--membership", default="")
    m.add_argument("--drop", action="append", default=[])
    m.add_argument("--truncate", action="append", default=[])
    m.add_argument("--rank-skew-us", action="append", default=[])
    m.add_argument("--steps", action="store_true")
    m.add_argument("--relative", action="store_true")
    s = sub.add_parser("shift")
    s.add_argument("inp")
    s.add_argument("out")
    s.add_argument("us", type=int)
    args = p.parse_args()
    make(args) if args.cmd == "make" else shift(args)


if __name__ == "__main__":
    main()
