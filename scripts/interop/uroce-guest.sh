# shellcheck shell=bash
# shellcheck disable=SC2034 # RXE_* globals are read by tests/interop_rxe/cases.sh
# uroced in a QEMU guest of its own, on an emulated PCI NIC that one of
# DPDK's real PMDs drives (scripts/interop-rxe.sh --uroce-in-guest; sourced
# after scripts/lib/uroce-env.sh, guest.sh and net.sh):
#
#   guest "uroce" (TCG, 2 vCPUs, no RDMA core)            guest "rxe" (guest.sh)
#   eth0 virtio-net, kernel: the programs' TCP  == tap urxk<id> ==+== bridge ==+== tap urxt<id>
#   0000:00:10.0 virtio-net-pci | e1000e        == tap urxd<id> ==+  (capture)      rxe0 on eth0
#     uio_pci_generic; DPDK net_virtio | net_e1000_em: uroced's port
#   /sysroot: the host's /usr and /etc (9p, read-only), the build tree
#     (read-only) and the run's work dir (read-write), each at its host path
#
# The guest runs the host's own uroced, uroce-run, uroce-ctl and verbs
# programs, chrooted into /sysroot: one set of binaries, no second copy of
# DPDK or rdma-core in the image. guest-init.sh (g_role=uroce) gives the NIC
# to uio_pci_generic before any kernel driver sees it, reserves the
# hugepages (IOVA is the guest-physical address: no IOMMU, so no --no-huge)
# and loads no RDMA module, so libibverbs falls back to uroced's sysfs tree.
# UROCED, UROCE_RUN and UROCE_CTL become stand-ins (scripts/interop/
# guest-run.sh) that run the real ones there: uroce-env.sh's daemon and
# process handling and the cases (tests/interop_rxe/cases.sh) work unchanged.
#
#   rxe_uguest_up KIND ID NET IMAGE BUILD   KIND virtio | e1000e; boots the
#                          guest (addresses NET.2 uroce, NET.12 its eth0),
#                          makes the stand-ins and sets RXE_UROCE_PCI,
#                          RXE_CAP_IF, RXE_UROCE_TCP_IP, RXE_DAEMON_OPTS,
#                          RXE_UGUEST_DIR
#   rxe_uguest_pmd NAME    prints the PMD EAL probed for daemon NAME's NIC (its
#                          log); false unless it is the one KIND asks for
#   rxe_uguest_sweep       SIGKILLs, in the guest, what a SIGKILLed stand-in left

RXE_UGUEST_DIR='' RXE_UGUEST_PMD=''
# The NIC's slot: fixed, above what QEMU hands out to the other devices.
RXE_UGUEST_SLOT=0x10
# 2 MB pages: EAL takes 256 MB of them (-m 256), the rest is headroom.
RXE_UGUEST_HUGE=${RXE_UGUEST_HUGE:-192}

