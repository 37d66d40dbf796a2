"""TraceDiff.compare_traces: HTA's comparison of two runs, from `tracemill diff`.

Each side is converted once with `--tables=summary` (cached as TraceAnalysis's jobs
are); `tracemill diff` then compares their `op_summary` tables, and the frame returned
has HTA's index (`name`), columns, labels, row order and dtypes.
"""
import enum
import os
import shutil
import subprocess
import sqlite3
import tempfile
from typing import List, Optional, Union

import pandas as pd

from tracemill.analysis import TracemillError, _Converted


class DeviceType(enum.Enum):
    """HTA's hta.trace_diff.DeviceType."""
    CPU = 1
    GPU = 2
    ALL = 3


def _ints(v: Optional[Union[int, List[int]]]) -> Optional[str]:
    if v is None:
        return None
    return ",".join(str(int(x)) for x in ([v] if isinstance(v, int) else v))


class TraceDiff:
    """HTA's TraceDiff: `compare_traces` only, so far."""

    @classmethod
    def compare_traces(
        cls,
        control: str,
        test: str,
        control_rank: Optional[Union[int, List[int]]] = None,
        test_rank: Optional[Union[int, List[int]]] = None,
        control_iteration: Optional[Union[int, List[int]]] = None,
        test_iteration: Optional[Union[int, List[int]]] = None,
        device_type: DeviceType = DeviceType.ALL,
        use_short_name: bool = False,
        tracemill: Optional[str] = None,
        cache_dir: Optional[str] = None,
    ) -> pd.DataFrame:
        """HTA's compare_traces of two trace folders (or files): per name, the
        counts and total duration (us) of the chosen ranks and iterations
        (default: the first of each side) in CONTROL and TEST, their
        differences and `counts_change_categories` (+, -, =). Index `name`
        (`short_name` with use_short_name: HTA's shorten_name); HTA's dtypes
        (_hta_dtypes). A rank or iteration a side lacks raises TracemillError
        (status 2, naming the ones it has)."""
        sides = [_Converted([os.path.abspath(p)], "summary", tracemill, cache_dir) for p in (control, test)]
        out = tempfile.mkdtemp(prefix="tracemill-diff-")
        try:
            cmd = [sides[0].binary, "diff", sides[0].output_dir, sides[1].output_dir, "-o", out, "-q",
                   "--device", device_type.name.lower()] + (["--short-names"] if use_short_name else [])
            for flag, v in (("--control-rank", control_rank), ("--test-rank", test_rank),
                            ("--control-iteration", control_iteration), ("--test-iteration", test_iteration)):
                if _ints(v) is not None:
                    cmd += [flag, _ints(v)]
            proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            if proc.returncode != 0:
                raise TracemillError(proc.stderr.strip(), proc.returncode, cmd)
            with sqlite3.connect(f"file:{out}/diff.sqlite?mode=ro", uri=True) as db:
                df = pd.read_sql_query("SELECT * FROM compare_traces ORDER BY rowid", db)
                meta = dict(db.execute("SELECT key, value FROM diff_meta").fetchall())
        finally:
            shutil.rmtree(out, ignore_errors=True)
        return _hta_dtypes(df.set_index(df.columns[0]), meta)  # name, or short_name


_WIDTH = ["int8", "int16", "int32", "int64", "float64"]


def _hta_dtypes(df: pd.DataFrame, meta: dict) -> pd.DataFrame:
    """HTA's dtypes: counts int64 and durations the dtype of HTA's `dur` column
    on that side (diff_meta: float64 when a file has an event without `dur`,
    else an integer type downcast to fit), except that a side missing a name
    gets NaN from HTA's outer join, then 0.0: all its columns float64; a
    difference has the wider of its two columns' types."""
    side_type = {}
    for side in ("Control", "Test"):
        missing = bool((df[f"{side}_counts"] == 0).any())
        side_type[side] = {
            "counts": "float64" if missing else "int64",
            "duration": "float64" if missing else meta[f"{side.lower()}_hta_dur_dtype"],
        }
    wider = lambda a, b: _WIDTH[max(_WIDTH.index(a), _WIDTH.index(b))]  # noqa: E731
    dtypes = {
        "Control_counts": side_type["Control"]["counts"],
        "Control_total_duration": side_type["Control"]["duration"],
        "Test_counts": side_type["Test"]["counts"],
        "Test_total_duration": side_type["Test"]["duration"],
        "diff_counts": wider(side_type["Control"]["counts"], side_type["Test"]["counts"]),
        "diff_duration": wider(side_type["Control"]["duration"], side_type["Test"]["duration"]),
    }
    return df.astype(dtypes)


def compare_traces(control: str, test: str, **kwargs) -> pd.DataFrame:
    """TraceDiff.compare_traces(control, test, **kwargs)."""
    return TraceDiff.compare_traces(control, test, **kwargs)
