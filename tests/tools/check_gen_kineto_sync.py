#!/usr/bin/env python3
"""Checks gen_kineto's synchronized jobs (--clock-offsets-us) end to end.

Usage: check_gen_kineto_sync.py GEN_KINETO TRACEMILL

Generates 4 nodes x 2 GPUs with node clock offsets 0,1500,-800,3250 us,
twice: J = 2 without `Seq` (mixed --ts), and J = 0 with --collective-seq
(--gzip). For each, every rank's file must parse and hold --events events,
and, after subtracting each rank's node offset, the k-th NCCL kernel of
every rank must end within 2J us of the others', with the same name,
`Collective name` and process group, launched within ProfilerStep#(k / 6);
`Seq` must be k exactly when asked for, and absent otherwise. Then
`tracemill convert --align-clocks on` must find each node's offset within
2J us. Prints one summary line per job; exits 1 on the first failure.
"""
import glob
import gzip
import json
import os
import re
import subprocess
import sys
import tempfile
from decimal import Decimal

OFFSETS_US = [0, 1500, -800, 3250]
GPUS_PER_NODE = 2
RANKS = 8
EVENTS = 20000
COLLECTIVES_PER_STEP = 6


def fail(msg):
    print('FAIL: ' + msg)
    sys.exit(1)


def load(path):
    with (gzip.open if path.endswith('.gz') else open)(path, 'rt') as f:
        return json.load(f, parse_float=Decimal)  # exact: 16 digits and 3 decimals


def rank_collectives(rank, events, want_seq):
    """The rank's NCCL kernels in time order, on the true clock."""
    off = Decimal(OFFSETS_US[rank // GPUS_PER_NODE])
    launches = {e['args']['correlation']: Decimal(e['ts']) - off for e in events if e.get('cat') == 'cuda_runtime'}
    steps = [(Decimal(e['ts']) - off, Decimal(e['ts']) + Decimal(e['dur']) - off, int(e['name'].split('#')[1]))
             for e in events if e.get('name', '').startswith('ProfilerStep#')]
    kernels = sorted((e for e in events if e.get('cat') == 'kernel' and e['name'].startswith('nccl')),
                     key=lambda e: Decimal(e['ts']))
    rows = []
    for k, e in enumerate(kernels):
        a = e['args']
        if ('Seq' in a) != want_seq or (want_seq and a['Seq'] != k):
            fail(f'rank {rank}, collective {k}: Seq {a.get("Seq")!r}')
        launch = launches[a['correlation']]
        rows.append({
            'end': Decimal(e['ts']) + Decimal(e['dur']) - off,
            'what': (e['name'], a.get('Collective name'), a.get('Process Group Name'),
                     a.get('Process Group Description'), a.get('Process Group Ranks')),
            'steps': [n for (s, t, n) in steps if s <= launch <= t],
        })
    return rows


def check_files(out, jitter_us, want_seq):
    """Returns (kernels per rank, max disagreement of true ends in us)."""
    paths = glob.glob(os.path.join(out, 'rank*.pt.trace.json*'))
    if len(paths) != RANKS:
        fail(f'{len(paths)} files in {out}')
    ranks = {}
    for p in paths:
        rank = int(re.search(r'rank(\d+)', p).group(1))
        events = load(p)['traceEvents']
        if len(events) != EVENTS:
            fail(f'{p}: {len(events)} events, want {EVENTS}')
        ranks[rank] = rank_collectives(rank, events, want_seq)
    group = ('0', 'default_pg', '[' + ', '.join(map(str, range(RANKS))) + ']')
    worst = Decimal(0)
    for k in range(max(len(v) for v in ranks.values())):
        have = [v[k] for v in ranks.values() if k < len(v)]
        ends = [h['end'] for h in have]
        worst = max(worst, max(ends) - min(ends))
        if len({h['what'] for h in have}) != 1 or have[0]['what'][2:] != group:
            fail(f'collective {k}: {sorted({h["what"] for h in have})}')
        if any(h['steps'] != [k // COLLECTIVES_PER_STEP] for h in have):
            fail(f'collective {k} launched in steps {[h["steps"] for h in have]}')
    if worst > 2 * jitter_us:
        fail(f'true ends disagree by {worst} us > 2J = {2 * jitter_us}')
    return [len(ranks[r]) for r in sorted(ranks)], worst


def check_alignment(tracemill, out, work, jitter_us):
    """tracemill's offsets: node n's shift is -(offset[n] - offset[0])."""
    conv = os.path.join(work, 'conv')
    subprocess.run([tracemill, 'convert', out, '-o', conv, '--align-clocks', 'on', '-q'], check=True)
    with open(os.path.join(conv, 'manifest.json')) as f:
        domains = json.load(f)['clocks']['domains']
    shifts = []
    for d in domains:
        node = int(d['domain'].split()[-1])
        want = -(OFFSETS_US[node] - OFFSETS_US[0]) * 1000
        if not d['applied'] or abs(d['offset_ns'] - want) > 2 * jitter_us * 1000:
            fail(f'{d["domain"]}: {d}, want offset_ns {want}')
        shifts.append(d['offset_ns'])
    return shifts


def main():
    gen, tracemill = sys.argv[1], sys.argv[2]
    jobs = [(2, ['--ts', 'mixed'], False), (0, ['--gzip', '--collective-seq'], True)]
    for jitter_us, flags, want_seq in jobs:
        with tempfile.TemporaryDirectory(prefix='gen_kineto_sync.') as work:
            out = os.path.join(work, 'job')
            subprocess.run([gen, '--out', out, '--ranks', str(RANKS), '--gpus-per-node', str(GPUS_PER_NODE),
                            '--events', str(EVENTS), '--clock-offsets-us', ','.join(map(str, OFFSETS_US)),
                            '--collective-jitter-us', str(jitter_us)] + flags,
                           check=True, stdout=subprocess.DEVNULL)
            counts, worst = check_files(out, jitter_us, want_seq)
            shifts = check_alignment(tracemill, out, work, jitter_us)
            print(f'J={jitter_us} {" ".join(flags)}: kernels per rank {counts}, true ends within {worst} us, '
                  f'tracemill shifts (ns) {shifts}')
    print('ok')


if __name__ == '__main__':
    main()
