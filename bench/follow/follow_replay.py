#!/usr/bin/env python3
"""Replay a synthetic SageMaker Debugger job into a folder that
`tracemill convert --follow` watches, at accelerated time, and measure it.

The job (tools/gen_smdebug: NODES nodes x MINUTES minutes, one framework file
and one system-metrics file per node and minute) is generated first into a
staging folder, then put in place at SPEED x real time, as smdebug writes it:
a framework file appears as `*.tmp` and is renamed when its minute ends; a
system-metrics file is created with its first sample when its minute starts
and the rest appended when it ends; the end markers come last.

Measured, from outside the process:
- lag: for each window (60 s of trace time), the wall time from the moment
  the replay passed the window's end to the moment its folder appeared in
  OUTDIR/windows (the follow job writes it whole, then renames it);
- RSS of the tracemill process, sampled every 50-100 ms (/proc/PID/status
  VmRSS), its peak over the first and over the last tenth of the windows
  (`peak_rss_kib_*`: a sample can miss a peak shorter than its interval);
- the exact peaks over the same spans (`peak_hwm_kib_*`): at each sample
  VmHWM is read and reset (writing 5 to /proc/PID/clear_refs), so each
  reading is the peak since the one before; `vmhwm_kib_end` is the peak of
  the whole run (null, and VmHWM at the end instead, if the reset is not
  allowed).

  follow_replay.py --gen-smdebug build/gen_smdebug --tracemill build/tracemill \
      [--nodes 16] [--minutes 60] [--speed 60] [--events 2000] [--work DIR] \
      [--keep] [-- extra tracemill convert options]
"""
import argparse
import calendar
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time


def parse_args():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--gen-smdebug", required=True)
    p.add_argument("--tracemill", required=True)
    p.add_argument("--nodes", type=int, default=16)
    p.add_argument("--minutes", type=int, default=60)
    p.add_argument("--speed", type=float, default=60.0, help="trace seconds per wall second")
    p.add_argument("--events", type=int, default=2000, help="framework records per node and minute")
    p.add_argument("--memory-limit", default="512M")
    p.add_argument("--work", help="work folder (default: a new one under $TMPDIR, removed at the end)")
    p.add_argument("--keep", action="store_true", help="keep the work folder")
    p.add_argument("extra", nargs="*", help="more tracemill convert options (after --)")
    return p.parse_args()


START_S = 1594660800  # gen_smdebug's default job start (2020-07-13T17:20:00Z)


def stage(args, staging):
    hours = (args.minutes + 59) // 60
    subprocess.run([args.gen_smdebug, "-o", staging, "--nodes", str(args.nodes), "--hours", str(hours),
                    "--events", str(args.events), "--seed", "1", "--start", str(START_S)], check=True)
    # (trace time in s when it is placed, action, source, destination)
    plan = []
    for dirpath, _, names in os.walk(staging):
        for name in names:
            src = os.path.join(dirpath, name)
            dst = os.path.join("JOB", os.path.relpath(src, staging))
            m = re.match(r"(\d+)_.*_pythontimeline\.json$", name)
            if m:
                end_s = int(m.group(1)) / 1e6
                if end_s - 60 >= START_S + args.minutes * 60:
                    continue
                plan.append((end_s - 60, "create_tmp", src, dst))
                plan.append((end_s, "rename", src, dst))
                continue
            m = re.match(r"(\d+)\.algo-\d+\.json$", name)
            if m:
                start_s = int(m.group(1))
                if start_s >= START_S + args.minutes * 60:
                    continue
                plan.append((start_s, "first_line", src, dst))
                plan.append((start_s + 60, "rest", src, dst))
    plan.sort(key=lambda x: (x[0], x[1] != "rename"))
    return plan


class Sampler(threading.Thread):
    """VmRSS of a process every 100 ms, and window folders as they appear."""

    def __init__(self, pid, windows_dir):
        super().__init__(daemon=True)
        self.pid, self.windows_dir = pid, windows_dir
        self.rss = []       # (wall, KiB)
        self.hwm = []       # (wall, KiB): the peak since the sample before
        self.appeared = {}  # window name -> wall
        self.hwm_kib = 0
        self.can_reset = True
        self.stop = False

    def reset_hwm(self):
        if not self.can_reset:
            return
        try:
            with open(f"/proc/{self.pid}/clear_refs", "w") as f:
                f.write("5")
        except OSError:
            self.can_reset = False

    def run(self):
        while not self.stop:
            now = time.monotonic()
            try:
                with open(f"/proc/{self.pid}/status") as f:
                    for line in f:
                        if line.startswith("VmRSS:"):
                            self.rss.append((now, int(line.split()[1])))
                        elif line.startswith("VmHWM:"):
                            self.hwm_kib = int(line.split()[1])
                            self.hwm.append((now, self.hwm_kib))
                self.reset_hwm()
            except OSError:
                pass
            try:
                for n in os.listdir(self.windows_dir):
                    if not n.startswith(".") and n not in self.appeared:
                        self.appeared[n] = now
            except OSError:
                pass
            time.sleep(0.05)


