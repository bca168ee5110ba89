#!/usr/bin/env bash
# The Debian packages as an operator gets them (issue 32, must-show 1;
# docs/install.md "The package check"). As root:
#
#   scripts/package-test.sh [--work DIR] [--debs DIR]
#
#   1. builds uroce and liburoce-dev with `dpkg-buildpackage -us -uc -b`
#      from a copy of this tree (its tracked and untracked files), unless
#      --debs DIR holds them already;
#   2. lintian on both: no errors (warnings are printed);
#   3. a fresh root made from the host's own packages: an overlay whose
#      lower layer is the host's root file system and whose upper layer is
#      a tmpfs, in a private mount namespace, so nothing is downloaded and
#      the host's /etc, /dev/infiniband and libibverbs are untouched;
#   4. `apt-get install ./uroce_*.deb ./liburoce-dev_*.deb` in that root,
#      with no package source (every dependency must already be installed);
#   5. uroced started as uroced.service defines it: its ExecStart, the
#      RuntimeDirectory and tmpfiles.d directories, its
#      CapabilityBoundingSet (setpriv), $NOTIFY_SOCKET (READY=1 awaited), in
#      a network namespace of its own;
#   6. through the installed files only: ibv_devices, an ibv_rc_pingpong
#      pair (as root, and again as nobody), an rping pair, uroce-ctl status;
#   7. SIGTERM: exit 0, STOPPING=1, nothing left in /run/uroce or
#      /dev/infiniband;
#   8. `apt-get purge` of both (and of any package the install added): dpkg
#      knows neither package, and the root's system directories hold
#      exactly the files they held before the install (/etc/uroce, the
#      provider, the .driver file, ... gone).
# Exit 0 when every step holds; 1 otherwise; 77 when not root.
# WORK defaults to a temporary directory; it is removed at the end.
set -euo pipefail

cd "$(dirname "$0")/.."
src=$PWD
work=""
debs=""
while [ $# -gt 0 ]; do
  case "$1" in
    --work) work=$2; shift 2 ;;
    --debs) debs=$2; shift 2 ;;
    *) echo "usage: scripts/package-test.sh [--work DIR] [--debs DIR]" >&2; exit 2 ;;
  esac
done
if [ "$(id -u)" -ne 0 ]; then
  echo "package-test: needs root (an overlay mount, chroot, namespaces): skipped"
  exit 77
fi

own_work=0
if [ -z "$work" ]; then
  work=$(mktemp -d /tmp/uroce-package.XXXXXX)
  own_work=1
fi
mkdir -p "$work"
work=$(cd "$work" && pwd -P)
cleanup() {
  rm -rf "$work/src" "$work/overlay"
  if [ "$own_work" = 1 ]; then rm -rf "$work"; fi
}
trap cleanup EXIT

need=(debhelper lintian dpkg-dev util-linux)
missing=()
for p in "${need[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "package-test: installing ${missing[*]}"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# 1. The packages.
if [ -z "$debs" ]; then
  version=$(dpkg-parsechangelog -l debian/changelog -S Version)
  tree=$work/src/uroce-$version
  mkdir -p "$tree"
  git ls-files -co --exclude-standard -z | tar --null -T - -c | tar -x -C "$tree"
  (cd "$tree" && dpkg-checkbuilddeps) || {
    echo "package-test: installing the build dependencies"
    DEBIAN_FRONTEND=noninteractive apt-get build-dep -y -qq "$tree"
  }
  start=$(date +%s)
  echo "package-test: dpkg-buildpackage -us -uc -b (log: $work/dpkg-buildpackage.log)"
  # Line tables only (-g1 after Debian's -g, through dpkg-buildflags'
  # DEB_CXXFLAGS_APPEND), as scripts/test.sh builds: the packages behave
  # the same, and the build takes a fifth less of CI's time.
  if ! (cd "$tree" && DEB_CXXFLAGS_APPEND=-g1 dpkg-buildpackage -us -uc -b -jauto \
    >"$work/dpkg-buildpackage.log" 2>&1); then
    tail -40 "$work/dpkg-buildpackage.log"
    echo "FAIL: dpkg-buildpackage"
    exit 1
  fi
  echo "package-test: built in $(($(date +%s) - start)) s"
  debs=$work/debs
  mkdir -p "$debs"
  mv "$work"/src/*.deb "$work"/src/*.buildinfo "$work"/src/*.changes "$debs"/ 2>/dev/null || true
fi
debs=$(cd "$debs" && pwd -P)
ls "$debs"/uroce_*.deb "$debs"/liburoce-dev_*.deb >/dev/null

# 2. lintian.
echo "package-test: lintian"
if ! TMPDIR=$work lintian --fail-on error --tag-display-limit 0 "$debs"/uroce_*.deb "$debs"/liburoce-dev_*.deb \
    >"$work/lintian.log" 2>&1; then
  cat "$work/lintian.log"
  echo "FAIL: lintian reports errors"
  exit 1
fi
grep -v "running with root privileges" "$work/lintian.log" | sed 's/^/  /' || true
echo "PASS: lintian: no errors ($(grep -c '^W:' "$work/lintian.log" || true) warnings)"

# 3-8, in a mount namespace of their own, over an overlay of the host's root.
unshare --mount --propagation private -- "$src/scripts/lib/package-inner.sh" / "$work/overlay" "$debs"
