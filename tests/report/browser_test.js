#!/usr/bin/env node
// Browser test of the run report: headless Chromium opens report.html, and
// the test fails on any console error, uncaught exception, CSP violation or
// network request (the page's own file:// load excepted). It also clicks a
// table header (the sorting script must run cleanly) and keeps a full-page
// screenshot as a test artifact.
//
//   node browser_test.js REPORT_HTML SCREENSHOT_PNG
//
// Chromium is driven over the DevTools protocol on a pipe
// (--remote-debugging-pipe: NUL-terminated JSON on fds 3 and 4), so nothing
// beyond Node's standard library is needed (no WebSocket client, no npm
// package). Exit status: 0 pass, 1 fail, 77 skipped (no chromium installed).
'use strict';
const { spawn, spawnSync } = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');
const url = require('url');

const [reportPath, screenshotPath] = process.argv.slice(2);
if (!reportPath || !screenshotPath) {
  console.error('usage: browser_test.js REPORT_HTML SCREENSHOT_PNG');
  process.exit(2);
}

function findChromium() {
  const candidates = [process.env.CHROMIUM, 'chromium', 'chromium-browser', 'google-chrome'].filter(Boolean);
  for (const c of candidates) {
    const r = spawnSync('sh', ['-c', `command -v "${c}"`], { encoding: 'utf8' });
    if (r.status === 0 && r.stdout.trim()) return r.stdout.trim();
  }
  return null;
}

const chromium = findChromium();
if (!chromium) {
  console.log('SKIP: no chromium on PATH (tools/setup-debian.sh installs it)');
  process.exit(77);
}
if (!fs.existsSync(reportPath)) {
  console.error(`FAIL: ${reportPath} does not exist`);
  process.exit(1);
}

const reportUrl = url.pathToFileURL(path.resolve(reportPath)).href;
const userDataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tracemill-chromium-'));
const args = [
  '--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
  '--disable-component-update', '--no-first-run', `--user-data-dir=${userDataDir}`,
  '--disable-extensions', '--disable-sync', '--no-default-browser-check', '--hide-scrollbars',
  '--remote-debugging-pipe', 'about:blank',
];
const proc = spawn(chromium, args, { stdio: ['ignore', 'ignore', 'pipe', 'pipe', 'pipe'] });
let stderr = '';
proc.stderr.on('data', (d) => { stderr += d.toString(); });
const toChrome = proc.stdio[3];
const fromChrome = proc.stdio[4];

const problems = [];   // console errors, exceptions, requests
const requests = [];
let nextId = 1;
const pending = new Map();
const waiters = [];    // {method, resolve}
let inbox = '';

fromChrome.on('data', (chunk) => {
  inbox += chunk.toString('utf8');
  let nul;
  while ((nul = inbox.indexOf('\0')) >= 0) {
    const msg = JSON.parse(inbox.slice(0, nul));
    inbox = inbox.slice(nul + 1);
    onMessage(msg);
  }
});

function onMessage(msg) {
  if (msg.id && pending.has(msg.id)) {
    const { resolve, reject, method } = pending.get(msg.id);
    pending.delete(msg.id);
    if (msg.error) reject(new Error(`${method}: ${msg.error.message}`));
    else resolve(msg.result);
    return;
  }
  const p = msg.params || {};
  switch (msg.method) {
    case 'Runtime.consoleAPICalled':
      if (p.type === 'error' || p.type === 'assert' || p.type === 'warning') {
        problems.push(`console.${p.type}: ${(p.args || []).map((a) => a.value ?? a.description).join(' ')}`);
      }
      break;
    case 'Runtime.exceptionThrown':
      problems.push(`exception: ${p.exceptionDetails && (p.exceptionDetails.exception || {}).description ||
                                  JSON.stringify(p.exceptionDetails)}`);
      break;
    case 'Log.entryAdded':
      if (p.entry && (p.entry.level === 'error' || p.entry.level === 'warning')) {
        problems.push(`log ${p.entry.level} (${p.entry.source}): ${p.entry.text} ${p.entry.url || ''}`);
      }
      break;
    case 'Network.requestWillBeSent':
      requests.push(p.request.url);
      if (p.request.url !== reportUrl) problems.push(`network request: ${p.request.url}`);
      break;
    default:
      break;
  }
  for (let i = waiters.length - 1; i >= 0; --i) {
    if (waiters[i].method === msg.method && (!waiters[i].sessionId || waiters[i].sessionId === msg.sessionId)) {
      waiters[i].resolve(p);
      waiters.splice(i, 1);
    }
  }
}

function send(method, params = {}, sessionId) {
  const id = nextId++;
  const msg = { id, method, params };
  if (sessionId) msg.sessionId = sessionId;
  toChrome.write(JSON.stringify(msg) + '\0');
  return new Promise((resolve, reject) => pending.set(id, { resolve, reject, method }));
}