def window_end_s(name):
    m = re.match(r"\d{8}T\d{6}Z-(\d{8})T(\d{2})(\d{2})(\d{2})Z$", name)
    if not m:
        return None
    return calendar.timegm(time.strptime(m.group(1) + m.group(2) + m.group(3) + m.group(4), "%Y%m%d%H%M%S"))


def main():
    args = parse_args()
    work = args.work or tempfile.mkdtemp(prefix="tracemill-follow-replay.", dir=os.environ.get("TMPDIR", "/tmp"))
    staging, job, out = (os.path.join(work, d) for d in ("staging", "job", "out"))
    for d in (staging, job, out):
        shutil.rmtree(d, ignore_errors=True)
    os.makedirs(job)
    plan = stage(args, staging)
    cmd = [args.tracemill, "convert", "--follow", job, "-o", out, "--window", "60s", "--grace", "30s",
           "--idle-timeout", "60s", "--memory-limit", args.memory_limit, "--group-by", "node",
           "--gpus-per-node", "1"] + args.extra
    err = open(os.path.join(work, "tracemill.err"), "w")
    proc = subprocess.Popen(cmd, stderr=err)
    sampler = Sampler(proc.pid, os.path.join(out, "windows"))
    sampler.start()
    t0 = time.monotonic()

    def wall_of(trace_s):
        return t0 + (trace_s - START_S) / args.speed

    for trace_s, action, src, dst in plan:
        dst = dst.replace("JOB", job, 1)
        delay = wall_of(trace_s) - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        if action == "create_tmp":
            with open(dst + ".tmp", "wb") as f:
                f.write(b"[\n")
        elif action == "rename":
            shutil.copyfile(src, dst + ".tmp")
            os.rename(dst + ".tmp", dst)
        elif action == "first_line":
            with open(src, "rb") as f:
                first = f.readline()
            with open(dst, "wb") as f:
                f.write(first)
        else:
            with open(src, "rb") as f:
                f.readline()
                rest = f.read()
            with open(dst, "ab") as f:
                f.write(rest)
    for d in ("framework", "system"):
        open(os.path.join(job, d, "training_job_end.ts"), "w").close()
    code = proc.wait()
    time.sleep(0.2)
    sampler.stop = True
    sampler.join()

    lags = []
    for name, seen in sorted(sampler.appeared.items()):
        end = window_end_s(name)
        if end is not None:
            lags.append((name, seen - wall_of(end), seen))
    lags.sort()
    tenth = max(1, len(lags) // 10)

    def peak_rss(first, last, samples=sampler.rss):
        vals = [kib for (t, kib) in samples if first <= t <= last]
        return max(vals) if vals else 0

    def peak_hwm(first, last):
        # A reading covers the time since the one before: take the first after `last` too.
        after = [kib for (t, kib) in sampler.hwm if t > last][:1]
        return max([peak_rss(first, last, sampler.hwm)] + after) if sampler.can_reset else None

    report = {
        "command": " ".join(cmd), "exit_code": code, "nodes": args.nodes, "minutes": args.minutes,
        "speed": args.speed, "windows": len(lags),
        "lag_s_first": [round(x[1], 3) for x in lags[:tenth]],
        "lag_s_last": [round(x[1], 3) for x in lags[-tenth:]],
        "lag_s_median": round(statistics.median(x[1] for x in lags), 3) if lags else None,
        "lag_s_max": round(max(x[1] for x in lags), 3) if lags else None,
        "peak_rss_kib_first_tenth": peak_rss(t0, lags[tenth - 1][2]) if lags else 0,
        "peak_rss_kib_last_tenth": peak_rss(lags[-tenth][2] - 1, lags[-1][2]) if lags else 0,
        "peak_hwm_kib_first_tenth": peak_hwm(t0, lags[tenth - 1][2]) if lags else None,
        "peak_hwm_kib_last_tenth": peak_hwm(lags[-tenth][2] - 1, lags[-1][2]) if lags else None,
        "vmhwm_kib_end": max(k for (_, k) in sampler.hwm) if sampler.can_reset and sampler.hwm else sampler.hwm_kib,
    }
    print(json.dumps(report, indent=1))
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    else:
        print(f"work folder kept: {work}", file=sys.stderr)
    return 0 if code == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
