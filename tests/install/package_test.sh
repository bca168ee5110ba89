#!/usr/bin/env bash
# The Debian packages end to end (scripts/package-test.sh): built from a
# copy of the tree (about 12 minutes on 2 cores), linted, installed into an
# overlay of the host's root, run as the service unit defines it, purged.
# UROCE_PACKAGE_TEST=0 skips it (a developer's quick run); CI runs it.
#   package_test.sh SOURCE_ROOT BUILD_ROOT
if [ "${UROCE_PACKAGE_TEST:-1}" = 0 ]; then
  echo "package: UROCE_PACKAGE_TEST=0: skipped"
  exit 77
fi
# Its work directory is a temporary one, removed at the end.
exec "$1/scripts/package-test.sh"
