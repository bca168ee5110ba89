#!/usr/bin/python3
"""Prints the ninja targets the tests of the given Meson suites need.

    suite_targets.py BUILD_DIR SUITE...

Each test's `depends` (target ids, from `meson introspect --tests`) is mapped
to the files those targets produce (`meson introspect --targets`), written
relative to BUILD_DIR, one per line. scripts/test.sh builds just these in the
sanitizer build instead of every target of the project, which is most of
that build's time.
"""
import json
import os
import subprocess
import sys


def introspect(build_dir, what):
    out = subprocess.run(["meson", "introspect", build_dir, what],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def main():
    if len(sys.argv) < 3:
        sys.exit("usage: suite_targets.py BUILD_DIR SUITE...")
    build_dir = os.path.abspath(sys.argv[1])
    wanted = set(sys.argv[2:])
    files = {t["id"]: t["filename"] for t in introspect(build_dir, "--targets")}
    needed = set()
    for test in introspect(build_dir, "--tests"):
        # Suites are listed as "<project>:<suite>".
        if not any(s.split(":")[-1] in wanted for s in test["suite"]):
            continue
        for dep in test["depends"]:
            if dep not in files:
                sys.exit(f"suite_targets.py: test {test['name']} depends on "
                         f"unknown target {dep}")
            needed.update(os.path.relpath(f, build_dir) for f in files[dep])
    if not needed:
        sys.exit(f"suite_targets.py: no test in suites {sorted(wanted)}")
    print("\n".join(sorted(needed)))


if __name__ == "__main__":
    main()
