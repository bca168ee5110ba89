#!/usr/bin/env bash
# The test command (README): installs dependencies, configures a build
# directory, builds, and runs the Meson test suites.
#
#   scripts/test.sh              gcc build in build/, all suites
#   scripts/test.sh --sanitize   clang ASan+UBSan build in build-san/: unit
#                                suites and a bounded libFuzzer run
#   BUILD_DIR=... overrides the build directory.
set -euo pipefail
cd "$(dirname "$0")/.."

mode=normal
[ "${1:-}" = "--sanitize" ] && mode=sanitize

scripts/setup.sh

if [ "$mode" = normal ]; then
  dir=${BUILD_DIR:-build}
  # Line tables only (-g1): backtraces keep file:line, and the build is
  # about a fifth faster than with full debug info (CI's time budget).
  [ -f "$dir/build.ninja" ] || meson setup "$dir" -Dtests=true \
      -Ddebug=false -Dcpp_args=-g1
  ninja -C "$dir"
  # The rxe guest's image (a Debian kernel package fetched with apt-get and
  # an initramfs) is built here, outside the interop suite's timeout: on a
  # slow mirror the download alone can take minutes. The suite reuses it.
  t0=$SECONDS
  # A failed build (no mirror) is not fatal here: interop_rxe tries again.
  if img=$(timeout 600 scripts/interop/build-guest.sh "$dir/rxe-guest" | tail -n 1); then
    echo "rxe guest image: $img ($((SECONDS - t0)) s)"
  else
    echo "rxe guest image not built ($((SECONDS - t0)) s); interop_rxe tries again"
  fi
  # The PCI guest runs (suite interop-pci, two TCG guests, 5-7 minutes
  # each) are run by hand: docs/interop-rxe.md.
  meson test -C "$dir" --print-errorlogs --num-processes 2 --no-suite interop-pci
else
  dir=${BUILD_DIR:-build-san}
  [ -f "$dir/build.ninja" ] || CXX=clang++-14 CC=clang-14 meson setup "$dir" \
      -Dtests=true -Dfuzz=true -Db_sanitize=address,undefined -Db_lundef=false \
      -Doptimization=2 -Ddebug=false -Dcpp_args=-gline-tables-only
  # Only what the unit and fuzz suites run (not the daemon's main, the bench
  # tools or the integration probes, which only the gcc build tests).
  mapfile -t targets < <(/usr/bin/python3 scripts/lib/suite_targets.py "$dir" unit fuzz)
  ninja -C "$dir" "${targets[@]}"
  # The tests' timeouts are set for the plain build: ASan and UBSan slow the
  # simulations several times over (test_transport_rc: ~21 s of CPU, 70 s
  # beside a loaded machine, against a 30 s timeout), hence three times
  # each timeout. The fuzzers bound their own run time.
  UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
  ASAN_OPTIONS=detect_leaks=1 \
    meson test -C "$dir" --no-rebuild --print-errorlogs --num-processes 2 \
      --timeout-multiplier 3 --suite unit --suite fuzz
fi
