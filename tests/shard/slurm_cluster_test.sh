#!/usr/bin/env bash
# A one-node Slurm cluster on localhost runs cluster-examples/slurm unchanged.
#
#   slurm_cluster_test.sh TRACEMILL_BIN SOURCE_DIR WORK_DIR
#
# Starts munged (own key, socket directory mode 0711), slurmctld and slurmd
# (a minimal slurm.conf in WORK_DIR, SLURM_CONF exported, free ports), submits
# the array job with 4 shards on the sample job (ids 1-4: array ids need not
# start at 0) and the dependent merge job exactly as cluster-examples/slurm/
# README.md does, with sizes and paths as sbatch arguments, polls squeue, and
# checks the merged manifest and that the outputs equal a single run byte for
# byte; then 8 array tasks on the same job's 2 outputs with --time-ranges 4
# (more shards than outputs), the union again equal to a single run. Every
# daemon it started is stopped on exit, pass or fail.
set -euo pipefail
bin=$(realpath "$1")
src=$(realpath "$2")
work=$3
t0=$(date +%s.%N)

if [ "$(id -u)" -ne 0 ]; then
  echo "SKIP: the Slurm cluster test runs the daemons as root"; exit 77
fi
for tool in munged slurmctld slurmd sbatch squeue scontrol sinfo; do
  command -v "$tool" >/dev/null || { echo "FAIL: $tool missing: run tools/setup-debian.sh (slurm-wlm munge)"; exit 1; }
done

