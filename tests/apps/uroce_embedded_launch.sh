#!/usr/bin/env bash
# uroce-embedded (apps/uroced/embedded_launch.cpp), what a user sees:
#   - refusals, each with its exact message and exit status 1 or 2, and
#     nothing left behind;
#   - a program run in embedded mode (ibv_devinfo on two ring devices in one
#     process) sees both devices, its exit status comes back, and the run
#     directory, the /dev/infiniband nodes and EAL's runtime directory go,
#     also when the program is killed while its engine runs;
#   - an engine that cannot start fails every open with its reason, without
#     crashing the program;
#   - two programs over memif, the memif client's started a second before
#     its server's: the client's engine waits for the server (within the
#     first open's link wait) and both see their port active (each holds
#     its port until the other saw its own, port_up.py), both exit 0
#     (neither killed by SIGPIPE when the other has gone first);
#   - the same through a socket that leaves the client's first handshake
#     unanswered (memif_drop_first.py): the client opens its port again,
#     without crashing, and both see their link come up.
#
#   uroce_embedded_launch.sh BUILD_DIR
set -uo pipefail
build=$(realpath "$1")
launch=$build/apps/uroced/uroce-embedded
run=$build/verbs-provider/uroce-run
if [ "$(id -u)" -ne 0 ]; then
  echo "SKIP: needs root (mknod /dev/infiniband/uverbsN)"
  exit 77
fi
if ! command -v ibv_devinfo >/dev/null; then
  echo "SKIP: ibv_devinfo missing (apt-get install ibverbs-utils)"
  exit 77
fi
work=$(mktemp -d /tmp/uroce_embedded_launch.XXXXXX)
trap 'rm -rf "$work"' EXIT
export TMPDIR=$work
failed=0
check() {  # check NAME WANT-RC WANT-TEXT RC OUTPUT
  if [ "$4" -eq "$2" ] && grep -qF -- "$3" <<<"$5"; then
    echo "PASS: $1"
  else
    echo "FAIL: $1: exit $4 (want $2), output: $5"
    failed=$((failed + 1))
  fi
}
# The two ends of a memif link run port_up.py, which holds its port until
# the other end saw its own active (a program that exits takes its port
# down).
port_up=$(dirname "$0")/port_up.py
dev0="name=uroce0;mac=02:00:00:ee:00:01;ipv4=10.206.0.1;port=ring:p0"
dev1="name=uroce1;mac=02:00:00:ee:00:02;ipv4=10.206.0.2;port=ring:p0"

out=$("$launch" --device "$dev0" 2>&1); rc=$?
check "no -- and no command" 2 "usage: uroce-embedded [uroced options] -- CMD" "$rc" "$out"
out=$(UROCE_ENGINE_LIB=/x "$launch" --run-dir /tmp/x --device "$dev0" -- true 2>&1); rc=$?
check "--run-dir refused" 1 "uroce-embedded: --run-dir: embedded mode makes its own run directory" "$rc" "$out"
out=$(UROCE_ENGINE_LIB=/x "$launch" -- true 2>&1); rc=$?
check "no device" 1 "uroce-embedded: device: no devices (add a [[device]] table or --device)" "$rc" "$out"
out=$(env -u UROCE_ENGINE_LIB "$launch" --device "$dev0" --device "$dev1" -- true 2>&1); rc=$?
check "no engine library" 1 "UROCE_ENGINE_LIB must name liburoce-engine.so by its absolute path" "$rc" "$out"
out=$(UROCE_ENGINE_LIB=/x "$launch" --device "name=uroce0;mac=zz;ipv4=10.0.0.1;port=ring:p0" -- true 2>&1); rc=$?
check "a bad device spec, as uroced says it" 1 "uroce-embedded: device[0].mac" "$rc" "$out"

