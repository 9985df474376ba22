"""Strided ACCESS runs (format version 2) recorded from real kernels.

A row loop whose rows have gaps records one strided row per thread and stretch of rows instead of
one row per loop row; the mapping checker must still see every byte of every block, and none of
the gaps. `nowait` kernels keep plain runs (their consumers are the race checkers).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest
from quiver.formats.blocks import explode_blocks

pytestmark = pytest.mark.clang

PROGRAMS = Path(__file__).resolve().parents[1] / "programs"
TRACE = str(Path(sys.executable).with_name("trace"))
N = 32


def test_row_interiors_are_strided_and_every_block_is_checked(record_c):
    src = PROGRAMS / "strided" / "uninit_interior.c"
    run = record_c(src, args=[str(N)], opt="-O2")
    assert run.returncode == 0, run.stderr
    acc = run.open().accesses.filter(pl.col("side") == "device")
    reads = acc.filter(~pl.col("write"))
    assert reads["blocks"].max() > 1                                     # strided runs were recorded
    assert (reads.filter(pl.col("blocks") > 1)["stride"] == N * 4).all()  # one row apart
    assert len(acc) < (N - 2) // 2                                       # far fewer rows than loop rows
    blocks = explode_blocks(reads)
    assert int(blocks["bytes"].sum()) == (N - 2) * (N - 2) * 4             # the interior, no gaps
    r = subprocess.run([TRACE, "analyze", str(run.log), "--check", "mapping", "--format", "json"],
                       capture_output=True, text=True, check=False)
    assert r.returncode == 1, r.stderr
    [f] = json.loads(r.stdout)["findings"]
    assert (f["kind"], f["variable"], f["access"]["line"]) == ("use-of-uninitialized-memory", "in", 13)
    assert f["bytes"] == (N - 2) * (N - 2) * 4                           # every block, not the first one


def test_nowait_kernels_keep_plain_runs(record_c):
    src = PROGRAMS / "strided" / "nowait_interior.c"
    run = record_c(src, args=[str(N)], opt="-O2")
    assert run.returncode == 0, run.stderr
    acc = run.open().accesses.filter(pl.col("side") == "device")
    assert len(acc.filter(~pl.col("write"))) >= N - 2   # at least one row per loop row
    assert acc["blocks"].max() == 1


def test_interleaved_streams_of_one_store_are_one_run_each(record_c):
    """lbm's stream step: one store writes dst[(c + 7q) * Q + q] for q = 0..Q-1; per cell the stores
    are 7Q + 1 elements apart, per q one cell (Q elements) apart. The thread keeps one run per q
    (a strided row, stride Q * 8) instead of one row per cell; a q whose index wraps around
    (`% cells`) starts a second row. Every written byte is in exactly one block."""
    q, cells = 19, 512
    run = record_c(PROGRAMS / "strided" / "scatter_streams.c", args=[str(cells)], opt="-O2")
    assert run.returncode == 0, run.stderr
    t = run.open()
    [base] = t.data_ops.filter((pl.col("op") == "alloc") & (pl.col("variable") == "dst"))["device_addr"].to_list()
    writes = t.accesses.filter((pl.col("side") == "device") & pl.col("write") & (pl.col("line") == 19))
    threads = writes["thread"].n_unique()
    assert len(writes) <= 2 * q * threads                                  # not one row per cell
    assert (writes.filter(pl.col("blocks") > 1)["stride"] == q * 8).all()
    blocks = explode_blocks(writes)
    assert (blocks["bytes"] == 8).all()
    elements = sorted((int(a) - base) // 8 for a in blocks["addr"].to_list())
    unwritten = {((0 + 7 * k) % cells) * q + k for k in range(q)}           # cell 0's elements
    assert elements == sorted(set(range(cells * q)) - unwritten)            # each exactly once
    r = subprocess.run([TRACE, "analyze", str(run.log), "--check", "mapping", "--format", "json"],
                       capture_output=True, text=True, check=False)
    [f] = json.loads(r.stdout)["findings"]
    assert (f["kind"], f["variable"], f["access"]["line"], f["bytes"]) == (
        "use-of-uninitialized-memory", "dst", 23, q * 8)


def test_runs_standing_for_many_accesses_per_event_are_read(record_c):
    """One strided row may stand for a whole loop's accesses (lbm's stream step: ~4 k blocks per row
    here), far beyond the per-event share of the reader's block budget; the run time the log's
    events cover bounds them instead. With the fixed part of the budget at 0, the log still reads."""
    q, cells = 19, 200_000
    run = record_c(PROGRAMS / "strided" / "scatter_streams.c", args=[str(cells)], opt="-O2")
    assert run.returncode == 0, run.stderr
    t = run.open()
    accesses = t.accesses
    assert int(accesses["blocks"].sum()) > 1024 * len(t.events)      # beyond the per-event budget
    env = {**os.environ, "QUIVER_MAX_BLOCKS": "0"}
    r = subprocess.run([TRACE, "analyze", str(run.log), "--check", "mapping", "--format", "json"],
                       capture_output=True, text=True, check=False, env=env)
    assert r.returncode == 1, r.stderr
    [f] = json.loads(r.stdout)["findings"]
    assert (f["kind"], f["variable"], f["bytes"]) == ("use-of-uninitialized-memory", "dst", q * 8)
