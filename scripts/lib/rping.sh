# shellcheck shell=bash
# Judging one side of a stock rping pair by its exit status, for the verbs
# suites (uroce_rping_exit_race in uroce-verbs.sh) and the package check
# (package-inner.sh). Debian's rping (rdma-core 44) lets its CM thread ask
# for one more event after the main thread, done with the pings, destroyed
# the event channel; rdma-core 61 fixed it ("rping: terminate CM event
# thread before exiting"). The pings themselves are judged apart (rping
# -v's lines).
#
#   uroce_rping_done RC ERR [OUT]
#
# True when the side exited 0, or exited 255 with "rdma_get_cm_event: Bad
# file descriptor" as the last line of its stderr file ERR (a server prints
# its DISCONNECT and state lines there before it), or, for a side whose
# stderr went to its stdout file OUT (ERR empty: an rxe guest's), as a line
# of OUT (rping's buffered stdout lands after it).
uroce_rping_done() {
  local rc=$1 err=$2 out=${3:-} line="rdma_get_cm_event: Bad file descriptor"
  [ "$rc" = 0 ] && return 0
  [ "$rc" = 255 ] || return 1
  if [ -s "$err" ]; then
    [ "$(grep -v '^$' "$err" | tail -n 1)" = "$line" ]
  else
    [ -n "$out" ] && grep -qx "$line" "$out"
  fi
}
