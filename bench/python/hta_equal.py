#!/usr/bin/python3
"""tracemill's frames against HTA's own on one folder of traces (issue 39).

    HTA=<HolisticTraceAnalysis checkout> TRACEMILL=build-release/tracemill \\
      /usr/bin/python3 bench/python/hta_equal.py TRACE_DIR

Fails (AssertionError) unless the temporal breakdown, the comm/comp overlap, both
kernel-breakdown frames and both idle-time frames (every rank, interval statistics on) are equal (pandas' assert_frame_equal: columns, index, dtypes,
values); HTA's kernel-type rows of 0 us are left out of its frame (README, "From Python").
"""
import logging
import os
import sys
import warnings

warnings.filterwarnings("ignore")
logging.disable(logging.CRITICAL)
sys.path.insert(0, os.environ["HTA"])
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
import pandas as pd  # noqa: E402
import tracemill  # noqa: E402
from hta.trace_analysis import TraceAnalysis  # noqa: E402

d = sys.argv[1]
h = TraceAnalysis(trace_dir=d)
t = tracemill.TraceAnalysis(trace_dir=d)
pd.testing.assert_frame_equal(t.get_temporal_breakdown(visualize=False), h.get_temporal_breakdown(visualize=False))
pd.testing.assert_frame_equal(t.get_comm_comp_overlap(visualize=False), h.get_comm_comp_overlap(visualize=False))
types, kernels = h.get_gpu_kernel_breakdown(visualize=False)
our_types, our_kernels = t.get_gpu_kernel_breakdown(visualize=False)
pd.testing.assert_frame_equal(our_types, types[types["sum"] > 0].reset_index(drop=True))
pd.testing.assert_frame_equal(our_kernels, kernels)
ranks = sorted(h.t.traces)
idle, stats = h.get_idle_time_breakdown(ranks=ranks, visualize=False, show_idle_interval_stats=True)
our_idle, our_stats = t.get_idle_time_breakdown(ranks=ranks, visualize=False, show_idle_interval_stats=True)
pd.testing.assert_frame_equal(our_idle, idle)
pd.testing.assert_frame_equal(our_stats, stats)
print("equal: temporal, overlap, kernel types, kernels, idle, idle stats;", len(kernels), "kernel rows,",
      len(idle), "idle rows")
