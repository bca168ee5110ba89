#!/usr/bin/python3
"""Where a callgrind profile's instructions go, by part of the packet path.

Reads `callgrind_annotate --inclusive=no` of one profile and sums each
function's own instructions into one part, by the source file callgrind
names (an inlined function counts where its source lives) or, where there
is no source, by the shared object:

  crc        the ICRC: ISA-L, datapath/wire/icrc.cpp, crc32_copy.cpp (its
             fused copy included) and the compiler's intrinsics inlined there
  copy       payload copies: libc's memcpy/memmove, transport/sge_copy
  port       DPDK and the port adapters: librte_*, DPDK's headers,
             engine/eth_port_io.h, engine/mbuf_tx_sink.h, datapath/port/
  ring       the application's side and the shared rings: datapath/shm/,
             engine/cq_ring_sink.h, engine/vnic/doorbells.h, bench/ (the
             benchmark's posting and polling, as the provider does it)
  wire       building and parsing headers: the rest of datapath/wire/
  transport  datapath/transport/ (RC requester, completer, responder, ...)
  engine     the rest of datapath/engine/, sched/ and pfc/
  other      the C++ library, malloc, anything else

Used by scripts/bench-callgrind.sh (issue 17, must-show 3).

  callgrind_parts.py PROFILE.cg MESSAGES   prints one JSON object:
                                           {part: instructions per message}
"""
import json
import re
import subprocess
import sys

PARTS = ("crc", "copy", "port", "ring", "wire", "transport", "engine", "other")

# (part, test on the source file, test on the shared object), first match wins.
RULES = (
    ("crc", lambda f: f.endswith(("datapath/wire/icrc.cpp", "datapath/wire/crc32_copy.cpp")),
     lambda o: "libisal" in o),
    ("copy", lambda f: "memmove" in f or "memcpy" in f or f.endswith("transport/sge_copy.cpp"),
     lambda o: False),
    ("port", lambda f: "/dpdk/" in f or f.endswith(("engine/eth_port_io.h", "engine/mbuf_tx_sink.h"))
     or "/datapath/port/" in f, lambda o: "librte_" in o),
    ("ring", lambda f: "/datapath/shm/" in f or f.endswith(("engine/cq_ring_sink.h",
                                                            "engine/vnic/doorbells.h"))
     or "/bench/" in f, lambda o: False),
    ("wire", lambda f: "/datapath/wire/" in f, lambda o: False),
    ("transport", lambda f: "/datapath/transport/" in f, lambda o: False),
    ("engine", lambda f: "/datapath/engine/" in f or "/sched/" in f or "/pfc/" in f,
     lambda o: False),
)

LINE = re.compile(r"^\s*([0-9,]+) \([^)]*\)\s+(.*?)(?: \[(.*)\])?$")


# Compiler intrinsics (immintrin.h and the headers it includes) inlined into
# the CRC folding count as CRC; elsewhere they fall under "other".
INTRINSIC_HEADER = re.compile(r"/gcc/.*/include/\w*intrin\.h$")
CRC_FUNCTION = re.compile(r"uroce::wire::.*(fold_blocks|crc32_copy|crc_any)")


def part_of(src, obj, function=""):
    if INTRINSIC_HEADER.search(src or "") and CRC_FUNCTION.search(function):
        return "crc"
    for name, by_file, by_obj in RULES:
        if (src and by_file(src)) or (obj and by_obj(obj)):
            return name
    return "other"


def parts(profile):
    out = subprocess.run(["callgrind_annotate", "--auto=no", "--inclusive=no", "--threshold=100",
                          profile], capture_output=True, text=True, check=True).stdout
    sums = dict.fromkeys(PARTS, 0)
    for line in out.splitlines():
        m = LINE.match(line)
        if not m or "PROGRAM TOTALS" in line:
            continue
        ir = int(m.group(1).replace(",", ""))
        where = m.group(2)
        src, _, function = where.partition(":") if ":" in where else ("", "", where)
        if src == "???":
            src = ""
        sums[part_of(src, m.group(3) or "", function)] += ir
    return sums


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    messages = int(sys.argv[2])
    sums = parts(sys.argv[1])
    print(json.dumps({k: round(v / messages, 1) for k, v in sums.items()}))


if __name__ == "__main__":
    main()
