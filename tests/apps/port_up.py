#!/usr/bin/python3
"""One end of a memif link in embedded mode, held until the other end has
seen the link too (their programs' lifetimes overlap: a program that exits
takes its port down, and the other would then see PORT_DOWN).

    port_up.py IBDEV MINE PEERS

Opens IBDEV, waits for port 1 to be active, prints "IBDEV: PORT_ACTIVE",
creates the file MINE, waits for the file PEERS, exits 0. Exits 1 when the
port is not active, or PEERS does not appear, within 60 s.
"""
import os
import sys
import time

import pyverbs.enums as e
from pyverbs.device import Context


def main(argv):
    ibdev, mine, peers = argv[1], argv[2], argv[3]
    deadline = time.monotonic() + 60
    ctx = Context(name=ibdev)
    try:
        while ctx.query_port(1).state != e.IBV_PORT_ACTIVE:
            if time.monotonic() >= deadline:
                print("%s: port still down after 60 s" % ibdev, flush=True)
                return 1
            time.sleep(0.01)
        print("%s: PORT_ACTIVE" % ibdev, flush=True)
        with open(mine, "w"):
            pass
        while not os.path.exists(peers):
            if time.monotonic() >= deadline:
                print("%s: the other end did not see its port active in 60 s" % ibdev, flush=True)
                return 1
            time.sleep(0.01)
        return 0
    finally:
        ctx.close()


if __name__ == "__main__":
    sys.exit(main(sys.argv))
