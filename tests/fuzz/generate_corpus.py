#!/usr/bin/env python3
"""Writes the seed corpora of the fuzz targets (corpus/<target>/), small and
deterministic: `python3 tests/fuzz/generate_corpus.py` from anywhere.

Seeds cover each decoder's shapes (Arrow's generate_fuzz_corpus is the model):
Kineto object form with distributedInfo / deviceProperties /
baseTimeNanoseconds, array form, every phase, flows (id/bind_id), id2,
string pids, fractional and exponent ts, args with nesting, escapes; the
gzip seeds add multi-member files, an empty member and a truncated member.
Seeds taken from the test fixtures: the hand-written rule fixtures
(tests/data/rules/), the sample job's first events (cluster-examples/), the
first messages of a Paddle profile and the first rows of a DCGM log
(tests/data/paddle-csp/), the run event log example (cluster-examples/).
Protobuf seeds add the damage issue 8 lists (a length running past the end,
a wrong wire type, an 11-byte varint) and proto2 oddities (unknown fields, a
group, device_id -1, a repeated memcopy).
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


# ---- Protobuf wire format (formats/paddle/profiler.proto).

def varint(v):
    v &= (1 << 64) - 1  # negative int64: two's complement, 10 bytes
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def field_varint(num, v):
    return varint(num << 3) + varint(v)


def field_bytes(num, data):
    if isinstance(data, str):
        data = data.encode()
    return varint(num << 3 | 2) + varint(len(data)) + data


def paddle_event(name, start, end, device=0, sub=0, gpu=False, detail=None, memcopy=None):
    b = field_bytes(1, name) + field_varint(2, start) + field_varint(3, end)
    b += field_varint(5, device) + field_varint(6, sub)
    if memcopy is not None:
        b += field_bytes(7, field_varint(1, memcopy))
    if gpu:
        b += field_varint(8, 1)
    if detail is not None:
        b += field_bytes(9, detail)
    return field_bytes(1, b)


def paddle_mem_event(start, end, nbytes, place=0, device=0, alloc="op_a", free="op_b"):
    b = field_varint(1, start) + field_varint(2, end) + field_varint(3, nbytes)
    b += field_varint(4, place) + field_varint(5, 140000) + field_varint(6, device)
    b += field_bytes(7, alloc) + field_bytes(8, free)
    return field_bytes(4, b)


def read_varint(data, pos):
    """(value, position after it) of the varint at `pos`."""
    value, shift = 0, 0
    while True:
        c = data[pos]
        pos += 1
        value |= (c & 0x7F) << shift
        shift += 7
        if c < 0x80:
            return value, pos


def paddle_head(path, events, mem_events):
    """The first `events` Events and `mem_events` MemEvents of a profile
    fixture (top-level messages copied as they are), plus its start/end."""
    with open(path, "rb") as f:
        data = f.read()
    out, pos, ne, nm = bytearray(), 0, 0, 0
    while pos < len(data):
        start = pos
        tag, pos = read_varint(data, pos)
        field, wt = tag >> 3, tag & 7
        value, pos = read_varint(data, pos)  # a varint field's value, or a length
        if wt != 0:
            pos += value
        if field == 1 and ne < events:
            ne += 1
            out += data[start:pos]
        elif field == 4 and nm < mem_events:
            nm += 1
            out += data[start:pos]
        elif field in (2, 3):
            out += data[start:pos]
    return bytes(out)


def paddle_seeds():
    """Named seeds for the Paddle targets."""
    fixture = os.path.join(ROOT, "tests/data/paddle-csp/small/data/profile/profile.3")
    head = paddle_head(fixture, 60, 20)
    t0 = 1700000000000000000
    markers = b"".join(
        paddle_event("marker/compute/MarkerCUDA", t0 + k * 1000, t0 + k * 1000 + 5, device=3,
                     detail=d, memcopy=64 if k % 2 else None)
        for k, d in enumerate(["marker_forward_B", "marker_forward_E", "marker_backward_B",
                               "marker_backward_E", "marker_forward_E", "marker_backward_B",
                               "marker_backward_B", "marker_forward_E"]))
    oddities = (paddle_event("cudaLaunchKernel", t0, t0 + 10, device=-1, sub=7)
                + paddle_event(b"gemm\xff\xc3", t0 + 5, t0 + 50, device=3, sub=2, gpu=True,
                               memcopy=4096)
                + paddle_event("other_gpu", t0 + 6, t0 + 9, device=5, gpu=True)
                + paddle_event("ends_before_start", t0 + 9, t0 + 1, device=3)
                + field_varint(99, 7)                      # unknown varint field
                + varint(100 << 3 | 3) + field_varint(1, 5) + varint(100 << 3 | 4)  # a group
                + field_bytes(1, field_bytes(7, field_varint(1, 1)) + field_bytes(7, field_varint(1, 2)))
                + paddle_mem_event(t0, t0 + 100, 1 << 20, place=0, device=3)
                + paddle_mem_event(t0 + 1, t0 + 2, 512, place=1, device=0)
                + paddle_mem_event(t0 + 3, t0 + 4, 256, place=2, device=1)
                + field_varint(2, t0) + field_varint(3, t0 + 1000))
    ev = paddle_event("relu", t0, t0 + 10, device=3)
    return {
        "profile_head.pb": head,
        "markers.pb": markers,
        "proto2_oddities.pb": oddities,
        "empty.pb": b"",
        # The damage issue 8 lists, after one good Event.
        "length_past_end.pb": ev + varint(1 << 3 | 2) + varint(1000) + b"\x0a\x01x",
        "wrong_wire_type.pb": ev + field_varint(1, 5),
        "varint_11_bytes.pb": ev + field_varint(2, 0)[:1] + b"\xff" * 10 + b"\x01",
        "truncated_in_event.pb": (ev + markers)[: len(ev) + 9],
    }


DCGM_HEADER = ("# Entity  TIMESTAMP  GPUTL  GRACT  SMACT  SMOCC  FBUSD  FBTTL  DRAMA  NVLTX  NVLRX  "
               "PCITX  PCIRX  FP32A  FP16A  TENSO\n")


def dcgm_seeds():
    with open(os.path.join(ROOT, "tests/data/paddle-csp/small/data/dcgm/dcgm.0")) as f:
        head = "".join(f.readlines()[:40])
    row = "    GPU 0  1700000000.100  14  0.569  0.432  0.156  13682  32510  0.867  5  6  8  8  0.261  0.251  0.503\n"
    reordered = ("# Entity  GPUTL  TIMESTAMP  GRACT  SMACT  SMOCC  FBUSD  FBTTL  DRAMA  NVLTX  NVLRX  "
                 "PCITX  PCIRX  FP32A  FP16A  TENSO  POWER\n"
                 "    GPU 0  50  1.7e9  0.5  0.4  0.1  0  0  0.8  1  2  3  4  0.1  0.2  0.3  250.5\n")
    return {
        "dcgm_head.txt": head,
        "na_and_quirks.txt": ("Started host engine version 2.2.9 using socket path /tmp/nv-hostengine\n"
                              + DCGM_HEADER + "      Id\n" + row
                              + row.replace("14", "N/A") + DCGM_HEADER + "    GPU 1  1700000000.2  1\n"
                              + row.replace("32510", "0") + "dmon finished\n"),
        "reordered_columns.txt": reordered,
        "missing_column.txt": DCGM_HEADER.replace("  TENSO", "") + row,
        "crlf.txt": (DCGM_HEADER + row).replace("\n", "\r\n"),
    }


def run_log_seeds():
    with open(os.path.join(ROOT, "cluster-examples/run-event-log/example.jsonl")) as f:
        example = f.read()
    lines = example.splitlines(keepends=True)
    return {
        "example.jsonl": example,
        "cut_last_line.jsonl": "".join(lines[:12]) + lines[12][: len(lines[12]) // 2],
        "odd_lines.jsonl": (
            '{"time": 1.5, "kind": "exec", "rank": 1, "duration_s": 2, "data": {"exit_code": 1, '
            '"output_tail": "CUDA error\\u0000"}}\n'
            '{"time": "2", "kind": "aggregate", "data": {"weight_norm": NaN, "delta_norm": Infinity}}\n'
            '\n{"time": 1e3, "kind": "round_end", "data": {"round_num": 1, "survivors": 3}}\n'
            '{"kind": "push", "rank": 2}\n{"time": -1, "kind": 5}\nnot json\n'
            '{"time": 3, "kind": "pull", "rank": "7", "error": "timeout", "data": {"size_bytes": 1e30}}\n'),
    }


def net_seeds():
    """Paddle network logs (tests/data/paddle-net/), by name."""
    out = {}
    for sub in ("job/net/net.0", "job/net/net.1", "malformed/net/net.1"):
        with open(os.path.join(ROOT, "tests/data/paddle-net", sub), "rb") as f:
            out[sub.replace("/", "_")] = f.read()
    out["crlf_and_strings"] = (b'{"name":"rx","ts":"1700000000000.000001","args":{"b":NaN}}\r\n'
                               b'{"name":"tx","ph":"X","ts":1e3}\r\n{"name":"tx","ts":-0.5,"args":[1]}\r\n')
    return out


def kineto_2026_fixtures():
    """The hand-written newest-layout Kineto fixtures (tests/data/kineto-2026/), by name."""
    d = os.path.join(ROOT, "tests/data/kineto-2026")
    out = {}
    for name in ("newest_layout.json", "memory_instants.json", "logger_buckets.json", "stream_sync.json"):
        with open(os.path.join(d, name), "rb") as f:
            out[name] = f.read()
    return out


def rules_fixtures():
    """The small hand-written rule fixtures (tests/data/rules/), by name."""
    d = os.path.join(ROOT, "tests/data/rules")
    out = {}
    for name in sorted(os.listdir(d)):
        path = os.path.join(d, name)
        if name.endswith(".json") and os.path.getsize(path) <= 32768:
            with open(path, "rb") as f:
                out[name] = f.read()
    return out


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
    for name, data in rules_fixtures().items():
        write(t, "rules_" + name, data)
        form = "tef_decoder_object_fuzzer" if data.lstrip()[:1] == b"{" else "tef_decoder_array_fuzzer"
        write(form, "rules_" + name, data)
    paddle = paddle_seeds()
    runs = run_log_seeds()
    write(t, "paddle_profile_head.pb", paddle["profile_head.pb"])
    write(t, "paddle_markers.pb", paddle["markers.pb"])
    write(t, "run_event_log.jsonl", runs["example.jsonl"])
    write(t, "run_event_log.jsonl.gz", gzip.compress(runs["example.jsonl"].encode(), mtime=0))
    # The pre-scan's head: Kineto with the rank before and after traceEvents.
    t = "tef_head_fuzzer"
    write(t, "kineto.json", obj)
    write(t, "kineto_indent.json", obj_lines)
    write(t, "sample_rank0_head.json", json.dumps(sample))
    write(t, "rank_after_events.json",
          '{"traceEvents":[{"ph":"X","ts":1,"dur":1,"pid":1,"tid":1}],"distributedInfo":{"rank":"2"}}')
    write(t, "rank_twice.json",
          '{"distributedInfo":{"rank":1},"deviceProperties":[{}],"distributedInfo":{"rank":-4},'
          '"traceEvents":[]}')
    write(t, "array.json", arr)
    # Paddle protobuf: the convert mapping and the csp writer share seeds.
    for t in ("paddle_profile_fuzzer", "csp_trace_fuzzer"):
        for name, data in paddle.items():
            write(t, name, data)
    t = "dcgm_reader_fuzzer"
    for name, data in dcgm_seeds().items():
        write(t, name, data)
    t = "run_event_log_fuzzer"
    for name, data in runs.items():
        write(t, name, data)
    t = "net_log_fuzzer"
    for name, data in net_seeds().items():
        write(t, name, data)
    write("convert_fuzzer", "net_log.0", net_seeds()["job_net_net.0"])
    for name, data in kineto_2026_fixtures().items():
        write("tef_decoder_object_fuzzer", "kineto_2026_" + name, data)
        write("convert_fuzzer", "kineto_2026_" + name, data)


if __name__ == "__main__":
    main()
