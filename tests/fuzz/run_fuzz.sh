#!/bin/sh
# Runs a libFuzzer target for a bounded time from a fresh seed corpus that
# wire_vectors writes (one file per RoCEv2 test vector, plus PFC frames).
# usage: run_fuzz.sh FUZZER WIRE_VECTORS SECONDS
set -eu
fuzzer=$(readlink -f "$1")
vectors=$(readlink -f "$2")
seconds=$3
dir=$(mktemp -d "${TMPDIR:-/tmp}/uroce-fuzz-$$-XXXXXX")
trap 'rm -rf "$dir"' EXIT
mkdir "$dir/corpus"
"$vectors" corpus "$dir/corpus"
cd "$dir"
"$fuzzer" -max_total_time="$seconds" -print_final_stats=1 corpus
