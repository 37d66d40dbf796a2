#!/usr/bin/env python3
"""Writes the seed corpora of the fuzz targets (corpus/<target>/), small and
deterministic: `python3 tests/fuzz/generate_corpus.py` from anywhere.

Seeds cover each decoder's shapes (Arrow's generate_fuzz_corpus is the model):
Kineto object form with distributedInfo / deviceProperties /
baseTimeNanoseconds, array form, every phase, flows (id/bind_id), id2,
string pids, fractional and exponent ts, args with nesting, escapes; the
gzip seeds add multi-member files, an empty member and a truncated member.
The sample job's first events are one more seed (cluster-examples/).
"""
import gzip
import json
import os
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def write(target, name, data):
    d = os.path.join(HERE, "corpus", target)
    os.makedirs(d, exist_ok=True)
    if isinstance(data, str):
        data = data.encode()
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


EVENTS = [
    {"ph": "M", "name": "process_name", "pid": 26, "tid": 0, "args": {"name": "python3"}},
    {"ph": "M", "name": "process_sort_index", "pid": 26, "args": {"sort_index": 5}},
    {"ph": "M", "name": "process_labels", "pid": 0, "args": {"labels": "GPU 0"}},
    {"ph": "M", "name": "thread_name", "pid": 26, "tid": 7, "args": {"name": "main"}},
    {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 26, "tid": 7, "ts": 1682725897226747.123,
     "dur": 68.5, "args": {"External id": 41, "Input dims": [[2, 3], [3, 4]], "s": "a\u00e9\U0001f600"}},
    {"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": "stream 7", "ts": "1682725897226750",
     "dur": "3", "args": {"device": 0, "correlation": 9}},
    {"ph": "B", "name": "step", "pid": 26, "tid": 7, "ts": 1.5e3},
    {"ph": "E", "pid": 26, "tid": 7, "ts": 2000},
    {"ph": "i", "s": "t", "name": "mark", "pid": 26, "tid": 7, "ts": 10},
    {"ph": "s", "id": 5, "cat": "ac2g", "name": "flow", "pid": 26, "tid": 7, "ts": 11, "bp": "e"},
    {"ph": "f", "id": 5, "cat": "ac2g", "name": "flow", "pid": 0, "tid": "stream 7", "ts": 12, "bp": "e"},
    {"ph": "X", "name": "v2", "pid": 26, "tid": 7, "ts": 13, "dur": 1, "bind_id": 77, "flow_out": True},
    {"ph": "b", "cat": "async", "name": "req", "id2": {"global": "0x1"}, "pid": 26, "tid": 7, "ts": 14},
    {"ph": "e", "cat": "async", "name": "req", "id2": {"local": "0x1"}, "pid": 26, "tid": 7, "ts": 15},
    {"ph": "C", "name": "mem", "pid": "Spans", "ts": 16, "args": {"bytes": 1024, "x": None, "y": True}},
    {"ph": "Z", "name": "unknown phase", "pid": 26, "tid": 7, "ts": 17},
]
KINETO = {
    "schemaVersion": 1,
    "distributedInfo": {"backend": "nccl", "rank": 3, "world_size": 8},
    "deviceProperties": [{"id": 0, "name": "A100"}, {"id": 1, "name": "A100"}],
    "baseTimeNanoseconds": 1682725890000000000,
    "traceEvents": EVENTS,
    "displayTimeUnit": "ns",
}


def main():
    arr = json.dumps(EVENTS)
    arr_lines = "[\n" + ",\n".join(json.dumps(e) for e in EVENTS) + "\n]\n"
    obj = json.dumps(KINETO)
    obj_lines = json.dumps(KINETO, indent=1)
    # Array form: closed, unclosed with a trailing comma (Horovod), empty
    # elements, bare NaN, invalid UTF-8, raw control characters, truncation.
    t = "tef_decoder_array_fuzzer"
    write(t, "events.json", arr)
    write(t, "events_lines.json", arr_lines)
    write(t, "unclosed_trailing_comma.json", arr_lines.rstrip("]\n") + ",\n")
    write(t, "empty_elements.json", '[{}, {"ph":"X","ts":1,"dur":2,"pid":1,"tid":1,"name":"a"}, {},]')
    write(t, "nan_args.json", '[{"ph":"C","ts":1,"pid":1,"name":"c","args":{"v":NaN,"w":-Infinity}}]')
    write(t, "bad_utf8.json", b'[{"ph":"X","ts":1,"dur":1,"pid":1,"tid":1,"name":"a\xff\xc3(","args":{"\xe2\x82":"\x01"}}]')
    write(t, "escapes.json", r'[{"ph":"X","ts":1,"dur":1,"pid":1,"tid":1,"name":"\ud800 \udc00 \ud83d\ude00 \q \u00e9\"\\"}]')
    write(t, "truncated.json", arr[: len(arr) // 2])
    write(t, "not_objects.json", '[1, "x", [2], null, {"ph":"i","ts":0}]')
    # Object form.
    t = "tef_decoder_object_fuzzer"
    write(t, "kineto.json", obj)
    write(t, "kineto_indent.json", obj_lines)
    write(t, "keys_after_events.json",
          '{"traceEvents":[{"ph":"X","ts":1,"dur":1,"pid":1,"tid":1}],"distributedInfo":{"rank":"2"},"baseTimeNanoseconds":5}')
    write(t, "no_trace_events.json", '{"a":1,"b":[1,2]}')
    write(t, "trace_events_not_array.json", '{"traceEvents":{"ph":"X"}}')
    write(t, "truncated.json", obj[: len(obj) * 2 // 3])
    write(t, "duplicate_trace_events.json",
          '{"traceEvents":[{"ph":"i","ts":1}],"traceEvents":[{"ph":"i","ts":2}]}')
    # gzip: one member, two members, an empty member between, truncated,
    # bad CRC, trailing zeros.
    t = "gzip_reader_fuzzer"
    one = gzip.compress(obj.encode(), mtime=0)
    two = gzip.compress(arr[:100].encode(), mtime=0) + gzip.compress(arr[100:].encode(), mtime=0)
    write(t, "one_member.gz", one)
    write(t, "two_members.gz", two)
    write(t, "empty_member_between.gz",
          gzip.compress(b"[", mtime=0) + gzip.compress(b"", mtime=0) + gzip.compress(b"]", mtime=0))
    write(t, "truncated.gz", one[: len(one) // 2])
    bad = bytearray(one)
    bad[-8] ^= 0xFF
    write(t, "bad_crc.gz", bytes(bad))
    write(t, "trailing_zeros.gz", one + b"\0" * 16)
    write(t, "raw_deflate_level9.gz", gzip.compress(arr.encode() * 4, compresslevel=9, mtime=0))
    # Whole path: all of the above kinds, plus the sample job's head.
    t = "convert_fuzzer"
    write(t, "kineto.json", obj)
    write(t, "events.json", arr_lines)
    write(t, "kineto.json.gz", one)
    write(t, "two_members.json.gz", two)
    write(t, "truncated.json.gz", one[: len(one) * 3 // 4])
    with gzip.open(os.path.join(ROOT, "cluster-examples/sample-job/sampled_rank-0.json.gz")) as f:
        sample = json.load(f)
    sample["traceEvents"] = sample["traceEvents"][:40]
    write(t, "sample_rank0_head.json", json.dumps(sample))


if __name__ == "__main__":
    main()
