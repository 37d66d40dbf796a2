#!/usr/bin/env python3
"""Writes the malformed-corpus cases too large to commit into OUTDIR
(`generate_large.py OUTDIR`); their expectations are committed next to the
small cases (tests/malformed/<case>.expect with `generated yes`).

- nesting_100000_deep.json: an event whose args nest 100,000 arrays deep,
  between two plain events;
- nesting_100000_deep_document.json: the whole array element 100,000 deep;
- string_100mb.json: an event with a 100 MB string argument;
- number_10000_digits.json: a 10,000-digit ts and a 10,000-digit argument;
- keys_300000_in_one_event.json: one event with 300,000 keys, one of them
  twice (the duplicate scan must stay linear).
"""
import os
import sys


def plain(name, ts):
    return '{"ph":"X","name":"%s","pid":1,"tid":1,"ts":%d,"dur":1}' % (name, ts)


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    depth = 100000

    def write(name, parts):
        with open(os.path.join(out, name), "w") as f:
            for p in parts:
                f.write(p)

    write("nesting_100000_deep.json", [
        "[\n", plain("a", 1), ",\n",
        '{"ph":"X","name":"deep","pid":1,"tid":1,"ts":2,"dur":1,"args":{"v":',
        "[" * depth, "]" * depth, "}},\n", plain("b", 3), "\n]\n"])
    write("nesting_100000_deep_document.json", ["[" * depth, "]" * depth, "\n"])
    write("string_100mb.json", [
        "[\n", plain("a", 1), ",\n",
        '{"ph":"X","name":"big","pid":1,"tid":1,"ts":2,"dur":1,"args":{"blob":"',
        "x" * (100 * 1000 * 1000), '"}}\n]\n'])
    digits = "9" * 10000
    write("number_10000_digits.json", [
        "[\n", plain("a", 1), ",\n",
        '{"ph":"X","name":"huge ts","pid":1,"tid":1,"ts":%s,"dur":1},\n' % digits,
        '{"ph":"X","name":"huge arg","pid":1,"tid":1,"ts":3,"dur":1,"args":{"n":%s}}\n]\n' % digits])
    keys = ",".join('"k%d":%d' % (i, i) for i in range(300000))
    write("keys_300000_in_one_event.json", [
        '[{"ph":"X","name":"wide","pid":1,"tid":1,"ts":1,"dur":1,', keys, ',"k5":"again"}]\n'])


if __name__ == "__main__":
    main()
