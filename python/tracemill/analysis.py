"""TraceAnalysis: HTA's calls over the tables of one `tracemill convert --tables`.

Where the answers come from: `tracemill convert INPUTS -o DIR --tables=summary`
writes DIR/tables.sqlite (README, "Analysis tables"), whose HTA tables carry
HTA's own column names; this module reads them with sqlite3 and pandas and
gives each DataFrame HTA's column order, index and dtypes. DIR is a cache
folder named by the job's key (below), so a second TraceAnalysis of the same
unchanged inputs reads the tables again without converting.
"""
import hashlib
import json
import os
import shutil
import sqlite3
import subprocess
import tempfile
import warnings
from typing import Dict, List, Optional

import numpy as np
import pandas as pd

# HTA's get_temporal_breakdown: (column, dtype) in its order.
_TEMPORAL = [
    ("rank", "int64"),
    ("idle_time(us)", "float64"),
    ("compute_time(us)", "float64"),
    ("non_compute_time(us)", "float64"),
    ("kernel_time(us)", "float64"),
    ("idle_time_pctg", "float64"),
    ("compute_time_pctg", "float64"),
    ("non_compute_time_pctg", "float64"),
]

# HTA's get_gpu_kernel_breakdown frames: (column, dtype) in its order.
_KERNEL_TYPES = [("kernel_type", "object"), ("sum", "int64"), ("percentage", "float64")]
_KERNELS = [
    ("name", "object"),
    ("sum (us)", "float64"),
    ("max (us)", "float64"),
    ("min (us)", "float64"),
    ("stddev", "float64"),
    ("mean (us)", "float64"),
    ("kernel_type", "object"),
    ("rank", "int64"),
]
# HTA's get_comm_comp_overlap.
_OVERLAP = [("rank", "int64"), ("comp_comm_overlap_pctg", "float64")]

# The collectives tables (README, "Analysis tables"): int64 where a value is
# always there, pandas' nullable Int64 where SQLite may hold NULL.
_COLLECTIVES = [
    ("instance", "int64"), ("process_group", "object"), ("seq", "Int64"), ("collective", "object"),
    ("rank", "Int64"), ("arrival_ns", "int64"), ("end_ns", "int64"), ("wait_ns", "int64"), ("bytes", "Int64"),
    ("aligned", "int64"), ("input", "int64"), ("group_size", "Int64"), ("step", "Int64"),
]
_INSTANCES = [
    ("instance", "int64"), ("process_group", "object"), ("seq", "Int64"), ("collective", "object"),
    ("ranks", "int64"), ("first_arrival_ns", "int64"), ("last_arrival_ns", "int64"), ("last_rank", "Int64"),
    ("skew_ns", "int64"), ("latency_ns", "int64"), ("bytes", "Int64"), ("algbw_gbps", "float64"),
    ("busbw_gbps", "float64"), ("aligned", "int64"), ("step", "Int64"),
]
_RANK_WAITS = [
    ("rank", "Int64"), ("instances", "int64"), ("times_last", "int64"), ("caused_ns", "int64"), ("waited_ns", "int64"),
]

# Bumped when what the cache folder holds changes meaning.
_CACHE_FORMAT = "1"


class TracemillError(RuntimeError):
    """The binary failed: `message` is what it printed on stderr (its error
    lines name the file and byte offset), `returncode` its exit status
    (README: 1 internal or output error, 2 usage error, 130/143 interrupted)."""

    def __init__(self, message: str, returncode: int, command: List[str]):
        super().__init__(f"tracemill exited with status {returncode}: {message}")
        self.message = message
        self.returncode = returncode
        self.command = command


def cache_root() -> str:
    """Where converted jobs are kept: $TRACEMILL_CACHE_DIR, else
    $XDG_CACHE_HOME/tracemill, else ~/.cache/tracemill."""
    if os.environ.get("TRACEMILL_CACHE_DIR"):
        return os.environ["TRACEMILL_CACHE_DIR"]
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "tracemill")


