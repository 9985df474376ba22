"""The recorder keeps the width of single accesses, so reports name elements instead of bytes."""

from __future__ import annotations

import json

import polars as pl
import pytest

pytestmark = [pytest.mark.clang, pytest.mark.slow]


def test_uninitialised_read_is_reported_by_element(record_c, trace_cli_run):
    run = record_c("omp/seed000_fig1_alloc.c", opt="-O0")
    device_reads = run.open().accesses.filter((pl.col("side") == "device") & (pl.col("line") == 13)
                                             & ~pl.col("write"))
    assert device_reads.height > 0
    report = json.loads(trace_cli_run("analyze", "--check", "mapping", "--format", "json", str(run.log)).stdout)
    (finding,) = [f for f in report["findings"] if f["variable"] == "b"]
    assert finding["kind"] == "use-of-uninitialized-memory"
    assert finding["element_size"] == 4
    assert finding["extent"] == "b: 4096 elements mapped (4-byte), element 0 accessed"
