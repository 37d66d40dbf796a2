#!/usr/bin/env python3
"""The `collectives` and `collective_instances` tables on a generated job with
a known late rank (issue 35, step 2).

  check_collectives_tables.py GEN_KINETO TRACEMILL

gen_kineto: 4 nodes x 2 GPUs, node clock offsets 0,1500,-800,3250 us, J = 2;
rank 5 late by 2,000 us at 60 % of the collectives (OUT/late_arrivals.json
lists them). tracemill convert --tables with the clocks aligned:
- with `Seq` on the kernels: every instance held by all 8 ranks has 8 rows,
  its skew within 5 us of the truth (the ranks' kernel starts on the true
  clock, from the files and the known offsets) and, where the last rank leads
  by more than 10 us, the true last rank;
  at every late instance rank 5 is the last arrival, its wait is 0 and every
  other rank waited at least min_lead_us (the generator's lower bound);
- without `Seq` (matched by time): the same instances, the same last ranks,
  first arrivals and skews;
- rank_waits: rank 5 caused the most waiting, was last at least at every late
  instance and waited least; the report's straggler table names rank 5 as
  the straggler of the steps by their collectives;
- the overview marks each shared instance on its last rank's thread of a
  "collectives: last arrivals" process, from its first arrival to its last;
- two shards joined by manifest merge: the same tables and overview as one
  process;
- --align-clocks off: every row is marked aligned = 0, and a notice says so.
"""
import json
import re
import sqlite3
import subprocess
import sys
import tempfile
from decimal import Decimal

OFFSETS_US = "0,1500,-800,3250"
LATE_RANK, LATE_US = 5, 2000
# How far a skew may be from the truth: node offsets are measured from
# collective ends that agree within 2J = 4 us.
SKEW_BOUND_NS = 5_000


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def generate(gen, out, seq):
    args = [gen, "--ranks", "8", "--gpus-per-node", "2", "--events", "20000", "--seed", "3", "--jobs", "1",
            "--clock-offsets-us", OFFSETS_US, "--collective-jitter-us", "2", "--late-rank", str(LATE_RANK),
            "--late-us", str(LATE_US), "--late-percent", "60", "--out", out]
    subprocess.run(args + (["--collective-seq"] if seq else []), check=True, capture_output=True)


def convert(tracemill, src, out, align="on"):
    p = subprocess.run([tracemill, "convert", src, "-o", out, "--align-clocks", align, "--tables", "-q"],
                       capture_output=True, text=True)
    if p.returncode != 0:
        fail(p.stderr)
    return sqlite3.connect(f"{out}/tables.sqlite")


