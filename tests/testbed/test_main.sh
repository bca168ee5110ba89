#!/usr/bin/env bash
# The uroce-testbed command: exit codes, error messages naming the problem,
# and byte-identical outputs for the same seed (the run-level check of
# test_run.cpp, through the real binary).
#   test_main.sh BUILT_UROCE_TESTBED SOURCE_ROOT
set -euo pipefail
bin=$1
src=$2
tmp=$(mktemp -d /tmp/uroce-testbed-cli.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# Help works.
"$bin" --help > "$tmp/help.txt" || fail "--help exited $?"
grep -q "sweep" "$tmp/help.txt" || fail "--help does not mention sweep"

# No scenario: usage error.
set +e
"$bin" > /dev/null 2> "$tmp/err.txt"; rc=$?
set -e
[ "$rc" -eq 2 ] || fail "no scenario: exit $rc, want 2"

# A scenario with an unknown key: exit 2, the key and its line named.
sed 's/^rate_gbps = 2$/rate_gpbs = 2/' "$src/testbed/scenarios/loop2.toml" > "$tmp/typo.toml"
set +e
"$bin" "$tmp/typo.toml" --out "$tmp/o" 2> "$tmp/err.txt"; rc=$?
set -e
[ "$rc" -eq 2 ] || fail "typo: exit $rc, want 2"
grep -q "flow\[0\]: unknown key 'rate_gpbs' (did you mean 'rate_gbps'?) at line" "$tmp/err.txt" \
  || fail "typo message: $(cat "$tmp/err.txt")"

# A disconnected topology: exit 2 and the node named.
cat "$src/testbed/scenarios/loop2.toml" > "$tmp/island.toml"
printf '\n[[switch]]\nname = "s9"\n[[host]]\nname = "h9"\n[[link]]\na = "h9"\nb = "s9"\n' >> "$tmp/island.toml"
set +e
"$bin" "$tmp/island.toml" --out "$tmp/o" 2> "$tmp/err.txt"; rc=$?
set -e
[ "$rc" -eq 2 ] || fail "island: exit $rc, want 2"
grep -q "topology is disconnected: 'h9' cannot be reached from 'h1'" "$tmp/err.txt" \
  || fail "island message: $(cat "$tmp/err.txt")"

# Same seed twice: identical files; the run reports its deadlock.
"$bin" "$src/testbed/scenarios/loop2.toml" --seed 5 --out "$tmp/r1" --pcap > "$tmp/out1.txt"
"$bin" "$src/testbed/scenarios/loop2.toml" --seed 5 --out "$tmp/r2" --pcap > /dev/null
grep -q "1 deadlock(s)" "$tmp/out1.txt" || fail "no deadlock reported: $(cat "$tmp/out1.txt")"
for f in summary.json timeseries.csv pcap/h1-s1.pcap pcap/hd-s2.pcap pcap/s1-s2.pcap; do
  [ -s "$tmp/r1/$f" ] || fail "missing $f"
  cmp -s "$tmp/r1/$f" "$tmp/r2/$f" || fail "$f differs between two runs with seed 5"
done
grep -q '"seed": 5' "$tmp/r1/summary.json" || fail "--seed not applied"
echo "testbed CLI: ok"
