#!/usr/bin/env python3
"""Markdown table of bench_end_to_end JSON output (--benchmark_out=FILE).

  summarize.py [LABEL=]FILE.json[,FILE.json...] ...

Files joined by commas (e.g. several rounds of one build) are pooled.

Per benchmark, over its repetitions: median MB/s (bytes_per_second, MB =
10^6 bytes), best MB/s (best iteration), median Mevents/s, median MB per CPU
second of the whole process, and MB/s as a fraction of the On-Demand limit
(median BM_Limit/.../ondemand of the same file, i.e. the same run).
"""
import json
import statistics
import sys


def load(paths):
    runs = {}
    ctx = {}
    loads = []
    for path in paths.split(","):
        with open(path) as f:
            doc = json.load(f)
        ctx = doc.get("context", {})
        loads.append(ctx.get("load_avg", [0])[0])
        load_file(doc, runs)
    ctx = dict(ctx, load_avg=loads)
    return ctx, runs


def load_file(doc, runs):
    for b in doc["benchmarks"]:
        if b.get("run_type") != "iteration" or b.get("error_occurred"):
            continue
        name = b["run_name"] if "run_name" in b else b["name"]
        name = name.replace("/manual_time", "")
        runs.setdefault(name, []).append(b)


def row(runs):
    med = lambda k: statistics.median(r.get(k, 0.0) for r in runs)
    return {
        "mbps": med("bytes_per_second") / 1e6,
        "best": max(r.get("best_MB/s", 0.0) for r in runs),
        "mev": med("items_per_second") / 1e6,
        "cpu": med("cpu_MB/s"),
        "n": len(runs),
    }


def main(args):
    for arg in args:
        label, _, path = arg.rpartition("=")
        ctx, runs = load(path)
        rows = {name: row(r) for name, r in runs.items()}
        limit = next((v["mbps"] for k, v in rows.items() if k.endswith("/ondemand")), None)
        print(f"### {label or path}")
        print()
        print(f"simdjson On-Demand builtin (stage 2): {ctx.get('simdjson_ondemand_builtin', '?')}, "
              f"active (stage 1): {ctx.get('simdjson_active_stage1', '?')}; "
              f"1-min load average at start {ctx.get('load_avg', '?')}; "
              f"input {ctx.get('input', '').split(', in ')[0]}")
        print()
        print("| benchmark | reps | MB/s (median) | best MB/s | Mevents/s | MB per CPU-s | / limit |")
        print("|---|---:|---:|---:|---:|---:|---:|")
        for name, v in rows.items():
            frac = f"{v['mbps'] / limit:.3f}" if limit else "-"
            print(f"| `{name}` | {v['n']} | {v['mbps']:.1f} | {v['best']:.1f} | {v['mev']:.3f} | "
                  f"{v['cpu']:.1f} | {frac} |")
        print()


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
