#!/usr/bin/python3
"""Writes the expected values of tests/tables/ with the reference libraries.

Run once by hand (EXPECTED.md has the exact command and the commits used):
  HTA=<HolisticTraceAnalysis checkout> SMDEBUG=<sagemaker-debugger checkout> \
    /usr/bin/python3 tests/data/tables/make_expected.py
Needs Debian's python3-pandas, python3-plotly, python3-psutil, python3-ijson,
python3-tqdm, python3-boto3. Neither library is part of this repository.
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
sys.path.insert(0, os.environ["SMDEBUG"])

from hta.trace_analysis import TraceAnalysis  # noqa: E402
from smdebug.profiler.analysis.utils.profiler_data_to_pandas import PandasFrame  # noqa: E402


def hta(case, files):
    # HTA reads every *.json/*.gz of one folder: copy the files into one.
    with tempfile.TemporaryDirectory() as d:
        for f in files:
            shutil.copy(os.path.join(DATA, f), d)
        t = TraceAnalysis(trace_dir=d)
        t.get_temporal_breakdown(visualize=False).to_csv(os.path.join(HERE, f"hta_{case}_temporal.csv"), index=False)
        types, kernels = t.get_gpu_kernel_breakdown(visualize=False)
        types.to_csv(os.path.join(HERE, f"hta_{case}_kernel_types.csv"), index=False)
        kernels.to_csv(os.path.join(HERE, f"hta_{case}_kernels.csv"), index=False)
        t.get_comm_comp_overlap(visualize=False).to_csv(os.path.join(HERE, f"hta_{case}_overlap.csv"), index=False)


def pandas_frame(case, folder):
    pf = PandasFrame(os.path.join(DATA, folder))
    s = pf.get_all_system_metrics()
    f = pf.get_all_framework_metrics()
    # start_time: PandasFrame's *_us columns are relative to it (the first
    # system-metrics file's timestamp); the tests add it back.
    with open(os.path.join(HERE, f"pf_{case}_start_time.txt"), "w") as out:
        out.write(f"{pf.start_time}\n")
    s.to_csv(os.path.join(HERE, f"pf_{case}_system.csv"), index=False)
    f.to_csv(os.path.join(HERE, f"pf_{case}_framework.csv"), index=False)
    pf.get_all_dataloader_metrics().to_csv(os.path.join(HERE, f"pf_{case}_dataloader.csv"), index=False)


hta("trace_filter", ["hta/trace_filter/sampled_rank-0.json.gz", "hta/trace_filter/sampled_rank-1.json.gz"])
hta("tb_plugin", ["kineto-tb-plugin/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz"])
hta("ns_resolution", ["hta/ns_resolution_trace/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz"])
pandas_frame("test_traces", "smdebug/test_traces")
pandas_frame("merge_traces", "smdebug/merge_traces")
pandas_frame("model_timeline", "smdebug/model_timeline_traces")
pandas_frame("algo_names", "rules/smdebug_algo_names")