def _binary(tracemill: Optional[str]) -> str:
    """The binary to run: the argument, else $TRACEMILL, else `tracemill` on PATH."""
    found = tracemill or os.environ.get("TRACEMILL") or shutil.which("tracemill")
    if not found or not os.access(found, os.X_OK):
        raise FileNotFoundError(
            "tracemill binary not found: install tracemill (README, Install), put it on PATH, "
            "or pass tracemill=/path/to/tracemill (or set TRACEMILL)")
    return os.path.abspath(found)


def _files(inputs: List[str]) -> List[List]:
    """Every file under the inputs (folders walked), with size and mtime: the
    part of the job's key that changes when a trace is rewritten."""
    out = []
    for p in inputs:
        if os.path.isdir(p):
            for d, dirs, names in os.walk(p):
                dirs.sort()
                for n in sorted(names):
                    f = os.path.join(d, n)
                    if os.path.isfile(f):
                        st = os.stat(f)
                        out.append([f, st.st_size, st.st_mtime_ns])
        elif os.path.exists(p):
            st = os.stat(p)
            out.append([p, st.st_size, st.st_mtime_ns])
        else:
            out.append([p, -1, -1])  # tracemill says what is missing
    return out


class _Converted:
    """One job converted with `--tables=<mode>` into its cache folder: the
    folder is named by a hash of the binary (path, size, mtime), the mode and
    every input file's path, size and mtime, and reused while they stay."""

    def __init__(self, inputs: List[str], mode: str, tracemill: Optional[str], cache_dir: Optional[str],
                 hta_last_step: bool = False):
        self.binary = _binary(tracemill)
        self.inputs = inputs
        self.mode = mode
        self.hta_last_step = hta_last_step  # convert --hta-last-step
        self.converted = False  # whether this object ran the conversion (False: from the cache)
        self.output_dir = self._convert(cache_dir or cache_root())
        self.tables_path = os.path.join(self.output_dir, "tables.sqlite")

    def _key(self) -> str:
        st = os.stat(self.binary)
        job = {
            "format": _CACHE_FORMAT,
            "binary": [self.binary, st.st_size, st.st_mtime_ns],
            "files": _files(self.inputs),
        }
        if self.mode != "summary":  # the keys of summary jobs stay those of the first version
            job["tables"] = self.mode
        if self.hta_last_step:
            job["hta_last_step"] = True
        return hashlib.sha256(json.dumps(job, sort_keys=True).encode()).hexdigest()[:24]

    def _convert(self, root: str) -> str:
        """The cache folder of this job, converted now if it is not there."""
        out = os.path.join(root, self._key())
        if os.path.isfile(os.path.join(out, "tables.sqlite")):
            return out
        os.makedirs(root, exist_ok=True)
        # Converted beside its final name and renamed: a killed conversion
        # never leaves a folder that looks complete.
        work = tempfile.mkdtemp(prefix=".convert-", dir=root)
        cmd = [self.binary, "convert", *self.inputs, "-o", work, f"--tables={self.mode}", "--no-report", "--quiet"]
        if self.hta_last_step:
            cmd.append("--hta-last-step")
        proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        # 3: some inputs were rejected or damaged, the others converted (as
        # HTA would skip a file it cannot parse, with a warning).
        if proc.returncode not in (0, 3) or not os.path.isfile(os.path.join(work, "tables.sqlite")):
            shutil.rmtree(work, ignore_errors=True)
            raise TracemillError(proc.stderr.strip(), proc.returncode, cmd)
        if proc.returncode == 3:
            warnings.warn(f"tracemill: some inputs were not converted:\n{proc.stderr.strip()}")
        try:
            os.rename(work, out)
        except OSError:  # another process converted the same job meanwhile
            shutil.rmtree(work, ignore_errors=True)
        self.converted = True
        return out

    def _query(self, sql: str) -> pd.DataFrame:
        with sqlite3.connect(f"file:{self.tables_path}?mode=ro", uri=True) as db:
            return pd.read_sql_query(sql, db)

    def _frame(self, columns, source: str, order: str) -> pd.DataFrame:
        """`columns` ([(name, dtype)]) of `source` (a table, maybe with a WHERE)
        ordered by `order`: the reference's order, index (RangeIndex) and dtypes."""
        names = ", ".join(f'"{c}"' for c, _ in columns)
        df = self._query(f"SELECT {names} FROM {source} ORDER BY {order}")
        return df.astype(dict(columns)).reset_index(drop=True)


