#!/usr/bin/python3
"""Prints a process's resident memory by kind every INTERVAL seconds until
it exits (issue 12's ASan soak: which part of uroced's RSS grows).

    rss_breakdown.py PID INTERVAL      (INTERVAL 0: one line, then exit)

Kinds, from /proc/PID/smaps: ASan's shadow (x86_64: 0x7fff8000 up to
0x10007fff8000), ASan's primary allocator space (0x600000000000 up to
0x640000000000), other anonymous memory (thread stacks, sanitizer
internals, DPDK's memory without hugepages), and file or shared mappings
(the clients' arenas and registered memory, libraries). Also threads and
descriptors."""
import os
import re
import sys
import time

SHADOW = (0x7fff8000, 0x10007fff8000)
ALLOCATOR = (0x600000000000, 0x640000000000)
LINE = re.compile(r"^([0-9a-f]+)-([0-9a-f]+) \S+ \S+ \S+ \d+\s*(.*)$")


def kind(lo, name):
    if SHADOW[0] <= lo < SHADOW[1]:
        return "shadow"
    if ALLOCATOR[0] <= lo < ALLOCATOR[1]:
        return "asan_alloc"
    if name == "" or name.startswith("[anon") or name in ("[heap]", "[stack]"):
        return "anon_other"
    return "file_shared"


def sample(pid):
    kb = {"shadow": 0, "asan_alloc": 0, "anon_other": 0, "file_shared": 0}
    cur = None
    with open("/proc/%d/smaps" % pid) as f:
        for line in f:
            m = LINE.match(line)
            if m:
                cur = kind(int(m.group(1), 16), m.group(3))
            elif line.startswith("Rss:") and cur:
                kb[cur] += int(line.split()[1])
    status = {}
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            key, _, value = line.partition(":")
            if key in ("VmRSS", "RssShmem"):
                status[key] = int(value.split()[0])
    return (kb, status, len(os.listdir("/proc/%d/task" % pid)),
            len(os.listdir("/proc/%d/fd" % pid)))


def main(argv):
    if len(argv) != 3:
        sys.stderr.write(__doc__)
        return 2
    pid, interval = int(argv[1]), float(argv[2])
    t0 = time.monotonic()
    while True:
        try:
            kb, st, threads, fds = sample(pid)
        except (FileNotFoundError, ProcessLookupError):
            return 0
        mb = {k: v / 1024 for k, v in kb.items()}
        when = "t=%4.0fs " % (time.monotonic() - t0) if interval > 0 else ""
        print("%srss_mb=%.1f shmem=%.1f | shadow=%.1f asan_alloc=%.1f anon_other=%.1f "
              "file_shared=%.1f | threads=%d fds=%d" %
              (when, st.get("VmRSS", 0) / 1024, st.get("RssShmem", 0) / 1024, mb["shadow"],
               mb["asan_alloc"], mb["anon_other"], mb["file_shared"], threads, fds),
              flush=True)
        if interval <= 0:
            return 0
        time.sleep(interval)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
