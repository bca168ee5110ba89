#!/usr/bin/env bash
# perftest -R between two Linux kernels (rxe in two QEMU guests, no uroce):
# does the kernel's own rdma_cm client lose perftest's reconnect race
# against a slow server? `ib_write_bw -R` makes two connections to one
# port: the first carries perftest's own exchange; after it the server
# destroys its listener, swaps keys over that connection, and only then
# listens again for the data connection, while the client connects as soon
# as it has the keys. A REQ that arrives before the second listen gets a
# REJ "invalid Service ID" (reason 8) from the kernel's CM.
#
# Guest S (server) and guest C (client) run under TCG at the same speed;
# then S is slowed to QUOTA % of one host CPU (a cgroup v1 CPU quota on its
# QEMU), i.e. C becomes the "fast Linux client" to a "slow Linux server".
# The whole run is captured on the bridge; tshark counts REQs and REJs.
#
#   sudo scripts/interop/perftest-cm-race.sh [--build-dir DIR] [--runs N]
#        [--quota PCT]... [--keep]
#
# Defaults: build, 5 runs, quotas 100 (unthrottled) and 10. Prints one line
# per quota: runs that passed, and the REJ reasons in the capture.
set -euo pipefail

SOURCE_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=$SOURCE_ROOT/build runs=5
declare -a quotas=()
while [ $# -gt 0 ]; do
  case $1 in
    --build-dir) build=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --quota) quotas+=("$2"); shift 2 ;;
    --keep) export UROCE_KEEP=1; shift ;;
    *) sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; exit 2 ;;
  esac
done
[ ${#quotas[@]} -gt 0 ] || quotas=(100 10)
if [ "$(id -u)" -ne 0 ]; then
  echo "SKIP: needs root (bridge, taps, cgroup)"
  exit 77
fi

# shellcheck source=../lib/uroce-env.sh
source "$SOURCE_ROOT/scripts/lib/uroce-env.sh"
# shellcheck source=guest.sh
source "$SOURCE_ROOT/scripts/interop/guest.sh"
# shellcheck source=net.sh
source "$SOURCE_ROOT/scripts/interop/net.sh"

uroce_env_init rxerace
id=$((UROCE_ID % 100000))
port='' sj='' cap_pid=''  # set by uroce_next_port, rxe_guest_bg, uroce_bg
net=10.78.$((id % 250 + 1))
cg=/sys/fs/cgroup/cpu/uroce_race_$id
S_PID='' TAP2=urxc$id
_race_on_exit() {
  local rc=$?
  set +e
  if [ -d "$cg" ]; then
    [ -n "$S_PID" ] && echo "$S_PID" >/sys/fs/cgroup/cpu/cgroup.procs 2>/dev/null
    rmdir "$cg" 2>/dev/null
  fi
  rxe_guest_stop >/dev/null 2>&1
  ip link del "$TAP2" 2>/dev/null
  rxe_net_down
  (exit "$rc")
  _uroce_on_exit
}
trap _race_on_exit EXIT

img=$(timeout 300 "$SOURCE_ROOT/scripts/interop/build-guest.sh" "$(realpath "$build")/rxe-guest" |
  tail -n 1)
rxe_net_up "$id" "$net.1/24" 1500
ip tuntap add dev "$TAP2" mode tap
ip link set "$TAP2" mtu 1500 master "$RXE_BR" up
S=$UROCE_TMP/guest-s C=$UROCE_TMP/guest-c
rxe_guest_start "$S" "$img" "$net.11/24" "$RXE_TAP" "$(printf '52:54:00:4e:%02x:0b' $((id % 250 + 1)))" 150
S_PID=${RXE_GUEST_PIDS[$S]}
rxe_guest_start "$C" "$img" "$net.12/24" "$TAP2" "$(printf '52:54:00:4e:%02x:0c' $((id % 250 + 1)))" 150
mkdir "$cg"
echo 100000 >"$cg/cpu.cfs_period_us"

args="-d rxe0 -R -n 200 -s 65536 -F --report_gbits"
declare -a summary=()
for q in "${quotas[@]}"; do
  if [ "$q" -ge 100 ]; then
    echo "$S_PID" >/sys/fs/cgroup/cpu/cgroup.procs
  else
    echo $((q * 1000)) >"$cg/cpu.cfs_quota_us"
    echo "$S_PID" >"$cg/cgroup.procs"
  fi
  cap=$UROCE_TMP/quota$q.pcap
  uroce_bg cap_pid "$UROCE_TMP/quota$q.dumpcap.log" "$UROCE_TMP/quota$q.dumpcap.log" -- \
    dumpcap -q -i "$RXE_BR" -f "udp port 4791" -P -s 400 -w "$cap"
  sleep 1
  ok=0
  for r in $(seq "$runs"); do
    uroce_next_port port
    rxe_guest_bg sj "$S" "timeout 60 ib_write_bw $args -p $port"
    rxe_guest_exec "$S" 90 "wait-cm-listen $port 60" >/dev/null || true
    crc=0
    rxe_guest_exec "$C" 90 "timeout 60 ib_write_bw $args -p $port $net.11" \
      >"$UROCE_TMP/q$q.r$r.client" 2>&1 || crc=$?
    src=0
    rxe_guest_wait "$S" "$sj" 90 >"$UROCE_TMP/q$q.r$r.server" 2>&1 || src=$?
    if [ "$crc" -eq 0 ] && [ "$src" -eq 0 ] && grep -q '^ 65536 *200 ' "$UROCE_TMP/q$q.r$r.client"; then
      ok=$((ok + 1))
      res=PASS
    else
      res="FAIL (client $crc, server $src: $(grep -m1 -o 'RDMA_CM_EVENT_[A-Z_]*; error: [-0-9]*' \
        "$UROCE_TMP/q$q.r$r.client" || echo '?'))"
    fi
    echo "quota $q% run $r: $res"
  done
  sleep 0.5
  uroce_kill_group INT "$cap_pid"
  uroce_wait "$cap_pid" UROCE_IGNORED_RC
  reqs=$(tshark -r "$cap" -Y 'infiniband.mad.attributeid == 0x0010' 2>/dev/null | wc -l)
  rejs=$(tshark -r "$cap" -Y 'infiniband.mad.attributeid == 0x0012' -T fields \
    -e infiniband.cm.rej.reason 2>/dev/null | sort | uniq -c | awk '{ printf "%s x reason %s ", $1, $2 }')
  summary+=("server CPU quota $q%: $ok/$runs passed; CM REQs $reqs; REJs: ${rejs:-none}")
  echo "quota $q%, each run's second connection:"
  /usr/bin/python3 "$SOURCE_ROOT/scripts/interop/cm-race-timing.py" "$cap" "$net.11" | sed 's/^/  /'
done
printf '%s\n' "${summary[@]}"
