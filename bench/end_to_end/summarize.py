#!/usr/bin/env python3
"""Markdown table of bench_end_to_end JSON output (--benchmark_out=FILE).

  summarize.py [LABEL=]FILE.json[,FILE.json...] ...

Files joined by commas (e.g. several rounds of one build) are pooled.

Per benchmark, over its repetitions: median MB/s (bytes_per_second, MB =
10^6 bytes), best MB/s (best iteration), median Mevents/s, median MB per CPU
second of the whole process, and MB/s as a fraction of the machine's limit
W of the same file (the same run): W = 1 / (1/ondemand + 1/write) for JSON
input and 1 / (1/ondemand + 1/write + 1/inflate) for gzip input, from the
medians of BM_Limit/.../{ondemand,write,inflate}: one core parsing,
inflating and writing the job's bytes with nothing else to do. `write` is
direct I/O as convert writes (the disk's rate); W_pc, printed beside it,
takes BM_Limit/.../write_buffered (the page cache's rate) instead. Last, the
1 -> 2 threads speed-up of BM_Convert, from the medians and from the bests
(on a shared VM noise only adds time, so the best repetition is the steadier
estimate; run with --benchmark_enable_random_interleaving=true so that a slow
spell of the machine falls on both thread counts alike). Then each issue's
targets: issue 22's against W, issue 38's against the walk alone, with the
disk's ceiling (BM_Limit/.../write) beside them.
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
        lim = {k.rsplit("/", 1)[1]: v["mbps"] for k, v in rows.items() if k.startswith("BM_Limit/")}
        def ceiling(write_key):
            if "ondemand" not in lim or write_key not in lim:
                return None, None
            j = 1 / (1 / lim["ondemand"] + 1 / lim[write_key])
            g = 1 / (1 / lim["ondemand"] + 1 / lim[write_key] + 1 / lim["inflate"]) if "inflate" in lim else None
            return j, g
        w_json, w_gzip = ceiling("write")
        pc_json, pc_gzip = ceiling("write_buffered")
        print(f"### {label or path}")
        print()
        print(f"simdjson On-Demand builtin (stage 2): {ctx.get('simdjson_ondemand_builtin', '?')}, "
              f"active (stage 1): {ctx.get('simdjson_active_stage1', '?')}; "
              f"1-min load average at start {ctx.get('load_avg', '?')}; "
              f"input {ctx.get('input', '').split(', in ')[0]}")
        print()
        if w_json:
            print(f"W (JSON input) = {w_json:.0f} MB/s" + (f", W (gzip input) = {w_gzip:.0f} MB/s" if w_gzip else ""))
        else:
            # Session 9 ran without `write` and took the walk alone for W (2.6x too high).
            missing = [k for k in ("ondemand", "write") if k not in lim]
            print(f"W not computed: no BM_Limit/.../{' or '.join(missing)} in this file; W is the walk "
                  f"*and* the write (run with a filter that keeps ondemand, write and inflate)")
        if pc_json:
            print(f"W_pc (JSON input) = {pc_json:.0f} MB/s" +
                  (f", W_pc (gzip input) = {pc_gzip:.0f} MB/s" if pc_gzip else ""))
        print()
        print("| benchmark | reps | MB/s (median) | best MB/s | Mevents/s | MB per CPU-s | / W | / W_pc |")
        print("|---|---:|---:|---:|---:|---:|---:|---:|")
        for name, v in rows.items():
            fracs = []
            for lj, lg in ((w_json, w_gzip), (pc_json, pc_gzip)):
                limit = lg if "/gzip/" in name else lj
                fracs.append(f"{v['mbps'] / limit:.3f}" if limit and name.startswith("BM_Convert") else "-")
            print(f"| `{name}` | {v['n']} | {v['mbps']:.1f} | {v['best']:.1f} | {v['mev']:.3f} | "
                  f"{v['cpu']:.1f} | {fracs[0]} | {fracs[1]} |")
        print()
        for kind in ("json", "gzip"):
            one = [v for k, v in rows.items() if k.startswith("BM_Convert/") and f"/{kind}/threads:1" in k]
            two = [v for k, v in rows.items() if k.startswith("BM_Convert/") and f"/{kind}/threads:2" in k]
            if one and two:
                print(f"1 -> 2 threads, {kind}: {two[0]['mbps'] / one[0]['mbps']:.2f}x (medians), "
                      f"{two[0]['best'] / one[0]['best']:.2f}x (bests)")
        print()
        targets(rows, w_json, w_gzip)
        targets_per_core(rows, lim)
        scaling_model(rows)


def targets(rows, w_json, w_gzip):
    """Issue 22's acceptance on a real-trace job: 2 threads >= 0.7 W (JSON) and >= 0.85 W (gzip),
    1 -> 2 threads (JSON) >= 1.85x, medians of one run."""
    def median_of(kind, threads):
        v = [r["mbps"] for k, r in rows.items()
             if k.startswith("BM_Convert/real") and f"/{kind}/threads:{threads}" in k]
        return v[0] if v else None
    json1, json2, gzip2 = median_of("json", 1), median_of("json", 2), median_of("gzip", 2)
    checks = []
    if json2 and w_json:
        checks.append(("json t2", json2 / w_json, 0.7, "W"))
    if gzip2 and w_gzip:
        checks.append(("gzip t2", gzip2 / w_gzip, 0.85, "W"))
    if json1 and json2:
        checks.append(("1 -> 2 json", json2 / json1, 1.85, "x"))
    if not checks:
        return
    parts = [f"{name} {value:.3f}{unit} >= {goal}{unit}: {'met' if value >= goal else 'NOT met'}"
             for name, value, goal, unit in checks]
    print("Issue 22 targets (real job): " + "; ".join(parts))
    print()


def targets_per_core(rows, lim):
    """Issue 38's acceptance on a real-trace job, where W is the walk alone (BM_Limit/.../ondemand):
    2 threads (JSON) >= 0.6 W, 1 -> 2 threads >= 1.85x, medians of one run. Beside them the disk's
    ceiling: no job writing these outputs runs faster than BM_Limit/.../write (the outputs' bytes
    written as convert writes them, nothing else done), so where write < 0.6 W the first target
    is out of this host's reach whatever the code does."""
    def median_of(threads):
        v = [r["mbps"] for k, r in rows.items() if k.startswith("BM_Convert/real") and f"/json/threads:{threads}" in k]
        return v[0] if v else None
    walk, disk = lim.get("ondemand"), lim.get("write")
    json1, json2 = median_of(1), median_of(2)
    if not walk or not json2:
        return
    line = f"Issue 38 targets (real job, W = the walk {walk:.0f} MB/s): json t2 {json2 / walk:.3f} W >= 0.6 W: " \
           f"{'met' if json2 >= 0.6 * walk else 'NOT met'}"
    if json1:
        line += f"; 1 -> 2 json {json2 / json1:.2f}x >= 1.85x: {'met' if json2 >= 1.85 * json1 else 'NOT met'}"
    if disk:
        line += (f"; the disk's ceiling (BM_Limit/write {disk:.0f} MB/s) {disk / walk:.3f} W, json t2 at "
                 f"{json2 / disk:.3f} of it" + (" (0.6 W is past the disk here)" if disk < 0.6 * walk else ""))
    print(line)
    print()


