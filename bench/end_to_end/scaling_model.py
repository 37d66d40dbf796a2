#!/usr/bin/env python3
"""Issue 34's scaling model from one output's measured stage times (the CLI, `--group-by all`).

  scaling_model.py TRACEMILL INPUT_DIR [ROUNDS] [--cores 16,64] [--outputs 8]

Per round (default 5), in turn:
  1. `convert INPUT_DIR --group-by all --threads 1`: t1, the whole job on one core (wall);
  2. the same with `--threads R --verbose`, R = max(4, this host's CPUs), so that the output is
     merged in time ranges (merge_write.h, from kMinRangeThreads = 4): s, its serial stages
     (cut + count + append, from the `--verbose` line). Everything else (decode, sort, merge
     and format of each range, the copy into the ring) runs on any free thread;
  3. the disk alone: `dd if=/dev/zero oflag=direct bs=1M` of as many bytes as the output, into
     the output's folder: D.
Model, medians of the rounds: p = t1 - s spreads over the cores; a job of k outputs (1/k of the
bytes each) runs their serial stages on min(k, N) cores, so on N cores
T(N, k) = p/N + s/min(k, N), the speed-up t1 / T and the efficiency t1 / (N T). Pessimistic where
outputs are written while inputs decode (per-GPU outputs); s is measured with R threads sharing
this host's cores, which only lengthens it. The disk is a bound of its own: the outputs cannot be
written sooner than D (this host's disk; a node's may be faster), printed beside T.
OUTDIR: /tmp/scaling-model-out (removed before each run and at the end).
"""
import re
import os
import shutil
import statistics
import subprocess
import sys
import time

OUT = "/tmp/scaling-model-out"
STAGES = re.compile(r"serial stages: (?:cut|merge) ([0-9.]+) s, count ([0-9.]+) s, append ([0-9.]+) s")
WROTE = re.compile(r"wrote \S+ \((\d+) events, (\d+) bytes")


def run(cmd):
    shutil.rmtree(OUT, ignore_errors=True)
    subprocess.run(["sync"], check=True)
    t0 = time.monotonic()
    p = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.monotonic() - t0
    if p.returncode != 0:
        sys.exit(f"{' '.join(cmd)}: exit {p.returncode}\n{p.stderr}")
    return wall, p.stderr


def disk_seconds(nbytes):
    os.makedirs(OUT, exist_ok=True)
    path = os.path.join(OUT, "dd.bin")
    count = max(1, nbytes >> 20)
    subprocess.run(["sync"], check=True)
    t0 = time.monotonic()
    subprocess.run(["dd", "if=/dev/zero", f"of={path}", "bs=1M", f"count={count}", "oflag=direct"],
                   check=True, capture_output=True)
    return time.monotonic() - t0


def main(argv):
    args = [a for a in argv if not a.startswith("--")]
    opts = dict(a[2:].split("=", 1) for a in argv if a.startswith("--") and "=" in a)
    if len(args) < 2:
        sys.exit(__doc__)
    tracemill, job = args[0], args[1]
    rounds = int(args[2]) if len(args) > 2 else 5
    cores = [int(c) for c in opts.get("cores", "16,64").split(",")]
    outputs = int(opts.get("outputs", "8"))
    threads = max(4, os.cpu_count() or 1)
    t1s, serials, disks, stage_rows = [], [], [], []
    for rnd in range(rounds):
        t1, _ = run([tracemill, "convert", job, "-o", OUT, "--group-by", "all", "--threads", "1", "-q"])
        _, err = run([tracemill, "convert", job, "-o", OUT, "--group-by", "all", "--threads", str(threads),
                      "--verbose"])
        m = STAGES.search(err)
        if not m:
            sys.exit(f"no serial stages in the --verbose output:\n{err}")
        cut, count, append = (float(x) for x in m.groups())
        nbytes = sum(int(b) for _, b in WROTE.findall(err))
        disk = disk_seconds(nbytes)
        t1s.append(t1)
        serials.append(cut + count + append)
        disks.append(disk)
        print(f"round {rnd + 1}: t1 {t1:.3f} s; serial stages at {threads} threads: cut {cut:.3f} + count "
              f"{count:.3f} + append {append:.3f} = {cut + count + append:.3f} s; output {nbytes / 1e6:.0f} MB, "
              f"dd direct {disk:.3f} s ({nbytes / disk / 1e9:.2f} GB/s)")
    t1, s, d = statistics.median(t1s), statistics.median(serials), statistics.median(disks)
    p = t1 - s
    print(f"medians: t1 {t1:.3f} s, s {s:.3f} s ({s / t1:.1%} of t1), D {d:.3f} s")
    cells = []
    for n in cores:
        t = p / n + s / min(outputs, n)
        cells.append(f"{n} cores {t1 / t:.1f}x (efficiency {t1 / t / n:.2f}; T {t:.3f} s, the disk alone {d:.3f} s)")
    print(f"model, {outputs} outputs: " + "; ".join(cells))
    shutil.rmtree(OUT, ignore_errors=True)


if __name__ == "__main__":
    main(sys.argv[1:])