gen, tracemill = sys.argv[1], sys.argv[2]
with tempfile.TemporaryDirectory() as tmp:
    generate(gen, f"{tmp}/seq", True)
    truth = json.load(open(f"{tmp}/seq/late_arrivals.json"))
    db = convert(tracemill, f"{tmp}/seq", f"{tmp}/out-seq")
    insts = db.execute("SELECT instance, seq, ranks, last_rank, first_arrival_ns, skew_ns, aligned "
                       "FROM collective_instances ORDER BY instance").fetchall()
    whole = [i for i in insts if i[2] == 8]
    if len(whole) < 10:
        fail(f"only {len(whole)} instances on all 8 ranks")
    if [i[1] for i in insts] != list(range(len(insts))):
        fail("instances are not numbered in Seq order")
    late = set(truth["late_instances"])
    checked = 0
    for instance, seq, ranks, last_rank, _, _, aligned in whole:
        waits = dict(db.execute("SELECT rank, wait_ns FROM collectives WHERE instance = ?", (instance,)).fetchall())
        if len(waits) != 8 or aligned != 1:
            fail(f"instance {instance}: ranks {sorted(waits)}, aligned {aligned}")
        if seq not in late:
            continue
        checked += 1
        if last_rank != LATE_RANK or waits[LATE_RANK] != 0:
            fail(f"late instance {seq}: last rank {last_rank}, rank {LATE_RANK} waited {waits[LATE_RANK]} ns")
        short = {r: w for r, w in waits.items() if r != LATE_RANK and w < truth["min_lead_us"] * 1000}
        if short:
            fail(f"late instance {seq}: ranks waited less than {truth['min_lead_us']} us: {short}")
    if checked < len(whole) // 3:
        fail(f"{checked} late instances of {len(whole)}")
    # Skew and last rank against the truth: each rank's kernel starts on the
    # true clock (its node's offset removed), per Seq.
    starts = {}
    for r in range(8):
        off = Decimal(OFFSETS_US.split(",")[r // 2])
        for e in json.load(open(f"{tmp}/seq/rank{r}.pt.trace.json"), parse_float=Decimal)["traceEvents"]:
            if e.get("cat") == "kernel" and e["name"].startswith("nccl"):
                starts.setdefault(e["args"]["Seq"], {})[r] = (Decimal(e["ts"]) - off) * 1000
    worst = 0
    for instance, seq, ranks, last_rank, _, skew, _ in whole:
        true = starts[seq]
        true_skew = max(true.values()) - min(true.values())
        worst = max(worst, abs(skew - true_skew))
        if abs(skew - true_skew) > SKEW_BOUND_NS:
            fail(f"instance {seq}: skew {skew} ns, truth {true_skew} ns")
        lead = sorted(true.values())[-1] - sorted(true.values())[-2]
        if lead > 2 * SKEW_BOUND_NS and max(true, key=true.get) != last_rank:
            fail(f"instance {seq}: last rank {last_rank}, truth {max(true, key=true.get)}")
    rows = db.execute("SELECT count(*), sum(aligned) FROM collectives").fetchone()
    if rows[0] != sum(i[2] for i in insts) or rows[1] != rows[0]:
        fail(f"collectives rows {rows}")

    # rank_waits: rank 5 caused the most waiting and was last at least at
    # every late instance; it waited least.
    waits = db.execute("SELECT rank, times_last, caused_ns, waited_ns FROM rank_waits ORDER BY rank").fetchall()
    if [w[0] for w in waits] != list(range(8)):
        fail(f"rank_waits ranks {[w[0] for w in waits]}")
    top = max(waits, key=lambda w: w[2])
    if top[0] != LATE_RANK or top[1] < checked or min(waits, key=lambda w: w[3])[0] != LATE_RANK:
        fail(f"rank_waits {waits}")
    # The report's straggler table takes the steps' stragglers from the
    # collectives: rank 5 (the longest steps are other ranks').
    html = open(f"{tmp}/out-seq/report.html").read()
    table = html[html.index('<section id="stragglers">'):]
    table = table[:table.index("</section>")]
    late = re.findall(r'<td class="who( slow)?[^>]*data-v="\d+">rank (\d+): ', table)
    if len([1 for slow, r in late if slow]) < 2 or any(int(r) != LATE_RANK for slow, r in late if slow):
        fail(f"straggler table's collective stragglers {late}")

    # Two shards joined by manifest merge: the same three tables.
    for i in range(2):
        p = subprocess.run([tracemill, "convert", f"{tmp}/seq", "-o", f"{tmp}/sh", "--tables", "-q", "--shard",
                            f"{i}/2"], capture_output=True, text=True)
        if p.returncode != 0:
            fail(p.stderr)
    subprocess.run([tracemill, "manifest", "merge", f"{tmp}/sh"], check=True, capture_output=True)
    sh = sqlite3.connect(f"{tmp}/sh/tables.sqlite")
    for sql in ["SELECT * FROM collective_instances ORDER BY instance", "SELECT * FROM rank_waits ORDER BY rank",
                "SELECT * FROM collectives ORDER BY input, arrival_ns"]:
        if sh.execute(sql).fetchall() != db.execute(sql).fetchall():
            fail(f"shards joined differ from one process: {sql}")

    if open(f"{tmp}/sh/overview.trace.json", "rb").read() != open(f"{tmp}/out-seq/overview.trace.json", "rb").read():
        fail("shards joined: the overview differs from one process's")

    # The overview marks every shared instance's last arrival: an X from its
    # first arrival to its last on the thread of the rank that was last.
    ov = json.load(open(f"{tmp}/out-seq/overview.trace.json"))["traceEvents"]
    pid = next(e["pid"] for e in ov if e.get("name") == "process_name"
               and e["args"]["name"] == "collectives: last arrivals")
    marks = {e["args"]["instance"]: e for e in ov if e["pid"] == pid and e["ph"] == "X"}
    if sorted(marks) != [i[0] for i in whole]:
        fail(f"overview marks instances {sorted(marks)}")
    for instance, seq, ranks, last_rank, first, skew, _ in whole:
        m = marks[instance]
        if m["tid"] != last_rank or m["args"]["skew_ns"] != skew or Decimal(str(m["ts"])) * 1000 != first:
            fail(f"overview mark of instance {instance}: {m}")

    # Without Seq: matched by time, to the same instances.
    generate(gen, f"{tmp}/noseq", False)
    db2 = convert(tracemill, f"{tmp}/noseq", f"{tmp}/out-noseq")
    by_time = db2.execute("SELECT instance, seq, ranks, last_rank, first_arrival_ns, skew_ns, aligned "
                          "FROM collective_instances ORDER BY instance").fetchall()
    expect = [(i, None) + tuple(rest) for i, _, *rest in insts]
    if by_time != expect:
        diff = next(k for k in range(min(len(by_time), len(expect))) if by_time[k] != expect[k]) \
            if len(by_time) == len(expect) else f"{len(by_time)} vs {len(expect)} instances"
        fail(f"matched by time differs from by Seq at {diff}")

    # Clocks not aligned: every row says so.
    db3 = convert(tracemill, f"{tmp}/noseq", f"{tmp}/out-off", "off")
    if db3.execute("SELECT count(*) FROM collectives WHERE aligned <> 0").fetchone()[0] != 0:
        fail("--align-clocks off: rows marked aligned")
    if "instances involve ranks whose clock is not aligned" not in open(f"{tmp}/out-off/manifest.json").read():
        fail("--align-clocks off: no notice that the skews are not aligned")
    print(f"ok: {len(insts)} instances, {checked} late ones with rank {LATE_RANK} last; skews within "
          f"{worst} ns of the truth; by time = by Seq")
