#!/bin/sh
# /init of the Soft-RoCE test guest (busybox sh; built into the initramfs by
# scripts/interop/build-guest.sh). Kernel command line parameters:
#   g_ip=A.B.C.D/NN   eth0's address      g_mtu=1500   eth0's MTU
# It loads the modules, brings eth0 up, creates rxe0 on it, and serves
# commands from the host through the 9p share "share" (guest.sh exec):
# the host drops ID.sh into /share/cmd; the agent renames it ID.run, runs
# it, writes its output to ID.out and then its exit status to ID.rc
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
for kv in $(cat /proc/cmdline); do
  case "$kv" in
    g_ip=*) G_IP=${kv#g_ip=} ;;
    g_mtu=*) G_MTU=${kv#g_mtu=} ;;
  esac
done
while read -r m; do insmod "$m" || echo "init: insmod $m failed"; done </etc/modules.order
# busybox sh prefers its own applets to PATH: name iproute2 by path.
/usr/sbin/ip link set lo up
/usr/sbin/ip link set eth0 mtu "$G_MTU" up
[ -n "$G_IP" ] && /usr/sbin/ip addr add "$G_IP" dev eth0
rdma link add rxe0 type rxe netdev eth0 || echo "init: rdma link add rxe0 failed"

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
chmod 755 /usr/bin/rxe-gid-index /usr/bin/wait-listen /usr/bin/wait-cm-listen

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
  {
    echo "uptime $(cut -d' ' -f1 /proc/uptime)"
    /usr/sbin/ip -br addr show eth0
    rdma link show
  } >/share/ready.tmp 2>&1
  mv /share/ready.tmp /share/ready
fi
echo "RXE-GUEST-READY ip=$G_IP uptime=$(cut -d' ' -f1 /proc/uptime)"
while :; do sleep 3600; done
