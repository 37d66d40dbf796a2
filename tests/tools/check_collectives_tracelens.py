#!/usr/bin/env python3
"""The collectives tables against TraceLens' own collective report (issue 35).

  check_collectives_tracelens.py GEN_KINETO TRACEMILL EXPECTED_DIR

The job is one node (one clock), 8 ranks, rank 5 late at 60 % of the
collectives (tests/data/collectives/README.md has the command and how the
expected values were made with TraceLens). TraceLens matches a process
group's collectives by their order on each rank and reports only those of
its "implicit sync" kinds (not broadcast); tracemill matches by time and
numbers instances by first arrival, which here is the same order. For every
instance TraceLens reports: latency_ns = comm_latency, skew_ns = skew in
start time, last_rank = the rank with the least wait; per rank over those
instances: times last and the summed wait.
"""
import csv
import sqlite3
import subprocess
import sys
import tempfile
from decimal import Decimal

GEN_ARGS = ["--ranks", "8", "--gpus-per-node", "8", "--events", "20000", "--seed", "3", "--jobs", "1",
            "--clock-offsets-us", "0", "--collective-jitter-us", "2", "--late-rank", "5", "--late-us", "2000",
            "--late-percent", "60"]


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def us_to_ns(text):
    return int(Decimal(text) * 1000)


gen, tracemill, expected = sys.argv[1], sys.argv[2], sys.argv[3]
inst = list(csv.DictReader(open(f"{expected}/tracelens_instances.csv")))
ranks = list(csv.DictReader(open(f"{expected}/tracelens_ranks.csv")))
with tempfile.TemporaryDirectory() as tmp:
    subprocess.run([gen] + GEN_ARGS + ["--out", f"{tmp}/in"], check=True, capture_output=True)
    p = subprocess.run([tracemill, "convert", f"{tmp}/in", "-o", f"{tmp}/out", "--tables", "-q"],
                       capture_output=True, text=True)
    if p.returncode != 0:
        fail(p.stderr)
    db = sqlite3.connect(f"{tmp}/out/tables.sqlite")
    ours = {i: (lat, skew, last, ranks_) for i, lat, skew, last, ranks_ in db.execute(
        "SELECT instance, latency_ns, skew_ns, last_rank, ranks FROM collective_instances")}
    for row in inst:
        k = int(row["index"])
        if k not in ours:
            fail(f"no instance {k}")
        lat, skew, last, n = ours[k]
        want = (us_to_ns(row["comm_latency_us"]), us_to_ns(row["skew_in_start_time_us"]), int(row["last_rank"]), 8)
        if (lat, skew, last, n) != want:
            fail(f"instance {k}: latency, skew, last rank, ranks {(lat, skew, last, n)}, TraceLens {want}")
    keys = ",".join(row["index"] for row in inst)
    per_rank = {r: (w, t) for r, w, t in db.execute(
        f"SELECT c.rank, sum(c.wait_ns), sum(i.last_rank = c.rank) FROM collectives c JOIN collective_instances i "
        f"ON i.instance = c.instance WHERE c.instance IN ({keys}) GROUP BY c.rank")}
    for row in ranks:
        r = int(row["rank"])
        want = (us_to_ns(row["total_wait_time_us"]), int(row["times_arrived_last"]))
        if per_rank.get(r) != want:
            fail(f"rank {r}: waited ns, times last {per_rank.get(r)}, TraceLens {want}")
    print(f"ok: {len(inst)} instances and {len(ranks)} ranks equal TraceLens' report")