nodes_before=$(ls /dev/infiniband 2>/dev/null | sort)
eal_before=$(ls /var/run/dpdk 2>/dev/null | sort)
out=$("$run" --embedded --lcore 1 --device "$dev0" --device "$dev1" -- ibv_devinfo -l 2>&1); rc=$?
check "ibv_devinfo -l lists both devices" 0 "2 HCAs found" "$rc" "$out"
out=$("$run" --embedded --lcore 1 --device "$dev0" --device "$dev1" -- sh -c 'ibv_devinfo -d uroce1 >/dev/null && exit 7' 2>&1); rc=$?
check "the program's exit status comes back" 7 "" "$rc" "$out"
# An engine that cannot start (a memif client with no server within the
# first open's 10 s link wait) fails each open with a reason; a second open
# in the same process must not crash it.
m0="name=uroce0;mac=02:00:00:ee:00:01;ipv4=10.206.0.1;port=net_memif0,role=client,socket=$work/none0.sock,socket-abstract=no"
m1="name=uroce1;mac=02:00:00:ee:00:02;ipv4=10.206.0.2;port=net_memif1,role=client,socket=$work/none1.sock,socket-abstract=no"
out=$("$run" --embedded --device "$m0" --device "$m1" -- ibv_devinfo 2>&1); rc=$?
check "an engine that cannot start: each open fails with its reason" 1 "uroce0: port 0 (net_memif0): start failed" "$rc" "$out"
check "a later open in that process says why the engine did not start" 1 "embedded engine: did not start in this process: uroce0: port 0 (net_memif0): start failed" "$rc" "$out"
check "the reason names the socket no server listened at" 1 "no memif server listened at $work/none0.sock within" "$rc" "$out"
if grep -qE "terminate called|Aborted|Segmentation" <<<"$out"; then
  echo "FAIL: the second open crashed the program: $out"
  failed=$((failed + 1))
else
  echo "PASS: the second open fails without a crash"
fi
# The memif client first, its server 1 s later (as ucx_perftest's server
# opens its device only after the client connected over TCP).
sock=$work/late.sock
mc="name=uroce0;mac=02:00:00:ee:00:02;ipv4=10.206.0.2;mtu=9000;port=net_memif0,role=client,socket=$sock,socket-abstract=no,bsize=8192"
ms="name=uroce0;mac=02:00:00:ee:00:01;ipv4=10.206.0.1;mtu=9000;port=net_memif0,role=server,socket=$sock,socket-abstract=no,bsize=8192"
t0=$(date +%s%N)
"$run" --embedded --lcore 1 --log-level info --device "$mc" -- \
  /usr/bin/python3 "$port_up" uroce0 "$work/c.up" "$work/s.up" >"$work/late-client.out" 2>&1 &
client=$!
sleep 1
out_s=$("$run" --embedded --lcore 0 --device "$ms" -- \
  /usr/bin/python3 "$port_up" uroce0 "$work/s.up" "$work/c.up" 2>&1); rc_s=$?
wait "$client"; rc_c=$?
rm -f "$work/c.up" "$work/s.up"
waited_ms=$((($(date +%s%N) - t0) / 1000000))
out_c=$(cat "$work/late-client.out")
rm -f "$work/late-client.out"
check "memif client first: its open succeeds once the server is there" 0 "uroce0: PORT_ACTIVE" "$rc_c" "$out_c"
check "memif client first: the client's engine waited for the server" 0 "uroce0: memif server at $sock found after" "$rc_c" "$out_c"
check "memif client first: the server's open succeeds" 0 "uroce0: PORT_ACTIVE" "$rc_s" "$out_s"
if [ "$waited_ms" -lt 1000 ]; then
  echo "FAIL: the client finished after $waited_ms ms, before its server started"
  failed=$((failed + 1))
fi

