"""What the benchmark smoke tests share (smoke_engine.py, smoke_lcores.py):
run a benchmark once per argument list, take its one JSON line, and collect
what the test's check says of it. Not a performance check."""
import json
import subprocess


def run_all(exe, runs, extra, check, timeout):
    """Runs `exe args + extra` for each args in `runs`; returns the failures
    (exit status, not exactly one JSON line, or what check(args, line)
    lists), each prefixed by its arguments, after printing every JSON line
    and every failure."""
    failures = []
    for args in runs:
        proc = subprocess.run([exe] + args + extra, capture_output=True, text=True,
                              timeout=timeout)
        lines = [l for l in proc.stdout.splitlines() if l.startswith('{"bench"')]
        print("\n".join(lines))
        if proc.returncode != 0:
            failures.append(f"{' '.join(args)}: exit status {proc.returncode}: {proc.stderr}")
        if len(lines) != 1:
            failures.append(f"{' '.join(args)}: expected one JSON line, got:\n" + proc.stdout)
            continue
        failures += [f"{' '.join(args)}: {x}" for x in check(args, json.loads(lines[0]))]
    for f in failures:
        print("FAIL:", f)
    return failures
