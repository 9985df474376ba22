#!/usr/bin/env bash
# `make demo`: compile a program with a mapping bug, record it, analyse the log.
set -u
cd "$(dirname "$0")"
TRACE=../.venv/bin/trace
mkdir -p out
set -x
$TRACE cc -g -O0 saxpy_alloc.c -o out/saxpy_alloc || exit 2
$TRACE record -o out/saxpy_alloc.arrow -- ./out/saxpy_alloc || exit 2
$TRACE info out/saxpy_alloc.arrow
$TRACE analyze out/saxpy_alloc.arrow
status=$?
set +x
echo "trace analyze exited with $status (1 = findings, as expected for this program)"
[ "$status" = 1 ]
