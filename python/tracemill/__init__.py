"""tracemill from Python: HTA's TraceAnalysis calls, backed by tracemill's tables.

    import tracemill
    t = tracemill.TraceAnalysis(trace_dir="/path/to/traces")
    t.get_temporal_breakdown(visualize=False)
    tracemill.PandasFrame("/path/to/smdebug/profiler-output").get_all_system_metrics()
    tracemill.TraceDiff.compare_traces("/runs/before", "/runs/after")

The package runs the installed `tracemill` binary (`convert --tables`) once per
set of inputs, keeps its output folder in a cache, and answers HTA's calls
from that folder's tables.sqlite with HTA's column names, index and dtypes.
It needs Debian's python3 and python3-pandas only.
"""
from tracemill.analysis import TraceAnalysis, TracemillError, cache_root
from tracemill.diff import DeviceType, TraceDiff, compare_traces
from tracemill.pandas_frame import PandasFrame

__all__ = ["TraceAnalysis", "PandasFrame", "TraceDiff", "DeviceType", "compare_traces", "TracemillError",
           "cache_root"]