class TraceAnalysis(_Converted):
    """HTA's TraceAnalysis over tracemill's tables.

    Args (HTA's, where they apply):
        trace_files: {rank: path} of the traces (HTA's form); the ranks
            tracemill uses are the files' own (distributedInfo, else the name).
        trace_dir: a folder of traces (walked; every trace in it is read).
        include_last_profiler_step: HTA's flag: False (HTA's default) leaves
            each rank's last ProfilerStep out of the breakdowns, True keeps it
            (the job is then converted with --hta-last-step, cached apart).
        tracemill: the binary (default: $TRACEMILL, else on PATH).
        cache_dir: where converted jobs are kept (default: cache_root()).

    Raises TracemillError when the conversion fails, FileNotFoundError when no
    binary is found, ValueError on arguments HTA would refuse or that
    tracemill cannot honour.
    """

    def __init__(
        self,
        trace_files: Optional[Dict[int, str]] = None,
        trace_dir: Optional[str] = None,
        include_last_profiler_step: Optional[bool] = False,
        tracemill: Optional[str] = None,
        cache_dir: Optional[str] = None,
    ):
        if trace_files:
            inputs = [os.path.abspath(trace_files[r]) for r in sorted(trace_files)]
        elif trace_dir:
            inputs = [os.path.abspath(trace_dir)]
        else:
            raise ValueError("give trace_dir (a folder of traces) or trace_files ({rank: path})")
        _Converted.__init__(self, inputs, "summary", tracemill, cache_dir, bool(include_last_profiler_step))
    def get_temporal_breakdown(self, visualize: bool = True) -> pd.DataFrame:
        """HTA's get_temporal_breakdown: per rank, idle, compute and non-compute
        time of its GPU kernels (us) and their percentages of kernel time.
        One row per rank with GPU kernels, by rank; RangeIndex; rank int64,
        the rest float64. `visualize` draws HTA's bar chart (needs plotly)."""
        df = self._frame(_TEMPORAL, "temporal_breakdown", "rank, \"input\"")
        if visualize:
            _bar(df)
        return df


    def get_gpu_kernel_breakdown(
        self,
        visualize: bool = True,
        duration_ratio: float = 0.8,
        num_kernels: int = 10,
        include_memory_kernels: bool = True,
        image_renderer: str = "",
    ):
        """HTA's get_gpu_kernel_breakdown: two DataFrames, as HTA returns them.

        The first, the job's GPU time by the set of kernel types running at
        once (`kernel_type`, `sum` in us, `percentage` of the whole, 0.1), by
        sum, largest first; combinations that never ran are left out (HTA
        lists some of them with 0 us: those its sweep visited for no time,
        which depends on how numpy's quicksort orders equal times). The second, per rank and kernel type
        (COMPUTATION, COMMUNICATION, MEMORY), the longest kernels and `others`
        (`sum (us)`, `max (us)`, `min (us)`, `stddev`, `mean (us)`), ordered by
        kernel type, name and rank. The tables hold HTA's defaults only:
        other `duration_ratio`, `num_kernels` or `include_memory_kernels`
        raise ValueError. `visualize` and `image_renderer` draw nothing."""
        if (duration_ratio, num_kernels, include_memory_kernels) != (0.8, 10, True):
            raise ValueError(
                "tracemill's tables hold HTA's default kernel breakdown only "
                "(duration_ratio=0.8, num_kernels=10, include_memory_kernels=True)")
        types = self._frame(_KERNEL_TYPES, "kernel_type_breakdown WHERE \"input\" IS NULL AND sum > 0",
                            "sum DESC, kernel_type")
        kernels = self._frame(_KERNELS, "kernel_breakdown", "kernel_type, name, rank")
        return types, kernels

    def get_comm_comp_overlap(self, visualize: bool = True) -> pd.DataFrame:
        """HTA's get_comm_comp_overlap: per rank, the percentage of its
        communication kernels' time that computation kernels overlap (NaN
        without communication), by rank. `visualize` draws nothing."""
        return self._frame(_OVERLAP, "comm_comp_overlap", "rank, \"input\"")

    def get_idle_time_breakdown(
        self,
        ranks: Optional[List[int]] = None,
        streams: Optional[List[int]] = None,
        visualize: bool = True,
        visualize_pctg: bool = True,
        show_idle_interval_stats: bool = False,
        consecutive_kernel_delay: int = 30,
    ):
        """HTA's get_idle_time_breakdown: per rank (default [0]) and stream
        (default: every stream with a kernel, in the order of its first kernel
        in the file, as HTA), the time between consecutive kernels as
        `host_wait` (the next kernel was launched after the previous one
        ended), `kernel_wait` (a gap under `consecutive_kernel_delay`, in the
        trace's µs) or `other`: a tuple of two DataFrames as HTA returns them,
        (rank, stream, idle_category, idle_time, idle_time_ratio) and, with
        `show_idle_interval_stats`, the gaps' count, mean, std, min,
        quartiles and max per category (else None). HTA's dtypes: `stream`
        that of its trace's stream column (int8 .. int64; str when
        `visualize`, as HTA converts it to draw). Made from the `idle_gaps`
        table (README). Raises ValueError for a rank without GPU kernels."""
        if ranks is None or len(ranks) == 0:
            ranks = [0]
        rows = self._query(
            'SELECT "input", rank, stream, stream_order, host_wait, gap_us, gaps, hta_stream_dtype '
            'FROM idle_gaps ORDER BY "input", stream_order, rowid')
        frames, stats = [], []
        for rank in ranks:
            mine = rows[rows["rank"] == rank]
            if mine.empty:
                have = sorted(set(int(r) for r in rows["rank"].dropna()))
                raise ValueError(f"rank {rank} has no GPU kernels in these traces (or no trace); "
                                 f"ranks with GPU kernels: {have if have else 'none'}")
            mine = mine[mine["input"] == mine["input"].iloc[0]]  # HTA reads one trace per rank
            frame, stat = _idle_rank(rank, mine, streams, visualize, visualize_pctg, show_idle_interval_stats,
                                     consecutive_kernel_delay)
            frames.append(frame)
            if stat is not None:
                stats.append(stat)
        return pd.concat(frames), (pd.concat(stats) if show_idle_interval_stats else None)

    def get_collectives(self) -> pd.DataFrame:
        """Every collective op of every rank, matched across ranks (HTA has no
        such call; the `collectives` table): `instance`, `process_group`,
        `seq`, `collective`, `rank`, `arrival_ns`, `end_ns`, `wait_ns` (the
        instance's last arrival minus this one), `bytes`, `aligned`, `input`,
        `group_size`, `step`; by input, each input's ops in its order."""
        return self._frame(_COLLECTIVES, "collectives", "rowid")

    def get_collective_instances(self) -> pd.DataFrame:
        """One row per collective instance (`collective_instances`): how many
        ranks, first and last arrival, `last_rank` (whom the others waited
        for), `skew_ns`, `latency_ns` (TraceLens' latency: the shortest op),
        `bytes`, `algbw_gbps`, `busbw_gbps`; by instance (first arrival)."""
        return self._frame(_INSTANCES, "collective_instances", "instance")

    def get_rank_waits(self) -> pd.DataFrame:
        """Per rank (`rank_waits`): `instances`, `times_last` (instances of 2+
        ranks it reached last), `caused_ns` (the others' waiting there),
        `waited_ns` (its own); by rank. The rank that kept the others waiting
        has the largest `caused_ns`."""
        return self._frame(_RANK_WAITS, "rank_waits", "rank")

