# shellcheck shell=bash
# The uroce-testbed binary a scripts/testbed-*.sh runs, sourced after the
# script's cd to the repository root.
#
#   uroce_testbed_bin VAR
#
# Sets VAR to $TESTBED when it is set: a uroce-testbed built already (its
# path absolute, or relative to the repository root), so two trees can be
# compared while the build directory moves on. Otherwise sets up and builds
# BUILD_DIR's (default build) and names it.
uroce_testbed_bin() {
  local dir=${BUILD_DIR:-build}
  if [ -n "${TESTBED:-}" ]; then
    printf -v "$1" '%s' "$TESTBED"
    return
  fi
  [ -f "$dir/build.ninja" ] || meson setup "$dir" -Dtests=true
  ninja -C "$dir" testbed/uroce-testbed >/dev/null
  printf -v "$1" '%s' "$dir/testbed/uroce-testbed"
}
