// Validates cluster-examples/kubernetes offline and renders what each pod
// would run.
//
//   node validate_and_render.js tracemill-clocks-job.yaml tracemill-job.yaml tracemill-merge-job.yaml
//
// 1. Every document is a batch/v1 Job that passes kubernetes-models' schema
//    validation, and has no field unknown to the API (the schema allows
//    unknown fields; a typo such as `backoffLimitPerIndx` would be silently
//    dropped by the API server, so the key names are checked against the
//    models' type declarations).
// 2. The convert Job is an Indexed Job as cluster-examples/kubernetes/README.md
//    describes it: completions = parallelism = TRACEMILL_SHARD_COUNT,
//    backoffLimitPerIndex, restartPolicy Never, requests and limits, an
//    emptyDir scratch volume used as --tmp-dir, the data volume.
// 3. Prints one JSON line per pod: the job, its index, argv after Kubernetes'
//    $(VAR) expansion in command/args (the container env plus
//    JOB_COMPLETION_INDEX, as the Job controller injects it), the env, and the
//    volume mounts (mount path -> volume kind).
"use strict";
const fs = require("fs");
const path = require("path");
const YAML = require("yaml");
const { Job } = require("kubernetes-models/batch/v1/Job");

const models = path.dirname(require.resolve("kubernetes-models/package.json"));
const apimachinery = path.dirname(require.resolve("@kubernetes-models/apimachinery/package.json"));

function fail(msg) {
  console.error(`FAIL: ${msg}`);
  process.exit(1);
}

// Property names of a model, from its .d.ts (`    "name"?: type;`).
const propsCache = {};
function props(dts) {
  if (!propsCache[dts]) {
    const text = fs.readFileSync(dts, "utf8");
    propsCache[dts] = new Set([...text.matchAll(/^ {4}"([A-Za-z0-9_$-]+)"\??:/gm)].map((m) => m[1]));
  }
  return propsCache[dts];
}
const T = (p) => path.join(models, p);
const objectMeta = path.join(apimachinery, "apis/meta/v1/ObjectMeta.d.ts");
// Which model each nested key holds (arrays: the element's model).
const tree = {
  file: T("batch/v1/Job.d.ts"),
  kids: {
    metadata: { file: objectMeta },
    spec: {
      file: T("batch/v1/JobSpec.d.ts"),
      kids: {
        template: {
          file: T("v1/PodTemplateSpec.d.ts"),
          kids: {
            metadata: { file: objectMeta },
            spec: {
              file: T("v1/PodSpec.d.ts"),
              kids: {
                containers: {
                  file: T("v1/Container.d.ts"),
                  kids: {
                    env: { file: T("v1/EnvVar.d.ts") },
                    resources: { file: T("v1/ResourceRequirements.d.ts") },
                    volumeMounts: { file: T("v1/VolumeMount.d.ts") },
                  },
                },
                volumes: {
                  file: T("v1/Volume.d.ts"),
                  kids: {
                    emptyDir: { file: T("v1/EmptyDirVolumeSource.d.ts") },
                    persistentVolumeClaim: { file: T("v1/PersistentVolumeClaimVolumeSource.d.ts") },
                  },
                },
              },
            },
          },
        },
      },
    },
  },
};

function strict(value, node, where) {
  const items = Array.isArray(value) ? value : [value];
  for (const [k, item] of items.entries()) {
    const at = Array.isArray(value) ? `${where}[${k}]` : where;
    const known = props(node.file);
    for (const key of Object.keys(item)) {
      if (!known.has(key)) fail(`${at}.${key}: not a field of ${path.basename(node.file, ".d.ts")}`);
      if (node.kids && node.kids[key]) strict(item[key], node.kids[key], `${at}.${key}`);
    }
  }
}

