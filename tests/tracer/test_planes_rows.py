"""Planes (format version 5): the tracer holds a call site's strided rows and writes the rows of one
shape at one distance as one ACCESS row (tracer/native/qv_planes.h).

Real programs recorded at -O0 and -O2; the differential against per-access instrumentation (same
bytes, same findings) is test_range_pass.py's NEST_SHAPES, which holds these programs too.
"""

from __future__ import annotations

import polars as pl
import pytest
from test_range_pass import NESTS, PER_ACCESS, mapping_report

pytestmark = pytest.mark.clang


@pytest.mark.parametrize("opt", ["-O0", "-O2"])
def test_red_black_rows_are_planes(record_c, opt):
    """A red-black sweep's colour of a grid row is a strided run whose next row of the colour starts
    one element over: per thread and colour, the rows of a call site are two planes rows (rows i,
    i + 2, ... and i + 1, i + 3, ...) instead of one row per grid row, at every -O level."""
    src = NESTS / "redblack_odd.c"
    nx, ny, sweeps = 37, 300, 2
    run = record_c(src, args=[str(nx), str(ny), str(sweeps)], opt=opt)
    assert run.returncode == 0, run.stderr
    a = run.open().accesses.filter(pl.col("side") == "device")
    body = a.filter(pl.col("line") == 24)
    planes = body.filter(pl.col("planes") >= 2)
    assert planes.height > 0
    # each planes row: the colour's points of a grid row (every 16 bytes), 2 grid rows apart
    assert set(planes["plane_stride"].to_list()) == {2 * nx * 8}
    assert set(planes["stride"].to_list()) == {16}
    # every grid row of the interior is in one of them: (ny - 2) rows per colour and sweep, for each
    # call site of the line; far fewer ACCESS rows than grid rows
    assert a.height < (ny - 2) * 2 * sweeps // 4


def test_a_plane_is_not_moved_before_a_read_of_its_bytes(record_c):
    """Iteration i writes row i, then reads row i + 2, which iteration i + 2 writes: the write of row
    i + 2 may not join the held row of row i's write (its time is before the read), or the reads of
    rows 2 .. 121 would look initialised. Every read is reported, from the first (element 2n of v),
    as per access."""
    src = NESTS / "planes_order.c"
    n, rows = 40, 120
    reports = {}
    for build, extra in (("range", ()), ("per_access", PER_ACCESS)):
        run = record_c(src, args=[str(n), str(rows)], opt="-O2", extra=extra)
        assert run.returncode == 0, run.stderr
        a = run.open().accesses.filter(pl.col("side") == "device")
        if build == "range":
            assert a.filter(pl.col("write") & (pl.col("planes") >= 2)).height > 0
        reports[build] = mapping_report(run.log)
    uninit = [f for f in reports["range"] if f[0] == "use-of-uninitialized-memory"]
    assert [(f[1], f[2], f[3], f[5]) for f in uninit] == [("v", 19, 2 * n, rows * (n // 2) * 8)]
    assert reports["range"] == reports["per_access"]
