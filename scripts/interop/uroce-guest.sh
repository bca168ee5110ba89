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
#   rxe_uguest_up KIND ID NET IMAGE BUILD [QUEUES]
#                          KIND virtio | e1000e; boots the guest (addresses
#                          NET.2 uroce, NET.12 its eth0; the bridge's MTU),
#                          makes the stand-ins and sets RXE_UROCE_PCI,
#                          RXE_CAP_IF, RXE_UROCE_TCP_IP, RXE_DAEMON_OPTS,
#                          RXE_DAEMON_ARGS, RXE_STOP_SECS, RXE_UGUEST_DIR and
#                          RXE_HOST_UROCED,
#                          RXE_HOST_UROCE_RUN, RXE_HOST_UROCE_CTL (the host's
#                          own programs); QUEUES > 1 (virtio only): the NIC
#                          has that many queue pairs with RSS (QEMU's
#                          virtio-net mq=on,rss=on over a multi-queue tap) and
#                          uroced runs an engine lcore per queue (--lcores
#                          0,..,QUEUES-1; the guest has 2 vCPUs)
#   rxe_uguest_pmd NAME    prints the PMD EAL probed for daemon NAME's NIC (its
#                          log); false unless it is the one KIND asks for
#   rxe_uguest_sweep       SIGKILLs, in the guest, what a SIGKILLed stand-in left

RXE_UGUEST_DIR='' RXE_UGUEST_PMD=''
RXE_HOST_UROCED='' RXE_HOST_UROCE_RUN='' RXE_HOST_UROCE_CTL=''
# The NIC's slot: fixed, above what QEMU hands out to the other devices.
RXE_UGUEST_SLOT=0x10
# 2 MB pages: EAL takes 256 MB of them (-m 256), the rest is headroom.
RXE_UGUEST_HUGE=${RXE_UGUEST_HUGE:-192}

rxe_uguest_up() {
  local kind=$1 id=$2 net=$3 img=$4 build=$5 queues=${6:-1} model
  case $kind in
    virtio) model=virtio-net-pci RXE_UGUEST_PMD=net_virtio ;;
    e1000e) model=e1000e RXE_UGUEST_PMD=net_e1000_em ;;
    *) uroce_err "uroce guest: NIC kind '$kind' (virtio or e1000e)"; return 1 ;;
  esac
  if [ "$queues" -gt 1 ] && [ "$kind" != virtio ]; then
    uroce_err "uroce guest: $queues queues need virtio (QEMU's e1000e has one)"
    return 1
  fi
  local ktap=urxk$id dtap=urxd$id
  rxe_net_tap "$ktap"
  rxe_net_tap "$dtap" "$queues"
  RXE_UROCE_PCI=$(printf '0000:00:%02x.0' $((RXE_UGUEST_SLOT)))
  RXE_CAP_IF=$dtap
  RXE_UROCE_TCP_IP=$net.12
  RXE_UGUEST_DIR=$UROCE_TMP/uroce-guest
  local netdev="tap,id=n1,ifname=$dtap,script=no,downscript=no"
  local nic="$model,netdev=n1,mac=$RXE_UROCE_MAC,addr=$RXE_UGUEST_SLOT,romfile="
  if [ "$queues" -gt 1 ]; then
    # QEMU computes the Toeplitz hash itself and puts each frame on the
    # queue the driver's table names: the driver's key and table are DPDK's
    # net_virtio's, i.e. uroced's kRssKey and RETA (docs/nic.md "Queues and
    # RSS"); vhost=off keeps the queues in QEMU. Debian 12's QEMU 7.2 cannot
    # load its eBPF steering program (libbpf 1.1 refuses its legacy map
    # definitions: "Can't load eBPF RSS - fallback to software RSS" in
    # qemu.log), so the tap hands each frame to QEMU on a queue of the
    # kernel's choosing and QEMU moves it to the RSS queue. A frame moved to
    # a full RX ring is parked on the queue it came from, and that tap queue
    # is read again only after the guest adds buffers to the *same* ring,
    # which a polling driver never signals while that ring has buffers: the
    # tap queue stops for good (seen: two QPs silent after 2.7 s of
    # ib_write_bw with 4 QPs). The rings hold 1024 frames, and the steering
    # checks keep fewer in flight per queue (steer.sh).
    netdev+=",queues=$queues,vhost=off"
    nic+=",mq=on,rss=on,vectors=$((2 * queues + 2)),rx_queue_size=1024"
  fi
  local -a qemu=(-netdev "$netdev" -device "$nic")
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
    --mem 1536 --smp 2 --mtu "$(cat "/sys/class/net/$RXE_BR/mtu")" \
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
  RXE_HOST_UROCED=$UROCED RXE_HOST_UROCE_RUN=$UROCE_RUN RXE_HOST_UROCE_CTL=$UROCE_CTL
  UROCED=$bin/uroced UROCE_RUN=$bin/uroce-run UROCE_CTL=$bin/uroce-ctl
  # Hugepages, the lcore and the PCI bus: EAL's defaults once args are
  # given (apps/uroced/config.cpp); --in-memory leaves no hugepage files.
  # EAL's info lines name the PMD that probed the NIC (rxe_uguest_pmd).
  local eal='"--no-telemetry", "--in-memory", "-m", "256", "--log-level=lib.eal:info"'
  RXE_DAEMON_ARGS=()
  if [ "$queues" -gt 1 ]; then
    RXE_DAEMON_ARGS=(--lcores "$(seq -s, 0 $((queues - 1)))")
    # net_virtio's set-up lines say which interface it drives ("modern
    # virtio pci detected"): legacy would have no RSS, a feature bit above
    # 31. (Its debug level also says what the device offered for RSS, but
    # logs every link query; the port's status has that: port_info.)
    eal+=', "--log-level=pmd.net.virtio.init:info"'
  fi
  RXE_DAEMON_OPTS=(--lcore 1 --ready-timeout 240 --eal-args "[$eal]")
  # A stand-in's SIGTERM first saves the status (up to 5 s, guest-run.sh
  # --on-term), then the daemon stops under TCG: 10 s was seen too short
  # with two engine lcores beside a build on the host.
  RXE_STOP_SECS=30
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