function waitFor(method, sessionId) {
  return new Promise((resolve) => waiters.push({ method, sessionId, resolve }));
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function main() {
  const { targetId } = await send('Target.createTarget', { url: 'about:blank' });
  const { sessionId } = await send('Target.attachToTarget', { targetId, flatten: true });
  const s = (method, params) => send(method, params, sessionId);
  await s('Runtime.enable');
  await s('Log.enable');
  await s('Network.enable');
  await s('Page.enable');
  await s('Emulation.setDeviceMetricsOverride', { width: 1280, height: 900, deviceScaleFactor: 1, mobile: false });
  const loaded = waitFor('Page.loadEventFired', sessionId);
  const nav = await s('Page.navigate', { url: reportUrl });
  if (nav.errorText) throw new Error(`navigation failed: ${nav.errorText}`);
  await loaded;
  await sleep(500);  // late requests or errors

  const evaluate = async (expression) => {
    const r = await s('Runtime.evaluate', { expression, returnByValue: true });
    if (r.exceptionDetails) throw new Error(`evaluate ${expression}: ${JSON.stringify(r.exceptionDetails)}`);
    return r.result.value;
  };
  const facts = await evaluate(`({
    title: document.title,
    cards: document.querySelectorAll('.card').length,
    rows: document.querySelectorAll('#timeline svg g').length,
    bars: document.querySelectorAll('#timeline svg rect.s0, #timeline svg rect.s1, #timeline svg rect.slow, #timeline svg rect.rd').length,
    scripts: document.scripts.length,
    height: document.documentElement.scrollHeight,
    width: document.documentElement.scrollWidth,
  })`);
  // Sorting: click the "path" header of the inputs table twice.
  const sorted = await evaluate(`(function(){var th=document.querySelector('#inputs-table th');
    th.click(); var a=document.querySelector('#inputs-table tbody tr td').textContent;
    th.click(); var b=document.querySelector('#inputs-table tbody tr td').textContent; return [a,b];})()`);
  await sleep(200);

  const height = Math.min(Math.max(facts.height, 600), 8000);
  await s('Emulation.setDeviceMetricsOverride', { width: 1280, height, deviceScaleFactor: 1, mobile: false });
  await sleep(200);
  const shot = await s('Page.captureScreenshot', { format: 'png' });
  fs.mkdirSync(path.dirname(path.resolve(screenshotPath)), { recursive: true });
  fs.writeFileSync(screenshotPath, Buffer.from(shot.data, 'base64'));

  console.log(`report: ${reportUrl}`);
  console.log(`title: ${facts.title}`);
  console.log(`cards: ${facts.cards}, timeline rows: ${facts.rows}, bars: ${facts.bars}, scripts: ${facts.scripts}, ` +
              `page ${facts.width}x${facts.height}`);
  console.log(`sorted inputs table: first path ${JSON.stringify(sorted[0])}, then ${JSON.stringify(sorted[1])}`);
  console.log(`requests: ${JSON.stringify(requests)}`);
  console.log(`screenshot: ${path.resolve(screenshotPath)} (${height}px tall)`);
  if (facts.cards < 10) problems.push(`only ${facts.cards} summary cards`);
  if (facts.rows < 1) problems.push('no timeline rows');
  if (facts.width > 1300) problems.push(`page is ${facts.width}px wide (horizontal scrolling at 1280px)`);
  if (requests.length !== 1) problems.push(`expected exactly one request (the page), saw ${requests.length}`);
  // Close the browser and wait for it to exit (its own children with it).
  const exited = new Promise((resolve) => {
    if (proc.exitCode !== null) resolve();
    proc.once('exit', resolve);
    setTimeout(resolve, 5000).unref();
  });
  await send('Browser.close').catch(() => {});
  await exited;
  if (proc.exitCode === null) proc.kill('SIGKILL');
}

const timer = setTimeout(() => {
  console.error('FAIL: timed out after 60 s');
  if (stderr) console.error(stderr.slice(-2000));
  proc.kill('SIGKILL');
  process.exit(1);
}, 60000);

main().then(() => {
  clearTimeout(timer);
  fs.rmSync(userDataDir, { recursive: true, force: true });
  if (problems.length) {
    for (const p of problems) console.error(`FAIL: ${p}`);
    process.exit(1);
  }
  console.log('PASS: no console error, no exception, no network request');
  process.exit(0);
}).catch((e) => {
  clearTimeout(timer);
  console.error(`FAIL: ${e.stack || e}`);
  if (stderr) console.error(stderr.slice(-2000));
  proc.kill('SIGKILL');
  process.exit(1);
});
