#!/usr/bin/env bash
# UD multicast end to end (docs/multicast.md): mcast (mcast.cpp) opens
# uroce0 and uroce1 of one uroced (a ring) through uroce-run, attaches two
# UD QPs of uroce1 to a group and sends to it from uroce0: both receive
# every message and a third QP none (checked against unicast markers, not
# a timeout), a SEND with another Q_Key reaches nobody, a detached QP stops
# receiving, a QP still attached cannot be destroyed. Judged on every
# check line, then on the daemon's counters.
#
#   mcast.sh BUILD_DIR MCAST
source "$(dirname "$0")/common.sh"
verbs_test_init vmcast "$1"
MCAST=$2

uroce_daemon_start d --lcore 1 -- \
  --device "$(verbs_device uroce0 02:00:00:e9:00:01 10.229.0.1 ring:p0)" \
  --device "$(verbs_device uroce1 02:00:00:e9:00:02 10.229.0.2 ring:p0)"
RUN=${UROCE_DAEMON_RUN[d]}
R=("$UROCE_RUN" --run-dir "$RUN")

out=$UROCE_TMP/mcast.out
uroce_no_pair
st=0 rc=0
timeout 120 "${R[@]}" "$MCAST" uroce0 uroce1 >"$out" 2>&1 || rc=$?
cat "$out"
ok=$(grep -c ': ok$' "$out" || true)
if [ "$rc" -ne 0 ]; then
  UROCE_WHY="mcast exited $rc: $(grep -E 'FAILED|mcast:' "$out" | head -n 5 | tr '\n' '|')"
  st=1
elif [ "$ok" -ne 14 ] || ! grep -qx 'mcast: all passed' "$out"; then
  UROCE_WHY="$ok of 14 checks ok"; st=1
fi
uroce_verdict "ibv_attach_mcast: a group's SENDs reach its QPs and no other" "$st"

# uroce1 counted the group's frames: 8 + 1 + 1 handed to QPs (rx_mcast),
# the wrong-Q_Key one among them (a QP drops it), none dropped as no group.
st=0
counters=$("$UROCE_CTL" --run-dir "$RUN" --json status)
rx_mcast=$(/usr/bin/python3 -c 'import json,sys
d=[x for x in json.load(sys.stdin)["devices"] if x["name"]=="uroce1"][0]
print(d["counters"]["rx_mcast"], d["counters"]["rx_mcast_drop"])' <<<"$counters") || st=1
if [ "$st" -eq 0 ] && [ "$rx_mcast" != "10 0" ]; then
  UROCE_WHY="uroce1 rx_mcast rx_mcast_drop: '$rx_mcast', expected '10 0'"; st=1
fi
uroce_verdict "uroce1 counted 10 group frames handed to QPs, none dropped" "$st"

verbs_daemons_stop "uroced" d
uroce_summary mcast
