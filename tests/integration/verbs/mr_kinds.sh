#!/usr/bin/env bash
# ibv_reg_mr on every kind of memory an application can read (issue 13):
# mr_kinds (mr_kinds.cpp) opens uroce0 and uroce1 of one uroced (a ring)
# through uroce-run and checks WRITE, READ and SEND into and out of each
# kind byte for byte, the revoke after ibv_dereg_mr, the read-only rules,
# and prints the bandwidth of the remap and shared-object paths side by
# side. SHM_HUGETLB needs free huge pages: when fewer than 8 are free, the
# pool grows by 8 for the run and shrinks back at exit. Judged on every check
# line and on the daemon surviving a client that truncates a registered file.
# Then the mapped-bytes quota against registrations and against rings.
#
#   mr_kinds.sh BUILD_DIR MR_KINDS
source "$(dirname "$0")/common.sh"
verbs_test_init vmrk "$1" setpriv /usr/bin/python3
MR_KINDS=$2

HUGE_ADDED=0
hugepages_restore() {
  if [ "$HUGE_ADDED" -gt 0 ]; then
    local now
    now=$(cat /proc/sys/vm/nr_hugepages)
    echo $((now - HUGE_ADDED)) >/proc/sys/vm/nr_hugepages || true
  fi
}
trap 'rc=$?; hugepages_restore; (exit $rc); _uroce_on_exit' EXIT
free=$(awk '/^HugePages_Free:/ { print $2 }' /proc/meminfo)
if [ "${free:-0}" -lt 8 ]; then
  before=$(cat /proc/sys/vm/nr_hugepages)
  echo $((before + 8)) >/proc/sys/vm/nr_hugepages || true
  HUGE_ADDED=$(($(cat /proc/sys/vm/nr_hugepages) - before))
fi
echo "huge pages: $(awk '/^HugePages_(Total|Free):/ { printf "%s %s ", $1, $2 }' /proc/meminfo)"

MIB=$((1 << 20))
uroce_daemon_start d --lcore 1 -- \
  --device "$(verbs_device uroce0 02:00:00:d5:00:01 10.213.0.1 ring:p0)" \
  --device "$(verbs_device uroce1 02:00:00:d5:00:02 10.213.0.2 ring:p0)" \
  --limit user_map_bytes=$((8 * MIB))
R=("$UROCE_RUN" --run-dir "${UROCE_DAEMON_RUN[d]}")

out=$UROCE_TMP/mr_kinds.out
uroce_no_pair
st=0 rc=0
timeout 240 "${R[@]}" "$MR_KINDS" uroce0 uroce1 1 >"$out" 2>&1 || rc=$?
cat "$out"
# 10 writable kinds x 5 checks, 3 read-only kinds x 6 checks, the truncation.
want=69
grep -q '^SysV SHM_HUGETLB: not tested' "$out" && want=$((want - 5))
ok=$(grep -c ': ok$' "$out" || true)
if [ "$rc" -ne 0 ]; then
  UROCE_WHY="mr_kinds exited $rc: $(grep -E 'FAILED|mr_kinds:' "$out" | sed -n 1,5p | tr '\n' '|')"; st=1
elif [ "$ok" -ne "$want" ] || ! grep -qx 'mr_kinds: all passed' "$out"; then
  UROCE_WHY="$ok of $want checks ok"; st=1
fi
uroce_verdict "ibv_reg_mr on heap, anonymous, file, memfd, SysV (huge), stack and read-only memory: WRITE, READ, SEND, revoke" "$st"

# The mapped-bytes quota charges a shared object too (root is never limited,
# so the probe runs as nobody): 3 MiB anonymous shared buffers against an
# 8 MiB quota, the third refused with ENOMEM.
uroce_no_pair
st=0
got=$(timeout 60 setpriv --reuid=nobody --regid=nogroup --clear-groups \
  "${R[@]}" "$MR_KINDS" quota uroce0 $((3 * MIB)) 5 2>&1 | tail -n 1 || true)
echo "  nobody: $got"
if [ "$got" != "registered 2 errno 12" ]; then
  UROCE_WHY="nobody got '$got'"; st=1
fi
uroce_verdict "user_map_bytes 8 MiB: the third 3 MiB anonymous shared registration gets ENOMEM" "$st"

# Ring memory counts against the same quota (docs/shm.md, the arena): QPs
# with a 4,096-deep send queue (2 MiB of ring) and a CQ of 4,096 entries
# each; before rings were charged all 20 were made.
st=0
got=$(timeout 60 setpriv --reuid=nobody --regid=nogroup --clear-groups \
  "${R[@]}" /usr/bin/python3 "$VERBS_TEST_DIR/verbs_abuse.py" rings uroce0 4096 20 2>&1 |
  tail -n 1 || true)
echo "  nobody: $got"
n=$(echo "$got" | awk '$1 == "rings" && $3 == "errno" && $4 == 12 {print $2}')
if [ -z "$n" ] || [ "$n" -ge 4 ]; then
  UROCE_WHY="nobody got '$got'"; st=1
fi
uroce_verdict "user_map_bytes 8 MiB: QPs with 2.5 MiB of rings each, ENOMEM before the fourth" "$st"

verbs_daemons_stop "uroced" d
uroce_summary mr_kinds
