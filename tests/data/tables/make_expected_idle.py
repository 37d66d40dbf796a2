#!/usr/bin/python3
"""Writes hta_<case>_idle*.csv: HTA's get_idle_time_breakdown of every rank.

Run once by hand (EXPECTED.md has the exact command and the commit used):
  HTA=<HolisticTraceAnalysis checkout> /usr/bin/python3 tests/data/tables/make_expected_idle.py
For each case, TraceAnalysis(trace_dir).get_idle_time_breakdown(ranks=<all>,
visualize=False, show_idle_interval_stats=True): the first frame as
hta_<case>_idle.csv, the second (index idle_category as the first column) as
hta_<case>_idle_stats.csv; for trace_filter also with consecutive_kernel_delay=5
(hta_trace_filter_idle_delay5*.csv). The library's code is not part of this repository.
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


def idle(case, files, **kwargs):
    with tempfile.TemporaryDirectory() as d:
        for f in files:
            shutil.copy(os.path.join(DATA, f), d)
        t = TraceAnalysis(trace_dir=d)
        ranks = sorted(t.t.traces.keys())
        frame, stats = t.get_idle_time_breakdown(ranks=ranks, visualize=False, show_idle_interval_stats=True, **kwargs)
        suffix = "".join(f"_delay{v}" for v in kwargs.values())
        frame.to_csv(os.path.join(HERE, f"hta_{case}_idle{suffix}.csv"), index=False)
        stats.to_csv(os.path.join(HERE, f"hta_{case}_idle{suffix}_stats.csv"), index=True)
        print(case, suffix, "stream dtype", frame["stream"].dtype, "rows", len(frame))


FILTER = ["hta/trace_filter/sampled_rank-0.json.gz", "hta/trace_filter/sampled_rank-1.json.gz"]
idle("trace_filter", FILTER)
idle("trace_filter", FILTER, consecutive_kernel_delay=5)
idle("tb_plugin", ["kineto-tb-plugin/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz"])
idle("ns_resolution", ["hta/ns_resolution_trace/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz"])
idle("trace_compare_base", ["hta/trace_compare/base/base.json.gz"])
