#!/bin/bash
# scripts/lib/uroce-verbs.sh: uroce_check_perftest on perftest outputs
# written here (no programs run). Each case names the output, the expected
# status and, on failure, the exact UROCE_WHY.
set -u
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=scripts/lib/uroce-verbs.sh
source "$here/../../scripts/lib/uroce-verbs.sh"

tmp=$(mktemp -d /tmp/uroce_verbs_test.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
UROCE_CLI_OUT=$tmp/client.out UROCE_CLI_ERR=$tmp/client.err
fails=0

# check NAME KIND ITERS WANT_STATUS WANT_WHY (outputs already written)
check() {
  local name=$1 kind=$2 iters=$3 want=$4 why=$5 st=0
  UROCE_WHY='' UROCE_RESULT=''
  uroce_check_perftest "$kind" "$iters" || st=$?
  if [ "$st" -ne "$want" ] || [ "$UROCE_WHY" != "$why" ]; then
    echo "FAIL $name: status $st (want $want), why '$UROCE_WHY' (want '$why')"
    fails=$((fails + 1))
  else
    echo "ok   $name"
  fi
}

bw_table() {
  printf ' #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]\n'
  printf ' 65536      %s           %s            %s            %s\n' "$1" "$2" "$2" "$2"
}

bw_table 200 0.521000 >"$UROCE_CLI_OUT"
: >"$UROCE_CLI_ERR"
check UroceCheckPerftest_BwFigure bw 200 0 ''

bw_table 200 0.000000 >"$UROCE_CLI_OUT"
check UroceCheckPerftest_ZeroFigureFails bw 200 1 \
  "result row without 200 iterations or with a zero figure:  65536      200           0.000000            0.000000            0.000000"

# perftest's clock calibration failed (stderr merged into the output, as
# the guest's is): the zero figure is accepted and said.
{
  echo "Correlation coefficient r^2: 0.42 < 0.9"
  bw_table 200 0.000000
} >"$UROCE_CLI_OUT"
check UroceCheckPerftest_ZeroFigureWithoutClockPasses bw 200 0 ''
if [[ $UROCE_RESULT != *"(no figure: the client's perftest could not measure its CPU clock"* ]]; then
  echo "FAIL UroceCheckPerftest_ZeroFigureWithoutClockPasses: UROCE_RESULT does not say why"
  fails=$((fails + 1))
fi

# The same on the client's own stderr file; the iteration count still counts.
bw_table 150 0.000000 >"$UROCE_CLI_OUT"
echo "Correlation coefficient r^2: 0.42 < 0.9" >"$UROCE_CLI_ERR"
check UroceCheckPerftest_ShortRunFailsWithoutClockToo bw 200 1 \
  "result row without 200 iterations or with a zero figure:  65536      150           0.000000            0.000000            0.000000"

: >"$UROCE_CLI_ERR"
echo "Couldn't connect to 10.0.0.1:18515" >"$UROCE_CLI_OUT"
check UroceCheckPerftest_NoTable bw 200 1 "client printed no result row under a '#bytes' header"

{
  printf ' #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]\n'
  printf ' 2       1000          0.00           12.1         4.2\n'
} >"$UROCE_CLI_OUT"
check UroceCheckPerftest_LatZeroMinFails lat 1000 1 \
  "result row without 1000 iterations or with a zero figure:  2       1000          0.00           12.1         4.2"

[ "$fails" -eq 0 ] || exit 1
echo "all passed"
