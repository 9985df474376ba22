#!/usr/bin/env bash
# `make demo`: compile a program with a mapping bug (notebooks/programs/saxpy_bug.c, seed 000 Fig. 1),
# record it, look at the log, analyse it. Each command is printed before it runs, as you would type it.
# The README's sample output is this script's (tests/test_readme_samples.py checks it).
set -u
cd "$(dirname "$0")/.."
export PATH="$PWD/.venv/bin:$PATH"
mkdir -p examples/out

run() {
  printf '\n$ %s\n' "$*"
  "$@"
}

run trace cc -g -O0 notebooks/programs/saxpy_bug.c -o examples/out/saxpy_alloc || exit 2
run trace record -o examples/out/saxpy_alloc.arrow -- examples/out/saxpy_alloc || exit 2
run trace info examples/out/saxpy_alloc.arrow
run trace analyze examples/out/saxpy_alloc.arrow
status=$?
echo
echo "trace analyze exited with $status (1 = findings, as expected for this program)"
[ "$status" = 1 ]
