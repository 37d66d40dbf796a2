#!/usr/bin/env python3
"""Every JSON output of the given OUTDIRs parses with Python's json module.

Checks each *.json and *.json.gz file (the traces and manifest.json), that
the manifest's totals balance (read = written + dropped, per input too), and
that the step spans it carries are well-formed [step, start_us, end_us].
"""
import gzip
import json
import os
import sys


def load(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        return json.load(f)


def main(dirs):
    failures = 0
    files = 0
    for d in dirs:
        names = sorted(os.listdir(d))
        for name in names:
            if not (name.endswith(".json") or name.endswith(".json.gz")):
                continue
            path = os.path.join(d, name)
            files += 1
            try:
                doc = load(path)
            except Exception as e:  # noqa: BLE001 - report any parse failure
                print(f"FAIL: {path}: {e}")
                failures += 1
                continue
            if name == "manifest.json":
                t = doc["totals"]
                if t["events_read"] != t["events_written"] + t["events_dropped"]:
                    print(f"FAIL: {path}: totals do not balance")
                    failures += 1
                for inp in doc["inputs"]:
                    if inp["events_read"] != inp["events_written"] + inp["events_dropped"]:
                        print(f"FAIL: {path}: {inp['path']} does not balance")
                        failures += 1
                    steps = inp.get("steps", []) + [s for t in inp.get("tracks", []) for s in t["steps"]]
                    for s in steps:
                        if len(s) not in (3, 5) or s[2] < s[1]:
                            print(f"FAIL: {path}: bad step {s}")
                            failures += 1
            else:
                if "traceEvents" not in doc:
                    print(f"FAIL: {path}: no traceEvents")
                    failures += 1
        if "report.html" not in names:
            print(f"FAIL: {d}: no report.html")
            failures += 1
    print(f"{files - failures} passed, {failures} failed")
    return 1 if failures or files == 0 else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
