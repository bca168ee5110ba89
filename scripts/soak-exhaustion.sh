#!/usr/bin/env bash
# Issue 12's soak, by hand (not in CI): one uroced, and for SECS seconds
# (default 600) four loops at once against it, as nobody where a hostile
# user would be:
#   - verbs_abuse.py channels (200 channel cycles) and objects up to the
#     per-user quota, then exit;
#   - a connection flood (50 held, 2 s of connect/close);
#   - fd-limited clients (as the daemon user): contexts opened with too
#     few descriptors left, then 100 QPs with a CQ each at RLIMIT_NOFILE 64;
#     and the sparse-memfd attack (as nobody, 4 KiB registered and 64 GiB
#     mapped each, until the 512 GiB mapped quota);
#   - a verified 200-iteration ibv_rc_pingpong, with a client SIGKILLed
#     mid-run every fifth round.
# Every 30 s it prints uroced's RSS (VmRSS) and descriptor count; at the
# end, both again once the loops are done, and how many rounds each loop
# made and failed. Needs root, a built tree (BUILD_DIR, default build/).
#
# A sanitizer build (meson -Db_sanitize=address,undefined, clang) of uroced,
# the provider and the interposer: set SOAK_ASAN_RUNTIME to clang's shared
# ASan runtime (clang-14 -print-file-name=libclang_rt.asan-x86_64.so) and
# UROCE_CTL to an uninstrumented uroce-ctl (an ASan executable cannot load
# that runtime a second time). The verbs clients (python, ibv_rc_pingpong:
# not instrumented themselves) then preload it, with leak checking off (the
# interpreter's own leaks); uroced runs with leak checking on, and
# SOAK_UROCED_ASAN_OPTIONS added to its ASAN_OPTIONS (quarantine_size_mb=...
# tells ASan's own retention from growth). Reports go to asan.* and ubsan.*
# files in the work dir, printed at the end. Each sample then also says
# where uroced's resident memory is (scripts/lib/rss_breakdown.py), and the
# end how many ASan thread contexts it holds
# (scripts/lib/asan_thread_contexts.py).
#
#   scripts/soak-exhaustion.sh [BUILD_DIR] [SECS]
set -euo pipefail
SOURCE_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=scripts/lib/uroce-env.sh
source "$SOURCE_ROOT/scripts/lib/uroce-env.sh"
build=$(realpath "${1:-$SOURCE_ROOT/build}")
secs=${2:-600}
[ "$(id -u)" -eq 0 ] || { echo "needs root"; exit 1; }
uroce_env_init soak
uroce_find_tools "$build"
ABUSE=$SOURCE_ROOT/tests/integration/verbs/verbs_abuse.py
NOBODY=(setpriv --reuid=nobody --regid=nogroup --clear-groups)
# The fd-limited client runs as another user: nobody's quota is the abuse
# loop's to exhaust, and must not decide this loop's verdict.
OTHER=(setpriv --reuid=daemon --regid=daemon --clear-groups)

# What runs a verbs client: plain, or with the ASan runtime preloaded.
CLIENT_ENV=()
if [ -n "${SOAK_ASAN_RUNTIME:-}" ]; then
  chmod 1777 "$UROCE_TMP"
  # uroced through a wrapper (same pid: exec) that gives it its options.
  real_uroced=$UROCED
  UROCED=$UROCE_TMP/uroced-asan
  printf '#!/bin/sh\nexport ASAN_OPTIONS=detect_leaks=1:log_path=%s/asan.uroced%s\nexport UBSAN_OPTIONS=print_stacktrace=1:log_path=%s/ubsan.uroced\nexec %s "$@"\n' \
    "$UROCE_TMP" "${SOAK_UROCED_ASAN_OPTIONS:+:$SOAK_UROCED_ASAN_OPTIONS}" "$UROCE_TMP" \
    "$real_uroced" >"$UROCED"
  chmod 755 "$UROCED"
  CLIENT_ENV=(env "LD_PRELOAD=$SOAK_ASAN_RUNTIME"
    "ASAN_OPTIONS=detect_leaks=0:verify_asan_link_order=0:log_path=$UROCE_TMP/asan.client"
    "UBSAN_OPTIONS=print_stacktrace=1:log_path=$UROCE_TMP/ubsan.client")
fi

uroce_daemon_start d --lcore 1 -- \
  --device "name=uroce0;mac=02:00:00:d4:00:01;ipv4=10.212.0.1;mtu=9000;port=ring:p0" \
  --device "name=uroce1;mac=02:00:00:d4:00:02;ipv4=10.212.0.2;mtu=9000;port=ring:p0" \
  --limit user_map_bytes=$((512 << 30))
run=${UROCE_DAEMON_RUN[d]}
dpid=${UROCE_DAEMON_PID[d]}
R=("${CLIENT_ENV[@]}" "$UROCE_RUN" --run-dir "$run")
end=$((SECONDS + secs))

