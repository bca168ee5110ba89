#!/usr/bin/env bash
# Open MPI over uroce, as a user runs it: stock mpirun (Debian's Open MPI
# 4.1, whose PML is UCX) starts two ranks of mpi_check, each through
# uroce-run on its own device of one uroced (uroce0 and uroce1 on a ring),
# with no setting beyond the PML, the UCX transport and the device. Judged
# on mpirun's exit status and on every check line mpi_check prints.
#
#   mpi.sh BUILD_DIR MPI_CHECK
source "$(dirname "$0")/common.sh"
verbs_test_init vmpi "$1" mpirun
MPI_CHECK=$2

uroce_daemon_start d --lcore 1 -- \
  --device "$(verbs_device uroce0 02:00:00:d4:00:01 10.212.0.1 ring:p0)" \
  --device "$(verbs_device uroce1 02:00:00:d4:00:02 10.212.0.2 ring:p0)"
R=("$UROCE_RUN" --run-dir "${UROCE_DAEMON_RUN[d]}")

# 23 ping-pong sizes (1 B .. 4 MiB), the allreduce, two one-sided windows.
CHECKS=26
mpi() {  # TLS
  local tls=$1 out=$UROCE_TMP/mpi.$1.out st=0 rc=0
  uroce_no_pair
  timeout 180 mpirun --allow-run-as-root --oversubscribe --mca pml ucx -x UCX_TLS="$tls" \
    -np 1 -x UCX_NET_DEVICES=uroce0:1 "${R[@]}" "$MPI_CHECK" : \
    -np 1 -x UCX_NET_DEVICES=uroce1:1 "${R[@]}" "$MPI_CHECK" >"$out" 2>&1 || rc=$?
  local ok
  ok=$(grep -c ': ok$' "$out" || true)
  if [ "$rc" -ne 0 ]; then
    UROCE_WHY="mpirun exited $rc: $(tail -n 5 "$out" | tr '\n' '|')"; st=1
  elif [ "$ok" -ne "$CHECKS" ] || ! grep -qx 'mpi_check: all passed' "$out"; then
    UROCE_WHY="$ok of $CHECKS checks ok: $(grep -v ': ok$' "$out" | tail -n 5 | tr '\n' '|')"; st=1
  fi
  grep -E 'ping-pong (1|4194304) B|latency|allreduce|one-sided|mpi_check' "$out" | sed 's/^/  /' || true
  uroce_verdict "mpirun -np 2 --mca pml ucx (UCX_TLS=$tls): ping-pong 1 B..4 MiB, allreduce, Put/Get on heap and stack windows" "$st"
}
mpi rc
mpi ud

verbs_daemons_stop "uroced" d
uroce_summary mpi
