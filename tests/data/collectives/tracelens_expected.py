#!/usr/bin/env python3
"""Expected values of the collectives tables from TraceLens' own collective
report (AMD-AGI/TraceLens, NcclAnalyser), on a job of one clock.

  tracelens_expected.py TRACELENS_SRC JOB_DIR RANKS OUT_DIR

TRACELENS_SRC: a checkout of AMD-AGI/TraceLens (its `TraceLens` package is
imported from there; Debian's python3-pandas, -openpyxl and -tabulate). Writes
OUT_DIR/tracelens_instances.csv (per collective TraceLens reports: its index
in its process group, name, comm_latency and skew in start time in us, and the
rank with the least wait, TraceLens' straggler of the row) and
OUT_DIR/tracelens_ranks.csv (build_df_straggler_summary: per rank the total
wait in us and the times it arrived last).
"""
import csv
import sys

src, job, ranks, out = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
sys.path.insert(0, src)
from TraceLens.NcclAnalyser.nccl_analyser import NcclAnalyser  # noqa: E402

a = NcclAnalyser([f"{job}/rank{r}.pt.trace.json" for r in range(ranks)], ranks)
df = a.build_df_nccl_implicit_sync_cat(detailed=True)
waits = [f"rank_{r}_wait_time" for r in range(ranks)]
last = df[waits].idxmin(axis=1)
with open(f"{out}/tracelens_instances.csv", "w", newline="") as f:
    w = csv.writer(f)
    w.writerow(["index", "collective_name", "comm_latency_us", "skew_in_start_time_us", "last_rank"])
    for k, row in df.iterrows():
        w.writerow([row["collective_id"].rsplit("_", 1)[1], row["Collective name"], row["comm_latency"],
                    row["skew in start time"], int(last[k].split("_")[1])])
st = a.build_df_straggler_summary().sort_values("rank")
with open(f"{out}/tracelens_ranks.csv", "w", newline="") as f:
    w = csv.writer(f)
    w.writerow(["rank", "total_wait_time_us", "times_arrived_last", "num_collectives"])
    for _, row in st.iterrows():
        w.writerow([int(row["rank"]), row["total_wait_time_us"], int(row["times_arrived_last"]),
                    int(row["num_collectives"])])