# HTA's IdleTimeType values and the names its frames show.
_HOST_WAIT, _KERNEL_WAIT, _OTHER = 0, 1, 2
_IDLE_NAMES = {_HOST_WAIT: "host_wait", _KERNEL_WAIT: "kernel_wait", _OTHER: "other"}


def _idle_stream(stream, gaps: pd.DataFrame, show_stats: bool, delay: int):
    """HTA's _analyze_idle_time_for_stream (breakdown_analysis.py:746-817)
    over one stream's gaps: each (host_wait, gap_us) row stands for `gaps`
    kernels, a NULL gap for the stream's first (HTA's NaN)."""
    counts = gaps["gaps"].to_numpy(dtype="int64")
    interval = np.repeat(gaps["gap_us"].to_numpy(dtype="float64"), counts)
    host = np.repeat(gaps["host_wait"].to_numpy(dtype="bool"), counts)
    category = np.full(len(interval), _OTHER, dtype="int64")
    category[host] = _HOST_WAIT
    with np.errstate(invalid="ignore"):
        category[~host & (interval < delay)] = _KERNEL_WAIT
    kernels = pd.DataFrame({"idle_interval": interval, "idle_category": category})
    grouped = kernels.groupby("idle_category")
    stats = None
    if show_stats:
        stats = grouped.idle_interval.describe()
        stats.insert(0, "stream", stream)
    result = pd.DataFrame(grouped.idle_interval.sum())
    total = result.idle_interval.sum()
    result["stream"] = stream
    result["idle_time_ratio"] = result["idle_interval"] / total
    result.rename(columns={"idle_interval": "idle_time"}, inplace=True)
    return result, stats


