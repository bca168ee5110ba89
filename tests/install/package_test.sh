#!/usr/bin/env bash
# The Debian packages end to end (scripts/package-test.sh): opt-in with
# UROCE_PACKAGE_TEST=1, since building the .debs from scratch takes 10-15
# minutes on 2 cores (then about 2 minutes more: lintian, a debootstrap root
# kept in BUILD/package-test for the next run, install, traffic, purge).
#   package_test.sh SOURCE_ROOT BUILD_ROOT
if [ "${UROCE_PACKAGE_TEST:-0}" != 1 ]; then
  echo "package: UROCE_PACKAGE_TEST=1 runs it (10-15 minutes): skipped"
  exit 77
fi
exec "$1/scripts/package-test.sh" --work "$2/package-test" --keep-root
