"""Strided ACCESS runs (format version 2) recorded from real kernels.

A row loop whose rows have gaps records one strided row per thread and stretch of rows instead of
one row per loop row; the mapping checker must still see every byte of every block, and none of
the gaps. `nowait` kernels keep plain runs (their consumers are the race checkers).
"""

from __future__ import annotations

import json
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
