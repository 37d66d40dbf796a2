#!/usr/bin/python3
"""HTA's TraceDiff.compare_traces on two trace folders, timed (issue 36).

    HTA=<HolisticTraceAnalysis checkout> /usr/bin/python3 bench/python/hta_diff.py CONTROL_DIR TEST_DIR

Prints the wall time of the call (both folders loaded and compared) and the peak RSS of
this process and of its largest child (HTA's parse workers). Compare with
`/usr/bin/time -f "%e s %M KB" tracemill diff CONTROL_DIR TEST_DIR -o OUT`. Figures: bench/RESULTS.md.
"""
import logging
import os
import resource
import sys
import time
import warnings

warnings.filterwarnings("ignore")
logging.disable(logging.CRITICAL)
sys.path.insert(0, os.environ["HTA"])
from hta.trace_diff import TraceDiff  # noqa: E402

t0 = time.monotonic()
df = TraceDiff.compare_traces(sys.argv[1], sys.argv[2])
wall = time.monotonic() - t0
me = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
kids = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
print(f"hta wall {wall:.2f} s  python peak RSS {me / 1024:.0f} MiB  child peak RSS {kids / 1024:.0f} MiB  "
      f"rows {len(df)}")
