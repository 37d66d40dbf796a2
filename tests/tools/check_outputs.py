#!/usr/bin/env python3
"""Checks a tracemill output directory with an independent parser (Python's
json, strict): `check_outputs.py OUTDIR [--allow-temporaries]`.

- every `*.json` / `*.json.gz` in OUTDIR is strict JSON (`trace_tool.strict_load`:
  UTF-8, no NaN/Infinity, no lone surrogate escapes), gzip outputs through
  Python's gzip (multi-member);
- no `.*.tmp.*` temporary is left (unless --allow-temporaries);
- manifest.json: per input and in total, events_read == events_written +
  events_dropped; per output, its traceEvents hold events + metadata_added
  entries; timed events in non-decreasing ts after the metadata block.
Exit 0 if all hold, else 1 with one line per problem on stderr.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from trace_tool import strict_load  # noqa: E402


def main():
    out_dir = sys.argv[1]
    allow_tmp = "--allow-temporaries" in sys.argv[2:]
    problems = []
    docs = {}
    for name in sorted(os.listdir(out_dir)):
        path = os.path.join(out_dir, name)
        if name.startswith(".") and ".tmp." in name:
            if not allow_tmp:
                problems.append(f"{name}: temporary left behind")
            continue
        if not (name.endswith(".json") or name.endswith(".json.gz")):
            continue
        try:
            docs[name] = strict_load(path)
        except Exception as e:  # noqa: BLE001 - any failure is a finding
            problems.append(f"{name}: not strict JSON: {type(e).__name__}: {str(e)[:200]}")
    manifest = docs.get("manifest.json")
    if manifest is None:
        problems.append("manifest.json missing or invalid")
    else:
        t = manifest["totals"]
        if t["events_read"] != t["events_written"] + t["events_dropped"]:
            problems.append(f"totals not balanced: {t}")
        for i in manifest["inputs"]:
            if i["events_read"] != i["events_written"] + i["events_dropped"]:
                problems.append(f"input {i['path']} not balanced: read {i['events_read']}, "
                                f"written {i['events_written']}, dropped {i['events_dropped']}")
            if sum(i["dropped_by_reason"].values()) != i["events_dropped"]:
                problems.append(f"input {i['path']}: dropped_by_reason does not add up")
        for o in manifest["outputs"]:
            if o["error"] is not None:
                continue
            doc = docs.get(o["path"])
            if doc is None:
                problems.append(f"output {o['path']} missing or invalid")
                continue
            events = doc.get("traceEvents")
            if not isinstance(events, list):
                problems.append(f"{o['path']}: traceEvents is not an array")
                continue
            if len(events) != o["events"] + o["metadata_added"]:
                problems.append(f"{o['path']}: {len(events)} entries, manifest says "
                                f"{o['events']} + {o['metadata_added']} metadata")
            last = None
            for k, e in enumerate(events):
                if e.get("ph") == "M" or "ts" not in e:
                    continue
                ts = e["ts"]
                if not isinstance(ts, (int, float)):
                    problems.append(f"{o['path']}: event {k} ts is not a number")
                    break
                if last is not None and ts < last:
                    problems.append(f"{o['path']}: event {k} ts {ts} < previous {last}")
                    break
                last = ts
    for p in problems:
        print(f"check_outputs: {out_dir}: {p}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
