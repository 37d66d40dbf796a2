// Loads a tracemill output that holds flow v2 events (bind_id with
// flow_in / flow_out, issue 25) in Chrome DevTools' trace engine
// (@paulirish/trace_engine, in Node) and checks, on the engine's own model
// of the trace, that the flow pairs are intact: every event bound to a
// flow is in the model with its bind_id and direction, each bind_id of a
// rank holds at least one producer (flow_out) and one consumer (flow_in),
// the events sharing a bind_id are the ones that shared it in the input,
// and no bind_id is shared by two ranks.
//
//   node check_flows_v2.mjs TRACEMILL FLOW_V2_DIR WORK_DIR
//
// FLOW_V2_DIR is tests/data/kineto-2026/flow_v2 (two ranks with the same
// bind_ids). Exits non-zero with a message on any mismatch.
import {execFileSync} from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import * as Trace from '@paulirish/trace_engine';
import {polyfillDOMRect} from '@paulirish/trace_engine/analyze-trace.mjs';

polyfillDOMRect();
const [tracemill, inputDir, workDir] = process.argv.slice(2);
let failures = 0;
const fail = (msg) => { console.error(`viewer flow v2 check: FAIL: ${msg}`); failures++; };

// The input's grouping: per rank file, bind_id -> sorted "name:direction".
const direction = (e) => (e.flow_in ? 'in' : '') + (e.flow_in && e.flow_out ? '+' : '') + (e.flow_out ? 'out' : '');
function groups(events) {
  const byId = new Map();
  for (const e of events) {
    if (e.bind_id === undefined) continue;
    const key = String(e.bind_id);
    if (!byId.has(key)) byId.set(key, []);
    byId.get(key).push(`${e.name}:${direction(e)}`);
  }
  return [...byId.values()].map(v => v.sort().join(' ')).sort();
}
const inputs = fs.readdirSync(inputDir).filter(n => n.endsWith('.json')).sort();
const want = inputs.map(n => groups(JSON.parse(fs.readFileSync(path.join(inputDir, n), 'utf8')).traceEvents));

const out = path.join(workDir, 'flow_v2');
fs.rmSync(out, {recursive: true, force: true});
execFileSync(tracemill, ['convert', inputDir, '-o', out, '--group-by', 'all', '--quiet', '--no-report'],
             {stdio: 'inherit'});
const json = JSON.parse(fs.readFileSync(path.join(out, 'all.trace.json'), 'utf8'));
const boundInFile = json.traceEvents.filter(e => e.bind_id !== undefined).length;
const model = Trace.TraceModel.Model.createWithAllHandlers();
await model.parse(json.traceEvents);
const data = model.parsedTrace().data;

// The engine's entries, per rank (otherData.inputs[].pids).
const ranks = json.otherData.inputs;
const rankOf = (pid) => ranks.findIndex(r => pid >= r.pids[0] && pid <= r.pids[1]);
const perRank = ranks.map(() => []);
let bound = 0;
for (const [pid, proc] of data.Renderer.processes) {
  for (const [, thread] of proc.threads) {
    for (const e of thread.entries ?? []) {
      if (e.bind_id === undefined) continue;
      ++bound;
      const k = rankOf(pid);
      if (k < 0) fail(`pid ${pid} is in no input's pid range`);
      else perRank[k].push(e);
    }
  }
}
if (bound !== boundInFile) fail(`the engine holds ${bound} events with a bind_id, the output ${boundInFile}`);
if (ranks.length !== want.length) fail(`${ranks.length} inputs in the output, ${want.length} given`);
const idsOf = [];
ranks.forEach((r, k) => {
  const got = groups(perRank[k]);
  if (JSON.stringify(got) !== JSON.stringify(want[k]))
    fail(`${r.label}: flow groups ${JSON.stringify(got)} != input's ${JSON.stringify(want[k])}`);
  const ids = new Set(perRank[k].map(e => String(e.bind_id)));
  for (const id of ids) {
    const members = perRank[k].filter(e => String(e.bind_id) === id);
    if (!members.some(e => e.flow_out) || !members.some(e => e.flow_in))
      fail(`${r.label}: bind_id ${id} lacks a producer or a consumer`);
  }
  idsOf.push(ids);
  console.log(`viewer flow v2 check: ${r.label}: ${ids.size} flows, ${perRank[k].length} bound events: ${got.join(' | ')}`);
});
for (const id of idsOf[0] ?? []) if (idsOf.slice(1).some(s => s.has(id))) fail(`bind_id ${id} is on two ranks`);
if (failures) process.exit(1);
console.log('viewer flow v2 check: every flow pair intact in the engine, no bind_id shared across ranks');
