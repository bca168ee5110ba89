#!/usr/bin/env bash
# Builds the Soft-RoCE test guest: Debian's stock kernel (with rdma_rxe) and
# a busybox initramfs holding the host's rdma-core and perftest programs,
# the rxe provider, the modules rxe and virtio need, and our /init
# (scripts/interop/guest-init.sh).
#
#   scripts/interop/build-guest.sh CACHE_DIR
#
# Output (reused on the next run while the kernel version and the inputs
# below are unchanged; the key is written to CACHE_DIR/KV/stamp):
#   CACHE_DIR/KV/vmlinuz  CACHE_DIR/KV/initramfs.cpio.gz  CACHE_DIR/current -> KV
# Prints the guest directory (CACHE_DIR/KV) on its last line.
#
# Only Debian packages are used: the kernel package is fetched with
# `apt-get download` and unpacked with `dpkg -x` into the cache; nothing is
# installed. Host packages needed: busybox-static, cpio, kmod (depmod),
# ibverbs-utils, ibverbs-providers, rdma-core (rdma tool is iproute2),
# perftest (scripts/setup.sh installs them).
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
CACHE=${1:?usage: build-guest.sh CACHE_DIR}
mkdir -p "$CACHE/dl"
CACHE=$(cd "$CACHE" && pwd)

# ---- the kernel package ------------------------------------------------------
# The version linux-image-amd64 points at, unless KPKG names one.
kpkg=${KPKG:-}
if [ -z "$kpkg" ]; then
  kpkg=$(apt-cache depends linux-image-amd64 2>/dev/null |
    awk '/Depends: linux-image-[0-9]/ { print $2; exit }')
fi
if [ -z "$kpkg" ]; then
  echo "build-guest: cannot tell which linux-image-* package linux-image-amd64 depends on" >&2
  exit 1