# The client's first handshake is left unanswered for 700 ms: its open gives
# up on it after 500 ms, closes the port and opens it again (the path that
# crashed with SIGSEGV when the close raced the PMD's interrupt thread).
proxy=$work/drop.sock
sock=$work/real.sock
mc="name=uroce0;mac=02:00:00:ee:00:02;ipv4=10.206.0.2;mtu=9000;port=net_memif0,role=client,socket=$proxy,socket-abstract=no,bsize=8192"
ms="name=uroce0;mac=02:00:00:ee:00:01;ipv4=10.206.0.1;mtu=9000;port=net_memif0,role=server,socket=$sock,socket-abstract=no,bsize=8192"
timeout 90 /usr/bin/python3 "$(dirname "$0")/memif_drop_first.py" "$proxy" "$sock" 700 >"$work/proxy.out" 2>&1 &
proxy_pid=$!
for _ in $(seq 100); do
  grep -q '^listening' "$work/proxy.out" && break
  sleep 0.1
done
"$run" --embedded --lcore 1 --log-level info --device "$mc" -- \
  /usr/bin/python3 "$port_up" uroce0 "$work/c.up" "$work/s.up" >"$work/retry-client.out" 2>&1 &
client=$!
# The server once the first connection was held and closed.
for _ in $(seq 300); do
  grep -q '^held the first' "$work/proxy.out" && break
  sleep 0.1
done
out_s=$("$run" --embedded --lcore 0 --device "$ms" -- \
  /usr/bin/python3 "$port_up" uroce0 "$work/s.up" "$work/c.up" 2>&1); rc_s=$?
wait "$client"; rc_c=$?
rm -f "$work/c.up" "$work/s.up"
kill "$proxy_pid"
wait "$proxy_pid"
out_c=$(cat "$work/retry-client.out")
out_p=$(cat "$work/proxy.out")
rm -f "$work/retry-client.out" "$work/proxy.out"
check "first handshake unanswered: the client gives up on it and opens again" 0 "did not complete the handshake in 500 ms; again" "$rc_c" "$out_c"
check "first handshake unanswered: the client's open succeeds (no crash)" 0 "uroce0: PORT_ACTIVE" "$rc_c" "$out_c"
check "first handshake unanswered: the client found the server" 0 "memif server at $proxy found after" "$rc_c" "$out_c"
check "first handshake unanswered: the server's open succeeds" 0 "uroce0: PORT_ACTIVE" "$rc_s" "$out_s"
check "first handshake unanswered: the retry went through the socket" 0 "relaying a connection" 0 "$out_p"

# A program killed while its engine runs: the engine removes nothing, so
# uroce-embedded removes EAL's runtime directory from the engine's record.
out=$("$run" --embedded --lcore 1 --device "$dev0" --device "$dev1" -- /usr/bin/python3 -c '
import os
from pyverbs.device import Context
ctx = Context(name="uroce0")
os.kill(os.getpid(), 9)' 2>&1); rc=$?
check "a program killed while its engine runs: its EAL runtime directory goes" 137 \
  "uroce-embedded: removed the EAL runtime directory /var/run/dpdk/uroced-" "$rc" "$out"

left=$(ls "$work")
nodes_after=$(ls /dev/infiniband 2>/dev/null | sort)
# Only a node that appeared is a leftover: another run's daemon may remove
# its own meanwhile.
nodes_new=$(comm -13 <(echo "$nodes_before") <(echo "$nodes_after"))
eal_new=$(comm -13 <(echo "$eal_before") <(ls /var/run/dpdk 2>/dev/null | sort))
if [ -n "$left" ] || [ -n "$nodes_new" ] || [ -n "$eal_new" ]; then
  echo "FAIL: left behind: run dirs '$left'; /dev/infiniband gained '$nodes_new' (was '$nodes_before'); /var/run/dpdk gained '$eal_new'"
  failed=$((failed + 1))
else
  echo "PASS: no run directory, node or EAL runtime directory left behind"
fi
echo "uroce_embedded_launch: $failed failed"
[ "$failed" -eq 0 ]
