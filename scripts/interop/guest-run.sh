#!/usr/bin/env bash
# Runs one command inside a test guest (scripts/interop/guest.sh; its 9p
# agent, scripts/interop/guest-init.sh) and stands for it on the host: this
# script lives exactly as long as the command, exits with its status and
# passes SIGTERM, SIGINT and SIGHUP on to it. scripts/lib/uroce-env.sh's
# uroce_bg, uroce_wait, uroce_daemon_start and uroce_daemon_stop then drive
# a program in a guest as they drive a local one: scripts/interop-rxe.sh
# --uroce-in-guest makes uroced, uroce-run and uroce-ctl such stand-ins.
#
#   scripts/interop/guest-run.sh GUEST_DIR [--root DIR] [--shared DIR]
#                                [--tmpfs DIR] [--must-vanish PATH]... [--on-term SH]
#                                -- CMD [ARGS...]
#   scripts/interop/guest-run.sh --sweep GUEST_DIR
#
#   --root DIR          run CMD under `chroot DIR` (a uroce guest's /sysroot,
#                       where the host's programs and libraries are)
#   --shared DIR        a host directory the guest mounts at the same path,
#                       read-write: when this script's stdout or stderr is a
#                       file below it, the guest writes CMD's output there
#                       itself, as it comes (a daemon's log); any other
#                       output (a pipe) is copied out when CMD has ended
#   --tmpfs DIR         a tmpfs on DIR (under the root) for the run of CMD,
#                       unmounted afterwards: a daemon's run dir, whose
#                       socket must be in a file system of the guest's own
#   --must-vanish PATH  (repeatable) exit 1 with a line on stderr when CMD
#                       exited 0 but left PATH (under the root) behind
#   --on-term SH        a shell command run in the guest (under the root, at
#                       most 5 s, its output with CMD's) before a SIGTERM is
#                       passed on to CMD: a daemon's last status
#   --sweep GUEST_DIR   SIGKILL, in the guest, every command whose stand-in
#                       is gone (a stand-in that was SIGKILLed could not pass
#                       the signal on)
#
# The command runs as `sh -c 'exec "$@"'` (dash from the root when there is
# one) with the guest agent's environment; its PID, which the signals go
# to, is written to the share first.
set -euo pipefail

usage() {
  sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//' >&2
  exit 2
}

gdir=${1:-}
[ -n "$gdir" ] || usage
shift
cmdd=''

# submit NAME BODY: hand BODY to the agent as NAME.sh (renamed in last, so
# the agent never runs half a file).
submit() {
  printf '%s\n' "$2" >"$cmdd/$1.tmp"
  mv "$cmdd/$1.tmp" "$cmdd/$1.sh"
}

# run_wait NAME BODY SECS: submit, wait for its status, clean up.
run_wait() {
  local n=$1 t=$(($3 * 10))
  submit "$1" "$2"
  while [ ! -f "$cmdd/$n.rc" ] && [ "$t" -gt 0 ]; do
    sleep 0.1
    t=$((t - 1))
  done
  rm -f "$cmdd/$n".{run,out,rc}
}

if [ "$gdir" = --sweep ]; then
  gdir=${1:?usage: guest-run.sh --sweep GUEST_DIR}
  cmdd=$gdir/share/cmd
  for f in "$cmdd"/gr*.pid; do
    [ -e "$f" ] || continue
    b=${f%.pid} hp=${f##*/gr}
    hp=${hp%%-*}
    [ -e "$b.rc" ] && continue
    [ -d "/proc/$hp" ] && continue
    run_wait "grk$$-$(date +%s%N)" "kill -KILL $(cat "$f") 2>/dev/null" 10
    rm -f "$b".{pid,o,e}
  done
  exit 0
fi

root='' shared='' tmpfs='' on_term=''
declare -a vanish=()
while [ $# -gt 0 ]; do
  case $1 in
    --root) root=$2; shift 2 ;;
    --shared) shared=$(realpath "$2"); shift 2 ;;
    --tmpfs) tmpfs=$2; shift 2 ;;
    --must-vanish) vanish+=("$2"); shift 2 ;;
    --on-term) on_term=$2; shift 2 ;;
    --) shift; break ;;
    *) usage ;;
  esac