def _idle_rank(rank, rows: pd.DataFrame, streams, visualize, visualize_pctg, show_stats, delay):
    """HTA's BreakdownAnalysis.get_idle_time_breakdown (breakdown_analysis.py:819-945)
    for one rank's idle_gaps rows."""
    as_stream = np.dtype(rows["hta_stream_dtype"].iloc[0]).type
    if streams is None or len(streams) == 0:
        streams = [as_stream(s) for s in rows.drop_duplicates("stream_order")["stream"]]
    results, stats = [], []
    for stream in streams:
        result, stat = _idle_stream(stream, rows[rows["stream"] == stream], show_stats, delay)
        results.append(result)
        if stat is not None:
            stats.append(stat)
    df = pd.concat(results)
    df.rename(mapper=_IDLE_NAMES, axis=0, inplace=True)
    df.reset_index(inplace=True)
    if visualize:
        df["stream"] = df.stream.astype(str)  # as HTA's, which draws it so
        _idle_bar(df, rank, visualize_pctg)
    df["rank"] = rank
    stats_df = pd.concat(stats).round(2) if show_stats else None
    if stats_df is not None:
        stats_df.insert(0, "rank", rank)
        stats_df.rename(mapper=_IDLE_NAMES, axis=0, inplace=True)
    return df[["rank", "stream", "idle_category", "idle_time", "idle_time_ratio"]].round(2), stats_df


def _idle_bar(df: pd.DataFrame, rank, pctg: bool) -> None:
    """HTA's chart of one rank's idle time per stream."""
    try:
        import plotly.express as px
    except ImportError:
        warnings.warn("visualize=True needs plotly (apt-get install python3-plotly)")
        return
    fig = px.bar(df, x="stream", y="idle_time_ratio" if pctg else "idle_time", color="idle_category",
                 hover_data=["idle_time", "idle_time_ratio"], title=f"Idle time breakdown on rank {rank} per CUDA stream")
    if pctg:
        fig.update_layout(yaxis_tickformat=".2%", yaxis_title="Percentage", legend_title="Idle Time Breakdown")
    else:
        fig.update_layout(yaxis_title="Idle time (us)", legend_title="Idle Time Breakdown")
    fig.show()


def _bar(df: pd.DataFrame) -> None:
    """HTA's chart of the temporal breakdown (fractions of kernel time per rank)."""
    try:
        import plotly.express as px
    except ImportError:
        warnings.warn("visualize=True needs plotly (apt-get install python3-plotly)")
        return
    frac = df.assign(
        idle_time=df["idle_time(us)"] / df["kernel_time(us)"],
        compute_time=df["compute_time(us)"] / df["kernel_time(us)"],
        non_compute_time=df["non_compute_time(us)"] / df["kernel_time(us)"],
    )
    fig = px.bar(frac, x="rank", y=["idle_time", "compute_time", "non_compute_time"],
                 title="Temporal breakdown across ranks", labels={"rank": "Rank"})
    fig.update_layout(yaxis_tickformat=".2%", yaxis_title="Percentage", legend_title="Time Breakdown")
    fig.show()
