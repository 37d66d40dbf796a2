// Loads the time parts and the overview of a generated 64-rank job in
// Chrome DevTools' trace engine (as check_sample_job.mjs does) and checks
// that every one loads, in Node's default heap, with the bounds the
// manifest gives it.
//
//   node check_parts.mjs TRACEMILL GEN_KINETO WORK_DIR
//
// The job: gen_kineto, 64 ranks x 6,000 events, converted with
// --max-output-bytes 2M: each per-GPU output (8 ranks) comes in parts. Each
// part's engine bounds must lie within its manifest time_span_ns (the
// engine leaves flow and instant events out of its bounds; the manifest
// counts every event), to 1 us: the engine reads ts as a
// double (0.25 us apart at epoch times); the overview's bounds must lie
// within the job's time_span_us.
import {execFileSync} from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import * as Trace from '@paulirish/trace_engine';
import {polyfillDOMRect} from '@paulirish/trace_engine/analyze-trace.mjs';

polyfillDOMRect();
const [tracemill, genKineto, workDir] = process.argv.slice(2);
let failures = 0;
const fail = (msg) => { console.error(`viewer parts check: FAIL: ${msg}`); failures++; };

const job = path.join(workDir, 'job64');
const out = path.join(workDir, 'parts');
fs.rmSync(job, {recursive: true, force: true});
fs.rmSync(out, {recursive: true, force: true});
execFileSync(genKineto, ['--ranks', '64', '--events', '6000', '--out', job, '--jobs', '2'], {stdio: 'ignore'});
execFileSync(tracemill, ['convert', job, '-o', out, '--quiet', '--max-output-bytes', '2M'], {stdio: 'inherit'});
const manifest = JSON.parse(fs.readFileSync(path.join(out, 'manifest.json'), 'utf8'));

async function bounds(file) {
  const json = JSON.parse(fs.readFileSync(file, 'utf8'));
  const model = Trace.TraceModel.Model.createWithAllHandlers();
  await model.parse(json.traceEvents);
  return model.parsedTrace().data.Meta.traceBounds;
}

let parts = 0;
for (const o of manifest.outputs) {
  if (!o.parts || o.parts.length < 2) fail(`${o.path}: not written in parts`);
  for (const p of o.parts || []) {
    const b = await bounds(path.join(out, p.path));
    // ns -> us as the engine reads ts (whole microseconds here).
    const [lo, hi] = p.time_span_ns.map((ns) => ns / 1000);
    if (b.min < lo - 1 || b.max > hi + 1 || b.max < b.min)
      fail(`${p.path}: engine bounds [${b.min}, ${b.max}] not those of manifest [${lo}, ${hi}]`);
    parts++;
  }
}
const [jlo, jhi] = manifest.time_span_us;
const ob = await bounds(path.join(out, 'overview.trace.json'));
if (ob.min < jlo || ob.max > jhi) fail(`overview: bounds [${ob.min}, ${ob.max}] outside the job [${jlo}, ${jhi}]`);
console.log(`viewer parts check: ${parts} parts and the overview loaded; overview bounds [${ob.min}, ${ob.max}] us`);
if (failures) process.exit(1);
