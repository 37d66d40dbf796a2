#!/usr/bin/env python3
"""Checks that the hot path's object files call no formatted printing.

Issue 5: no printf-family formatting on the hot path; integer nanoseconds
become exact decimal microseconds by integer arithmetic or std::to_chars. This
reads the undefined symbols of the compiled objects (`nm --undefined-only`),
so a call hidden in a macro or an inline header counts too, and fails if any
hot-path object needs one of:

- the printf family (printf, fprintf, sprintf, snprintf, vsnprintf and their
  _FORTIFY_SOURCE `__*_chk` forms),
- absl::StrFormat (absl::str_format_internal),
- iostreams (std::basic_ostream, std::basic_ostringstream),
- std::to_string (vsnprintf underneath) and strtod/strtold.

Usage: check_hot_path.py NM [--only SOURCE] OBJECT...
Objects whose source file is not in HOT_PATH are ignored, so the whole list
of a library's objects ($<TARGET_OBJECTS:tracemill_core>) can be passed.
Exit 0 if clean, 1 naming each object and symbol, 2 if a hot-path object is
missing from the arguments (a renamed file must be renamed here too).
`--only SOURCE` checks that one source instead of HOT_PATH (the suite's
self-test runs it on tools/tracemill_main.cc, which prints, and expects a
failure naming fprintf).
"""
import os
import re
import subprocess
import sys

# Sources on the per-event path: decode, sort, spill, merge, format, write.
HOT_PATH = [
    "formats/common/json_text.cc",
    "formats/common/ts_text.cc",
    "formats/common/trace_data.cc",
    "formats/chrome/tef_decoder.cc",
    "formats/chrome/chrome_writer.cc",
    "formats/chrome/output_file.cc",
    "formats/gzip/gzip_reader.cc",
    "merge/sorted_run.cc",
    "merge/spill_file.cc",
    "merge/kway_merger.cc",
    "merge/namespacer.cc",
    "pipeline/convert/decode_input.cc",
]

FORBIDDEN = re.compile(
    r"^(__)?(v?s?n?f?printf)(_chk)?$"
    r"|str_format_internal"
    r"|std::basic_ostream|std::basic_ostringstream|std::__cxx11::basic_ostringstream"
    r"|std::__cxx11::to_string|^std::to_string"
    r"|^strtod$|^strtold$")


def main(argv):
    if len(argv) < 3:
        print(__doc__.strip().splitlines()[0], file=sys.stderr)
        return 2
    nm = argv[1]
    # ctest passes $<TARGET_OBJECTS:...> as one ;-separated argument.
    objects = [o for a in argv[2:] for o in a.split(";") if o]
    hot_path = HOT_PATH
    if objects[0] == "--only":
        hot_path, objects = [objects[1]], objects[2:]
    seen, bad = set(), []
    for obj in objects:
        obj = os.path.normpath(obj)  # CMake writes .../tracemill_core.dir/./formats/...
        src = next((s for s in hot_path if obj.endswith("/" + s + ".o") or obj.endswith("/" + s + ".obj")), None)
        if src is None:
            continue
        seen.add(src)
        out = subprocess.run([nm, "-C", "--undefined-only", obj], check=True, capture_output=True, text=True).stdout
        for line in out.splitlines():
            sym = line.split(None, 1)[-1].strip()
            if FORBIDDEN.search(sym):
                bad.append(f"{src}: calls {sym}")
    missing = [s for s in hot_path if s not in seen]
    if missing:
        print("check_hot_path: no object for " + ", ".join(missing), file=sys.stderr)
        return 2
    for b in bad:
        print("check_hot_path: " + b, file=sys.stderr)
    if not bad:
        print(f"check_hot_path: {len(seen)} hot-path objects call no formatted printing")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