done
[ $# -gt 0 ] || usage
cmdd=$gdir/share/cmd
[ -d "$cmdd" ] || { echo "guest-run: no guest share at $cmdd" >&2; exit 125; }
qpid=$(cat "$gdir/qemu.pid" 2>/dev/null || true)
id=gr$$-$(date +%s%N)

# Where the guest writes CMD's output: our own stdout/stderr when they are
# files it can reach, else files of the share copied out at the end.
out=/share/cmd/$id.o err=/share/cmd/$id.e
copy_out=1 copy_err=1
t1=$(readlink "/proc/$$/fd/1" || true)
t2=$(readlink "/proc/$$/fd/2" || true)
if [ -n "$shared" ]; then
  [ -f "$t1" ] && [[ $t1 == "$shared"/* ]] && out=$t1 copy_out=0
  [ -f "$t2" ] && [[ $t2 == "$shared"/* ]] && err=$t2 copy_err=0
fi
# (Opened by the agent's shell, outside the root: paths under it.)
redir=">>\"\$r\"$(printf '%q' "$out") 2>>\"\$r\"$(printf '%q' "$err")"
[ "$out" = "$err" ] && redir=">>\"\$r\"$(printf '%q' "$out") 2>&1"

q=$(printf '%q ' "$@")
body="r=$(printf '%q' "$root")"
[ -n "$tmpfs" ] && body+="
mkdir -p \"\$r\"$(printf '%q' "$tmpfs") && mount -t tmpfs tmpfs \"\$r\"$(printf '%q' "$tmpfs") || exit 125"
inner="echo \$\$ >/share/cmd/$id.pid.tmp && mv /share/cmd/$id.pid.tmp /share/cmd/$id.pid && exec \"\$@\""
if [ -n "$root" ]; then
  body+="
chroot \"\$r\" /bin/sh -c '$inner' sh $q $redir </dev/null"
else
  body+="
sh -c '$inner' sh $q $redir </dev/null"
fi
body+="
rc=\$?"
for p in "${vanish[@]}"; do
  body+="
if [ \"\$rc\" -eq 0 ] && [ -e \"\$r\"$(printf '%q' "$p") ]; then
  echo \"guest-run: $p is still there after the command exited 0\" >&2; rc=1
fi"
done
[ -n "$tmpfs" ] && body+="
umount \"\$r\"$(printf '%q' "$tmpfs")"
body+="
exit \"\$rc\""

# A signal is passed on once the command's PID is known; then the command
# has a few seconds to end before it is SIGKILLed in the guest. --on-term's
# command goes first, bounded so that the daemon still stops within the time
# uroce_daemon_stop allows (RXE_STOP_SECS, 30 s for a uroce guest's daemon).
term_body=''
if [ -n "$on_term" ]; then
  via='sh'
  [ -n "$root" ] && via="chroot \"\$r\" /bin/sh"
  term_body="r=$(printf '%q' "$root")
timeout 5 $via -c $(printf '%q' "$on_term") $redir </dev/null ||
  echo \"guest-run: --on-term command failed or took over 5 s (status \$?)\" $redir
"
fi
pending='' sent_at=''
# shellcheck disable=SC2317 # called from the traps
on_signal() { pending=$1; }
trap 'on_signal TERM' TERM
trap 'on_signal INT' INT
trap 'on_signal HUP' HUP

submit "$id" "$body"
rc=''
while :; do
  if [ -f "$cmdd/$id.rc" ]; then
    rc=$(cat "$cmdd/$id.rc")
    break
  fi
  if [ -n "$qpid" ] && [ ! -d "/proc/$qpid" ]; then
    echo "guest-run: the guest's QEMU ($qpid) is gone" >&2
    rc=125
    break
  fi
  if [ -n "$pending" ] && [ -f "$cmdd/$id.pid" ]; then
    pre=''
    [ "$pending" = TERM ] && pre=$term_body
    run_wait "grk$$-$(date +%s%N)" "${pre}kill -$pending $(cat "$cmdd/$id.pid") 2>/dev/null" 10
    pending='' sent_at=$SECONDS
  fi
  if [ -n "$sent_at" ] && [ $((SECONDS - sent_at)) -ge 8 ]; then
    run_wait "grk$$-$(date +%s%N)" "kill -KILL $(cat "$cmdd/$id.pid") 2>/dev/null" 10
    sent_at=''
  fi
  sleep 0.1
done
if [ "$copy_out" -eq 1 ]; then cat "$cmdd/$id.o" 2>/dev/null || true; fi
if [ "$copy_err" -eq 1 ]; then cat "$cmdd/$id.e" >&2 2>/dev/null || true; fi
# The agent's own output: what failed before or after the command.
cat "$cmdd/$id.out" >&2 2>/dev/null || true
rm -f "$cmdd/$id".{run,out,rc,pid,o,e}
exit "$rc"
