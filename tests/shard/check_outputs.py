#!/usr/bin/env python3
"""Checks for the shard tests (run by shard_run_test.cc and the cluster tests).

  check_outputs.py valid DIR...        every *.json / *.json.gz / *.jsonl in DIRs parses
  check_outputs.py same DIR_A DIR_B    same trace files, byte for byte; manifests equal
                                       apart from run-specific fields
  check_outputs.py tables DIR_A DIR_B  the tables.sqlite files hold the same rows (every
                                       table, rows in any order; the run-specific columns
                                       and meta rows left out)
  check_outputs.py ranges WHOLE RANGED N  RANGED is WHOLE's job with --time-ranges N: each
                                       output's N range files hold its events in order (the
                                       metadata records again in ranges 2..N), about the same
                                       number each; the inputs' counts equal; the tables equal
                                       but for the files' names
"""
import gzip
import json
import os
import sqlite3
import sys

RUN_SPECIFIC = ("command_line", "wall_seconds", "threads", "shards", "fingerprint", "resume", "shard")


def load(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        if path.endswith(".jsonl"):
            return [json.loads(line) for line in f if line.strip()]
        return json.load(f)


def valid(dirs):
    n = 0
    for d in dirs:
        for name in sorted(os.listdir(d)):
            if name.endswith((".json", ".json.gz", ".jsonl")) and not name.startswith("."):
                load(os.path.join(d, name))
                n += 1
    print(f"valid: {n} JSON files parse")
    return 0


def traces(d):
    return sorted(n for n in os.listdir(d) if ".trace.json" in n and not n.startswith(".") and not n.startswith("overview."))


def normalized(m):
    m = {k: v for k, v in m.items() if k not in RUN_SPECIFIC}
    m["inputs"] = [{k: v for k, v in r.items() if k not in ("reused", "index")} for r in m["inputs"]]
    m["outputs"] = [{k: v for k, v in o.items() if k != "reused"} for o in m["outputs"]]
    return m


def same(a, b):
    ta, tb = traces(a), traces(b)
    if ta != tb:
        print(f"different outputs: {ta} vs {tb}")
        return 1
    for name in ta:
        with open(os.path.join(a, name), "rb") as fa, open(os.path.join(b, name), "rb") as fb:
            if fa.read() != fb.read():
                print(f"{name} differs")
                return 1
    ma, mb = normalized(load(os.path.join(a, "manifest.json"))), normalized(load(os.path.join(b, "manifest.json")))
    if ma != mb:
        for k in sorted(set(ma) | set(mb)):
            if ma.get(k) != mb.get(k):
                print(f"manifest field {k} differs:\n  {ma.get(k)}\n  {mb.get(k)}")
        return 1
    print(f"same: {len(ta)} outputs byte-identical, manifests equal")
    return 0


def table_rows(path):
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    out = {}
    for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name"):
        cols = [r[1] for r in db.execute(f'PRAGMA table_info("{name}")')]
        keep = [c for c in cols if c != "reused"]
        select = ", ".join('quote("%s")' % c for c in keep)
        rows = db.execute('SELECT %s FROM "%s"' % (select, name)).fetchall()
        if name == "tables_meta":
            rows = [r for r in rows if r[0] not in ("'fingerprint'", "'shard'")]
        out[name] = sorted(rows)
    db.close()
    return out


def tables(a, b):
    ra, rb = table_rows(os.path.join(a, "tables.sqlite")), table_rows(os.path.join(b, "tables.sqlite"))
    if ra.keys() != rb.keys():
        print(f"different tables: {sorted(ra)} vs {sorted(rb)}")
        return 1
    for name in ra:
        if ra[name] != rb[name]:
            extra_a = [r for r in ra[name] if r not in rb[name]][:3]
            extra_b = [r for r in rb[name] if r not in ra[name]][:3]
            print(f"table {name} differs: {len(ra[name])} vs {len(rb[name])} rows; only in A {extra_a}; only in B {extra_b}")
            return 1
    print(f"tables: {len(ra)} tables, {sum(len(v) for v in ra.values())} rows equal")
    return 0


def ranges(whole, ranged, n):
    outs = [t for t in traces(whole) if ".part-" not in t]
    for name in outs:
        events = load(os.path.join(whole, name))["traceEvents"]
        stem, suffix = name.split(".trace.json")
        joined, timed = [], []
        for r in range(1, n + 1):
            rname = f"{stem}.time-{r}-of-{n}.trace.json{suffix}"
            doc = load(os.path.join(ranged, rname))
            tr = doc["otherData"]["time_range"]
            if (tr["index"], tr["of"], tr["of_output"]) != (r, n, name):
                print(f"{rname}: otherData.time_range {tr}")
                return 1
            ev = doc["traceEvents"]
            own = ev if r == 1 else [e for e in ev if e.get("ph") != "M"]
            if r > 1 and [e for e in ev if e.get("ph") == "M"] != [e for e in events if e.get("ph") == "M"]:
                print(f"{rname}: its metadata records are not the output's")
                return 1
            joined += own
            timed.append(sum(1 for e in own if e.get("ph") != "M"))
        if joined != events:
            print(f"{name}: its ranges' events ({len(joined)}) are not its events ({len(events)}) in order")
            return 1
        total = sum(timed)
        if total >= 64 * n and max(timed) > 2 * total / n:
            print(f"{name}: ranges far from even: {timed}")
            return 1
    if len(traces(ranged)) != n * len(outs):
        print(f"{len(traces(ranged))} range files for {len(outs)} outputs x {n}")
        return 1
    mw, mr = load(os.path.join(whole, "manifest.json")), load(os.path.join(ranged, "manifest.json"))
    count = lambda m: [(i["path"], i.get("events_read"), i.get("events_written"), i.get("dropped")) for i in m["inputs"]]
    if count(mw) != count(mr) or mw["totals"]["events_written"] != mr["totals"]["events_written"]:
        print(f"inputs' counts differ:\n  {count(mw)}\n  {count(mr)}")
        return 1
    if os.path.exists(os.path.join(whole, "tables.sqlite")):
        ta, tb = table_rows(os.path.join(whole, "tables.sqlite")), table_rows(os.path.join(ranged, "tables.sqlite"))
        for t in set(ta) | set(tb):
            if t not in ("inputs", "outputs", "tables_meta") and ta.get(t) != tb.get(t):
                print(f"table {t} differs")
                return 1
    print(f"ranges: {len(outs)} outputs x {n} ranges hold their events in order")
    return 0


if __name__ == "__main__":
    if len(sys.argv) >= 3 and sys.argv[1] == "valid":
        sys.exit(valid(sys.argv[2:]))
    if len(sys.argv) == 4 and sys.argv[1] == "same":
        sys.exit(same(sys.argv[2], sys.argv[3]))
    if len(sys.argv) == 4 and sys.argv[1] == "tables":
        sys.exit(tables(sys.argv[2], sys.argv[3]))
    if len(sys.argv) == 5 and sys.argv[1] == "ranges":
        sys.exit(ranges(sys.argv[2], sys.argv[3], int(sys.argv[4])))
    print(__doc__)
    sys.exit(2)
