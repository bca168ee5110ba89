#!/usr/bin/env bash
# uroced as a real process: start-up, its sysfs tree and /dev nodes,
# uroce-ctl, start-up failures, SIGTERM and SIGKILL clean-up.
#
#   uroced_lifecycle.sh PATH/TO/uroced PATH/TO/uroce-ctl [PATH/TO/uroce-run]
#
# With uroce-run (the provider's wrapper) stock ibv_devices must list both
# devices. Exit 77 (skipped) when not root (mknod in /dev/infiniband).
set -euo pipefail

uroced=$(realpath "$1")
ctl=$(realpath "$2")
run_wrapper=${3:+$(realpath "$3")}

if [ "$(id -u)" -ne 0 ]; then
  echo "SKIP: needs root (mknod /dev/infiniband/uverbsN)"
  exit 77
fi

tmp=$(mktemp -d /tmp/uroced_lifecycle.XXXXXX)
run=$tmp/run
pid=
fails=0

cleanup() {
  local rc=$?
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  fi
  rm -rf "$tmp"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 143' TERM INT

ok() { echo "ok: $1"; }
fail() {
  echo "FAIL: $1"
  fails=$((fails + 1))
}
expect_grep() {  # FILE LABEL FIXED-STRING
  if grep -qF -- "$3" "$1"; then ok "$2"; else fail "$2: '$3' not in $(basename "$1")"; fi
}

devs=(--device "name=uroce0;mac=02:00:00:00:00:01;ipv4=10.0.0.1;mtu=9000;port=ring:p0"
      --device "name=uroce1;mac=02:00:00:00:00:02;ipv4=10.0.0.2;mtu=9000;port=ring:p0")

# Starts uroced with "$@" in the background (log: $tmp/uroced.log) and
# waits for "uroced: ready"; returns 1 if it exits or takes over 30 s.
start() {
  : >"$tmp/uroced.log"
  "$uroced" --run-dir "$run" "$@" 2>"$tmp/uroced.log" &
  pid=$!
  local i
  for ((i = 0; i < 300; i++)); do
    grep -q '^uroced: ready$' "$tmp/uroced.log" && return 0
    kill -0 "$pid" 2>/dev/null || return 1
    sleep 0.1
  done
  return 1
}

# The uverbs numbers of the devices in the tree.
nodes() {
  local d
  for d in "$run"/sysfs/class/infiniband_verbs/uverbs*; do
    [ -d "$d" ] && echo "${d##*/uverbs}"
  done
}

# ---- a bad configuration: exit 1, the key named ---------------------------
rc=0
"$uroced" --run-dir "$run" --device "name=uroce0;mac=zz;ipv4=10.0.0.1;port=ring:p0" \
  2>"$tmp/bad.log" || rc=$?
[ "$rc" -eq 1 ] && ok "bad MAC: exit 1" || fail "bad MAC: exit $rc"
expect_grep "$tmp/bad.log" "bad MAC: the key is named" 'device[0].mac: "zz" is not a MAC address'

# ---- no such port: exit 1 with what to check --------------------------------
rc=0
"$uroced" --run-dir "$run" --lcore 1 \
  --device "name=uroce0;mac=02:00:00:00:00:01;ipv4=10.0.0.1;port=net_nosuchpmd0,x=1" \
  2>"$tmp/noport.log" || rc=$?
[ "$rc" -eq 1 ] && ok "no such port: exit 1" || fail "no such port: exit $rc"
expect_grep "$tmp/noport.log" "no such port: says what to check" "cannot create device net_nosuchpmd0"
[ -z "$(ls -A "$run/sysfs" 2>/dev/null)" ] && ok "no such port: no sysfs tree left" ||
  fail "no such port: sysfs tree left"

# ---- normal start ------------------------------------------------------------
if start --lcore 1 "${devs[@]}"; then ok "ready"; else
  fail "uroced did not become ready"
  cat "$tmp/uroced.log"
  exit 1
fi
sys=$run/sysfs/class/infiniband
for dev in uroce0 uroce1; do
  [ "$(cat "$sys/$dev/device/uroce_socket")" = "$run/uroced.sock" ] &&
    ok "$dev: uroce_socket" || fail "$dev: uroce_socket"
  [ "$(cat "$sys/$dev/node_type")" = "1: CA" ] && ok "$dev: node_type" || fail "$dev: node_type"
done
[ "$(cat "$sys/uroce1/ports/1/gids/1")" = "0000:0000:0000:0000:0000:ffff:0a00:0002" ] &&
  ok "uroce1: IPv4 GID" || fail "uroce1: IPv4 GID"
mapfile -t claimed < <(nodes)
[ "${#claimed[@]}" -eq 2 ] && ok "two uverbs entries" || fail "uverbs entries: ${claimed[*]}"
for n in "${claimed[@]}"; do
  node=/dev/infiniband/uverbs$n
  if [ -c "$node" ] && [ "$(stat -c '%t:%T' "$node")" = "1:7" ]; then
    ok "$node is 1:7"
  else
    fail "$node missing or not 1:7"
  fi
done
[ "$(stat -c '%a' "$run/uroced.sock")" = "666" ] && ok "socket mode 0666" || fail "socket mode"

"$ctl" --run-dir "$run" status >"$tmp/status.out"
expect_grep "$tmp/status.out" "uroce-ctl status: uroce0" "02:00:00:00:00:01"
expect_grep "$tmp/status.out" "uroce-ctl status: uroce1" "10.0.0.2"
"$ctl" --socket "$run/uroced.sock" clients --json >"$tmp/clients.json"
if /usr/bin/python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); assert len(j["devices"])==2 and "clients" in j' "$tmp/clients.json"; then
  ok "uroce-ctl clients --json"
