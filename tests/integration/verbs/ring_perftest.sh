#!/usr/bin/env bash
# One uroced, two devices (uroce0, uroce1) joined by a crossed net_ring
# pair; unmodified perftest 4.5 through uroce-run, server on uroce0, client
# on uroce1 (-x 1: the RoCEv2 IPv4-mapped GID), TCP exchange over
# 127.0.0.1. Each run must exit 0 on both sides and the client must print a
# result row for the requested iteration count with a non-zero figure.
#
#   ring_perftest.sh BUILD_DIR
source "$(dirname "$0")/common.sh"
verbs_test_init vring_pt "$1" ib_write_bw ib_write_lat ib_send_bw ib_send_lat \
  ib_read_bw ib_read_lat ib_atomic_bw ib_atomic_lat

uroce_daemon_start d --lcore 1 -- \
  --device "$(verbs_device uroce0 02:00:00:ca:00:01 10.202.0.1 ring:p0)" \
  --device "$(verbs_device uroce1 02:00:00:ca:00:02 10.202.0.2 ring:p0)"
R=("$UROCE_RUN" --run-dir "${UROCE_DAEMON_RUN[d]}")

ITERS=1000
# perf PROGRAM bw|lat LABEL [EXTRA-ARGS...]; with N QPs (-q N) perftest
# reports ITERS * N iterations: set QPS=N for that run.
# perf PROGRAM bw|lat LABEL [EXTRA-ARGS...]; with N QPs (-q N) perftest
# reports ITERS * N iterations: set QPS=N for that run.
perf() { PP_ITERS=$ITERS PP_QPS=${QPS:-1} verbs_perf "$@"; }

perf ib_write_bw bw "ib_write_bw RC 64 KiB x $ITERS"
perf ib_write_bw bw "ib_write_bw RC 4 KiB x $ITERS" -s 4096
perf ib_write_bw bw "ib_write_bw UC 64 KiB x $ITERS" -c UC
QPS=4 perf ib_write_bw bw "ib_write_bw RC 4 QPs 64 KiB x $ITERS" -q 4
perf ib_write_lat lat "ib_write_lat RC x $ITERS"
perf ib_send_bw bw "ib_send_bw RC 64 KiB x $ITERS"
perf ib_send_bw bw "ib_send_bw RC bidirectional 64 KiB x $ITERS" -b
perf ib_send_lat lat "ib_send_lat RC x $ITERS"
perf ib_send_lat lat "ib_send_lat UD x $ITERS" -c UD
perf ib_read_bw bw "ib_read_bw RC 64 KiB x $ITERS"
perf ib_read_lat lat "ib_read_lat RC x $ITERS"
perf ib_atomic_bw bw "ib_atomic_bw RC x $ITERS"
perf ib_atomic_lat lat "ib_atomic_lat RC x $ITERS"

uroce_no_pair
verbs_daemons_stop "uroced exits 0 on SIGTERM and removes its run dir and nodes" d

uroce_summary ring_perftest
