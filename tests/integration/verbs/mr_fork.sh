#!/usr/bin/env bash
# fork() and registered memory (issue 28, docs/shm.md "fork"): mr_fork
# (mr_fork.cpp) opens uroce0 and uroce1 of one uroced (a ring) through
# uroce-run; the parent registers a 64 KiB heap buffer on uroce1, writes P
# and forks, the child writes Q into its copy and exits, and the parent must
# read 65,536 bytes P, with the buffer registered and after deregistration;
# then a WRITE and a READ from uroce0 on the parent's MR must move exact
# bytes. Once without libibverbs' fork support, once under ibv_fork_init(),
# once with RDMAV_FORK_SAFE=1 and once with IBV_FORK_SAFE=1 in the
# environment. Judged on every check line of each run.
#
#   mr_fork.sh BUILD_DIR MR_FORK
source "$(dirname "$0")/common.sh"
verbs_test_init vmrf "$1"
MR_FORK=$2

uroce_daemon_start d --lcore 1 -- \
  --device "$(verbs_device uroce0 02:00:00:d6:00:01 10.214.0.1 ring:p0)" \
  --device "$(verbs_device uroce1 02:00:00:d6:00:02 10.214.0.2 ring:p0)"
R=("$UROCE_RUN" --run-dir "${UROCE_DAEMON_RUN[d]}")

# mode, environment, checks a passing run prints ("ok" lines): the fork
# status, the VmFlags, 4 forks of 2 lines each, WRITE and READ; plus
# ibv_fork_init's return under fork_init.
for run in "plain::12" "fork_init::13" "env:RDMAV_FORK_SAFE=1:12" "env:IBV_FORK_SAFE=1:12"; do
  IFS=: read -r mode envvar want <<<"$run"
  uroce_no_pair
  out=$UROCE_TMP/mr_fork.$mode.${envvar%%=*}.out
  st=0 rc=0
  env -u RDMAV_FORK_SAFE -u IBV_FORK_SAFE ${envvar:+"$envvar"} \
    timeout 120 "${R[@]}" "$MR_FORK" uroce0 uroce1 1 "$mode" >"$out" 2>&1 || rc=$?
  sed 's/^/  /' "$out"
  ok=$(grep -c ': ok$' "$out" || true)
  if [ "$rc" -ne 0 ]; then
    UROCE_WHY="mr_fork exited $rc: $(grep -E 'FAILED|mr_fork:' "$out" | head -n 5 | tr '\n' '|')"
    st=1
  elif [ "$ok" -ne "$want" ] || ! grep -qx 'mr_fork: all passed' "$out"; then
    UROCE_WHY="$ok of $want checks ok"
    st=1
  fi
  uroce_verdict "fork after ibv_reg_mr ($mode${envvar:+ $envvar}): the parent keeps P, registered and deregistered; its MR still serves WRITE and READ" "$st"
done

# What registration and fork cost now (figures, no verdict; docs/shm.md).
timeout 120 "${R[@]}" "$MR_FORK" time uroce1 2>&1 | sed 's/^/  /' || true

verbs_daemons_stop "uroced" d
uroce_summary mr_fork
