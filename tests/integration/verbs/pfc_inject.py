#!/usr/bin/python3
"""Injects 802.1Qbb frames into a uroced device's af_packet port while
traffic runs, and samples that device's counters around them (used by
netns_pfc.sh; run in the namespace of the veth end that faces the port).

  pfc_inject.py IFACE PRIO LINK_MBPS UROCE-CTL RUN_DIR

Steps, each printed as one "name value" line:
  1. waits until the device has sent 200 frames (traffic flows);
  2. bad input: a truncated MAC Control frame, an 802.3x PAUSE, and a pause
     for priority 5;
  3. a pause of PRIO for 30000 quanta (153.6 ms at 100 Mb/s): the device's
     tx_frames, read 20 ms and 100 ms after, must not move, and must move
     again once the pause lapsed;
  4. a pause of 0xffff quanta (335 ms at 100 Mb/s) then a resume 50 ms
     later: tx_frames must move again within 50 ms of the resume.
Exit 0 when every check held, 1 otherwise, 2 on bad usage."""
import json
import socket
import struct
import subprocess
import sys
import time


def pfc_frame(mask, quanta, opcode=0x0101, dst=b"\x01\x80\xc2\x00\x00\x01"):
    src = b"\x02\x00\x00\xee\x00\x01"
    times = b"".join(struct.pack("!H", quanta if (mask >> p) & 1 else 0) for p in range(8))
    frame = dst + src + struct.pack("!HHH", 0x8808, opcode, mask) + times
    return frame + b"\x00" * (60 - len(frame))


def tx_frames(ctl, run_dir):
    out = subprocess.run([ctl, "--run-dir", run_dir, "counters", "--json"],
                         capture_output=True, text=True, check=True).stdout
    return json.loads(out)["devices"][0]["counters"]["tx_frames"]


def main():
    if len(sys.argv) != 6:
        print(__doc__, file=sys.stderr)
        return 2
    iface, prio, mbps, ctl, run_dir = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), \
        sys.argv[4], sys.argv[5]
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    s.bind((iface, 0))
    ok = True
    deadline = time.monotonic() + 30
    while tx_frames(ctl, run_dir) < 200:
        if time.monotonic() > deadline:
            print("no_traffic 1")
            return 1
        time.sleep(0.05)

    s.send(pfc_frame(1 << prio, 10)[:20])               # truncated
    s.send(pfc_frame(1 << prio, 10, opcode=0x0001))     # 802.3x PAUSE
    s.send(pfc_frame(1 << 5, 1000))                     # priority 5: not PFC-enabled
    time.sleep(0.05)

    quanta = 30000
    pause_s = quanta * 512 / (mbps * 1e6)
    s.send(pfc_frame(1 << prio, quanta))
    t0 = time.monotonic()
    time.sleep(0.02)
    a = tx_frames(ctl, run_dir)
    time.sleep(max(0.0, t0 + pause_s - 0.05 - time.monotonic()))
    b = tx_frames(ctl, run_dir)
    time.sleep(max(0.0, t0 + pause_s + 0.1 - time.monotonic()))
    c = tx_frames(ctl, run_dir)
    print(f"pause_tx_frames {a} {b} {c}")
    if a != b or c <= b:
        print("pause_check FAIL")
        ok = False

    s.send(pfc_frame(1 << prio, 0xffff))
    time.sleep(0.05)
    d = tx_frames(ctl, run_dir)
    s.send(pfc_frame(1 << prio, 0))                     # resume
    time.sleep(0.05)
    e = tx_frames(ctl, run_dir)
    print(f"resume_tx_frames {d} {e}")
    if e <= d:
        print("resume_check FAIL")
        ok = False
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