def scaling_model(rows, cores=(16, 64), outputs=8):
    """Issue 34's scaling model, from the `group:all` rows (one output) of one run.

    With one output, decoding spreads over the threads but the output's merge, format and
    write run on one: per MB, t1 = p + s at 1 thread and t2 = p/2 + s at 2, so
    s = 2 t2 - t1 (the serial part) and p = t1 - s. On N cores with k outputs, decoding
    spreads over N cores and the k outputs' merges over min(k, N):
    T(N, k) = p/N + s/min(k, N); the speed-up is t1 / T, the efficiency speed-up / N.
    Pessimistic where merges overlap decoding (per-GPU outputs start as soon as their
    inputs are decoded); exact for a job whose outputs all wait for its last input.
    On a host whose disk bounds the output's write, s = 2 t2 - t1 holds the disk's time
    too: `scaling_model.py` measures the output's serial stages (--verbose) and the disk
    apart.
    """
    one = [v for k, v in rows.items() if "/json/group:all/threads:1" in k]
    two = [v for k, v in rows.items() if "/json/group:all/threads:2" in k]
    if not one or not two:
        return
    t1, t2 = 1 / one[0]["mbps"], 1 / two[0]["mbps"]  # s per MB
    serial = min(max(2 * t2 - t1, 0.0), t1)
    parallel = t1 - serial
    print(f"--group-by all, 1 -> 2 threads: {t1 / t2:.2f}x (medians). Scaling model (s = 2 t2 - t1, the disk "
          f"included; scaling_model.py measures the stages): serial {serial / t1:.0%} of the 1-thread time, parallel {parallel / t1:.0%}; "
          f"with {outputs} outputs: " + ", ".join(
              f"{n} cores {t1 / (parallel / n + serial / min(outputs, n)):.1f}x "
              f"(efficiency {t1 / (parallel / n + serial / min(outputs, n)) / n:.2f})" for n in cores))
    print()


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
