#!/usr/bin/env bash
# `make demo`: compile a program with a mapping bug (notebooks/programs/saxpy_bug.c), record it, analyse the log.
set -u
cd "$(dirname "$0")"
TRACE=../.venv/bin/trace
mkdir -p out
SRC="$(cd ../notebooks/programs && pwd)/saxpy_bug.c"   # seed 000 Fig. 1 (also notebook 02)
set -x
$TRACE cc -g -O0 "$SRC" -o out/saxpy_alloc || exit 2
$TRACE record -o out/saxpy_alloc.arrow -- ./out/saxpy_alloc || exit 2
$TRACE info out/saxpy_alloc.arrow
$TRACE analyze out/saxpy_alloc.arrow
status=$?
set +x
echo "trace analyze exited with $status (1 = findings, as expected for this program)"
[ "$status" = 1 ]
