#!/usr/bin/env bash
# Runs rdma-core's own Python test suite (its tests/ folder, run with
# Debian's python3-pyverbs) against a uroce device. By hand, not in CI: the
# suite is rdma-core's, not ours, and many of its tests are for features or
# vendor providers uroce does not claim.
#
#   scripts/pyverbs.sh [--build DIR] [--timeout SECS] [--keep] [--embedded] TESTS_DIR
#                      [TEST-NAME...]
#
# TESTS_DIR is rdma-core's tests/ folder of the release matching
# python3-pyverbs (Debian 12: v44.0), extracted beforehand; this script
# fetches nothing. For example, from a git clone of rdma-core:
#   git -C rdma-core archive v44.0 tests | tar -x -C /tmp/rdma-core-v44
#   scripts/pyverbs.sh /tmp/rdma-core-v44/tests
# TEST-NAMEs (e.g. tests.test_qp.QPTest.test_create_rc_qp) select tests as
# unittest does; without them the whole suite runs.
#
# It starts its own uroced (devices uroce0 and uroce1 on a ring pair; the
# tests use uroce0 only, --gid 1 = the RoCEv2 IPv4-mapped GID), runs
#   uroce-run /usr/bin/python3 TESTS_DIR/run_tests.py --dev uroce0 --port 1 --gid 1 -v
# (with --embedded there is no uroced: the same two devices run in the test
# process's own engine, `uroce-run --embedded ... -- /usr/bin/python3 ...`,
# docs/embedded.md) and prints pass/skip/fail/error counts and the tests that failed, with
# the last line of each one's traceback. The full log is kept in the work
# dir with --keep (UROCE_KEEP=1). Needs root (mknod, like every uroced).
# Exit status: 0 when nothing failed or errored.
set -euo pipefail

SOURCE_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=scripts/lib/uroce-env.sh
source "$SOURCE_ROOT/scripts/lib/uroce-env.sh"

build=$SOURCE_ROOT/build
limit=1800
embedded=0
tests=
names=()
usage() {
  sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
  exit "${1:-2}"
}
while [ $# -gt 0 ]; do
  case $1 in
    --build) build=$2; shift 2 ;;
    --timeout) limit=$2; shift 2 ;;
    --keep) export UROCE_KEEP=1; shift ;;
    --embedded) embedded=1; shift ;;
    -h|--help) usage 0 ;;
    -*) echo "pyverbs.sh: unknown option $1" >&2; usage ;;
    *) if [ -z "$tests" ]; then tests=$1; else names+=("$1"); fi; shift ;;
  esac
done
[ -n "$tests" ] || usage
tests=$(realpath "$tests")
if [ ! -f "$tests/run_tests.py" ]; then
  echo "pyverbs.sh: $tests/run_tests.py not found: give rdma-core's tests/ folder" >&2
  exit 2
fi
if ! /usr/bin/python3 -c 'import pyverbs' 2>/dev/null; then
  echo "pyverbs.sh: /usr/bin/python3 cannot import pyverbs (apt-get install python3-pyverbs)" >&2
  exit 2
fi
if [ "$(id -u)" -ne 0 ]; then
  echo "pyverbs.sh: needs root (uroced mknods /dev/infiniband/uverbsN)" >&2
  exit 2
fi

uroce_env_init pyverbs
uroce_find_tools "$(realpath "$build")"
devices=(--device "name=uroce0;mac=02:00:00:cc:00:01;ipv4=10.204.0.1;mtu=9000;port=ring:p0"
  --device "name=uroce1;mac=02:00:00:cc:00:02;ipv4=10.204.0.2;mtu=9000;port=ring:p0")
if [ "$embedded" = 1 ]; then
  runner=("$UROCE_RUN" --embedded --lcore 1 "${devices[@]}" --)
else
  uroce_daemon_start d --lcore 1 -- "${devices[@]}"
  runner=("$UROCE_RUN" --run-dir "${UROCE_DAEMON_RUN[d]}")
fi

log=$UROCE_TMP/pyverbs.log
echo "running rdma-core's tests from $tests against uroce0 (log: $log)"
cmd=("${runner[@]}" /usr/bin/python3 "$tests/run_tests.py"
  --dev uroce0 --port 1 --gid 1 -v "${names[@]}")
echo "  ${cmd[*]}"
# From the folder above tests/ (every path here is absolute).
cd "$tests/.."
pid=
rc=0
uroce_bg pid --timeout "$limit" "$log" "$log" -- "${cmd[@]}"
uroce_wait "$pid" rc
if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
  echo "pyverbs.sh: the suite did not finish within ${limit}s (the counts below are partial)"
fi

# Counts from unittest's closing lines ("Ran N tests", then "OK (skipped=S)"
# or "FAILED (failures=F, errors=E, skipped=S)"): the per-test lines of -v
# are not reliable to parse (a docstring or the test's own output can come
# between the name and the verdict). The failures from the "FAIL: "/"ERROR: "
# blocks, each with the last line of its traceback.
/usr/bin/python3 - "$log" <<'EOF'
import re, sys
text = open(sys.argv[1], errors="replace").read()
ran = re.search(r"^Ran (\d+) tests? in .*$", text, re.M)
tail = re.search(r"^(OK|FAILED)(?: \((.*)\))?$", text, re.M)
if not ran or not tail:
    print("pyverbs: unittest printed no closing lines (crashed or timed out?)")
else:
    total = int(ran.group(1))
    kinds = dict((k, int(v)) for k, v in re.findall(r"(\w+)=(\d+)", tail.group(2) or ""))
    ok = total - sum(kinds.values())
    print("pyverbs: %d passed, %d skipped, %d failed, %d errors%s (of %d)" % (
        ok, kinds.get("skipped", 0), kinds.get("failures", 0), kinds.get("errors", 0),
        "".join(", %d %s" % (v, k.replace("_", " ")) for k, v in kinds.items()
                if k not in ("skipped", "failures", "errors")), total))
blocks = re.split(r"^={50,}\n", text, flags=re.M)[1:]
for b in blocks:
    head = b.split("\n", 1)[0]
    if not re.match(r"(FAIL|ERROR): ", head):
        continue
    parts = b.split("-" * 70)
    body = (parts[1] if len(parts) > 1 else b).strip().splitlines()
    last = [l for l in body if l.strip() and not l.startswith("---")]
    print("  %s\n      %s" % (head, last[-1].strip() if last else ""))
print("skip reasons (count):")
reasons = re.findall(r"\.\.\. skipped '(.*)'", text)
agg = {}
for r in reasons:
    agg[r] = agg.get(r, 0) + 1
for r, n in sorted(agg.items(), key=lambda x: -x[1])[:25]:
    print("  %4d  %s" % (n, r[:150]))
EOF
if [ "$embedded" = 0 ] && ! uroce_daemon_alive d; then
  echo "pyverbs.sh: uroced died during the suite"
  uroce_daemon_log_tail d 30
  rc=1
fi
exit "$rc"
