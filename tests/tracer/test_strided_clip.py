"""The coalescer on its own (tests/tracer/native/strided_rows.c includes tracer/native/qv_coalesce.inc
with hooks of its own): a strided record whose rows pending runs partly hold leaves the same bytes
per kind as one access per row, at a cost independent of its row count."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

pytestmark = pytest.mark.clang

HERE = Path(__file__).resolve().parent
NATIVE = HERE.parents[1] / "tracer" / "native"
CLANG = shutil.which("clang-19") or shutil.which("clang")


@pytest.fixture(scope="module")
def harness(tmp_path_factory) -> Path:
    if not CLANG:
        pytest.skip("needs clang")
    exe = tmp_path_factory.mktemp("coalesce") / "strided_rows"
    subprocess.run([CLANG, "-O1", "-Wall", "-Werror", "-I", str(NATIVE), str(HERE / "native" / "strided_rows.c"),
                    "-o", str(exe)], check=True)
    return exe


def test_record_drops_and_adds_the_rows_one_call_per_row_would(harness):
    """Random pending runs (ranges, single accesses, strided records of the record's stride and of
    another, partial rows), then a strided record: the byte sets of reads and writes are those of
    one access() per row; most records take fewer filter lookups than rows (batched stretches).
    Scenarios hold up to 12 runs before the record, one in four up to QV_RUN_GENERAL + 4, so that the record's own
    runs evict older ones. Some
    runs are a conditional access's elements with gaps (masked runs): recorded again as plain accesses,
    the bytes written are the same, and the bytes read differ only where the thread wrote."""
    r = subprocess.run([str(harness), "fuzz", "20000", "7"], capture_output=True, text=True, check=False)
    m = re.fullmatch(r"scenarios 20000 differ (\d+) fewer (\d+)\n", r.stdout)
    assert m and r.returncode == 0, r.stdout
    assert int(m.group(1)) == 0 and int(m.group(2)) > 10000


def test_rows_a_written_out_run_held_are_taken_again(harness):
    """A write run holds rows of a record of reads; a kept row before them starts a run that evicts
    it: the held rows are found again (they are read, as one access() per row reads them)."""
    r = subprocess.run([str(harness), "evict"], capture_output=True, text=True, check=False)
    assert r.stdout == "evict differ 0\n" and r.returncode == 0, r.stdout


@pytest.mark.parametrize("rows", [1000, 100000])
def test_overlapping_row_records_cost_the_same_for_any_row_count(harness, rows):
    """The tall grid's reads of rows i-1 (pending) and i+1 (its rows held but the last two), row i
    and the store: a few lookups in all, whatever the row count (before: one per row of i+1)."""
    r = subprocess.run([str(harness), "tall", str(rows)], capture_output=True, text=True, check=True)
    [lookups] = re.fullmatch(r"keep lookups (\d+)\n", r.stdout).groups()
    assert int(lookups) <= 16
