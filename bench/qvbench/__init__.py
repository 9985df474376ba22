"""The benchmark harness behind `make bench` (bench/run.py): kernels, builds, timed runs, tables."""