rm -rf "$work"
mkdir -p "$work"/{munge,state,spool/localhost,log,out,ref,submit}
work=$(realpath "$work")
pids=()
cleanup() {
  set +e
  if [ -n "${SLURM_CONF:-}" ] && [ -S "$work/munge/munge.socket" ]; then
    scancel --quiet -u root >/dev/null 2>&1   # our cluster's jobs only (SLURM_CONF points at it)
    for _ in $(seq 50); do [ -z "$(squeue -h 2>/dev/null)" ] && break; sleep 0.1; done
  fi
  for ((k = ${#pids[@]} - 1; k >= 0; k--)); do kill "${pids[k]}" 2>/dev/null; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null; done
}
trap cleanup EXIT
fail() {
  echo "FAIL: $*"
  for f in "$work"/log/*.log "$work"/submit/*.log; do [ -f "$f" ] && { echo "--- $f"; tail -20 "$f"; }; done
  exit 1
}

# munge: its own key and socket; the socket's directory must be 0711.
chmod 0711 "$work/munge"
dd if=/dev/urandom of="$work/munge/munge.key" bs=1024 count=1 status=none
chmod 0400 "$work/munge/munge.key"
munged -F --force --key-file="$work/munge/munge.key" --socket="$work/munge/munge.socket" \
  --pid-file="$work/munge/munged.pid" --log-file="$work/log/munged.log" \
  --seed-file="$work/munge/munged.seed" &
pids+=($!)

# Two free TCP ports on the loopback for slurmctld and slurmd.
read -r ctld_port slurmd_port < <(python3 -c '
import socket
s = [socket.socket() for _ in range(2)]
for x in s: x.bind(("127.0.0.1", 0))
print(*[x.getsockname()[1] for x in s])')

cpus=$(nproc)
cat > "$work/slurm.conf" <<CONF
ClusterName=tracemilltest
SlurmctldHost=localhost
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$work/munge/munge.socket
StateSaveLocation=$work/state
SlurmdSpoolDir=$work/spool/%n
SlurmctldPidFile=$work/slurmctld.pid
SlurmdPidFile=$work/slurmd.pid
SlurmctldLogFile=$work/log/slurmctld.log
SlurmdLogFile=$work/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
SchedulerType=sched/builtin
SchedulerParameters=batch_sched_delay=0,sched_min_interval=0
MailProg=/bin/true
MpiDefault=none
ReturnToService=2
SlurmdParameters=config_overrides
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MinJobAge=600
NodeName=localhost CPUs=$cpus RealMemory=2048 TmpDisk=1024 State=UNKNOWN
PartitionName=debug Nodes=localhost Default=YES MaxTime=INFINITE State=UP
CONF
export SLURM_CONF=$work/slurm.conf
for _ in $(seq 50); do [ -S "$work/munge/munge.socket" ] && break; sleep 0.1; done

slurmctld -D -i -f "$SLURM_CONF" >"$work/log/slurmctld.out" 2>&1 &
pids+=($!)
slurmd -D -f "$SLURM_CONF" -N localhost >"$work/log/slurmd.out" 2>&1 &
pids+=($!)
up=""
for _ in $(seq 300); do
  state=$(sinfo -h -n localhost -o %T 2>/dev/null || true)
  if [ "$state" = "idle" ]; then up=1; break; fi
  sleep 0.05
done
[ -n "$up" ] || fail "the node never became idle (state: ${state:-none})"
t_up=$(date +%s.%N)
echo "cluster up in $(python3 -c "print(f'{$t_up - $t0:.2f}')") s"

# The README's two commands, with this machine's sizes and paths as
# arguments; the scripts themselves are used as they are.
cd "$work/submit"
export TRACEMILL=$bin
clocks_id=$(sbatch --parsable --cpus-per-task=1 --mem=256M --tmp=0 --time=5 \
  "$src/cluster-examples/slurm/tracemill-clocks.sbatch" "$src/cluster-examples/sample-job" "$work/out")
clocks_id=${clocks_id%%;*}
array_id=$(sbatch --parsable --dependency=afterok:"$clocks_id" --array=1-4 --cpus-per-task=1 --mem=256M \
  --tmp=0 --time=5 "$src/cluster-examples/slurm/tracemill-array.sbatch" "$src/cluster-examples/sample-job" \
  "$work/out")
array_id=${array_id%%;*}
merge_id=$(sbatch --parsable --dependency=afterany:"$array_id" --mem=64M --time=5 \
  "$src/cluster-examples/slurm/tracemill-merge.sbatch" "$work/out")
merge_id=${merge_id%%;*}
echo "submitted clocks job $clocks_id, array job $array_id and merge job $merge_id"

# Poll squeue (sbatch --wait polls slowly).
done_=""
for _ in $(seq 1200); do
  if [ -z "$(squeue -h -j "$clocks_id,$array_id,$merge_id" 2>/dev/null)" ]; then done_=1; break; fi
  sleep 0.1
done
[ -n "$done_" ] || fail "jobs still queued after 120 s: $(squeue 2>&1)"
t_done=$(date +%s.%N)

# Every array task and the merge job completed with exit code 0.
{ scontrol -o show job "$array_id"; scontrol -o show job "$merge_id"; } 2>/dev/null |
  grep -o 'JobId=[0-9]* \|ArrayTaskId=[0-9]*\|JobState=[A-Z_]*\|ExitCode=[0-9:]*' | paste -sd' ' || true
array_jobs=$(scontrol -o show job "$array_id" 2>&1 || true)
merge_job=$(scontrol -o show job "$merge_id" 2>&1 || true)
clocks_job=$(scontrol -o show job "$clocks_id" 2>&1 || true)
grep -q 'JobState=COMPLETED.*ExitCode=0:0' <<<"$clocks_job" || fail "the clocks job did not complete: $clocks_job"
# The sample job is one node: one clock domain, no offsets (shards taking
# offsets from clocks.json on several nodes: tests/pipeline/clock_alignment_test.cc).
grep -q '"domains":\[\]' "$work/out/clocks.json" || fail "clocks.json: $(cat "$work/out/clocks.json" 2>&1)"
n_ok=$(grep -c 'JobState=COMPLETED.*ExitCode=0:0' <<<"$array_jobs" || true)
[ "$n_ok" -eq 4 ] || fail "expected 4 completed array tasks, got $n_ok: $array_jobs"
grep -q 'JobState=COMPLETED.*ExitCode=0:0' <<<"$merge_job" || fail "the merge job did not complete: $merge_job"

# Each task detected its shard from SLURM_ARRAY_TASK_ID - SLURM_ARRAY_TASK_MIN.
for i in 1 2 3 4; do
  grep -q "shard $((i - 1))/4 (detected from SLURM_ARRAY_TASK_ID=$i SLURM_ARRAY_TASK_MIN=1" \
    "$work/submit/tracemill-${array_id}_$i.log" || fail "task $i did not detect shard $((i - 1))/4"
done
for i in 0 1 2 3; do [ -f "$work/out/manifest.shard-$i-of-4.json" ] || fail "no manifest of shard $i"; done
[ -f "$work/out/manifest.json" ] || fail "the merge job wrote no manifest.json"
[ -f "$work/out/report.html" ] || fail "the merge job wrote no report.html"

# The union equals a single run, byte for byte; every JSON file parses.
"$bin" convert "$src/cluster-examples/sample-job" -o "$work/ref" --shard 0/1 -q
python3 "$src/tests/shard/check_outputs.py" valid "$work/out" "$work/ref" || fail "invalid JSON"
python3 "$src/tests/shard/check_outputs.py" same "$work/ref" "$work/out" || fail "outputs differ from a single run"
python3 - "$work/out/manifest.json" <<'PY' || fail "merged manifest"
import json, sys
m = json.load(open(sys.argv[1]))
assert m["exit_code"] == 0, m["exit_code"]
assert [s["index"] for s in m["shards"]] == [0, 1, 2, 3], m["shards"]
assert all("SLURM_ARRAY_TASK_ID" in s["source"] for s in m["shards"]), m["shards"]
assert m["totals"]["balanced"] and m["totals"]["outputs"] == 2, m["totals"]
PY

# More shards than outputs: 8 array tasks on the sample job's 2 outputs,
# each output in 4 time ranges (--time-ranges 4 after OUTDIR); the union
# equals a single run with the same option, byte for byte.
array_id=$(sbatch --parsable --array=0-7 --cpus-per-task=1 --mem=256M --tmp=0 --time=5 \
  "$src/cluster-examples/slurm/tracemill-array.sbatch" "$src/cluster-examples/sample-job" "$work/out8" \
  --time-ranges 4)
array_id=${array_id%%;*}
merge_id=$(sbatch --parsable --dependency=afterany:"$array_id" --mem=64M --time=5 \
  "$src/cluster-examples/slurm/tracemill-merge.sbatch" "$work/out8")
merge_id=${merge_id%%;*}
done_=""
for _ in $(seq 1200); do
  if [ -z "$(squeue -h -j "$array_id,$merge_id" 2>/dev/null)" ]; then done_=1; break; fi
  sleep 0.1
done
[ -n "$done_" ] || fail "time-range jobs still queued after 120 s: $(squeue 2>&1)"
array_jobs=$(scontrol -o show job "$array_id" 2>&1 || true)
n_ok=$(grep -c 'JobState=COMPLETED.*ExitCode=0:0' <<<"$array_jobs" || true)
[ "$n_ok" -eq 8 ] || fail "expected 8 completed time-range tasks, got $n_ok: $array_jobs"
grep -q 'JobState=COMPLETED.*ExitCode=0:0' <<<"$(scontrol -o show job "$merge_id" 2>&1)" ||
  fail "the time-range merge job did not complete"
"$bin" convert "$src/cluster-examples/sample-job" -o "$work/ref8" --shard 0/1 -q --time-ranges 4
python3 "$src/tests/shard/check_outputs.py" same "$work/ref8" "$work/out8" ||
  fail "time-range outputs differ from a single run"
python3 - "$work/out8/manifest.json" <<'PY' || fail "time-range merged manifest"
import json, sys
m = json.load(open(sys.argv[1]))
assert m["exit_code"] == 0, m["exit_code"]
assert [s["index"] for s in m["shards"]] == list(range(8)), m["shards"]
assert m["totals"]["outputs"] == 8, m["totals"]
per_shard = {}
for i in range(8):
    s = json.load(open(sys.argv[1].replace("manifest.json", f"manifest.shard-{i}-of-8.json")))
    per_shard[i] = [o["path"] for o in s["outputs"]]
assert all(len(v) == 1 for v in per_shard.values()), per_shard  # every task wrote one range
PY
t1=$(date +%s.%N)
python3 -c "print(f'PASS: slurm cluster up in {$t_up - $t0:.2f} s, jobs done in {$t_done - $t_up:.2f} s, total {$t1 - $t0:.2f} s')"
