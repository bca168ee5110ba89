# shellcheck shell=bash
# Starting, driving and stopping one Soft-RoCE test guest (a QEMU VM built
# by scripts/interop/build-guest.sh). Source after scripts/lib/uroce-env.sh
# (uroce_env_init first): QEMU runs under uroce_bg, so the EXIT trap kills
# it whatever way the script leaves.
#
#   rxe_guest_start DIR IMAGE_DIR IP/NN TAP MAC [SECS] [--mem MB] [--smp N]
#                   [--mtu N] [--append "K=V ..."] [-- QEMU-ARGS...]
#                                                        boot, wait for the agent;
#                                                        --mtu: eth0's (1500);
#                                                        the options add to the
#                                                        kernel command line
#                                                        (guest-init.sh's g_*) and
#                                                        QEMU (NICs, 9p shares)
#   rxe_guest_exec DIR SECS CMD                          run CMD, print its output,
#                                                        return its exit status
#   rxe_guest_bg VAR DIR CMD                             start CMD, job id into VAR
#   rxe_guest_wait DIR ID SECS                           wait for it; output to
#                                                        stdout, status returned
#   rxe_guest_stop [DIR]                                 power off (SIGTERM to QEMU);
#                                                        every guest without DIR
#
# DIR is the guest's own directory (console.log, share/ = the 9p share the
# agent in guest-init.sh polls, monitor.sock = QEMU's human monitor, which
# scripts/interop/qemu-queues.py reads). Under TCG (this kind of host: its KVM is
# PVM-based and cannot run a stock kernel) a boot takes ~10 s and the guest
# runs ~50x slower than the host, so every wait has a limit.

# QEMU's PID (= process group) per guest DIR; DIR/qemu.pid holds it too
# (scripts/interop/guest-run.sh gives up when it is gone).
declare -gA RXE_GUEST_PIDS=()

# KVM when /dev/kvm is usable for a stock kernel, TCG otherwise.
rxe_guest_accel() {
  if [ -n "${RXE_ACCEL:-}" ]; then
    echo "$RXE_ACCEL"
  elif [ -w /dev/kvm ] && [ ! -d /sys/module/kvm_pvm ]; then
    echo kvm
  else
    echo tcg
  fi
}

rxe_guest_start() {
  local dir=$1 img=$2 ip=$3 tap=$4 mac=$5 secs=${6:-120}
  shift 5
  [ $# -gt 0 ] && shift
  local mem=768 smp=1 mtu=1500 append=''
  local -a extra=()
  while [ $# -gt 0 ]; do
    case $1 in
      --mem) mem=$2; shift 2 ;;
      --smp) smp=$2; shift 2 ;;
      --mtu) mtu=$2; shift 2 ;;
      --append) append=" $2"; shift 2 ;;
      --) shift; extra=("$@"); break ;;
      *) uroce_err "rxe_guest_start: unknown option $1"; return 1 ;;
    esac
  done
  mkdir -p "$dir/share/cmd"
  local accel cpu pid
  accel=$(rxe_guest_accel)
  cpu=max
  [ "$accel" = kvm ] && cpu=host
  # eth0 without VIRTIO_RING_F_EVENT_IDX: with it, the guest kicks QEMU
  # only for the one buffer that crosses the index QEMU asked for, so a
  # single lost kick stalls transmission for good (docs/interop-rxe.md,
  # "The stop those reports caught"); without it the guest kicks for
  # every buffer while QEMU's notifications are on, and the next packet
  # makes up for a lost kick.
  local -a cmd=(qemu-system-x86_64 -name "uroce-test-${dir##*/}" -machine "pc,accel=$accel"
    -cpu "$cpu" -smp "$smp" -m "$mem" -nodefaults -no-user-config -display none -vga none
    -no-reboot -kernel "$img/vmlinuz" -initrd "$img/initramfs.cpio.gz"
    -append "console=ttyS0 quiet panic=-1 g_ip=$ip g_mtu=$mtu$append"
    -serial "file:$dir/console.log"
    -netdev "tap,id=n0,ifname=$tap,script=no,downscript=no"
    -device "virtio-net-pci,netdev=n0,mac=$mac,romfile=,event_idx=off"
    -fsdev "local,id=fs0,path=$dir/share,security_model=none"
    -device "virtio-9p-pci,fsdev=fs0,mount_tag=share"
    -monitor "unix:$dir/monitor.sock,server=on,wait=off" "${extra[@]}")
  printf '%q ' "${cmd[@]}" >"$dir/qemu.cmd"
  local t0=$SECONDS
  uroce_bg pid "$dir/qemu.log" "$dir/qemu.log" -- "${cmd[@]}"
  RXE_GUEST_PIDS[$dir]=$pid
  echo "$pid" >"$dir/qemu.pid"
  while [ ! -f "$dir/share/ready" ]; do
    if ! uroce_running "$pid"; then
      uroce_err "guest: QEMU exited during boot; $dir/qemu.log:"
      sed 's/^/    /' "$dir/qemu.log" >&2
      tail -n 20 "$dir/console.log" >&2
      return 1
    fi
    if [ $((SECONDS - t0)) -ge "$secs" ]; then
      uroce_err "guest: not ready after ${secs}s; console:"
      tail -n 20 "$dir/console.log" >&2
      return 1
    fi
    sleep 0.2
  done
  echo "guest: $accel, ready after $((SECONDS - t0)) s: $(tr '\n' ' ' <"$dir/share/ready")"
}

rxe_guest_bg() {
  # Locals are __-prefixed: the caller's VAR must not be shadowed.
  local __var=$1 __dir=$2
  shift 2
  local __id
  __id=$(date +%s%N)
  printf '%s\n' "$*" >"$__dir/share/cmd/$__id.tmp"
  mv "$__dir/share/cmd/$__id.tmp" "$__dir/share/cmd/$__id.sh"
  printf -v "$__var" '%s' "$__id"
}

rxe_guest_wait() {
  local dir=$1 id=$2 secs=$3
  local c=$dir/share/cmd
  local deadline=$((SECONDS + secs))
  while [ ! -f "$c/$id.rc" ]; do
    if [ $SECONDS -ge "$deadline" ]; then
      cat "$c/$id.out" 2>/dev/null
      echo "[guest: no exit status after ${secs}s]"
      return 124
    fi
    if [ -n "${RXE_GUEST_PIDS[$dir]:-}" ] && ! uroce_running "${RXE_GUEST_PIDS[$dir]}"; then
      echo "[guest: QEMU is gone]"
      return 125
    fi
    sleep 0.1
  done
  cat "$c/$id.out"
  local rc
  rc=$(cat "$c/$id.rc")
  rm -f "$c/$id.run" "$c/$id.rc"
  return "$rc"
}

rxe_guest_exec() {
  local dir=$1 secs=$2
  shift 2
  local job
  rxe_guest_bg job "$dir" "$@"
  rxe_guest_wait "$dir" "$job" "$secs"
}

rxe_guest_stop() {
  local d pid
  if [ $# -eq 0 ]; then
    for d in "${!RXE_GUEST_PIDS[@]}"; do rxe_guest_stop "$d"; done
    return 0
  fi
  pid=${RXE_GUEST_PIDS[$1]:-}
  [ -n "$pid" ] || return 0
  uroce_kill_group TERM "$pid"
  local deadline=$((SECONDS + 5))
  while uroce_running "$pid" && [ $SECONDS -lt "$deadline" ]; do
    sleep 0.1
  done
  uroce_kill_group KILL "$pid"
  uroce_wait "$pid" UROCE_IGNORED_RC
  unset "RXE_GUEST_PIDS[$1]"
}
