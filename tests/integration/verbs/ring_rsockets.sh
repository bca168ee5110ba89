#!/usr/bin/env bash
# rsockets and librdmacm's connection examples through uroce-run: one
# uroced, uroce0 and uroce1 on a crossed net_ring pair, unmodified
# programs of Debian's rdmacm-utils. rsockets is librdmacm's socket layer
# over RC QPs and rdma_cm (its own credit protocol in SENDs with
# immediate data, RDMA WRITEs into the peer's receive buffer, and for
# riostream WRITEs into memory the peer mapped with riomap):
#   rstream -T v and riostream -T v: 64 B to 1 MiB, the receiver checking
#     the data of every transfer;
#   rcopy: a 4 MiB file copied to the server, compared byte for byte;
#   ucmatose: several RC connections at once, messages on each;
#   cmtime: connections set up and torn down in bulk.
#
#   ring_rsockets.sh BUILD_DIR
source "$(dirname "$0")/common.sh"
verbs_test_init vring_rs "$1" rstream riostream rcopy ucmatose cmtime

IP0=10.205.0.1
IP1=10.205.0.2
uroce_daemon_start d --lcore 1 -- \
  --device "$(verbs_device uroce0 02:00:00:cd:00:01 $IP0 ring:p0)" \
  --device "$(verbs_device uroce1 02:00:00:cd:00:02 $IP1 ring:p0)"
RUN=${UROCE_DAEMON_RUN[d]}
R=("$UROCE_RUN" --run-dir "$RUN")
cm_json() { "$UROCE_CTL" --run-dir "$RUN" --json status; }

# uroce0 resolves IP1 first (uroce1 learns IP0 from its request).
uroce_cm_resolve "$RUN" $IP1 60 || echo "address resolution of $IP1 still failing after 60 s"

