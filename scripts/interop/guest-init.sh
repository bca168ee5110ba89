#!/bin/sh
# /init of the Soft-RoCE test guest (busybox sh; built into the initramfs by
# scripts/interop/build-guest.sh). Kernel command line parameters:
#   g_ip=A.B.C.D/NN   eth0's address      g_mtu=1500   eth0's MTU
#   g_role=rxe        rxe (default): load the RDMA modules, create rxe0 on eth0
#                     uroce: no RDMA core at all (libibverbs must fall back to
#                     uroced's sysfs tree), a PCI NIC for DPDK and a chroot
#                     of the host's programs; the keys below
#   g_pci=0000:00:10.0  (uroce) the NIC uio_pci_generic takes before any
#                     kernel driver can (driver_override)
#   g_huge=N          (uroce) N 2 MB hugepages, hugetlbfs on /dev/hugepages
#   g_9p=TAG:PATH,... (uroce) 9p shares mounted at PATH under /sysroot, the
#                     host's directories at their own paths (/usr and /etc
#                     read-only: the host's programs and libraries run there)
# It loads the modules, brings eth0 up, creates rxe0 on it (role rxe), and
# serves commands from the host through the 9p share "share" (guest.sh
# exec): the host drops ID.sh into /share/cmd; the agent renames it ID.run,
# runs it, writes its output to ID.out and then its exit status to ID.rc
# (rename last, so the host never reads a half-written status).
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mount -t tmpfs tmpfs /tmp
# busybox ash has ulimit -l; verbs programs pin their buffers.
# shellcheck disable=SC3045
ulimit -l unlimited
G_IP=
G_MTU=1500
G_ROLE=rxe
G_PCI=
G_HUGE=0
G_9P=
for kv in $(cat /proc/cmdline); do
  case "$kv" in
    g_ip=*) G_IP=${kv#g_ip=} ;;
    g_mtu=*) G_MTU=${kv#g_mtu=} ;;
    g_role=*) G_ROLE=${kv#g_role=} ;;
    g_pci=*) G_PCI=${kv#g_pci=} ;;
    g_huge=*) G_HUGE=${kv#g_huge=} ;;
    g_9p=*) G_9P=${kv#g_9p=} ;;
  esac
done
# The DPDK NIC is uio_pci_generic's from the start: no kernel driver
# (virtio_net, say) ever makes it a netdev.
if [ -n "$G_PCI" ]; then
  echo uio_pci_generic >"/sys/bus/pci/devices/$G_PCI/driver_override" ||
    echo "init: no PCI device $G_PCI"
fi
while read -r m; do
  # A uroce guest has no RDMA core: with it, libibverbs would ask the
  # kernel over netlink and never read uroced's sysfs tree.
  case "$G_ROLE:$m" in rxe:*/uio/* | uroce:*/infiniband/*) continue ;; esac
  insmod "$m" || echo "init: insmod $m failed"
done </etc/modules.order
# busybox sh prefers its own applets to PATH: name iproute2 by path.
/usr/sbin/ip link set lo up
/usr/sbin/ip link set eth0 mtu "$G_MTU" up
[ -n "$G_IP" ] && /usr/sbin/ip addr add "$G_IP" dev eth0
if [ "$G_ROLE" = rxe ]; then
  rdma link add rxe0 type rxe netdev eth0 || echo "init: rdma link add rxe0 failed"
fi

# /sysroot (role uroce): the host's /usr and /etc over 9p, read-only, with
# this guest's /proc, /sys, /dev (hugetlbfs on /dev/hugepages) and fresh
# tmpfs /tmp, /run; the host's build tree and work dir at their own paths.
# Host commands run there by `chroot /sysroot` (scripts/interop/guest-run.sh).
sysroot_up() {
  r=/sysroot
  mkdir -p $r/usr $r/etc $r/proc $r/sys $r/dev $r/tmp $r/run $r/var/tmp $r/root $r/share
  for l in bin lib lib64 sbin; do ln -s "usr/$l" "$r/$l"; done
  ln -s /run $r/var/run
  # tmpfs first: the work dir is a 9p share below /tmp.
  mount -t tmpfs tmpfs $r/tmp
  mount -t tmpfs tmpfs $r/run
  for spec in $(echo "$G_9P" | tr ',' ' '); do
    tag=${spec%%:*} path=${spec#*:}
    # Read-only trees may be cached; the shared work dir may not (the host
    # reads what the guest writes while it writes it).
    opt=cache=loose
    case "$path" in /usr | /etc) ;; *) opt=cache=none ;; esac
    mkdir -p "$r$path"
    mount -t 9p -o "trans=virtio,version=9p2000.L,msize=262144,$opt" "$tag" "$r$path" ||
      echo "init: 9p $tag on $r$path failed"
  done
  mount -o bind /proc $r/proc
  mount -o bind /sys $r/sys
  mount -o bind /dev $r/dev
  if [ "$G_HUGE" -gt 0 ]; then
    echo "$G_HUGE" >/proc/sys/vm/nr_hugepages
    mkdir -p $r/dev/hugepages
    mount -t hugetlbfs nodev $r/dev/hugepages
  fi
}
[ "$G_ROLE" = uroce ] && sysroot_up

# rxe-gid-index: the index of rxe0's RoCE v2 GID that is an IPv4-mapped
# address (::ffff:a.b.c.d), read from sysfs.
cat >/usr/bin/rxe-gid-index <<'EOF'
#!/bin/sh
p=/sys/class/infiniband/rxe0/ports/1
for g in "$p"/gids/*; do
  i=${g##*/}
  case "$(cat "$g" 2>/dev/null)" in
    0000:0000:0000:0000:0000:ffff:*)
      [ "$(cat "$p/gid_attrs/types/$i" 2>/dev/null)" = "RoCE v2" ] && { echo "$i"; exit 0; } ;;
  esac
