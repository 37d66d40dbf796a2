// Loads tracemill's outputs of the sample job in Chrome DevTools' trace
// engine (@paulirish/trace_engine, the Performance panel's parser, in Node)
// and checks its trace bounds against the manifest's time_span_us.
//
//   node check_sample_job.mjs TRACEMILL SAMPLE_DIR WORK_DIR
//
// Runs `tracemill convert` three ways: --group-by all (one output: its bounds
// must equal time_span_us exactly), the default per-GPU grouping (every output
// loads, bounds inside the span, their union equals it) and --compress (the
// multi-member .json.gz outputs, inflated by Node's zlib as a browser would).
// Exits non-zero with a message on any mismatch; prints one line per output.
import {execFileSync} from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import * as Trace from '@paulirish/trace_engine';
import {polyfillDOMRect} from '@paulirish/trace_engine/analyze-trace.mjs';

polyfillDOMRect();  // the engine expects a browser's DOMRect
const [tracemill, sampleDir, workDir] = process.argv.slice(2);
let failures = 0;
const fail = (msg) => { console.error(`viewer check: FAIL: ${msg}`); failures++; };

function convert(name, extra) {
  const out = path.join(workDir, name);
  fs.rmSync(out, {recursive: true, force: true});
  execFileSync(tracemill, ['convert', sampleDir, '-o', out, '--quiet', ...extra], {stdio: 'inherit'});
  return out;
}

async function bounds(file) {
  let bytes = fs.readFileSync(file);
  if (file.endsWith('.gz')) bytes = zlib.gunzipSync(bytes);
  const json = JSON.parse(bytes.toString('utf8'));
  const model = Trace.TraceModel.Model.createWithAllHandlers();
  await model.parse(json.traceEvents);
  const data = model.parsedTrace().data;
  const b = data.Meta.traceBounds;
  console.log(`viewer check: ${path.basename(path.dirname(file))}/${path.basename(file)}: ` +
              `${json.traceEvents.length} events, ${data.Renderer.processes.size} processes, ` +
              `bounds [${b.min}, ${b.max}] us`);
  return b;
}

async function check(name, extra) {
  const out = convert(name, extra);
  const manifest = JSON.parse(fs.readFileSync(path.join(out, 'manifest.json'), 'utf8'));
  const [lo, hi] = manifest.time_span_us;
  let min = Infinity, max = -Infinity;
  for (const o of manifest.outputs) {
    const b = await bounds(path.join(out, o.path));
    if (b.min < lo || b.max > hi) fail(`${name}/${o.path}: bounds [${b.min}, ${b.max}] outside time_span_us [${lo}, ${hi}]`);
    min = Math.min(min, b.min);
    max = Math.max(max, b.max);
  }
  if (min !== lo || max !== hi) fail(`${name}: trace bounds [${min}, ${max}] != manifest time_span_us [${lo}, ${hi}]`);
}

await check('all', ['--group-by', 'all']);
await check('per_gpu', []);
await check('compressed', ['--compress']);
if (failures) process.exit(1);
console.log('viewer check: trace bounds equal the manifest time span in every run');
