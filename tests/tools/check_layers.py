#!/usr/bin/env python3
"""Checks that each source folder includes only the floors below it.

The house's floors (../README.md, each folder's README "May depend on"):
formats/ includes only formats/; merge/ formats/ and merge/; analysis/
formats/, merge/ and analysis/ (issue 33: never pipeline/ or report/);
report/ formats/ and report/. Third-party headers (absl/, gtest/, <...>) are
not checked. pipeline/ and tools/ sit on top and are not checked.

Usage: check_layers.py ROOT
Prints "N sources include only the floors below them" and exits 0, or names
each file, line and include that points up and exits 1.
"""
import os
import re
import sys

PROJECT = {"formats", "merge", "analysis", "report", "pipeline", "tools", "tracemill"}
ALLOWED = {
    "formats": {"formats"},
    "merge": {"formats", "merge"},
    "analysis": {"formats", "merge", "analysis"},
    "report": {"formats", "report"},
}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([a-z_]+)/')


def main(argv):
    if len(argv) != 2:
        print("usage: check_layers.py ROOT", file=sys.stderr)
        return 2
    root = argv[1]
    checked, bad = 0, []
    for folder, allowed in sorted(ALLOWED.items()):
        for dirpath, _, names in os.walk(os.path.join(root, folder)):
            for name in sorted(names):
                if not name.endswith((".h", ".cc")):
                    continue
                path = os.path.join(dirpath, name)
                checked += 1
                with open(path, encoding="utf-8") as f:
                    for number, line in enumerate(f, 1):
                        m = INCLUDE.match(line)
                        if m and m.group(1) in PROJECT and m.group(1) not in allowed:
                            bad.append(f"{os.path.relpath(path, root)}:{number}: includes "
                                       f"{m.group(1)}/ ({folder}/ may include "
                                       f"{', '.join(d + '/' for d in sorted(allowed))})")
    for line in bad:
        print(line)
    if bad:
        return 1
    if checked == 0:
        print(f"no sources under {root}")
        return 2
    print(f"{checked} sources include only the floors below them")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