# stream_pair PROGRAM XFERS ITERS: PROGRAM -T v between uroce1 (server) and
# uroce0, ITERS iterations of XFERS transfers of each of 64 B, 4 KiB, 64
# KiB and 1 MiB; with -S a run prints one row ("custom"), and either side
# exits non-zero on a checked byte that differs. (The default, every size
# with latency rows of up to 100,000 round trips, takes riostream 25 s
# here.)
stream_pair() {
  local prog=$1 xfers=$2 iters=$3 st=0 size rows
  local label="$prog -T v uroce0 -> uroce1 (every transfer checked)"
  for size in 64 4096 65536 1048576; do
    uroce_next_port port
    uroce_pair "$label" 60 "cm:$RUN" - - -- \
      "${R[@]}" "$prog" -b $IP1 -p "$port" -S "$size" -C "$xfers" -I "$iters" -T v ::: \
      "${R[@]}" "$prog" -s $IP1 -p "$port" -S "$size" -C "$xfers" -I "$iters" -T v || { st=1; break; }
    # Rows: name, bytes (64, 4k, 64k, 1m), xfers, iters, total, time,
    # Gb/sec, usec/xfer.
    rows=$(awk -v s="$size" -v x="$xfers" -v i="$iters" '$1 == "custom" && $3 == x && $4 == i &&
      ($2 == s || $2 == (s / 1024) "k" || $2 == (s / 1048576) "m")' "$UROCE_CLI_OUT" | wc -l)
    if [ "$rows" -ne 1 ]; then
      UROCE_WHY="$prog -S $size: $rows result rows of $xfers x $iters transfers from the client, expected 1"
      st=1
      break
    fi
    sed 's/^/  /' "$UROCE_CLI_OUT"
  done
  uroce_verdict "$label" "$st"
}
# rstream formats and checks every transfer; riostream only the last of an
# iteration, so it runs 200 iterations of one transfer.
stream_pair rstream 200 1
stream_pair riostream 1 200

# ---- rcopy: a file to the server -------------------------------------------
# The server serves one copy after another and never exits on its own.
uroce_no_pair
uroce_next_port port
st=0
src=$UROCE_TMP/rcopy.src dst=$UROCE_TMP/rcopy.dst
head -c $((4 << 20)) /dev/urandom >"$src"
uroce_bg spid --timeout 60 "$UROCE_TMP/rcopy.srv.out" "$UROCE_TMP/rcopy.srv.err" -- \
  "${R[@]}" rcopy -p "$port"
if ! uroce_wait_cm_listen "$RUN" 20 "$spid"; then
  UROCE_WHY="rcopy's server never listened"
  st=1
elif ! timeout 30 "${R[@]}" rcopy "$src" "$IP1:$dst" -p "$port" >"$UROCE_TMP/rcopy.cli.out" 2>&1; then
  UROCE_WHY="rcopy client failed: $(tr '\n' '|' <"$UROCE_TMP/rcopy.cli.out")"
  st=1
elif ! cmp -s "$src" "$dst"; then
  UROCE_WHY="the copy differs from its source ($(stat -c %s "$dst" 2>/dev/null || echo no) bytes)"
  st=1
elif ! uroce_running "$spid"; then
  UROCE_WHY="rcopy's server exited after one copy"
  st=1
fi
cat "$UROCE_TMP/rcopy.cli.out" 2>/dev/null || true
uroce_stop_group "$spid"
uroce_wait "$spid" srv_rc
uroce_verdict "rcopy of a 4 MiB file uroce0 -> uroce1 (copy identical)" "$st"

# ---- ucmatose: four RC connections, 100 messages of 1000 B on each ---------
uroce_next_port port
st=0
uroce_pair "ucmatose -c 4 -C 100" 60 "cm:$RUN" - - -- \
  "${R[@]}" ucmatose -b $IP1 -p "$port" -c 4 -C 100 -S 1000 ::: \
  "${R[@]}" ucmatose -s $IP1 -p "$port" -c 4 -C 100 -S 1000 || st=1
if [ "$st" -eq 0 ]; then
  for f in "$UROCE_SRV_OUT" "$UROCE_CLI_OUT"; do
    grep -qx 'return status 0' "$f" || { UROCE_WHY="no 'return status 0' in ${f##*/}"; st=1; }
  done
fi
uroce_verdict "ucmatose -c 4 -C 100 uroce0 -> uroce1 (four RC connections)" "$st"

# ---- cmtime: 100 connections set up and torn down -------------------------
# The client prints one row per step; the server keeps listening, so it is
# stopped once the client is done.
uroce_no_pair
uroce_next_port port
st=0
uroce_bg spid --timeout 90 "$UROCE_TMP/cmtime.srv.out" "$UROCE_TMP/cmtime.srv.err" -- \
  "${R[@]}" cmtime -b $IP1 -p "$port" -c 100
out=$UROCE_TMP/cmtime.cli.out
if ! uroce_wait_cm_listen "$RUN" 20 "$spid"; then
  UROCE_WHY="cmtime's server never listened"
  st=1
elif ! timeout 60 "${R[@]}" cmtime -s $IP1 -p "$port" -c 100 >"$out" 2>&1; then
  UROCE_WHY="cmtime client failed: $(tail -n 5 "$out" | tr '\n' '|')"
  st=1
else
  # cmtime reports a rejected or unreachable connection as an event line,
  # marks it failed and still prints every row and exits 0.
  if grep -qE '^event: |RDMA_CM_EVENT_.*(ERROR|REJECTED|UNREACHABLE)|fail' "$out" \
    "$UROCE_TMP/cmtime.srv.out"; then
    UROCE_WHY="cmtime reported failed connections: $(grep -hE 'event|fail' "$out" \
      "$UROCE_TMP/cmtime.srv.out" | head -n 3 | tr '\n' '|')"
    st=1
  fi
  for step in 'create id' 'resolve addr' 'resolve route' 'create qp' 'connect' 'disconnect' 'destroy'; do
    grep -q "^$step *:" "$out" || { UROCE_WHY="no '$step' row in cmtime's output"; st=1; }
  done
fi
cat "$out" 2>/dev/null || true
uroce_stop_group "$spid"
uroce_wait "$spid" srv_rc
# Every id of both programs is gone once they are.
if [ "$st" -eq 0 ]; then
  deadline=$((SECONDS + 10))
  until grep -q '"files":0,"ids":0,"listeners":0' <<<"$(cm_json)"; do
    if [ $SECONDS -ge "$deadline" ]; then
      UROCE_WHY="ids left after cmtime: $(cm_json | grep -o '"cm":{[^}]*}' || true)"
      st=1
      break
    fi
    sleep 0.1
  done
fi
uroce_verdict "cmtime -c 100 uroce0 -> uroce1 (100 connections, every id reclaimed)" "$st"

uroce_no_pair
verbs_daemons_stop "uroced exits 0 on SIGTERM and removes its run dir and nodes" d

uroce_summary ring_rsockets
