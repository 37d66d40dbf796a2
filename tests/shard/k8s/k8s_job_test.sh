#!/usr/bin/env bash
# cluster-examples/kubernetes: validated offline, then every pod run locally.
#
#   k8s_job_test.sh TRACEMILL_BIN SOURCE_DIR WORK_DIR
#
# Installs the validator's npm packages (kubernetes-models, yaml; versions
# pinned by the committed package-lock.json) into WORK_DIR, validates both
# Job manifests and renders each index's command line and environment
# (validate_and_render.js), checks that they name the image
# tools/build-image.sh builds, runs them with the volumes mapped to local
# directories (the data volume: a copy of the sample job plus two ranks; each
# pod's emptyDir: its own directory), runs the merge Job's command, and checks
# that the outputs equal a single run byte for byte.
set -euo pipefail
bin=$(realpath "$1")
src=$(realpath "$2")
work=$3
here=$src/tests/shard/k8s
examples=$src/cluster-examples/kubernetes
mkdir -p "$work"
work=$(realpath "$work")

# npm packages, once per lock file.
cp "$here/package.json" "$here/package-lock.json" "$here/validate_and_render.js" "$work/"
if ! cmp -s "$here/package-lock.json" "$work/node_modules/.installed-lock.json" 2>/dev/null; then
  (cd "$work" && npm ci --no-audit --no-fund --loglevel=error)
  cp "$here/package-lock.json" "$work/node_modules/.installed-lock.json"
fi

node "$work/validate_and_render.js" "$examples/tracemill-clocks-job.yaml" "$examples/tracemill-job.yaml" \
  "$examples/tracemill-merge-job.yaml" \
  >"$work/pods.jsonl"
echo "rendered $(wc -l <"$work/pods.jsonl") pods"

# The manifests name the image tools/build-image.sh builds: tracemill:<the
# binary's version> (tests/package/image_test.sh builds and runs it).
want="localhost/tracemill:$("$bin" --version | sed 's/^tracemill //')"
images=$(sed -n -E 's/^ *image: *//p' "$examples"/*.yaml | sort -u)
[ "$images" = "$want" ] || { echo "FAIL: the manifests name '$images'; tools/build-image.sh builds $want"; exit 1; }

rm -rf "$work/pv" "$work/ref" "$work"/scratch-*
mkdir -p "$work/pv/traces" "$work/pv/out"
cp "$src"/cluster-examples/sample-job/* "$work/pv/traces/"
python3 - "$work/pv/traces" <<'PY'
import json, sys
for rank in (2, 5):
    events = [{"ph": "X", "name": f"step{k}", "pid": 1, "tid": 1, "ts": 1682725898000000 + 997 * k + rank,
               "dur": 10 + k % 7, "args": {"k": k}} for k in range(200)]
    with open(f"{sys.argv[1]}/rank{rank}.json", "w") as f:
        json.dump(events, f)
PY

python3 - "$work" "$bin" <<'PY'
import json, os, subprocess, sys
work, binary = sys.argv[1], sys.argv[2]
pods = [json.loads(l) for l in open(f"{work}/pods.jsonl")]
base_env = {k: v for k, v in os.environ.items()
            if not k.startswith("SLURM_") and k not in ("JOB_COMPLETION_INDEX", "TRACEMILL_SHARD_COUNT")}

def run(pod):
    name = pod["job"] + ("" if pod["index"] is None else f"-{pod['index']}")
    volumes = {}
    for mount, kind in pod["mounts"].items():
        if kind == "persistentVolumeClaim":
            volumes[mount] = f"{work}/pv"
        else:  # an emptyDir: new for every pod
            volumes[mount] = f"{work}/scratch-{name}"
            os.makedirs(volumes[mount])
    def local(arg):
        for mount, d in volumes.items():
            if arg == mount or arg.startswith(mount + "/"):
                return d + arg[len(mount):]
        return arg
    argv = [binary if pod["argv"][0] == "tracemill" else pod["argv"][0]] + [local(a) for a in pod["argv"][1:]]
    env = dict(base_env, **pod["env"])
    p = subprocess.run(argv, env=env, capture_output=True, text=True)
    print(f"{name}: exit {p.returncode}: {' '.join(argv)}")
    sys.stdout.write("".join(f"  {l}\n" for l in p.stderr.splitlines()))
    if p.returncode != 0:
        sys.exit(f"FAIL: pod {name} exited {p.returncode}")

# The clocks pod, the convert pods (any order would do), then the merge pod.
for pod in pods:
    if pod["job"] == "tracemill-clocks":
        run(pod)
assert os.path.exists(f"{work}/pv/out/clocks.json"), "the clocks Job wrote no clocks.json"
for pod in pods:
    if pod["index"] is not None:
        run(pod)
for pod in pods:
    if pod["index"] is None and pod["job"] != "tracemill-clocks":
        run(pod)
PY

"$bin" convert "$work/pv/traces" -o "$work/ref" --shard 0/1 -q
python3 "$src/tests/shard/check_outputs.py" valid "$work/pv/out" "$work/ref"
python3 "$src/tests/shard/check_outputs.py" same "$work/ref" "$work/pv/out"
python3 - "$work/pv/out/manifest.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
assert [s["index"] for s in m["shards"]] == [0, 1, 2, 3], m["shards"]
assert m["exit_code"] == 0 and m["totals"]["outputs"] == 4, (m["exit_code"], m["totals"])
PY
echo "PASS: 4 indexed pods + merge == single run"