else
  fail "uroce-ctl clients --json"
fi
for c in counters qps; do
  "$ctl" --run-dir "$run" "$c" >/dev/null && ok "uroce-ctl $c" || fail "uroce-ctl $c"
done

if [ -n "$run_wrapper" ] && command -v ibv_devices >/dev/null; then
  "$run_wrapper" --run-dir "$run" ibv_devices >"$tmp/ibv_devices.out" 2>&1 || true
  expect_grep "$tmp/ibv_devices.out" "ibv_devices lists uroce0" "uroce0"
  expect_grep "$tmp/ibv_devices.out" "ibv_devices lists uroce1" "uroce1"
fi

# ---- a second daemon on the same run directory: address in use -------------
rc=0
"$uroced" --run-dir "$run" --lcore 1 "${devs[@]}" 2>"$tmp/second.log" || rc=$?
[ "$rc" -eq 1 ] && ok "second daemon: exit 1" || fail "second daemon: exit $rc"
expect_grep "$tmp/second.log" "second daemon: address in use" "address in use: another uroced serves"
"$ctl" --run-dir "$run" status >/dev/null && ok "first daemon still serves" ||
  fail "first daemon no longer serves"

# ---- SIGTERM: exit 0, everything removed --------------------------------------
kill -TERM "$pid"
rc=0
wait "$pid" || rc=$?
daemon_pid=$pid
pid=
[ "$rc" -eq 0 ] && ok "SIGTERM: exit 0" || fail "SIGTERM: exit $rc"
[ ! -e "$run/sysfs" ] && ok "SIGTERM: sysfs tree removed" || fail "SIGTERM: sysfs tree left"
[ ! -e "$run/uroced.sock" ] && ok "SIGTERM: socket removed" || fail "SIGTERM: socket left"
for n in "${claimed[@]}"; do
  [ ! -e "/dev/infiniband/uverbs$n" ] && ok "SIGTERM: uverbs$n removed" ||
    fail "SIGTERM: uverbs$n left"
done
[ ! -e "/var/run/dpdk/uroced-$daemon_pid" ] && ok "SIGTERM: EAL runtime dir removed" ||
  fail "SIGTERM: /var/run/dpdk/uroced-$daemon_pid left"
