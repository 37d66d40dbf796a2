#!/usr/bin/env python3
"""gen_kineto --dense (issue 22's dense benchmark job): the same events as the
default layout minus shapes and call stacks, ~210 bytes per event, and
tracemill reads every one of them.

  check_gen_kineto_dense.py GEN_KINETO TRACEMILL
"""
import json
import os
import subprocess
import sys
import tempfile

gen, tracemill = sys.argv[1], sys.argv[2]
with tempfile.TemporaryDirectory() as tmp:
    for mode in ("default", "dense"):
        args = [gen, "--ranks", "2", "--events", "5000", "--seed", "3", "--jobs", "1", "--out", f"{tmp}/{mode}"]
        subprocess.run(args + (["--dense"] if mode == "dense" else []), check=True, capture_output=True)
    for r in range(2):
        name = f"rank{r}.pt.trace.json"
        default = json.load(open(f"{tmp}/default/{name}"))
        dense = json.load(open(f"{tmp}/dense/{name}"))
        assert len(dense["traceEvents"]) == 5000, len(dense["traceEvents"])
        assert dense["record_shapes"] == 0 and default["record_shapes"] == 1
        # Same events, same order, same values, minus the shape and call-stack args.
        dropped = ("Input Dims", "Input type", "Input Strides", "Concrete Inputs", "Call stack")
        for a, b in zip(default["traceEvents"], dense["traceEvents"]):
            if "args" in a:
                a["args"] = {k: v for k, v in a["args"].items() if k not in dropped}
            assert a == b, (a, b)
        size = os.path.getsize(f"{tmp}/dense/{name}")
        per_event = size / 5000
        assert 190 <= per_event <= 235, per_event
        text = open(f"{tmp}/dense/{name}").read()
        assert "\n" not in text, "dense output has newlines"
    p = subprocess.run([tracemill, "convert", f"{tmp}/dense", "-o", f"{tmp}/out", "-q"], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    m = json.load(open(f"{tmp}/out/manifest.json"))
    t = m["totals"]
    # Only the metadata of the seven GPUs each rank lists but does not use (Kineto's way).
    assert t["dropped_by_reason"] == {"empty_process": 42} and t["events_written"] == t["events_read"] - 42, t
print(f"PASS: dense {per_event:.0f} bytes per event, the default layout's events minus shapes and call stacks")
