#!/usr/bin/env python3
"""gen_kineto's late rank (--late-rank, --late-us, --late-percent; issue 35,
step 1): the generated truth holds in the generated traces.

  check_gen_kineto_late.py GEN_KINETO TRACEMILL

4 nodes x 2 GPUs with node clock offsets 0,1500,-800,3250 us, J = 2, `Seq`
on; rank 5 late by 2,000 us at 60 % of the collectives. On the true clock
(each rank's node offset removed), at every instance OUT/late_arrivals.json
lists, rank 5's NCCL kernel starts at least min_lead_us (late_us - 35) after
every other rank's, all ranks' kernels of the instance end within 2J, and
`Seq` is k. The same seed without a late rank writes as many collectives.
tracemill converts the job with --align-clocks on.
"""
import json
import subprocess
import sys
import tempfile
from decimal import Decimal

OFFSETS_US = [0, 1500, -800, 3250]
RANKS, GPUS_PER_NODE, LATE_RANK, LATE_US, J = 8, 2, 5, 2000, 2


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def collectives(out, rank):
    """(Seq, true start, true end) of the rank's NCCL kernels, in time order."""
    events = json.load(open(f"{out}/rank{rank}.pt.trace.json"), parse_float=Decimal)["traceEvents"]
    off = Decimal(OFFSETS_US[rank // GPUS_PER_NODE])
    kernels = sorted((e for e in events if e.get("cat") == "kernel" and e["name"].startswith("nccl")),
                     key=lambda e: Decimal(e["ts"]))
    return [(e["args"]["Seq"], Decimal(e["ts"]) - off, Decimal(e["ts"]) + Decimal(e["dur"]) - off) for e in kernels]


gen, tracemill = sys.argv[1], sys.argv[2]
with tempfile.TemporaryDirectory() as tmp:
    common = [gen, "--ranks", str(RANKS), "--gpus-per-node", str(GPUS_PER_NODE), "--events", "20000", "--seed",
              "3", "--jobs", "1", "--clock-offsets-us", ",".join(map(str, OFFSETS_US)), "--collective-jitter-us",
              str(J), "--collective-seq"]
    subprocess.run(common + ["--out", f"{tmp}/late", "--late-rank", str(LATE_RANK), "--late-us", str(LATE_US),
                             "--late-percent", "60"], check=True, capture_output=True)
    truth = json.load(open(f"{tmp}/late/late_arrivals.json"))
    if (truth["rank"], truth["late_us"], truth["min_lead_us"]) != (LATE_RANK, LATE_US, LATE_US - 35):
        fail(f"truth header {truth}")
    late = set(truth["late_instances"])
    per_rank = [collectives(f"{tmp}/late", r) for r in range(RANKS)]
    n = min(len(c) for c in per_rank)
    if n < 10:
        fail(f"only {n} collectives per rank")
    checked = 0
    for k in range(n):
        row = [c[k] for c in per_rank]
        if any(seq != k for seq, _, _ in row):
            fail(f"instance {k}: Seq {[seq for seq, _, _ in row]}")
        ends = [end for _, _, end in row]
        if max(ends) - min(ends) > 2 * J:
            fail(f"instance {k}: ends spread {max(ends) - min(ends)} us")
        lead = row[LATE_RANK][1] - max(start for r, (_, start, _) in enumerate(row) if r != LATE_RANK)
        if k in late:
            checked += 1
            if lead < truth["min_lead_us"]:
                fail(f"instance {k}: rank {LATE_RANK} leads the others by {lead} us < {truth['min_lead_us']}")
    if checked < n // 3 or checked == n:
        fail(f"{checked} of {n} instances late (asked: 60 %)")
    # Without a late rank: as many collectives (only the late instances'
    # times move).
    subprocess.run(common + ["--out", f"{tmp}/plain"], check=True, capture_output=True)
    plain = [collectives(f"{tmp}/plain", r) for r in range(RANKS)]
    if [len(c) for c in plain] != [len(c) for c in per_rank]:
        fail("a late rank changed the number of collectives")
    p = subprocess.run([tracemill, "convert", f"{tmp}/late", "-o", f"{tmp}/out", "--align-clocks", "on", "-q"],
                       capture_output=True, text=True)
    if p.returncode != 0:
        fail(p.stderr)
    print(f"ok: {checked} of {n} instances late, rank {LATE_RANK} last by >= {truth['min_lead_us']} us")
