#!/usr/bin/python3
"""Runs the README's pandas snippet ("Analysis tables") as a user would.

usage: readme_snippet_test.py TRACEMILL README SAMPLE_JOB WORKDIR

Converts the sample job with --tables into WORKDIR/sample-out (the README's
first command writes sample-out/), then runs the Python block that follows
`<!-- tables-snippet -->` in the README, in WORKDIR, and checks what it
printed: HTA's numbers for the sample job (tests/data/tables).
"""
import contextlib
import io
import os
import shutil
import subprocess
import sys

tracemill, readme, sample_job, work = sys.argv[1:5]
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
subprocess.run([tracemill, "convert", sample_job, "-o", os.path.join(work, "sample-out"), "--tables", "-q"],
               check=True)
text = open(readme, encoding="utf-8").read()
marker = "<!-- tables-snippet -->"
if marker not in text:
    sys.exit("README.md has no %s" % marker)
block = text.split(marker, 1)[1]
block = block.split("```python\n", 1)[1].split("```", 1)[0]
os.chdir(work)
printed = io.StringIO()
with contextlib.redirect_stdout(printed):
    exec(compile(block, "README.md snippet", "exec"), {})
out = printed.getvalue()
sys.stdout.write(out)
# HTA's temporal breakdown of the sample job (the trace_filter pair).
for want in ("53.56", "54.72", "600058", "ncclKernel_SendRecv"):
    if want not in out:
        sys.exit("the snippet did not print %r" % want)
print("README snippet: ok")
