#!/usr/bin/env python3
"""Issue 40, points 1 and 4: a long smdebug job (gen_smdebug, 2 nodes x 1 hour
of 250 ms steps: 14,400 steps per node) keeps every step, and batch and follow
list the same ones in their manifests: every 4th step of the whole hour (at
most 4,096 per input), so the report's timeline reaches the job's end; and
the follow job's totals are the batch job's but for the low-GPU slices cut at
its window edges.

  check_long_smdebug_steps.py GEN_SMDEBUG TRACEMILL
"""
import json
import sqlite3
import subprocess
import sys
import tempfile

gen, tracemill = sys.argv[1], sys.argv[2]
STEPS = 14400  # per node: 3,600 s / 250 ms
T0_US = 1594660800 * 1000000  # gen_smdebug's default --start


def run(*args):
    p = subprocess.run([tracemill, *args], capture_output=True, text=True)
    assert p.returncode == 0, (args, p.stderr)
    return p


def framework_inputs(manifest):
    inputs = [i for i in manifest["inputs"] if i["path"].startswith(f"{job}/framework")]
    assert len(inputs) == 2, [i["path"] for i in manifest["inputs"]]
    return sorted(inputs, key=lambda i: i["path"])


with tempfile.TemporaryDirectory() as tmp:
    job = f"{tmp}/job"
    subprocess.run([gen, "-o", job, "--nodes", "2", "--hours", "1", "--events", "1200", "--step-ms", "250",
                    "--sample-s", "10"], check=True, capture_output=True)
    run("convert", job, "-o", f"{tmp}/batch", "--tables", "-q")
    run("convert", "--follow", job, "-o", f"{tmp}/follow", "--window", "600s", "--grace", "1s",
        "--idle-timeout", "2s", "--tables", "-q")
    batch = json.load(open(f"{tmp}/batch/manifest.json"))
    follow = json.load(open(f"{tmp}/follow/manifest.json"))
    for b, f in zip(framework_inputs(batch), framework_inputs(follow)):
        # Every 4th step of the hour, in both.
        assert b["steps_stride"] == 4 and f["steps_stride"] == 4, (b["steps_stride"], f["steps_stride"])
        assert len(b["steps"]) == STEPS // 4, len(b["steps"])
        assert b["steps_dropped"] == STEPS - STEPS // 4, b["steps_dropped"]
        assert b["steps"][0] == [0, T0_US, T0_US + 250000], b["steps"][0]
        assert b["steps"][-1] == [14396, T0_US + 3599000000, T0_US + 3599250000], b["steps"][-1]
        assert f["steps"] == b["steps"] and f["steps_dropped"] == b["steps_dropped"], b["path"]
    # Every step in the tables, in both, each once.
    for out in ("batch", "follow"):
        db = sqlite3.connect(f"{tmp}/{out}/tables.sqlite")
        rows = db.execute("SELECT count(*), count(DISTINCT input || ':' || step), min(step), max(step) "
                          "FROM steps").fetchall()
        assert rows == [(2 * STEPS, 2 * STEPS, 0, STEPS - 1)], (out, rows)
    # Issue 40, point 4: the follow job's totals are the batch job's: the same
    # input bytes and framework records; its system records read (and write)
    # more events only by the low-GPU slices cut at window edges (README,
    # follow mode), which its tables count.
    assert follow["totals"]["input_bytes"] == batch["totals"]["input_bytes"]
    for b, f in zip(framework_inputs(batch), framework_inputs(follow)):
        assert f["events_read"] == b["events_read"], (b["path"], b["events_read"], f["events_read"])
    low = {}
    for out in ("batch", "follow"):
        db = sqlite3.connect(f"{tmp}/{out}/tables.sqlite")
        low[out] = db.execute("SELECT count(*) FROM low_gpu_utilization").fetchone()[0]
    more = follow["totals"]["events_read"] - batch["totals"]["events_read"]
    assert more == low["follow"] - low["batch"] and more > 0, (more, low)
    # The report says which steps it shows.
    html = open(f"{tmp}/batch/report.html").read()
    assert "show those whose number is a multiple of 4" in html
    # --start-step past the first 4,096 steps: the events of steps 12000-12009
    # (both ends inclusive, events overlapping the window kept whole: the steps
    # just before and after touch its edges).
    run("convert", job, "-o", f"{tmp}/window", "--start-step", "12000", "--end-step", "12009", "-q")
    for g in ("gpu0", "gpu1"):
        events = json.load(open(f"{tmp}/window/{g}.trace.json"))["traceEvents"]
        steps = sorted(int(e["args"]["step_num"]) for e in events if e.get("name") == "Step:ModeKeys.TRAIN")
        assert steps == list(range(11999, 12011)), (g, steps)
print("ok")
