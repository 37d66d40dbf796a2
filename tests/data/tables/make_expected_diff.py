#!/usr/bin/python3
"""Writes hta_diff_<case>.csv: HTA's TraceDiff.compare_traces on real pairs (issue 36).

Run once by hand (EXPECTED.md has the exact command and the commit used):
  HTA=<HolisticTraceAnalysis checkout> /usr/bin/python3 tests/data/tables/make_expected_diff.py
Each case copies its folders (HTA reads every .json/.gz of a folder) and writes the frame
with its index (`name`, or `short_name`) as the first column. The library's code is not part of this repository.
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

from hta.trace_diff import DeviceType, TraceDiff  # noqa: E402

CASES = {
    # name: (control folder, test folder, compare_traces keyword arguments)
    "compare_default": ("hta/trace_compare/base", "hta/trace_compare/test", {}),
    "compare_iterations": ("hta/trace_compare/base", "hta/trace_compare/test",
                           {"control_iteration": 1009, "test_iteration": 1010}),
    "compare_gpu": ("hta/trace_compare/base", "hta/trace_compare/test",
                    {"control_iteration": 1010, "test_iteration": 1010, "device_type": DeviceType.GPU}),
    "resnet_runs": ("kineto-tb-plugin/resnet50_num_workers_0", "kineto-tb-plugin/resnet50_run2", {}),
    "resnet_runs_gpu_all": ("kineto-tb-plugin/resnet50_num_workers_0", "kineto-tb-plugin/resnet50_run2",
                            {"control_iteration": [5, 6, 7, 8, 9], "test_iteration": [16, 17, 18, 19, 20],
                             "device_type": DeviceType.GPU}),
    "filter_ranks": ("hta/trace_filter", "hta/trace_filter", {"control_rank": 0, "test_rank": 1}),
    "compare_gpu_short": ("hta/trace_compare/base", "hta/trace_compare/test",
                          {"control_iteration": 1009, "test_iteration": 1009, "device_type": DeviceType.GPU,
                           "use_short_name": True}),
    "resnet_runs_short": ("kineto-tb-plugin/resnet50_num_workers_0", "kineto-tb-plugin/resnet50_run2",
                          {"use_short_name": True}),
    "resnet_runs_gpu_short": ("kineto-tb-plugin/resnet50_num_workers_0", "kineto-tb-plugin/resnet50_run2",
                              {"device_type": DeviceType.GPU, "use_short_name": True}),
    "filter_ranks_gpu_short": ("hta/trace_filter", "hta/trace_filter",
                               {"control_rank": 0, "test_rank": 1, "device_type": DeviceType.GPU,
                                "use_short_name": True}),
}

for case, (control, test, kwargs) in CASES.items():
    with tempfile.TemporaryDirectory() as d:
        c, t = os.path.join(d, "c"), os.path.join(d, "t")
        shutil.copytree(os.path.join(DATA, control), c)
        shutil.copytree(os.path.join(DATA, test), t)
        df = TraceDiff.compare_traces(c, t, **kwargs)
        df.reset_index().to_csv(os.path.join(HERE, f"hta_diff_{case}.csv"), index=False)
        print(case, len(df))