[ ! -e "$run/eal_runtime" ] && ok "SIGTERM: runtime record removed" ||
  fail "SIGTERM: $run/eal_runtime left"

# ---- SIGKILL leaves a stale tree and EAL runtime dir; the next daemon ------
# ---- on the run dir cleans both up -------------------------------------------
start --lcore 1 "${devs[@]}" || fail "restart"
mapfile -t claimed < <(nodes)
kill -KILL "$pid"
wait "$pid" 2>/dev/null || true
killed_pid=$pid
pid=
[ -d "/var/run/dpdk/uroced-$killed_pid" ] && ok "SIGKILL leaves /var/run/dpdk/uroced-$killed_pid" ||
  fail "SIGKILL: no /var/run/dpdk/uroced-$killed_pid (nothing to test)"
# Nothing is cleaned by hand: the next daemon on this run dir must do it.
if start --lcore 1 "${devs[@]}"; then ok "start over a stale tree"; else
  fail "start over a stale tree"
  cat "$tmp/uroced.log"
fi
expect_grep "$tmp/uroced.log" "stale tree reported" "did not exit cleanly"
expect_grep "$tmp/uroced.log" "stale EAL runtime dir reported" \
  "removed the EAL runtime directory /var/run/dpdk/uroced-$killed_pid"
[ ! -e "/var/run/dpdk/uroced-$killed_pid" ] && ok "nothing left in /var/run/dpdk from pid $killed_pid" ||
  fail "/var/run/dpdk/uroced-$killed_pid left after the restart"
mapfile -t fresh < <(nodes)
for n in "${claimed[@]}"; do
  # A stale node is either released or reused by the new daemon.
  if [ -e "/dev/infiniband/uverbs$n" ] && [[ " ${fresh[*]} " != *" $n "* ]]; then
    fail "stale node uverbs$n left"
  fi
done
ok "stale nodes released"
second_pid=$pid
kill -TERM "$pid"
rc=0
wait "$pid" || rc=$?
pid=
[ "$rc" -eq 0 ] && ok "second SIGTERM: exit 0" || fail "second SIGTERM: exit $rc"
for n in "${fresh[@]}"; do
  [ ! -e "/dev/infiniband/uverbs$n" ] || fail "uverbs$n left at the end"
done
[ ! -e "/var/run/dpdk/uroced-$second_pid" ] || fail "/var/run/dpdk/uroced-$second_pid left at the end"
leftover=$(find "$run" -mindepth 1 2>/dev/null | sed -n 1,5p)
[ -z "$leftover" ] && ok "run dir empty at the end" || fail "left in $run: $leftover"

# ---- the soft descriptor limit is raised to the hard one ----------------------
# (uroced holds descriptors for its clients; the per-user [limits] must bind
# before a soft limit of 1,024 does.)
start_limited() {
  : >"$tmp/uroced.log"
  prlimit --nofile=512:4096 "$uroced" --run-dir "$run" "$@" 2>"$tmp/uroced.log" &
  pid=$!
  local i
  for ((i = 0; i < 300; i++)); do
    grep -q '^uroced: ready$' "$tmp/uroced.log" && return 0
    kill -0 "$pid" 2>/dev/null || return 1
    sleep 0.1
  done
  return 1
}
if start_limited --lcore 1 "${devs[@]}"; then
  soft=$(awk '/^Max open files/ {print $4}' "/proc/$pid/limits")
  [ "$soft" = 4096 ] && ok "soft RLIMIT_NOFILE 512 raised to the hard 4096" ||
    fail "soft RLIMIT_NOFILE is $soft, not the hard 4096"
  kill -TERM "$pid"
  rc=0
  wait "$pid" || rc=$?
  pid=
  [ "$rc" -eq 0 ] || fail "SIGTERM after the limit check: exit $rc"
else
  fail "start under prlimit --nofile=512:4096"
fi

[ "$fails" -eq 0 ] || { echo "$fails check(s) failed"; exit 1; }
echo "PASS"
