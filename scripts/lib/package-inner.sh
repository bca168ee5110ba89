#!/usr/bin/env bash
# scripts/package-test.sh's steps 4-8 (install, the service, verbs traffic,
# stop, purge), run by it in a private mount namespace:
#
#   package-inner.sh BASE OVERLAY DEBS
#
# BASE (the host's root, /) is the lower layer of an overlay mounted at
# OVERLAY/root whose upper layer is a tmpfs mounted at OVERLAY (a layer
# may not lie inside another on the same file system), with its own /proc,
# /dev (a tmpfs: the /dev/infiniband nodes stay here), /run and /tmp;
# nothing written there reaches BASE or the host. The daemon
# and the programs run in a network namespace of their own (`run` below).
# Prints PASS/FAIL lines; exit 0 when every check passed.
set -euo pipefail

if [ "${1:-}" = run ]; then
  mode=run
  R=$2
  ov=$3
else
  mode=main
  base=$1
  ov=$2
  debs=$3
  R=$ov/root
fi

failures=0
pass() { echo "PASS: $*"; }
fail() {
  echo "FAIL: $*"
  failures=$((failures + 1))
}
inr() { chroot "$R" "$@"; }
# Every program is bounded: a daemon that broke must fail the check, not hang it.
T=60

# ---- run: the service's ExecStart and the verbs programs (network namespace) ----
if [ "$mode" = run ]; then
  ip link set lo up
  unit=$R/lib/systemd/system/uroced.service
  key() { sed -n "s/^$1=//p" "$unit" | tail -1; }
  exec_start=$(key ExecStart)
  type=$(key Type)
  # RuntimeDirectory= and the tmpfiles.d lines, as systemd makes them.
  for d in $(key RuntimeDirectory); do
    install -d -m "$(key RuntimeDirectoryMode)" "$R/run/$d"
  done
  while read -r t path m _; do
    [ "$t" = d ] && install -d -m "$m" "$R$path"
  done < <(grep -v '^#' "$R/usr/lib/tmpfiles.d/uroce.conf")
  bset=-all
  for c in $(key CapabilityBoundingSet); do
    c=${c#CAP_}
    bset+=",+${c,,}"
  done
  echo "package-test: ExecStart=$exec_start (Type=$type, bounding set $bset)"
  /usr/bin/python3 -c '
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
with open(sys.argv[2], "a") as f:
    while True:
        f.write(s.recv(4096).decode().replace("\n", " | ") + "\n")
        f.flush()
' "$R/run/notify.sock" "$ov/notify.log" &
listener=$!
daemon=""
# shellcheck disable=SC2317
stop_all() {
  [ -n "$daemon" ] && kill "$daemon" 2>/dev/null && wait "$daemon" 2>/dev/null
  kill "$listener" 2>/dev/null || true
  wait "$listener" 2>/dev/null || true
}
trap stop_all EXIT
for _ in $(seq 50); do [ -S "$R/run/notify.sock" ] && break; sleep 0.1; done
# shellcheck disable=SC2086
chroot "$R" env NOTIFY_SOCKET=/run/notify.sock \
  setpriv --bounding-set="$bset" --inh-caps=-all -- $exec_start >"$ov/uroced.log" 2>&1 &
daemon=$!
ready=0
for _ in $(seq 300); do
  grep -q "READY=1" "$ov/notify.log" 2>/dev/null && { ready=1; break; }
  kill -0 "$daemon" 2>/dev/null || break
  sleep 0.1
done
if [ "$ready" = 1 ]; then
  pass "uroced (pid $daemon) sent: $(grep READY=1 "$ov/notify.log")"
else
  sed 's/^/  uroced: /' "$ov/uroced.log"
  fail "uroced did not send READY=1"
  exit 1
fi

out=$(timeout "$T" chroot "$R" uroce-run ibv_devices 2>&1) || true
while IFS= read -r l; do echo "  ibv_devices: $l"; done <<<"$out"
if grep -q uroce0 <<<"$out" && grep -q uroce1 <<<"$out"; then
  pass "ibv_devices through uroce-run lists uroce0 and uroce1"
else
  fail "ibv_devices through uroce-run"
fi

# pingpong USER: an ibv_rc_pingpong pair uroce0 <-> uroce1 as USER.
pingpong() {
  local user=$1 as=(timeout "$T" chroot)
  [ "$user" = root ] || as=(timeout "$T" chroot --userspec="$user":nogroup)
  "${as[@]}" "$R" uroce-run ibv_rc_pingpong -d uroce0 -g 1 -n 1000 >"$ov/pp-server.log" 2>&1 &
  local server=$!
  for _ in $(seq 100); do ss -ltn | grep -q ':18515 ' && break; sleep 0.1; done
  local crc=0 src=0
  "${as[@]}" "$R" uroce-run ibv_rc_pingpong -d uroce1 -g 1 -n 1000 127.0.0.1 >"$ov/pp-client.log" 2>&1 || crc=$?
  wait "$server" || src=$?
  sed 's/^/  server: /' "$ov/pp-server.log" | grep -E "bytes|iters|local|remote|rror" || true
  sed 's/^/  client: /' "$ov/pp-client.log" | grep -E "bytes|iters|rror" || true
  if [ "$crc" = 0 ] && [ "$src" = 0 ] && grep -q "bytes in" "$ov/pp-client.log" &&
    grep -q "bytes in" "$ov/pp-server.log"; then
    pass "ibv_rc_pingpong pair as $user through the installed uroce-run"
  else
    fail "ibv_rc_pingpong pair as $user (server $src, client $crc)"
  fi
}
pingpong root
pingpong nobody

# rping's exit status, its exit race tolerated (uroce_rping_done).
# shellcheck source=scripts/lib/rping.sh
source "$(dirname "$0")/rping.sh"

timeout "$T" chroot "$R" uroce-run rping -s -v -a 10.0.0.2 -C 10 >"$ov/rping-server.log" 2>"$ov/rping-server.err" &
server=$!
crc=1
# The client is tried again only while it never reached the server (the
# listener not up yet): the server serves one connection, so a client that
# got a ping through is final whatever its exit status.
for _ in $(seq 20); do
  sleep 0.3
  crc=0
  timeout "$T" chroot "$R" uroce-run rping -c -v -a 10.0.0.2 -C 10 >"$ov/rping-client.log" 2>"$ov/rping-client.err" ||
    crc=$?
  [ "$crc" = 0 ] && break
  grep -q "ping data" "$ov/rping-client.log" && break
done
src=0
uroce_rping_done "$crc" "$ov/rping-client.err" || kill "$server" 2>/dev/null || true
wait "$server" || src=$?
n=$(grep -c "ping data" "$ov/rping-client.log" || true)
if uroce_rping_done "$crc" "$ov/rping-client.err" && uroce_rping_done "$src" "$ov/rping-server.err" && [ "$n" = 10 ]; then
  grep -m2 "ping data" "$ov/rping-client.log" | sed 's/^/  rping client: /'
  [ "$crc$src" = 00 ] || echo "  (rping's exit race after its 10 pings: client $crc, server $src)"
  pass "rping pair: 10 pings through the installed uroce-run"
else
  cat "$ov/rping-client.log" "$ov/rping-client.err" | sed 's/^/  rping client: /' | tail -8
  cat "$ov/rping-server.log" "$ov/rping-server.err" | sed 's/^/  rping server: /' | tail -8
  fail "rping pair (server $src, client $crc, $n pings)"
fi

if timeout "$T" chroot "$R" uroce-ctl status >"$ov/status.log" 2>&1 && grep -q uroce1 "$ov/status.log"; then
  sed 's/^/  uroce-ctl: /' "$ov/status.log"
  pass "uroce-ctl status"
else
  cat "$ov/status.log"
  fail "uroce-ctl status"
fi

# Stop as systemd does: SIGTERM to the main process.
kill -TERM "$daemon"
for _ in $(seq 300); do kill -0 "$daemon" 2>/dev/null || break; sleep 0.1; done
if kill -0 "$daemon" 2>/dev/null; then
  kill -KILL "$daemon"
  fail "uroced still runs 30 s after SIGTERM"
fi
rc=0
wait "$daemon" || rc=$?
daemon=""
sleep 0.2
left=$(cd "$R/run/uroce" && ls -A)
nodes=$(ls -A "$R/dev/infiniband" 2>/dev/null || true)
if [ "$rc" = 0 ] && grep -q STOPPING=1 "$ov/notify.log" && [ -z "$left" ] && [ -z "$nodes" ]; then
  pass "SIGTERM: exit 0, STOPPING=1, /run/uroce and /dev/infiniband empty"
else
  tail -5 "$ov/uroced.log"
  fail "stop: exit $rc, run dir '$left', nodes '$nodes'"
fi
sed 's/^/  notify: /' "$ov/notify.log"
tail -3 "$ov/uroced.log" | sed 's/^/  uroced: /'
exit $((failures > 0))
fi

# ---- main: the root, install, run, purge ----
mkdir -p "$ov"
mount -t tmpfs -o mode=755 overlay-upper "$ov"
mkdir -p "$ov/upper" "$ov/work" "$R"
mount -t overlay overlay -o "lowerdir=$base,upperdir=$ov/upper,workdir=$ov/work" "$R"
mount -t proc proc "$R/proc"
mount -t tmpfs -o mode=755 dev "$R/dev"
for n in "null 1 3" "zero 1 5" "full 1 7" "random 1 8" "urandom 1 9" "tty 5 0"; do
  read -r name major minor <<<"$n"
  mknod -m 666 "$R/dev/$name" c "$major" "$minor"
done
mkdir "$R/dev/shm" "$R/dev/pts"
mount -t tmpfs -o mode=1777 shm "$R/dev/shm"
mount -t devpts -o newinstance,ptmxmode=0666 devpts "$R/dev/pts"
ln -s pts/ptmx "$R/dev/ptmx"
mount --bind -o ro /sys "$R/sys"
mount -t tmpfs -o mode=755 run "$R/run"
mount -t tmpfs -o mode=1777 tmp "$R/tmp"

# The files (names) of the directories a package installs into, but for
# apt's and dpkg's own state and logs. The rest of the host's root (home
# directories, checkouts, /tmp) is no package's.
snapshot() {
  (cd "$R" && find ./etc ./usr ./var ./opt ./srv -xdev \( -path ./var/lib/apt \
    -o -path ./var/cache -o -path ./var/log -o -path ./var/tmp -o -path ./var/lib/dpkg/triggers \
    -o -name '*-old' \) -prune -o -print 2>/dev/null | sort)
}
packages() { inr dpkg-query -W -f='${db:Status-Abbrev} ${binary:Package}\n' | awk '$1 == "ii" { print $2 }' | sort; }
# A root that has uroce already is no fresh root: say so rather than test it.
if [ -n "$(packages | grep -E '^(uroce|liburoce-dev)(:|$)' || true)" ] ||
  [ -e "$R/etc/libibverbs.d/uroce.driver" ] || [ -e "$R/etc/uroce" ]; then
  fail "the host has uroce installed (dpkg, /etc/uroce or uroce.driver): purge it first"
  exit 1
fi
named_uroce() { (cd "$R" && find ./etc ./usr ./var ./opt ./srv -xdev -iname '*uroce*' 2>/dev/null | sort); }
snapshot >"$ov/before.txt"
named_uroce >"$ov/named.before"
packages >"$ov/packages.before"

mkdir "$R/tmp/debs"
cp "$debs"/uroce_*.deb "$debs"/liburoce-dev_*.deb "$R/tmp/debs/"
# No package source: apt may take only what the host has installed, so a
# dependency it lacks fails the install instead of being downloaded.
nosrc="-o Dir::Etc::SourceList=/dev/null -o Dir::Etc::SourceParts=/nonexistent"
if inr sh -c "DEBIAN_FRONTEND=noninteractive apt-get install -y -q $nosrc /tmp/debs/uroce_*.deb /tmp/debs/liburoce-dev_*.deb" \
  >"$ov/install.log" 2>&1; then
  grep -E "^(Setting up|The following NEW)" "$ov/install.log" | sed 's/^/  /' | head -5
  pass "apt-get install ./uroce_*.deb ./liburoce-dev_*.deb ($(grep -c '^Setting up' "$ov/install.log") packages set up)"
else
  tail -30 "$ov/install.log"
  fail "apt-get install"
  exit 1
fi
for f in /usr/sbin/uroced /usr/bin/uroce-ctl /usr/bin/uroce-run /etc/uroce/uroced.toml \
  /etc/libibverbs.d/uroce.driver /lib/systemd/system/uroced.service \
  /usr/share/man/man8/uroced.8.gz /usr/include/infiniband/uroce_dv.h; do
  [ -e "$R$f" ] || fail "not installed: $f"
done
ls "$R"/usr/lib/*/libibverbs/liburoce-rdmav34.so >/dev/null || fail "the provider is not installed"
inr man -w uroced uroce-ctl uroce-run uroce_dv >/dev/null 2>&1 ||
  [ ! -x "$R/usr/bin/man" ] || fail "man -w finds not every page"

rc=0
unshare --net -- "$0" run "$R" "$ov" || rc=$?
[ "$rc" = 0 ] || failures=$((failures + 1))

# What the install added besides ours (dependencies the host lacked) goes
# too, as `apt-get autoremove --purge` would take it from a fresh root; the
# host's own auto-installed packages stay.
added=$(comm -13 "$ov/packages.before" <(packages) | grep -vE '^(uroce|liburoce-dev)(:|$)' | tr '\n' ' ' || true)
# shellcheck disable=SC2086
if inr sh -c "DEBIAN_FRONTEND=noninteractive apt-get purge -y -q $nosrc uroce liburoce-dev $added" \
  >"$ov/purge.log" 2>&1; then
  pass "apt-get purge uroce liburoce-dev${added:+ $added}"
else
  tail -20 "$ov/purge.log"
  fail "apt-get purge"
fi
rm -rf "$R/tmp/debs"
for p in uroce liburoce-dev; do
  # shellcheck disable=SC2016
  st=$(inr dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
  if [ -n "$st" ] && [ "$st" != "unknown ok not-installed" ]; then
    fail "dpkg still knows $p: $st"
  fi
done
snapshot >"$ov/after.txt"
if diff "$ov/before.txt" "$ov/after.txt" >"$ov/diff.txt"; then
  pass "after purge the root's system directories hold the files they held before the install ($(wc -l <"$ov/before.txt") paths)"
else
  sed 's/^/  /' "$ov/diff.txt" | head -40
  fail "files differ after purge"
fi
# Also where the snapshot does not look (/var/cache, /var/log, ...): no
# path named for uroce that the root did not have before the install.
stray=$(named_uroce | comm -13 "$ov/named.before" - | head)
[ -z "$stray" ] || fail "left after purge: $stray"
[ ! -e "$R/etc/uroce" ] || fail "/etc/uroce left after purge"
if compgen -G "$R/usr/lib/*/libibverbs/liburoce*" >/dev/null; then
  fail "the provider is left after purge"
fi
[ ! -e "$R/etc/libibverbs.d/uroce.driver" ] || fail "uroce.driver left after purge"
[ "$failures" = 0 ] && pass "nothing of uroce left: dpkg, /etc/uroce, the provider, the .driver file"
exit $((failures > 0))