done
exit 1
EOF
# wait-listen PORT SECS: true once a TCP socket listens on PORT (from
# /proc/net/tcp, state 0A), so the host never probes a one-shot server.
cat >/usr/bin/wait-listen <<'EOF'
#!/bin/sh
hex=$(printf '%04X' "$1")
n=$(($2 * 10))
while [ "$n" -gt 0 ]; do
  awk -v p=":$hex" 'substr($2, length($2) - 4) == p && $4 == "0A" { f = 1 } END { exit !f }' \
    /proc/net/tcp /proc/net/tcp6 2>/dev/null && exit 0
  usleep 100000
  n=$((n - 1))
done
exit 1
EOF
# wait-cm-listen PORT SECS: true once an rdma_cm id listens on PORT (the
# kernel's resource tracking: `rdma resource show cm_id`).
cat >/usr/bin/wait-cm-listen <<'EOF'
#!/bin/sh
n=$(($2 * 10))
while [ "$n" -gt 0 ]; do
  rdma resource show cm_id 2>/dev/null | grep -q "state LISTEN.*:$1 " && exit 0
  usleep 100000
  n=$((n - 1))
done
exit 1
EOF
# case-procs: the programs of the interop cases still running, a line
# each: pid, name, state and kernel wait (tests/interop_rxe/failures.sh).
# Kernel threads, which have no executable, are not theirs (ib_mad1,
# ib_mcast, ...).
cat >/usr/bin/case-procs <<'EOF'
#!/bin/sh
for p in /proc/[0-9]*; do
  [ -e "$p/exe" ] || continue
  c=$(cat "$p/comm" 2>/dev/null) || continue
  case $c in ibv_* | ib_* | rping | udaddy | mckey) ;; *) continue ;; esac
  echo "${p#/proc/} $c $(sed 's/.*) //' "$p/stat" | cut -d' ' -f1) $(cat "$p/wchan" 2>/dev/null)"
done
EOF
chmod 755 /usr/bin/rxe-gid-index /usr/bin/wait-listen /usr/bin/wait-cm-listen /usr/bin/case-procs

mkdir -p /share
if ! mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144,cache=none share /share; then
  echo "init: no 9p share; the host cannot reach this guest"
else
  (
    cd /share/cmd || exit 1
    while :; do
      for f in *.sh; do
        [ -e "$f" ] || continue
        b=${f%.sh}
        mv "$f" "$b.run" || continue
        (
          cd /root || exit 1
          sh "/share/cmd/$b.run" >"/share/cmd/$b.out" 2>&1 </dev/null
          echo $? >"/share/cmd/$b.rc.tmp"
          mv "/share/cmd/$b.rc.tmp" "/share/cmd/$b.rc"
        ) &
      done
      usleep 50000
    done
  ) &
  [ "$G_ROLE" = uroce ] && mount -o bind /share /sysroot/share
  {
    echo "uptime $(cut -d' ' -f1 /proc/uptime)"
    /usr/sbin/ip -br addr show eth0
    if [ "$G_ROLE" = rxe ]; then
      rdma link show
    else
      d=/sys/bus/pci/devices/$G_PCI
      echo "$G_PCI $(cat "$d/vendor"):$(cat "$d/device") driver $(basename "$(readlink "$d/driver")")"
      echo "hugepages $(cat /proc/sys/vm/nr_hugepages)"
    fi
  } >/share/ready.tmp 2>&1
  mv /share/ready.tmp /share/ready
fi
echo "RXE-GUEST-READY ip=$G_IP uptime=$(cut -d' ' -f1 /proc/uptime)"
while :; do sleep 3600; done
