#!/usr/bin/python3
"""Writes hta_<case>_ops.csv: HTA's TraceDiff summary of every rank and iteration.

Run once by hand (EXPECTED.md has the exact command and the commit used):
  HTA=<HolisticTraceAnalysis checkout> /usr/bin/python3 tests/data/tables/make_expected_ops.py
For each case, LabeledTrace(trace_dir).get_ops_summary(extract_ops(rank, iteration, device))
for every rank, every iteration and device CPU and GPU (hta/trace_diff.py): the rows
`compare_traces` sums. The library's code is not part of this repository.
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

import pandas as pd  # noqa: E402
from hta.trace_diff import DeviceType, LabeledTrace  # noqa: E402


def ops(case, files):
    with tempfile.TemporaryDirectory() as d:
        for f in files:
            shutil.copy(os.path.join(DATA, f), d)
        t = LabeledTrace(label=case, trace_dir=d)
        frames = []
        for rank in t.ranks():
            for it in t.iterations():
                for device, dt in (("cpu", DeviceType.CPU), ("gpu", DeviceType.GPU)):
                    s = t.get_ops_summary(t.extract_ops(rank, it, dt))
                    s.insert(0, "device", device)
                    s.insert(0, "iteration", it)
                    s.insert(0, "rank", rank)
                    frames.append(s[["rank", "iteration", "device", "cat", "name", "counts", "total_duration"]])
        out = pd.concat(frames).sort_values(["rank", "iteration", "device", "cat", "name"])
        out.to_csv(os.path.join(HERE, f"hta_{case}_ops.csv"), index=False)


ops("trace_compare_base", ["hta/trace_compare/base/base.json.gz"])
ops("trace_compare_test", ["hta/trace_compare/test/test.json.gz"])
ops("trace_filter", ["hta/trace_filter/sampled_rank-0.json.gz", "hta/trace_filter/sampled_rank-1.json.gz"])
ops("tb_plugin", ["kineto-tb-plugin/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz"])