// Kubernetes' expansion of $(VAR) in command/args: defined variables are
// replaced, $$ escapes, anything else is left as written.
function expand(s, env) {
  return s.replace(/\$\$|\$\(([A-Za-z_][A-Za-z0-9_.-]*)\)/g, (m, name) =>
    m === "$$" ? "$" : name in env ? env[name] : m);
}

function render(job, index) {
  const pod = job.spec.template.spec;
  const c = pod.containers[0];
  const env = {};
  for (const e of c.env || []) {
    if (!("value" in e)) fail(`${job.metadata.name}: env ${e.name} needs a literal value to be rendered`);
    env[e.name] = expand(String(e.value), env);  // earlier entries only, as Kubernetes does
  }
  if (index !== null) env.JOB_COMPLETION_INDEX = String(index);
  const argv = [...(c.command || []), ...(c.args || [])].map((a) => expand(String(a), env));
  const mounts = {};
  for (const m of c.volumeMounts || []) {
    const v = pod.volumes.find((x) => x.name === m.name);
    if (!v) fail(`${job.metadata.name}: volumeMount ${m.name} has no volume`);
    mounts[m.mountPath] = v.emptyDir ? "emptyDir" : v.persistentVolumeClaim ? "persistentVolumeClaim" : "other";
  }
  return { job: job.metadata.name, index, argv, env, mounts };
}

const lines = [];
for (const file of process.argv.slice(2)) {
  const docs = YAML.parseAllDocuments(fs.readFileSync(file, "utf8"));
  for (const doc of docs) {
    if (doc.errors.length) fail(`${file}: ${doc.errors[0].message}`);
    const obj = doc.toJS();
    if (!obj) continue;
    if (obj.apiVersion !== "batch/v1" || obj.kind !== "Job") fail(`${file}: expected a batch/v1 Job`);
    try {
      new Job(obj).validate();
    } catch (e) {
      fail(`${file}: schema: ${e.message}`);
    }
    strict(obj, tree, obj.metadata.name);
    const spec = obj.spec;
    const pod = spec.template.spec;
    if (pod.restartPolicy !== "Never") fail(`${obj.metadata.name}: restartPolicy must be Never`);
    for (const c of pod.containers) {
      for (const kind of ["requests", "limits"])
        for (const r of ["cpu", "memory"])
          if (!c.resources || !c.resources[kind] || !c.resources[kind][r])
            fail(`${obj.metadata.name}: container ${c.name} has no ${kind}.${r}`);
    }
    if (spec.completionMode === "Indexed") {
      const env = Object.fromEntries((pod.containers[0].env || []).map((e) => [e.name, e.value]));
      const shards = Number(env.TRACEMILL_SHARD_COUNT);
      if (!(spec.completions === shards && spec.parallelism === shards))
        fail(`${obj.metadata.name}: completions (${spec.completions}), parallelism (${spec.parallelism}) and ` +
             `TRACEMILL_SHARD_COUNT (${env.TRACEMILL_SHARD_COUNT}) must be equal`);
      if (!(spec.backoffLimitPerIndex >= 0)) fail(`${obj.metadata.name}: no backoffLimitPerIndex`);
      for (const c of pod.containers)
        for (const e of c.env || [])
          if (String(e.value).includes("$(JOB_COMPLETION_INDEX)"))
            fail(`${obj.metadata.name}: env ${e.name} uses $(JOB_COMPLETION_INDEX), which only expands in command/args`);
      const first = render(obj, 0);
      const tmp = first.argv[first.argv.indexOf("--tmp-dir") + 1];
      if (first.mounts[tmp] !== "emptyDir") fail(`${obj.metadata.name}: --tmp-dir ${tmp} is not an emptyDir mount`);
      if (!Object.values(first.mounts).includes("persistentVolumeClaim")) fail(`${obj.metadata.name}: no data volume`);
      for (let i = 0; i < spec.completions; i++) lines.push(render(obj, i));
    } else {
      lines.push(render(obj, null));
    }
  }
}
for (const l of lines) console.log(JSON.stringify(l));
