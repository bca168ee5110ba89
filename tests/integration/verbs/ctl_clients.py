#!/usr/bin/python3
"""Reads `uroce-ctl clients --json` on stdin and says which clients it lists.

    uroce-ctl --run-dir RUN clients --json | ctl_clients.py [PID...]

Prints one line per verbs client (a connection bound to a device; the
status connection of uroce-ctl itself is left out): pid, uid, device and
the number of objects it holds (every list in the client's entry counts its elements; an object
count given as a number counts as such). Exit status: 0 when one of the
PIDs is listed (or, without PIDs, when any client is), 1 when none is,
2 when the input is not JSON with a client list.
"""
import json
import sys

OBJECT_KEYS = ("pds", "mrs", "cqs", "qps", "srqs", "ahs", "comp_channels", "channels")


def client_list(doc):
    if isinstance(doc, list):
        return doc
    if isinstance(doc, dict):
        for key in ("clients", "connections"):
            if isinstance(doc.get(key), list):
                return doc[key]
    return None


def objects(entry):
    n = 0
    for key, value in entry.items():
        if isinstance(value, list):
            n += len(value)
        elif key in OBJECT_KEYS and isinstance(value, int):
            n += value
        elif isinstance(value, dict):
            n += objects(value)
    return n


def main():
    want = {int(p) for p in sys.argv[1:]}
    try:
        doc = json.load(sys.stdin)
    except ValueError as e:
        print("not JSON: %s" % e)
        return 2
    clients = client_list(doc)
    if clients is None:
        print("no client list in: %s" % json.dumps(doc)[:300])
        return 2
    # A connection that never said Hello (uroce-ctl itself, asking for this
    # very status) has no device and holds nothing: not a verbs client.
    clients = [c for c in clients if c.get("device") or objects(c)]
    found = False
    for c in clients:
        pid = c.get("pid")
        print("client pid=%s uid=%s device=%s objects=%d" %
              (pid, c.get("uid"), c.get("device", c.get("ibdev")), objects(c)))
        if not want or pid in want:
            found = True
    if not clients:
        print("no clients")
    return 0 if found else 1


if __name__ == "__main__":
    sys.exit(main())