fi
kv=${kpkg#linux-image-}
kdir=$CACHE/kpkg-$kv
if [ ! -f "$kdir/boot/vmlinuz-$kv" ]; then
  rm -f "$CACHE/dl/${kpkg}"_*.deb
  # A fresh machine may have stale package lists: refresh once and retry.
  if ! (cd "$CACHE/dl" && apt-get download -qq "$kpkg"); then
    apt-get update -qq
    (cd "$CACHE/dl" && apt-get download -qq "$kpkg")
  fi
  rm -rf "$kdir.tmp"
  mkdir -p "$kdir.tmp"
  dpkg -x "$CACHE/dl/${kpkg}"_*.deb "$kdir.tmp"
  mv "$kdir.tmp" "$kdir"
  rm -f "$CACHE/dl/${kpkg}"_*.deb
fi
moddir=$kdir/lib/modules/$kv
[ -f "$moddir/modules.dep" ] || depmod -b "$kdir" "$kv"

# ---- what the guest contains ----------------------------------------------
# Modules we load, in dependency order (from modules.dep); rdma_ucm is the
# kernel's rdma_cm (/dev/infiniband/rdma_cm) the rdma_cm cases talk to;
# uio_pci_generic hands a uroce guest's NIC to DPDK (guest-init.sh g_role).
WANT_MODULES=(virtio_pci virtio_net 9pnet_virtio 9p crc32_generic crc32-pclmul rdma_rxe rdma_ucm
  uio_pci_generic)
# Stock programs from the host (Debian's rdma-core 44 and perftest 4.5).
PROGRAMS=(
  /usr/bin/ibv_devices /usr/bin/ibv_devinfo /usr/bin/ibv_rc_pingpong /usr/bin/ibv_ud_pingpong
  /usr/bin/ib_write_bw /usr/bin/ib_send_bw /usr/bin/ib_send_lat /usr/bin/ib_read_bw
  /usr/bin/ib_read_lat /usr/bin/ib_atomic_lat /usr/bin/ib_atomic_bw /usr/bin/rdma /usr/bin/rping
  /usr/bin/udaddy /usr/bin/mckey /usr/bin/stdbuf
)
# stdbuf's preload (line-buffered output: the host reads a running guest
# program's output, e.g. mckey's "joined" line).
STDBUF_LIB=/usr/libexec/coreutils/libstdbuf.so
PROVIDER=/usr/lib/x86_64-linux-gnu/libibverbs/librxe-rdmav34.so
for f in /bin/busybox "${PROGRAMS[@]}" "$PROVIDER" "$STDBUF_LIB" /sbin/ip; do
  if [ ! -e "$f" ]; then
    echo "build-guest: $f missing on the host (scripts/setup.sh installs it)" >&2
    exit 1
  fi
done

# The cache key: kernel, host package versions and our own inputs.
key=$({
  echo "$kv"
  dpkg-query -W -f='${Package} ${Version}\n' busybox-static ibverbs-utils ibverbs-providers \
    libibverbs1 librdmacm1 rdmacm-utils perftest iproute2 2>/dev/null
  sha256sum "$HERE/build-guest.sh" "$HERE/guest-init.sh"
} | sha256sum | cut -d' ' -f1)
out=$CACHE/$kv
if [ -f "$out/stamp" ] && [ "$(cat "$out/stamp")" = "$key" ] &&
  [ -f "$out/vmlinuz" ] && [ -f "$out/initramfs.cpio.gz" ]; then
  ln -sfn "$kv" "$CACHE/current"
  echo "$out"
  exit 0
fi

root=$CACHE/rootfs.tmp
rm -rf "$root" "$out.tmp"
mkdir -p "$root"/{bin,sbin,usr/bin,usr/sbin,etc,proc,sys,dev,tmp,run,root,share} \
  "$root/lib/modules/$kv" "$root/etc/libibverbs.d" "$out.tmp"
ln -s lib "$root/lib64"
cp /bin/busybox "$root/bin/busybox"
for a in $("$root/bin/busybox" --list); do
  [ -e "$root/bin/$a" ] || ln -s busybox "$root/bin/$a"
done

# Modules: each wanted one after everything it depends on.
declare -A seen=()
order=()
resolve() {
  local m=$1 d
  [ -n "${seen[$m]:-}" ] && return 0
  seen[$m]=1
  for d in $(awk -v m="$m:" '$1 == m { for (i = 2; i <= NF; i++) print $i }' "$moddir/modules.dep"); do
    resolve "$d"
  done
  order+=("$m")
}
for w in "${WANT_MODULES[@]}"; do
  rel=$(awk -F: -v n="/${w//-/[-_]}[.]ko" '$1 ~ n"$" { print $1; exit }' "$moddir/modules.dep")
  if [ -z "$rel" ]; then
    echo "build-guest: module $w not in $moddir/modules.dep" >&2
    exit 1
  fi
  resolve "$rel"
done
: >"$root/etc/modules.order"
for m in "${order[@]}"; do
  mkdir -p "$root/lib/modules/$kv/$(dirname "$m")"
  cp "$moddir/$m" "$root/lib/modules/$kv/$m"
  echo "/lib/modules/$kv/$m" >>"$root/etc/modules.order"
done

# A program and the shared libraries ldd names for it.
copy_with_libs() {
  local src=$1 dst=${2:-$1} lib
  mkdir -p "$root$(dirname "$dst")"
  cp -L "$src" "$root$dst"
  while read -r lib; do
    [ -e "$root$lib" ] && continue
    mkdir -p "$root$(dirname "$lib")"
    cp -L "$lib" "$root$lib"
  done < <(ldd "$src" 2>/dev/null | awk '/=> \// { print $3 } /^\t\/lib/ { print $1 }')
}
for p in "${PROGRAMS[@]}"; do copy_with_libs "$p"; done
copy_with_libs "$PROVIDER"
copy_with_libs "$STDBUF_LIB"
# glibc dlopens libgcc_s for pthread_exit/cancellation (rping's threads).
copy_with_libs /lib/x86_64-linux-gnu/libgcc_s.so.1
# iproute2's ip, not busybox's (no "rdma"-era options there).
rm -f "$root/bin/ip" "$root/sbin/ip"
copy_with_libs /sbin/ip /usr/sbin/ip
echo "driver rxe" >"$root/etc/libibverbs.d/rxe.driver"
echo "root:x:0:0:root:/root:/bin/sh" >"$root/etc/passwd"
echo "root:x:0:" >"$root/etc/group"
echo "127.0.0.1 localhost" >"$root/etc/hosts"
echo "hosts: files" >"$root/etc/nsswitch.conf"
cp "$HERE/guest-init.sh" "$root/init"
chmod 755 "$root/init"

(cd "$root" && find . | LC_ALL=C sort | cpio -o -H newc --quiet | gzip -1) >"$out.tmp/initramfs.cpio.gz"
cp "$kdir/boot/vmlinuz-$kv" "$out.tmp/vmlinuz"
echo "$key" >"$out.tmp/stamp"
rm -rf "$root" "$out"
mv "$out.tmp" "$out"
ln -sfn "$kv" "$CACHE/current"
echo "build-guest: $kv, initramfs $(stat -c %s "$out/initramfs.cpio.gz") bytes" >&2
echo "$out"