sample() {
  echo "$1 t=$((SECONDS))s rss_kb=$(awk '/^VmRSS/ {print $2}' "/proc/$dpid/status") fds=$(ls "/proc/$dpid/fd" | wc -l)"
  # Under ASan, where the resident memory is (docs/STATUS.md, issue 12).
  [ -z "${SOAK_ASAN_RUNTIME:-}" ] ||
    echo "  $(/usr/bin/python3 "$SOURCE_ROOT/scripts/lib/rss_breakdown.py" "$dpid" 0)"
}

# loop NAME CMD...: runs CMD until the end, counting rounds and failures.
loop() {
  local name=$1 n=0 bad=0
  shift
  while [ $SECONDS -lt $end ]; do
    n=$((n + 1))
    "$@" >>"$UROCE_TMP/$name.log" 2>&1 || bad=$((bad + 1))
  done
  echo "$name: $n rounds, $bad failed" >"$UROCE_TMP/$name.count"
}

abuse() {
  timeout 60 "${NOBODY[@]}" "${R[@]}" /usr/bin/python3 "$ABUSE" channels uroce0 "$dpid" 200 || true
  timeout 60 "${NOBODY[@]}" "${R[@]}" /usr/bin/python3 "$ABUSE" objects uroce0 800 800 800
}
flood() {
  timeout 30 "${NOBODY[@]}" /usr/bin/python3 "$ABUSE" flood "$run/uroced.sock" 50 2
}
limited() {
  timeout 60 "${OTHER[@]}" "${R[@]}" /usr/bin/python3 "$ABUSE" fdlimit uroce0 "$UROCE_CTL" "$run" &&
    timeout 60 "${OTHER[@]}" "${R[@]}" /usr/bin/python3 "$ABUSE" pairs uroce0 64 100 "$UROCE_CTL" \
      "$run" | grep '^pairs 100 errno 0' >/dev/null &&
    timeout 60 "${NOBODY[@]}" /usr/bin/python3 "$ABUSE" sparse "$run/uroced.sock" uroce0 4096 100
}
round=0
# A pair in their own process groups (uroce_bg), so a kill reaches the
# programs and not only a wrapper.
pingpong() {
  round=$((round + 1))
  local port spg cpg rc=0 n=200 crc=0
  uroce_next_port port
  [ "$port" -gt 60000 ] && _UROCE_PORT_NEXT=12000
  [ $((round % 5)) -eq 0 ] && n=100000000
  uroce_bg spg --timeout 30 "$UROCE_TMP/pp-server.out" "$UROCE_TMP/pp-server.out" -- \
    "${R[@]}" ibv_rc_pingpong -d uroce0 -g 1 -p "$port" -n "$n" -c
  sleep 0.5
  uroce_bg cpg --timeout 30 "$UROCE_TMP/pp-client.out" "$UROCE_TMP/pp-client.out" -- \
    "${R[@]}" ibv_rc_pingpong -d uroce1 -g 1 -p "$port" -n "$n" -c 127.0.0.1
  if [ "$n" -ne 200 ]; then
    sleep 1.5
    uroce_kill_group KILL "$cpg"
    uroce_kill_group KILL "$spg"
  fi
  uroce_wait "$cpg" crc
  uroce_wait "$spg" rc
  [ "$n" -ne 200 ] || [ $((rc + crc)) -eq 0 ] && return 0
  # A failed verified round: keep what both sides said (the loop's log).
  echo "round $round (port $port): server rc $rc, client rc $crc"
  tail -n 5 "$UROCE_TMP/pp-server.out" "$UROCE_TMP/pp-client.out"
  return 1
}

sample start
loops=()
loop abuse abuse &
loops+=($!)
loop flood flood &
loops+=($!)
loop limited limited &
loops+=($!)
loop pingpong pingpong &
loops+=($!)
while [ $SECONDS -lt $end ]; do
  sleep 30
  sample during
done
# Only the loops: a plain `wait` would wait for the daemon too.
wait "${loops[@]}"
sleep 2
sample after
cat "$UROCE_TMP"/*.count
uroce_daemon_alive d && echo "uroced alive" || echo "uroced DIED"
# clang-14's ASan keeps a thread context for every thread ever created (one
# per connection here): how many the soak's connections left.
[ -z "${SOAK_ASAN_RUNTIME:-}" ] ||
  /usr/bin/python3 "$SOURCE_ROOT/scripts/lib/asan_thread_contexts.py" "$dpid" "$real_uroced" || true
# The first 200 bytes (no `| head`: its early exit fails the pipeline).
clients=$("$UROCE_CTL" --run-dir "$run" clients --json)
echo "${clients:0:200}"
uroce_daemon_stop d && echo "uroced exits 0 on SIGTERM"
if [ -n "${SOAK_ASAN_RUNTIME:-}" ]; then
  echo "sanitizer reports in $UROCE_TMP:"
  for f in "$UROCE_TMP"/asan.* "$UROCE_TMP"/ubsan.*; do
    [ -e "$f" ] || continue
    echo "== $f"
    head -n 20 "$f"
  done
fi
