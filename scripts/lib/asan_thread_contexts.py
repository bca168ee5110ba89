#!/usr/bin/python3
"""Counts the __asan::AsanThreadContext objects a live ASan process holds
(issue 12's ASan soak: clang-14's runtime keeps one per thread ever
created, so a daemon with a thread per connection grows with every
connection).

    asan_thread_contexts.py PID BINARY

Reads the process's anonymous read-write memory through /proc/PID/mem
(needs ptrace access, i.e. root or the same user) and counts 8-byte words
equal to the class's vtable pointer (the `vtable for` symbol of BINARY
plus 16, where an object's vptr points), with the tid that follows it.
Prints "AsanThreadContext objects: N (highest tid T) on P pages"."""
import re
import subprocess
import sys

SHADOW = (0x7fff8000, 0x10007fff8000)
ALLOCATOR = (0x600000000000, 0x640000000000)


def main(argv):
    if len(argv) != 3:
        sys.stderr.write(__doc__)
        return 2
    pid, binary = int(argv[1]), argv[2]
    nm = subprocess.run(["nm", "-C", binary], capture_output=True, text=True, check=True).stdout
    vtable = next(int(l.split()[0], 16) for l in nm.splitlines()
                  if l.endswith("vtable for __asan::AsanThreadContext"))
    base, spans = None, []
    with open("/proc/%d/maps" % pid) as f:
        for line in f:
            m = re.match(r"^([0-9a-f]+)-([0-9a-f]+) (\S+) ([0-9a-f]+) \S+ \d+\s*(.*)$", line)
            lo, hi, perm, off, name = (int(m.group(1), 16), int(m.group(2), 16), m.group(3),
                                       int(m.group(4), 16), m.group(5))
            if base is None and name == binary:
                base = lo - off
            inside = SHADOW[0] <= lo < SHADOW[1] or ALLOCATOR[0] <= lo < ALLOCATOR[1]
            if perm == "rw-p" and not name and hi - lo <= (64 << 20) and not inside:
                spans.append((lo, hi))
    vptr = (base + vtable + 16).to_bytes(8, "little")
    count, top, pages = 0, -1, set()
    with open("/proc/%d/mem" % pid, "rb") as mem:
        for lo, hi in spans:
            try:
                mem.seek(lo)
                data = mem.read(hi - lo)
            except OSError:
                continue
            for i in range(0, len(data) - 16, 8):
                if data[i:i + 8] == vptr:
                    count += 1
                    top = max(top, int.from_bytes(data[i + 8:i + 12], "little"))
                    pages.add((lo + i) >> 12)
    print("AsanThreadContext objects: %d (highest tid %d) on %d pages" % (count, top, len(pages)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
