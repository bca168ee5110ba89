#!/usr/bin/env bash
# The tests' clean-up when a test fails early (scripts/lib/uroce-env.sh,
# its EXIT trap): a test that fails while an embedded program still holds
# its engine must leave no /dev/infiniband node, no EAL runtime directory
# and no process behind. The inner run (this script with --inner) starts
# such a program, waits until its objects exist, and exits 1 as a failing
# check would; the outer run compares what is there before and after.
# Then the same kind of program, taken for hung, is stopped the way the
# tests' failure paths stop a hung server (uroce_stop_group: SIGTERM to its
# group, SIGKILL 3 s later): its launcher must still remove its run
# directory, node and EAL runtime directory.
#
#   cleanup_after_failure.sh BUILD_DIR
source "$(dirname "$0")/common.sh"

if [ "${2:-}" = --inner ]; then
  verbs_test_init vcleanin "$1" /usr/bin/python3
  export TMPDIR=$UROCE_TMP/embedded
  mkdir -p "$TMPDIR"
  dev0=$(verbs_device uroce0 02:00:00:d9:00:01 10.218.1.1 ring:p0)
  dev1=$(verbs_device uroce1 02:00:00:d9:00:02 10.218.1.2 ring:p0)
  out=$UROCE_TMP/program.out
  uroce_bg PG --timeout 60 "$out" "$out" -- \
    "$UROCE_RUN" --embedded --lcore 0 --device "$dev0" --device "$dev1" -- \
    /usr/bin/python3 "$VERBS_TEST_DIR/verbs_abuse.py" objects uroce0 1 1 1 --hold "$UROCE_TMP/never"
  if ! uroce_wait_for_line "$out" '^qps 1 errno 0' 30 "$PG"; then
    echo "inner: the program did not make its objects: $(tail -n 3 "$out" | tr '\n' '|')"
    exit 2
  fi
  echo "inner: program $(pgrep -g "$PG" -x python3 | head -n 1) holds its engine; failing"
  exit 1
fi

verbs_test_init vcleanup "$1" /usr/bin/python3
nodes_before=$(ls /dev/infiniband 2>/dev/null | sort)
eal_before=$(ls /var/run/dpdk 2>/dev/null | sort)
rc=0
"$0" "$1" --inner >"$UROCE_TMP/inner.out" 2>&1 || rc=$?
cat "$UROCE_TMP/inner.out"
prog=$(sed -n 's/^inner: program \([0-9]*\) holds.*/\1/p' "$UROCE_TMP/inner.out")
st=0
if [ "$rc" != 1 ] || [ -z "$prog" ]; then
  UROCE_WHY="the inner run exited $rc before its program held an engine"
  st=1
fi
# Only what appeared is a leftover: another test's daemon may come and go.
nodes_new=$(comm -13 <(echo "$nodes_before") <(ls /dev/infiniband 2>/dev/null | sort))
eal_new=$(comm -13 <(echo "$eal_before") <(ls /var/run/dpdk 2>/dev/null | sort))
if [ "$st" = 0 ] && { [ -n "$nodes_new" ] || [ -n "$eal_new" ]; }; then
  UROCE_WHY="left behind: /dev/infiniband gained '$nodes_new', /var/run/dpdk gained '$eal_new'"
  st=1
fi
if [ "$st" = 0 ] && kill -0 "$prog" 2>/dev/null; then
  UROCE_WHY="the program $prog still runs"
  st=1
fi
uroce_verdict "a test failing under a running embedded engine leaves nothing behind" "$st"

st=0
export TMPDIR=$UROCE_TMP/embedded
mkdir -p "$TMPDIR"
nodes_before2=$(ls /dev/infiniband 2>/dev/null | sort)
eal_before2=$(ls /var/run/dpdk 2>/dev/null | sort)
out=$UROCE_TMP/hung.out
uroce_bg HPG --timeout 60 "$out" "$out" -- \
  "$UROCE_RUN" --embedded --lcore 0 \
  --device "$(verbs_device uroce0 02:00:00:d9:00:11 10.218.1.11 ring:p0)" \
  --device "$(verbs_device uroce1 02:00:00:d9:00:12 10.218.1.12 ring:p0)" -- \
  /usr/bin/python3 "$VERBS_TEST_DIR/verbs_abuse.py" objects uroce0 1 1 1 --hold "$UROCE_TMP/never"
if ! uroce_wait_for_line "$out" '^qps 1 errno 0' 30 "$HPG"; then
  UROCE_WHY="the program did not make its objects: $(tail -n 3 "$out" | tr '\n' '|')"
  st=1
fi
hung=$(pgrep -g "$HPG" -x python3 | head -n 1)
uroce_stop_group "$HPG"
uroce_wait "$HPG" hrc
left_nodes=$(comm -13 <(echo "$nodes_before2") <(ls /dev/infiniband 2>/dev/null | sort))
left_eal=$(comm -13 <(echo "$eal_before2") <(ls /var/run/dpdk 2>/dev/null | sort))
left_runs=$(ls "$TMPDIR")
echo "  stopped the hung program ${hung:-?}: exit status $hrc; left: nodes '$left_nodes', EAL '$left_eal', run dirs '$left_runs'"
if [ "$st" = 0 ] && { [ -n "$left_nodes" ] || [ -n "$left_eal" ] || [ -n "$left_runs" ]; }; then
  UROCE_WHY="left behind: /dev/infiniband gained '$left_nodes', /var/run/dpdk '$left_eal', TMPDIR '$left_runs'"
  st=1
fi
if [ "$st" = 0 ] && [ -n "$hung" ] && kill -0 "$hung" 2>/dev/null; then
  UROCE_WHY="the program $hung still runs"
  st=1
fi
nodes_new="$nodes_new $left_nodes"
eal_new="$eal_new $left_eal"
uroce_verdict "a hung embedded program stopped by uroce_stop_group leaves nothing behind" "$st"
# What the clean-up under test left, if it failed: ours only (the uverbs
# nodes of our kind and the EAL directories that appeared in this run).
remove_leftovers() {
  local n
  for n in $nodes_new; do
    [ "$(stat -c '%t:%T' "/dev/infiniband/$n" 2>/dev/null)" = "1:7" ] && rm -f "/dev/infiniband/$n"
  done
  for n in $eal_new; do
    [[ $n == uroced-* ]] && rm -rf "/var/run/dpdk/$n"
  done
  [ -n "$prog" ] && kill -KILL "$prog" 2>/dev/null
  return 0
}
uroce_at_exit remove_leftovers
uroce_summary cleanup_after_failure
