"""tracemill.TraceAnalysis against HTA's own values (tests/data/tables/, made
with HTA itself: EXPECTED.md there has the command), run by ctest with
Debian's python3 and pytest (tests/python/CMakeLists.txt sets TRACEMILL, the
built binary, and TRACEMILL_TEST_DATA, tests/data)."""
import os
import shutil

import pandas as pd
import pytest

import tracemill

DATA = os.environ["TRACEMILL_TEST_DATA"]
BIN = os.environ["TRACEMILL"]


@pytest.fixture(autouse=True)
def cache(tmp_path, monkeypatch):
    """Each test its own cache folder."""
    monkeypatch.setenv("TRACEMILL_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


def hta_temporal(case):
    """HTA's frame as HTA returns it: rank int64, the rest float64, RangeIndex."""
    df = pd.read_csv(os.path.join(DATA, "tables", f"hta_{case}_temporal.csv"))
    return df.astype({c: ("int64" if c == "rank" else "float64") for c in df.columns})


# HTA's own 2-rank test pair; the TensorBoard plugin's 1-rank trace (integer
# us ts); a trace of float ts with ns decimals (HTA's rounding).
@pytest.mark.parametrize("case,folder", [
    ("trace_filter", "hta/trace_filter"),
    ("tb_plugin", "kineto-tb-plugin/resnet50_num_workers_0"),
    ("ns_resolution", "hta/ns_resolution_trace"),
])
def test_temporal_breakdown_equals_htas(case, folder):
    t = tracemill.TraceAnalysis(trace_dir=os.path.join(DATA, folder))
    got = t.get_temporal_breakdown(visualize=False)
    pd.testing.assert_frame_equal(got, hta_temporal(case))  # dtypes, index and values
    assert list(got.dtypes) == ["int64"] + ["float64"] * 7


# HTA's dtypes, as HTA itself returned them on these traces (its frames'
# .dtypes, printed with the command of tests/data/tables/EXPECTED.md).
KERNEL_TYPES = {"kernel_type": "object", "sum": "int64", "percentage": "float64"}
KERNELS = {"name": "object", "sum (us)": "float64", "max (us)": "float64", "min (us)": "float64",
           "stddev": "float64", "mean (us)": "float64", "kernel_type": "object", "rank": "int64"}
OVERLAP = {"rank": "int64", "comp_comm_overlap_pctg": "float64"}


def hta_frame(case, what, dtypes):
    return pd.read_csv(os.path.join(DATA, "tables", f"hta_{case}_{what}.csv")).astype(dtypes)


CASES = [
    ("trace_filter", "hta/trace_filter"),
    ("tb_plugin", "kineto-tb-plugin/resnet50_num_workers_0"),
    ("ns_resolution", "hta/ns_resolution_trace"),
]


@pytest.mark.parametrize("case,folder", CASES)
def test_kernel_breakdown_and_overlap_equal_htas(case, folder):
    t = tracemill.TraceAnalysis(trace_dir=os.path.join(DATA, folder))
    types, kernels = t.get_gpu_kernel_breakdown(visualize=False)
    # HTA also lists combinations its sweep visited for 0 us (an artifact of
    # numpy's unstable sort on equal times): ours leaves every 0 out.
    hta_types = hta_frame(case, "kernel_types", KERNEL_TYPES)
    nonzero = hta_types[hta_types["sum"] > 0].reset_index(drop=True)
    pd.testing.assert_frame_equal(types, nonzero)
    # HTA's order (kernel type, name, rank) and values; mean and stddev are
    # HTA's float arithmetic, equal to ~1e-12 (assert_frame_equal's rtol 1e-5).
    pd.testing.assert_frame_equal(kernels, hta_frame(case, "kernels", KERNELS))
    pd.testing.assert_frame_equal(t.get_comm_comp_overlap(visualize=False), hta_frame(case, "overlap", OVERLAP))


def test_include_last_profiler_step_is_htas(cache):
    # HTA's trace_filter pair keeps its last ProfilerStep (make_expected_last_step.py):
    # every breakdown then differs from the default's (kernel time 600,058 -> 1,222,847 us on rank 0).
    d = os.path.join(DATA, "hta", "trace_filter")
    t = tracemill.TraceAnalysis(trace_dir=d, include_last_profiler_step=True)
    case = "trace_filter_last_step"
    pd.testing.assert_frame_equal(t.get_temporal_breakdown(visualize=False), hta_temporal(case))
    types, kernels = t.get_gpu_kernel_breakdown(visualize=False)
    hta_types = hta_frame(case, "kernel_types", KERNEL_TYPES)
    pd.testing.assert_frame_equal(types, hta_types[hta_types["sum"] > 0].reset_index(drop=True))
    pd.testing.assert_frame_equal(kernels, hta_frame(case, "kernels", KERNELS))
    pd.testing.assert_frame_equal(t.get_comm_comp_overlap(visualize=False), hta_frame(case, "overlap", OVERLAP))
    expected, expected_stats = hta_idle(case, {}, "int16")
    got, stats = t.get_idle_time_breakdown(ranks=[0, 1], visualize=False, show_idle_interval_stats=True)
    pd.testing.assert_frame_equal(got, expected)
    pd.testing.assert_frame_equal(stats, expected_stats)
    # Converted apart from the default's: one cache folder each.
    tracemill.TraceAnalysis(trace_dir=d)
    assert len([n for n in os.listdir(cache) if not n.startswith(".")]) == 2


def test_breakdown_arguments_beyond_the_tables_are_refused():
    t = tracemill.TraceAnalysis(trace_dir=os.path.join(DATA, "hta", "trace_filter"))
    with pytest.raises(ValueError, match="num_kernels=10"):
        t.get_gpu_kernel_breakdown(visualize=False, num_kernels=5)
    with pytest.raises(ValueError, match="include_memory_kernels"):
        t.get_gpu_kernel_breakdown(visualize=False, include_memory_kernels=False)


# HTA's get_idle_time_breakdown (make_expected_idle.py): (case, folder, the
# dtype HTA's stream column had there, arguments beyond ranks/visualize).
IDLE_CASES = [
    ("trace_filter", "hta/trace_filter", "int16", {}),  # stream 203: int16; streams not in time order
    ("trace_filter", "hta/trace_filter", "int16", {"consecutive_kernel_delay": 5}),
    ("tb_plugin", "kineto-tb-plugin/resnet50_num_workers_0", "int8", {}),
    ("ns_resolution", "hta/ns_resolution_trace", "int8", {}),  # float ts: HTA's rounding
    ("trace_compare_base", "hta/trace_compare/base", "int8", {}),  # one kernel kept: ratio NaN
]


def hta_idle(case, kwargs, stream_dtype):
    """HTA's two frames as it returned them: the first with a 0.. index per
    rank, concatenated; the second indexed by idle_category."""
    suffix = "".join(f"_delay{v}" for v in kwargs.values())
    frame = pd.read_csv(os.path.join(DATA, "tables", f"hta_{case}_idle{suffix}.csv"))
    frame = frame.astype({"rank": "int64", "stream": stream_dtype, "idle_time": "float64",
                          "idle_time_ratio": "float64"})
    frame.index = frame.groupby("rank").cumcount()
    stats = pd.read_csv(os.path.join(DATA, "tables", f"hta_{case}_idle{suffix}_stats.csv"), index_col="idle_category")
    stats = stats.astype({c: ("int64" if c == "rank" else stream_dtype if c == "stream" else "float64")
                          for c in stats.columns})
    return frame, stats


@pytest.mark.parametrize("case,folder,stream_dtype,kwargs", IDLE_CASES)
def test_idle_time_breakdown_equals_htas(case, folder, stream_dtype, kwargs):
    t = tracemill.TraceAnalysis(trace_dir=os.path.join(DATA, folder))
    expected, expected_stats = hta_idle(case, kwargs, stream_dtype)
    ranks = sorted(expected["rank"].unique().tolist())
    got, stats = t.get_idle_time_breakdown(ranks=ranks, visualize=False, show_idle_interval_stats=True, **kwargs)
    pd.testing.assert_frame_equal(got, expected)
    pd.testing.assert_frame_equal(stats, expected_stats)
    assert str(got["stream"].dtype) == stream_dtype
    plain, none = t.get_idle_time_breakdown(ranks=ranks, visualize=False, **kwargs)
    assert none is None
    pd.testing.assert_frame_equal(plain, expected)


def test_idle_time_breakdown_arguments(monkeypatch):
    t = tracemill.TraceAnalysis(trace_dir=os.path.join(DATA, "hta", "trace_filter"))
    expected, _ = hta_idle("trace_filter", {}, "int16")
    # Default ranks: [0], as HTA's. Streams named by the caller: in that
    # order, the column then of the caller's type (python ints: int64).
    got, _ = t.get_idle_time_breakdown(visualize=False)
    pd.testing.assert_frame_equal(got, expected[expected["rank"] == 0])
    got, _ = t.get_idle_time_breakdown(ranks=[1], streams=[7, 23], visualize=False)
    assert got["stream"].tolist() == [7] * 3 + [23] * 3 and str(got["stream"].dtype) == "int64"
    assert got["idle_time"].tolist() == [156827.0, 1816.0, 281064.0, 596313.0, 100.0, 0.0]
    # visualize=True: HTA's stream column becomes str to draw it.
    plotly = pytest.importorskip("plotly.graph_objects")
    monkeypatch.setattr(plotly.Figure, "show", lambda self, *a, **k: None)
    got, _ = t.get_idle_time_breakdown(ranks=[0], visualize=True)
    assert got["stream"].tolist()[:3] == ["23", "23", "23"] and got["stream"].dtype == object
    with pytest.raises(ValueError, match=r"rank 5 has no GPU kernels .*ranks with GPU kernels: \[0, 1\]"):
        t.get_idle_time_breakdown(ranks=[5], visualize=False)


def test_collectives_frames_are_the_tables_rows():
    # The sample job (HTA's trace_filter pair): 20 SendRecv ops, 18 instances
    # (two shared by both ranks), rank 1 last at both: 27,187 us of rank 0's
    # waiting (the values of tests/tables' collectives tests, in Python).
    t = tracemill.TraceAnalysis(trace_dir=os.path.join(DATA, "hta", "trace_filter"))
    ops, inst, waits = t.get_collectives(), t.get_collective_instances(), t.get_rank_waits()
    assert (len(ops), len(inst)) == (20, 18)
    assert ops["wait_ns"].sum() == 27_187_000 and ops["bytes"].isna().all()
    assert inst["instance"].tolist() == list(range(18))
    assert inst.loc[1, ["ranks", "last_rank", "skew_ns", "latency_ns"]].tolist() == [2, 1, 4_859_000, 57_924_000]
    assert waits.to_dict("list") == {"rank": [0, 1], "instances": [10, 10], "times_last": [0, 2],
                                     "caused_ns": [0, 27_187_000], "waited_ns": [27_187_000, 0]}
    assert str(inst["bytes"].dtype) == "Int64" and str(inst["busbw_gbps"].dtype) == "float64"
    assert str(ops["arrival_ns"].dtype) == "int64" and str(waits["rank"].dtype) == "Int64"


def test_trace_files_by_rank_as_hta_takes_them():
    d = os.path.join(DATA, "hta", "trace_filter")
    files = {r: os.path.join(d, f"sampled_rank-{r}.json.gz") for r in (0, 1)}
    got = tracemill.TraceAnalysis(trace_files=files).get_temporal_breakdown(visualize=False)
    pd.testing.assert_frame_equal(got, hta_temporal("trace_filter"))


def test_cache_is_reused_then_redone_when_an_input_changes(tmp_path, cache):
    job = tmp_path / "job"
    shutil.copytree(os.path.join(DATA, "hta", "trace_filter"), job)
    first = tracemill.TraceAnalysis(trace_dir=str(job))
    assert first.converted and os.path.dirname(first.output_dir) == str(cache)
    again = tracemill.TraceAnalysis(trace_dir=str(job))
    assert not again.converted and again.output_dir == first.output_dir
    # Rank 1 rewritten (a newer mtime): converted again, into a new folder.
    f = job / "sampled_rank-1.json.gz"
    st = os.stat(f)
    os.utime(f, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
    changed = tracemill.TraceAnalysis(trace_dir=str(job))
    assert changed.converted and changed.output_dir != first.output_dir
    pd.testing.assert_frame_equal(changed.get_temporal_breakdown(visualize=False), hta_temporal("trace_filter"))
    # Nothing half-converted is left beside the jobs.
    assert sorted(p.name for p in cache.iterdir()) == sorted(
        [os.path.basename(first.output_dir), os.path.basename(changed.output_dir)])


def test_a_failed_conversion_raises_the_binarys_message_and_status(tmp_path, cache):
    empty = tmp_path / "no-traces"
    empty.mkdir()
    (empty / "notes.txt").write_text("not a trace\n")
    with pytest.raises(tracemill.TracemillError) as e:
        tracemill.TraceAnalysis(trace_dir=str(empty))
    assert e.value.returncode == 2
    assert "notes.txt" in e.value.message or "no input" in e.value.message.lower(), e.value.message
    assert not cache.exists() or list(cache.iterdir()) == []


def test_a_missing_folder_is_the_binarys_usage_error(tmp_path):
    with pytest.raises(tracemill.TracemillError) as e:
        tracemill.TraceAnalysis(trace_dir=str(tmp_path / "nowhere"))
    assert e.value.returncode == 2
    assert "nowhere" in e.value.message


def test_arguments_tracemill_cannot_honour_are_refused():
    with pytest.raises(ValueError, match="trace_dir"):
        tracemill.TraceAnalysis()
    with pytest.raises(FileNotFoundError, match="tracemill binary"):
        tracemill.TraceAnalysis(trace_dir=DATA, tracemill="/nonexistent/tracemill")


# smdebug's PandasFrame on the folders its expected frames were made of
# (tests/data/tables/EXPECTED.md): system and framework metrics, their
# start_time; rows compared sorted (smdebug's order is its reader's), pid and
# tid left out (the tables keep the trace's tokens; smdebug's tid is a salted
# hash for unnamed threads).
PANDAS_FRAME_JOBS = [
    ("test_traces", "smdebug/test_traces"),
    ("merge_traces", "smdebug/merge_traces"),
    ("model_timeline", "smdebug/model_timeline_traces"),
    ("algo_names", "rules/smdebug_algo_names"),
]
SYSTEM = {"timestamp": "object", "timestamp_us": "int64", "value": "float64", "system_metric": "object",
          "dimension": "object", "nodeID": "object", "type": "object"}
FRAMEWORK = {"start_time": "object", "end_time": "object", "start_time_us": "int64", "end_time_us": "int64",
             "framework_metric": "object", "step": "int64", "bytes": "int64", "process": "object",
             "nodeID": "object"}


def sorted_frame(df):
    return df.sort_values(list(df.columns)).reset_index(drop=True)


@pytest.mark.parametrize("case,folder", PANDAS_FRAME_JOBS)
def test_pandas_frame_equals_smdebugs(case, folder):
    pf = tracemill.PandasFrame(os.path.join(DATA, folder))
    with open(os.path.join(DATA, "tables", f"pf_{case}_start_time.txt")) as f:
        assert pf.start_time == int(f.read())
    for what, dtypes, got in (("system", SYSTEM, pf.get_all_system_metrics()),
                              ("framework", FRAMEWORK, pf.get_all_framework_metrics())):
        want = pd.read_csv(os.path.join(DATA, "tables", f"pf_{case}_{what}.csv"), dtype=str, keep_default_na=False)
        assert list(got.columns) == list(want.columns), what
        if what == "framework":
            got, want = got.drop(columns=["tid", "pid"]), want.drop(columns=["tid", "pid"])
        if len(want) == 0:
            # smdebug's reader starts at start_time: test_traces' 4 framework
            # events come before its first system file, so it returns none.
            assert (got["start_time_us"] < 0).all() if what == "framework" else len(got) == 0, what
            continue
        pd.testing.assert_frame_equal(sorted_frame(got), sorted_frame(want.astype(dtypes)), obj=f"{case} {what}")


def test_pandas_frame_selections():
    pf = tracemill.PandasFrame(os.path.join(DATA, "smdebug", "test_traces"))
    gpu0 = pf.get_all_system_metrics(["gpu0"])
    assert len(gpu0) > 0 and set(gpu0["system_metric"]) == {"gpu0"}
    assert len(pf.get_all_system_metrics()) == 78
    fw = tracemill.PandasFrame(os.path.join(DATA, "smdebug", "model_timeline_traces"))
    steps = fw.get_all_framework_metrics(["DataIterator"])
    assert len(steps) > 0 and set(steps["process"]) == {"DataIterator"}


# HTA's TraceDiff.compare_traces on real pairs (hta_diff_*.csv, made with
# HTA: make_expected_diff.py). HTA's dtypes as its CSV shows them: a column
# written with ".0" was float64 (a side missing a name: NaN, then 0.0), the
# others ints (durations int32, as HTA's parser downcasts them).
DIFF_CASES = [
    ("compare_default", "hta/trace_compare/base", "hta/trace_compare/test", {}),
    ("compare_iterations", "hta/trace_compare/base", "hta/trace_compare/test",
     {"control_iteration": 1009, "test_iteration": 1010}),
    ("compare_gpu", "hta/trace_compare/base", "hta/trace_compare/test",
     {"control_iteration": 1010, "test_iteration": 1010, "device_type": tracemill.DeviceType.GPU}),
    ("resnet_runs", "kineto-tb-plugin/resnet50_num_workers_0", "kineto-tb-plugin/resnet50_run2", {}),
    ("resnet_runs_gpu_all", "kineto-tb-plugin/resnet50_num_workers_0", "kineto-tb-plugin/resnet50_run2",
     {"control_iteration": [5, 6, 7, 8, 9], "test_iteration": [16, 17, 18, 19, 20],
      "device_type": tracemill.DeviceType.GPU}),
    ("filter_ranks", "hta/trace_filter", "hta/trace_filter", {"control_rank": 0, "test_rank": 1}),
    ("compare_gpu_short", "hta/trace_compare/base", "hta/trace_compare/test",
     {"control_iteration": 1009, "test_iteration": 1009, "device_type": tracemill.DeviceType.GPU,
      "use_short_name": True}),
    ("resnet_runs_short", "kineto-tb-plugin/resnet50_num_workers_0", "kineto-tb-plugin/resnet50_run2",
     {"use_short_name": True}),
]


@pytest.mark.parametrize("case,control,test,kwargs", DIFF_CASES)
def test_compare_traces_equals_htas(case, control, test, kwargs):
    got = tracemill.TraceDiff.compare_traces(os.path.join(DATA, control), os.path.join(DATA, test), **kwargs)
    path = os.path.join(DATA, "tables", f"hta_diff_{case}.csv")
    text = pd.read_csv(path, dtype=str, keep_default_na=False)
    text = text.set_index(text.columns[0])  # name, or short_name
    numeric = [c for c in text.columns if c != "counts_change_categories"]
    dtypes = {c: ("float64" if text[c].str.contains(".", regex=False).any()
                  else "int32" if c.endswith("duration") else "int64") for c in numeric}
    want = text.astype(dtypes)
    assert len(got) == len(want) > 0
    pd.testing.assert_frame_equal(got, want)


def test_compare_traces_errors():
    base = os.path.join(DATA, "hta", "trace_compare", "base")
    with pytest.raises(tracemill.TracemillError) as e:
        tracemill.compare_traces(base, base, control_rank=3)
    assert e.value.returncode == 2 and "rank 3 is not in CONTROL (its ranks: 1)" in e.value.message
