#!/usr/bin/env python3
"""What --time-ranges buys a sharded job: every shard of each layout run in turn (as array
tasks on nodes of their own would), layouts interleaved round by round.

  time_range_shards.py TRACEMILL INPUT_DIR ROUNDS [--group-by all]

Layouts: one shard per output (no ranges), then 2x and 4x as many shards with --time-ranges 2
and 4. Prints per round and layout the slowest shard's wall time (the job's wall time with a
node per task), the sum of the shards' wall times and their CPU time (user + sys), then the
medians. Each shard runs with --threads 2; OUTDIR is removed and `sync` run before each layout.
"""
import json
import os
import resource
import shutil
import subprocess
import sys
import time


def outputs(tracemill, job, extra):
    out = "/tmp/trs-plan"
    shutil.rmtree(out, ignore_errors=True)
    subprocess.run([tracemill, "convert", job, "-o", out, "-q", "--threads", "2"] + extra, check=True)
    n = len(json.load(open(os.path.join(out, "manifest.json")))["outputs"])
    shutil.rmtree(out)
    return n


def main():
    tracemill, job, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3])
    extra = sys.argv[4:]
    n = outputs(tracemill, job, extra)
    layouts = {f"{n} shards": (n, []), f"{2 * n} shards, --time-ranges 2": (2 * n, ["--time-ranges", "2"]),
               f"{4 * n} shards, --time-ranges 4": (4 * n, ["--time-ranges", "4"])}
    results = {k: [] for k in layouts}
    for rnd in range(rounds):
        for name, (count, flags) in layouts.items():
            out = "/tmp/trs-out"
            shutil.rmtree(out, ignore_errors=True)
            subprocess.run(["sync"])
            walls, cpu = [], 0.0
            for i in range(count):
                r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
                t0 = time.monotonic()
                p = subprocess.run([tracemill, "convert", job, "-o", out, "--shard", f"{i}/{count}", "--threads", "2",
                                    "-q"] + extra + flags, capture_output=True, text=True)
                walls.append(time.monotonic() - t0)
                r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
                cpu += (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
                if p.returncode != 0:
                    sys.exit(f"{name}, shard {i}: exit {p.returncode}: {p.stderr}")
            results[name].append((max(walls), sum(walls), cpu))
            print(f"round {rnd} | {name} | slowest {max(walls):.3f} s | sum {sum(walls):.3f} s | cpu {cpu:.3f} s",
                  flush=True)
    shutil.rmtree("/tmp/trs-out", ignore_errors=True)
    med = lambda xs: sorted(xs)[len(xs) // 2]
    for name, v in results.items():
        print(f"median | {name} | slowest {med([x[0] for x in v]):.3f} s | sum {med([x[1] for x in v]):.3f} s | "
              f"cpu {med([x[2] for x in v]):.3f} s")


if __name__ == "__main__":
    main()
