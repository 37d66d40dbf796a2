#!/usr/bin/env python3
"""Independent reader for the end-to-end tests: nothing here shares code with tracemill.

  trace_tool.py validate FILE...   strict JSON check of outputs (RFC 8259 + valid Unicode)
  trace_tool.py facts [--times] [--ids] FILE
                                   counts of an input's traceEvents; with --times the
                                   expected output (ph, name, cat, ts, dur) of every non-M event;
                                   with --ids the (ph, ts, id / bind_id) of every event with one

`validate` is stricter than `json.load`: it rejects bare NaN/Infinity tokens, invalid UTF-8,
raw control characters and lone UTF-16 surrogate escapes. `.gz` files (any number of members)
are inflated with Python's gzip module.

`--times` computes each event's absolute ts as exact decimal arithmetic (Decimal, never a
float): ns = round_half_away(Decimal(ts_text) * 1000) + baseTimeNanoseconds, then writes it
back as microseconds with up to three fraction digits and no trailing zeros, which is the
text tracemill must write.
"""
import decimal
import gzip
import json
import re
import sys

decimal.getcontext().prec = 80


def read_bytes(path):
    with open(path, 'rb') as f:
        data = f.read()
    if data[:2] == b'\x1f\x8b':
        data = gzip.decompress(data)
    return data


def reject_constant(name):
    raise ValueError('bare %s token (not JSON)' % name)


SURROGATE_ESCAPE = re.compile(r'(\\+)u([dD][89a-fA-F][0-9a-fA-F]{2})')


def find_lone_surrogate(text):
    """Offset of a `\\uD800`-`\\uDFFF` escape that is not half of a pair, or None.

    Python's json accepts lone surrogate escapes, but the result is not Unicode
    text (and strict parsers such as simdjson reject it). Scanning the text is
    much faster than walking the parsed document.
    """
    paired_low_at = -1
    for m in SURROGATE_ESCAPE.finditer(text):
        if len(m.group(1)) % 2 == 0:
            continue  # an escaped backslash followed by "u...": not an escape
        escape_at = m.start(2) - 2
        value = int(m.group(2), 16)
        if value >= 0xDC00:
            if escape_at == paired_low_at:
                continue
            return escape_at
        following = text[m.end():m.end() + 4]
        if (len(following) == 4 and following[:2] == '\\u' and following[2] in 'dD' and
                following[3] in 'cdefCDEF'):
            paired_low_at = m.end()
            continue
        return escape_at
    return None


def strict_load(path):
    """The document in `path` (gzip inflated), or an exception if it is not
    strict JSON: invalid UTF-8, bare NaN/Infinity, a lone surrogate escape."""
    text = read_bytes(path).decode('utf-8', errors='strict')
    doc = json.loads(text, parse_constant=reject_constant)
    at = find_lone_surrogate(text)
    if at is not None:
        raise ValueError('lone UTF-16 surrogate escape at character %d: %r' %
                         (at, text[max(0, at - 20):at + 12]))
    return doc


def validate(paths):
    bad = 0
    for p in paths:
        try:
            strict_load(p)
        except Exception as e:  # report every file, not just the first
            print('%s: %s: %s' % (p, type(e).__name__, str(e)[:300]))
            bad += 1
    return 1 if bad else 0


def ns_to_micros_text(ns):
    sign = '-' if ns < 0 else ''
    ns = abs(ns)
    us, frac = divmod(ns, 1000)
    if not frac:
        return '%s%d' % (sign, us)
    return ('%s%d.%03d' % (sign, us, frac)).rstrip('0')


def to_ns(value):
    if isinstance(value, int):
        return value * 1000
    text = str(value).strip()
    if text.isdigit():
        return int(text) * 1000
    d = decimal.Decimal(text) * 1000
    return int(d.quantize(decimal.Decimal(1), rounding=decimal.ROUND_HALF_UP))


def facts(path, with_times, with_ids):
    text = read_bytes(path).decode('utf-8', errors='replace')
    doc = json.loads(text, parse_float=str)  # keeps the exact digits
    base_ns = 0
    if isinstance(doc, dict):
        events = doc.get('traceEvents')
        base_ns = int(doc.get('baseTimeNanoseconds', 0))
        top = [k for k in doc if k != 'traceEvents']
    else:
        events = doc
        top = []
    if not isinstance(events, list):
        print(json.dumps({'trace': False, 'top_level_keys': top}))
        return 0
    by_ph = {}
    empty = non_objects = 0
    times = []
    ids = []
    meta_of_pid = {}  # pid token -> its M records, or None once it has another event
    for e in events:
        if isinstance(e, dict) and 'pid' in e:
            key = json.dumps(e['pid'])
            if e.get('ph') != 'M':
                meta_of_pid[key] = None
            elif meta_of_pid.get(key, 0) is not None:
                meta_of_pid[key] = meta_of_pid.get(key, 0) + 1
        if not isinstance(e, dict):
            non_objects += 1
            continue
        if not e:
            empty += 1
            continue
        ph = e.get('ph')
        by_ph[str(ph)] = by_ph.get(str(ph), 0) + 1
        if with_times and ph != 'M' and 'ts' in e:
            ts = ns_to_micros_text(to_ns(e['ts']) + base_ns)
            dur = ns_to_micros_text(to_ns(e['dur'])) if 'dur' in e else ''
            times.append([str(ph), str(e.get('name', '')), str(e.get('cat', '')), ts, dur])
        if with_ids and ph != 'M':
            ts = ns_to_micros_text(to_ns(e.get('ts', 0)) + base_ns)
            for key in ('id', 'bind_id'):
                if key in e:
                    ids.append([key, str(ph), ts, json.dumps(e[key])])
    out = {'trace': True, 'events': len(events), 'by_ph': by_ph, 'empty_objects': empty,
           'non_objects': non_objects, 'top_level_keys': top, 'base_time_ns': str(base_ns),
           'empty_process_meta': sum(n for n in meta_of_pid.values() if n)}
    if with_times:
        out['times'] = times
    if with_ids:
        out['ids'] = ids
    sys.stdout.write(json.dumps(out))
    return 0


def main(argv):
    if len(argv) >= 2 and argv[0] == 'validate':
        return validate(argv[1:])
    if len(argv) >= 2 and argv[0] == 'facts':
        flags = [a for a in argv[1:] if a.startswith('--')]
        paths = [a for a in argv[1:] if not a.startswith('--')]
        if len(paths) == 1 and set(flags) <= {'--times', '--ids'}:
            return facts(paths[0], '--times' in flags, '--ids' in flags)
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
