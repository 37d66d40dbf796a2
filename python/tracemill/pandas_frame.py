"""PandasFrame: SageMaker Debugger's frames of an smdebug job, from tracemill's tables.

smdebug's `PandasFrame(path)` reads a job's profiler folder (framework/ and system/) into
`get_all_system_metrics()` and `get_all_framework_metrics()`; here `tracemill convert
--tables=full` reads it once (cached as TraceAnalysis's jobs are) and the frames come from
its `system_metrics` and `framework_metrics` tables, with PandasFrame's columns, time text
(`%Y-%m-%dT%H:%M:%S:%f`) and `*_us` columns relative to `start_time` as smdebug computes it.
"""
import os
import re
from typing import List, Optional

import pandas as pd

from tracemill.analysis import _Converted

# smdebug's system-metrics file name (smdebug/profiler/utils.py, validate_system_profiler_file):
# the 10-digit second of its first sample, then the node.
_SYSTEM_FILE = re.compile(r".+/system/.+/(\d{10}).algo-\d+.json")

_SYSTEM = [
    ("timestamp", "object"), ("timestamp_us", "int64"), ("value", "float64"), ("system_metric", "object"),
    ("dimension", "object"), ("nodeID", "object"), ("type", "object"),
]
_FRAMEWORK = [
    ("start_time", "object"), ("end_time", "object"), ("start_time_us", "int64"), ("end_time_us", "int64"),
    ("tid", "object"), ("pid", "object"), ("framework_metric", "object"), ("step", "int64"), ("bytes", "int64"),
    ("process", "object"), ("nodeID", "object"),
]


def _start_time(path: str) -> int:
    """PandasFrame.start_time: the timestamp (us) of the job's first system-metrics
    file by its name, 0 without one (smdebug's get_timestamp_of_first_available_file)."""
    stamps = []
    for d, _, names in os.walk(os.path.join(path, "system")):
        for n in names:
            m = _SYSTEM_FILE.match(os.path.join(d, n))
            if m:
                stamps.append(int(m.group(1)) * 1_000_000)
    return min(stamps) if stamps else 0


def _pf_time(iso: pd.Series) -> pd.Series:
    """`2020-06-03T05:04:59.457089Z` (the tables' ISO-8601) -> PandasFrame's
    `2020-06-03T05:04:59:457089`."""
    return iso.str.slice(0, 19) + ":" + iso.str.slice(20, 26)


def _int_or_text(col: pd.Series) -> pd.Series:
    """A trace's pid or tid token: int64 when every one is an integer (as smdebug
    parses them), else the text."""
    n = pd.to_numeric(col, errors="coerce")
    return n.astype("int64") if n.notna().all() else col


class PandasFrame(_Converted):
    """smdebug's PandasFrame over tracemill's tables.

    Args: `path`, an smdebug profiler folder (framework/, system/) or any input
    `tracemill convert` takes; `tracemill`, `cache_dir` as TraceAnalysis's.
    Attribute `start_time`: smdebug's (us of the first system-metrics file's
    name, 0 without one); the frames' `*_us` columns are relative to it.

    Rows are tracemill's, in time order (smdebug's follow its reader: files,
    then events); compare them sorted. Differences: `pid` and `tid` are the
    trace's own tokens (smdebug's pid is the process number, and threads
    without a name get a salted hash that changes at every run); framework
    events before `start_time` are kept (smdebug's reader starts there and
    returns none of them); a selection list matches `framework_metric` or
    `process` (smdebug's matches the raw event name or its phase).
    """

    def __init__(self, path: str, tracemill: Optional[str] = None, cache_dir: Optional[str] = None):
        path = os.path.abspath(path)
        _Converted.__init__(self, [path], "full", tracemill, cache_dir)
        self.path = path
        self.start_time = _start_time(path)

    def get_all_system_metrics(self, selected_system_metrics: List[str] = []) -> pd.DataFrame:
        """PandasFrame's system metrics: `timestamp`, `timestamp_us`, `value`,
        `system_metric` (`cpu0`, `gpu1`), `dimension`, `nodeID`, `type`; only the
        `system_metric`s listed, if a list is given."""
        df = self._frame(_SYSTEM, "system_metrics", "timestamp_ns, rowid")
        if selected_system_metrics:
            df = df[df["system_metric"].isin(selected_system_metrics)].reset_index(drop=True)
        df["timestamp"] = _pf_time(df["timestamp"])
        df["timestamp_us"] = df["timestamp_us"] - self.start_time
        return df

    def get_all_framework_metrics(self, selected_framework_metrics: List[str] = []) -> pd.DataFrame:
        """PandasFrame's framework metrics, one row per span: `start_time`,
        `end_time`, `start_time_us`, `end_time_us`, `tid`, `pid`,
        `framework_metric` (args.layer_name, else args.name, else the name),
        `step` (args.step_num, else -1), `bytes` (args.bytes_fetched, else -1),
        `process` (smdebug's phase), `nodeID`."""
        df = self._frame(_FRAMEWORK, "framework_metrics", "start_ns, rowid")
        if selected_framework_metrics:
            keep = df["framework_metric"].isin(selected_framework_metrics) | df["process"].isin(
                selected_framework_metrics)
            df = df[keep].reset_index(drop=True)
        for c in ("start_time", "end_time"):
            df[c] = _pf_time(df[c])
        for c in ("start_time_us", "end_time_us"):
            df[c] = df[c] - self.start_time
        for c in ("tid", "pid"):
            df[c] = _int_or_text(df[c])
        return df
