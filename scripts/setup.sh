#!/usr/bin/env bash
# Installs every Debian package uroce builds, tests or benchmarks with.
# Idempotent: runs apt-get only for what is missing, and `apt-get update` only
# when an install is needed and the package lists are older than a day.
set -euo pipefail

PKGS=(
  build-essential pkg-config meson ninja-build
  clang-14 libclang-rt-14-dev
  libdpdk-dev dpdk dpdk-dev
  libisal-dev libtbb-dev
  libgtest-dev
  nlohmann-json3-dev libcli11-dev libfmt-dev libspdlog-dev libtomlplusplus-dev
  python3-scapy tshark
  iproute2 valgrind libibverbs-dev ibverbs-utils perftest rdmacm-utils python3-pyverbs python3-matplotlib
  qemu-system-x86 busybox-static cpio kmod ibverbs-providers
  ucx-utils openmpi-bin libopenmpi-dev libfabric-bin qperf
)

missing=()
for p in "${PKGS[@]}"; do
  if ! grep -q "install ok installed" <<<"$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null)"; then
    missing+=("$p")
  fi
done

# promtool, which verbs_metrics lints the metrics with, comes in Debian's
# prometheus package; installing that would also start a Prometheus
# server (its postinst), so the package is only downloaded through apt-get
# and unpacked where the test looks (PROMTOOL_DIR). Nothing else of it runs.
PROMTOOL_DIR=/var/cache/uroce-test/prometheus
promtool() {
  [ -x "$PROMTOOL_DIR/usr/bin/promtool" ] && return 0
  local tmp
  tmp=$(mktemp -d)
  if (cd "$tmp" && $SUDO apt-get download -qq prometheus) >/dev/null 2>&1 ||
    { $SUDO apt-get update -qq && (cd "$tmp" && $SUDO apt-get download -qq prometheus); }; then
    $SUDO mkdir -p "$PROMTOOL_DIR"
    $SUDO dpkg-deb -x "$tmp"/prometheus_*.deb "$PROMTOOL_DIR"
    echo "setup: promtool unpacked into $PROMTOOL_DIR"
  else
    echo "setup: the prometheus package could not be downloaded: verbs_metrics will say promtool is missing"
  fi
  rm -rf "$tmp"
}

SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all ${#PKGS[@]} packages present"
  promtool
  exit 0
fi

echo "setup: installing ${missing[*]}"
# tshark asks whether non-root users may capture; answer no, non-interactively.
echo "wireshark-common wireshark-common/install-setuid boolean false" | $SUDO debconf-set-selections
install() { DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"; }
# Only refresh the package lists when an install from the current ones fails
# (none yet on a fresh machine, or stale versions).
if ! install; then
  $SUDO apt-get update -qq
  install
fi
promtool
echo "setup: done"