rxe_uguest_up() {
  local kind=$1 id=$2 net=$3 img=$4 build=$5 model
  case $kind in
    virtio) model=virtio-net-pci RXE_UGUEST_PMD=net_virtio ;;
    e1000e) model=e1000e RXE_UGUEST_PMD=net_e1000_em ;;
    *) uroce_err "uroce guest: NIC kind '$kind' (virtio or e1000e)"; return 1 ;;
  esac
  local ktap=urxk$id dtap=urxd$id
  rxe_net_tap "$ktap"
  rxe_net_tap "$dtap"
  RXE_UROCE_PCI=$(printf '0000:00:%02x.0' $((RXE_UGUEST_SLOT)))
  RXE_CAP_IF=$dtap
  RXE_UROCE_TCP_IP=$net.12
  RXE_UGUEST_DIR=$UROCE_TMP/uroce-guest
  local -a qemu=(
    -netdev "tap,id=n1,ifname=$dtap,script=no,downscript=no"
    -device "$model,netdev=n1,mac=$RXE_UROCE_MAC,addr=$RXE_UGUEST_SLOT,romfile="
  )
  local spec='' tag path i=0
  for path in /usr /etc "$build" "$UROCE_TMP"; do
    tag=h$i
    local ro=,readonly=on
    [ "$path" = "$UROCE_TMP" ] && ro=''
    qemu+=(-fsdev "local,id=fs$tag,path=$path,security_model=none$ro"
      -device "virtio-9p-pci,fsdev=fs$tag,mount_tag=$tag")
    spec+=${spec:+,}$tag:$path
    i=$((i + 1))
  done
  local mac t0=$SECONDS
  mac=$(printf '52:54:00:4d:%02x:0c' $((id % 250 + 1)))
  rxe_guest_start "$RXE_UGUEST_DIR" "$img" "$RXE_UROCE_TCP_IP/24" "$ktap" "$mac" 300 \
    --mem 1536 --smp 2 \
    --append "g_role=uroce g_pci=$RXE_UROCE_PCI g_huge=$RXE_UGUEST_HUGE g_9p=$spec" -- "${qemu[@]}"
  echo "uroce guest boot: $((SECONDS - t0)) s"
  if ! grep -q "$RXE_UROCE_PCI .* driver uio_pci_generic" "$RXE_UGUEST_DIR/share/ready"; then
    uroce_err "FAIL: uio_pci_generic does not hold $RXE_UROCE_PCI in the uroce guest:"
    sed 's/^/    /' "$RXE_UGUEST_DIR/share/ready" >&2
    return 1
  fi

  # The stand-ins: each runs the real program in the guest's /sysroot.
  local bin=$UROCE_TMP/bin gr
  gr=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/guest-run.sh
  mkdir -p "$bin"
  local -a base=("$gr" "$RXE_UGUEST_DIR" --root /sysroot --shared "$UROCE_TMP")
  # uroced's run dir (DIR/run beside its --config DIR/uroced.toml) holds
  # its socket: a tmpfs of the guest's own, checked clean after SIGTERM
  # (uroce_daemon_stop's check, which sees only the host's side). Before
  # the SIGTERM its status goes to DIR/status.json (kept with --keep) and
  # its port's RX counters to its log: port_rx says how many frames arrived
  # chained (device key rx_buf; docs/nic.md, "Multi-segment frames").
  cat >"$bin/uroced" <<EOF
#!/usr/bin/env bash
# uroced in the uroce guest (scripts/interop/uroce-guest.sh)
set -euo pipefail
extra=()
if [ "\${1:-}" = --config ]; then
  run=\$(dirname "\$2")/run st=\$(dirname "\$2")/status.json
  last="$(printf '%q' "$UROCE_CTL") --run-dir '\$run' status --json >'\$st'"
  last+=" && grep -o '\"port_rx\":{[^}]*}' '\$st' | sed 's/^/uroce-guest: at SIGTERM: /'"
  extra=(--tmpfs "\$run" --must-vanish "\$run/uroced.sock" --must-vanish "\$run/sysfs"
    --on-term "\$last")
fi
exec $(printf '%q ' "${base[@]}") "\${extra[@]}" -- $(printf '%q' "$UROCED") "\$@"
EOF
  local v
  for v in UROCE_RUN UROCE_CTL; do
    printf '#!/bin/sh\n# %s in the uroce guest (scripts/interop/uroce-guest.sh)\nexec %s -- %q "$@"\n' \
      "${!v##*/}" "$(printf '%q ' "${base[@]}")" "${!v}" >"$bin/${!v##*/}"
  done
  chmod 755 "$bin"/*
  UROCED=$bin/uroced UROCE_RUN=$bin/uroce-run UROCE_CTL=$bin/uroce-ctl
  # Hugepages, the lcore and the PCI bus: EAL's defaults once args are
  # given (apps/uroced/config.cpp); --in-memory leaves no hugepage files.
  # EAL's info lines name the PMD that probed the NIC (rxe_uguest_pmd).
  RXE_DAEMON_OPTS=(--lcore 1 --ready-timeout 240 --eal-args
    '["--no-telemetry", "--in-memory", "-m", "256", "--log-level=lib.eal:info"]')
}

rxe_uguest_pmd() {
  local line
  line=$(grep -m1 "Probe PCI driver: .* device: $RXE_UROCE_PCI" "${UROCE_DAEMON_LOG[$1]}" || true)
  echo "${line:-no 'Probe PCI driver' line for $RXE_UROCE_PCI in ${UROCE_DAEMON_LOG[$1]}}"
  [[ $line == *"driver: $RXE_UGUEST_PMD "* ]]
}

rxe_uguest_sweep() {
  [ -n "$RXE_UGUEST_DIR" ] || return 0
  "$(dirname "${BASH_SOURCE[0]}")/guest-run.sh" --sweep "$RXE_UGUEST_DIR"
}
