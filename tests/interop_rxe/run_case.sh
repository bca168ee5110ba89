# shellcheck shell=bash
# One case of scripts/interop-rxe.sh in both directions (sourced by it,
# after cases.sh and failures.sh): run the pair, check its capture, its
# rdma_cm messages and the Homa probe, and report a row and a verdict.
#
# A try that failed and left the guest unable to carry more cases
# (rxe_guest_sick: its agent silent, a program of the case surviving
# SIGKILL, or its eth0 reaching nothing) is reported in full but counted as
# nothing: the guest is booted anew (at most RXE_GUEST_RESTARTS_MAX times a
# run) and the direction runs once more, and that try's result is the
# verdict. A broken guest otherwise fails every case after it, which hides
# what the first failure was. A failure on a guest that is still sound
# stands.

_rxe_case_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
RXE_GUEST_RESTARTS_MAX=${RXE_GUEST_RESTARTS_MAX:-3}
RXE_GUEST_RESTARTS=0

rxe_row() {
  local status=PASS
  [ "$3" -eq 0 ] || status=FAIL
  RXE_TABLE+=("$1|$2|$status|$4")
}

rxe_print_table() {
  printf '%-18s %-10s %-6s %s\n' case direction result figure
  printf '%-18s %-10s %-6s %s\n' ------------------ ---------- ------ ------
  local row
  for row in "${RXE_TABLE[@]}"; do
    IFS='|' read -r c d r f <<<"$row"
    printf '%-18s %-10s %-6s %s\n' "$c" "$d" "$r" "$f"
  done
}

rxe_run_case() {
  local c=$1 dir
  for dir in "${RXE_DIRECTIONS[@]}"; do
    rxe_run_direction "$c" "$dir"
  done
}

rxe_run_direction() {
  local c=$1 dir=$2 label=$1.$2 st sick note='' t0=$SECONDS
  local after=$UROCE_TMP/$label.guest-after.txt
  rxe_try "$c" "$dir" "$label" "$after" && st=0 || st=$?
  if [ "$st" -eq 1 ] && sick=$(rxe_guest_sick) && [ -n "$sick" ] &&
    [ "$RXE_GUEST_RESTARTS" -lt "$RXE_GUEST_RESTARTS_MAX" ]; then
    echo "RETRY: $label: ${UROCE_WHY:-no reason recorded}; then the guest: $sick"
    uroce_failure_details
    rxe_failure_report "$label (first try)" "$after"
    note="; first try: ${UROCE_WHY:-no reason recorded}; the guest then: $sick; rerun on a new guest"
    if rxe_guest_restart; then
      after=$UROCE_TMP/$label.rerun.guest-after.txt
      rxe_try "$c" "$dir" "$label.rerun" "$after" && st=0 || st=$?
    else
      UROCE_WHY="the guest did not boot again"
    fi
  fi
  if [ "$st" -eq 2 ]; then
    RXE_TABLE+=("$c|$dir|XFAIL|$RXE_XFAIL$RXE_FIGURE$note ($((SECONDS - t0)) s)")
    echo "XFAIL: $label: $RXE_XFAIL"
    return 0
  fi
  # A failure's row leads with its reason (the log's head may be cut).
  local shown=${RXE_FIGURE:-$UROCE_WHY}
  [ "$st" -eq 0 ] || shown="${UROCE_WHY:-no reason recorded}${RXE_FIGURE:+; figure $RXE_FIGURE}"
  rxe_row "$c" "$dir" "$st" "$shown$note ($((SECONDS - t0)) s)"
  # The time on the verdict line: a log cut to its tail still shows the
  # pace of the run (the table comes only at the end).
  uroce_verdict "$label ($((SECONDS - t0)) s, at $((SECONDS - ${T_START:-0})) s)" "$st"
  [ "$st" -eq 0 ] || rxe_failure_report "$label" "$after"
  return 0
}

# rxe_try CASE DIR TAG AFTER: one try; TAG names its files (captures, the
# programs' output). Returns 0 (pass), 1 (fail) or 2 (XFAIL, RXE_XFAIL
# set); after a failure AFTER holds the guest's state (rxe_guest_state)
# and no program of the case is left in the guest (rxe_guest_sweep).
rxe_try() {
  local c=$1 dir=$2 tag=$3 after=$4 st=0
  RXE_FIGURE='' RXE_XFAIL=''
  uroce_no_pair
  # uroced in a guest: what a SIGKILLed stand-in (guest-run.sh) left there.
  [ -z "$RXE_UGUEST_DIR" ] || rxe_uguest_sweep
  rxe_capture_start "$tag"
  rxe_case_body "$c" "$dir" "$tag" || st=$?
  # While it is fresh: what the guest's rxe was left doing.
  [ "$st" -ne 1 ] || rxe_guest_state >"$after" 2>&1
  # 2 is an expected failure only with its reason recorded.
  [ "$st" -ne 2 ] || [ -n "$RXE_XFAIL" ] || st=1
  [ "$st" -le 2 ] || st=1
  rxe_capture_stop || st=1
  if [ "$st" -ne 1 ]; then
    # Frames from both sides, but mckey's go one way: the sender's.
    local from_a=$RXE_UROCE_IP from_b=$RXE_GUEST_IP
    if [ "$c" = mckey_cm ]; then
      [ "$dir" = uroce-srv ] && from_a=$RXE_GUEST_IP || from_b=$RXE_UROCE_IP
    fi
    if ! "$_rxe_case_dir/check_capture.sh" "$RXE_CAP_FILE" "$RXE_CHECKER" "$from_a" \
      "$from_b" >"$UROCE_TMP/$tag.capture-check" 2>&1; then
      st=1
      UROCE_WHY="capture check failed: $(tail -n 3 "$UROCE_TMP/$tag.capture-check" | tr '\n' ' ')"
      echo "--- capture check of $tag"
      sed -n 1,30p "$UROCE_TMP/$tag.capture-check" | sed 's/^/    /'
    else
      RXE_FIGURE="$RXE_FIGURE; $(sed -n 's/^capture: //p' "$UROCE_TMP/$tag.capture-check")"
    fi
  fi
  # The rdma_cm cases: the handshake and release on the wire, decoded.
  if [ "$st" -eq 2 ]; then
    rxe_race_check || st=1
  elif [ "$st" -eq 0 ] && [ "$c" = udaddy_cm ]; then
    rxe_cm_madcheck 0x0017:SIDR_REQ 0x0018:SIDR_REP || st=1
  elif [ "$st" -eq 0 ] && [[ $c == *_cm ]] && [ "$c" != mckey_cm ]; then
    rxe_cm_madcheck 0x0010:REQ 0x0013:REP 0x0014:RTU 0x0015:DREQ 0x0016:DREP || st=1
  fi
  # With the Homa-like scheduler on our side, every RC case (UD ones
  # have no connection to probe) shows the probe ignored.
  if [ "$st" -eq 0 ] && [ "$RXE_CUR_HOMA" = 1 ] && [ "$c" != ud_pingpong ] &&
    [ "$c" != udaddy_cm ] && [ "$c" != mckey_cm ]; then
    rxe_homa_check "$tag" || st=1
  fi
  [ "$st" -ne 1 ] || rxe_guest_sweep >>"$after" 2>&1
  return "$st"
}
