#!/usr/bin/python3
"""One HTA call through tracemill's Python package or through HTA itself, timed (issue 39).

    HTA=<HolisticTraceAnalysis checkout> TRACEMILL=build-release/tracemill \\
      /usr/bin/python3 bench/python/hta_call.py tm|hta TRACE_DIR [temporal|idle]

Prints the wall time of `TraceAnalysis(trace_dir=TRACE_DIR).get_temporal_breakdown()`
(or, with `idle`, `get_idle_time_breakdown(ranks=<every rank>, show_idle_interval_stats=True)`;
constructor included) and the peak RSS of this process and of its largest child
(tracemill's conversion, or HTA's parse workers). Run each in a fresh interpreter; empty
$TRACEMILL_CACHE_DIR first to time a conversion. Figures: bench/RESULTS.md.
"""
import logging
import os
import resource
import sys
import time
import warnings

warnings.filterwarnings("ignore")
logging.disable(logging.CRITICAL)
mode, trace_dir = sys.argv[1], sys.argv[2]
call = sys.argv[3] if len(sys.argv) > 3 else "temporal"
t0 = time.monotonic()
if mode == "hta":
    sys.path.insert(0, os.environ["HTA"])
    from hta.trace_analysis import TraceAnalysis
else:
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
    from tracemill import TraceAnalysis
t = TraceAnalysis(trace_dir=trace_dir)
if call == "idle":
    # Every rank: HTA's ranks are its traces' keys, tracemill's the tables'.
    ranks = sorted(t.t.traces) if mode == "hta" else sorted(t.get_temporal_breakdown(visualize=False)["rank"])
    df, stats = t.get_idle_time_breakdown(ranks=ranks, visualize=False, show_idle_interval_stats=True)
    summary = f"rows {len(df)} idle_time_sum {df['idle_time'].sum():.0f}"
else:
    df = t.get_temporal_breakdown(visualize=False)
    summary = f"rows {len(df)} kernel_us_sum {df['kernel_time(us)'].sum():.0f}"
wall = time.monotonic() - t0
me = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
kids = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
print(f"{mode} {call} wall {wall:.2f} s  python peak RSS {me / 1024:.0f} MiB  child peak RSS {kids / 1024:.0f} MiB  "
      f"{summary}")
