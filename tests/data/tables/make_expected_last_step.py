#!/usr/bin/python3
"""Writes hta_<case>_last_step_*.csv: HTA's breakdowns with include_last_profiler_step=True.

Run once by hand (EXPECTED.md has the exact command and the commit used):
  HTA=<HolisticTraceAnalysis checkout> /usr/bin/python3 tests/data/tables/make_expected_last_step.py
TraceAnalysis(trace_dir, include_last_profiler_step=True): get_temporal_breakdown,
get_gpu_kernel_breakdown (both frames), get_comm_comp_overlap (visualize=False) and
get_idle_time_breakdown(ranks=<all>, visualize=False, show_idle_interval_stats=True), as
make_expected.py and make_expected_idle.py write them. The library's code is not part of
this repository.
"""
import logging
import os
import shutil
import sys
import tempfile
import warnings

warnings.filterwarnings("ignore")
logging.disable(logging.CRITICAL)
HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.dirname(HERE)
sys.path.insert(0, os.environ["HTA"])

from hta.trace_analysis import TraceAnalysis  # noqa: E402


def last_step(case, files):
    with tempfile.TemporaryDirectory() as d:
        for f in files:
            shutil.copy(os.path.join(DATA, f), d)
        t = TraceAnalysis(trace_dir=d, include_last_profiler_step=True)
        out = lambda what: os.path.join(HERE, f"hta_{case}_last_step_{what}.csv")  # noqa: E731
        t.get_temporal_breakdown(visualize=False).to_csv(out("temporal"), index=False)
        types, kernels = t.get_gpu_kernel_breakdown(visualize=False)
        types.to_csv(out("kernel_types"), index=False)
        kernels.to_csv(out("kernels"), index=False)
        t.get_comm_comp_overlap(visualize=False).to_csv(out("overlap"), index=False)
        ranks = sorted(t.t.traces.keys())
        frame, stats = t.get_idle_time_breakdown(ranks=ranks, visualize=False, show_idle_interval_stats=True)
        frame.to_csv(out("idle"), index=False)
        stats.to_csv(out("idle_stats"), index=True)


last_step("trace_filter", ["hta/trace_filter/sampled_rank-0.json.gz", "hta/trace_filter/sampled_rank-1.json.gz"])
