"""The transfers checker on a recorded red-black sweep (tests/programs/transfers/redblack.c): its device
accesses are strided rows and rows of planes, which the replay takes a run of blocks at a time
(replay/transfers/redundant.py); every count must be the one the grid's colours give."""

from __future__ import annotations

import pytest
from quiver.formats import EventKind

pytestmark = pytest.mark.clang
SRC = "transfers/redblack.c"
N = 64
GRID = 8 * N * N
BORDER = 8 * (4 * N - 4)
RED_INTERIOR = 8 * (N - 2) * (N - 2) // 2


@pytest.mark.parametrize("opt", ["-O0", "-O2"])
def test_red_black_transfers_are_counted_cell_by_cell(record_c, opt):
    run = record_c(SRC, args=[str(N), "2"], opt=opt)
    assert run.returncode == 0, run.stderr
    t = run.open()
    log = t.log
    access = log.col("kind") == int(EventKind.ACCESS)
    assert (log.col("name")[access] >= 2).sum() > 0, "no rows of planes: the test would not reach them"
    per = t.transfers().select("variable", "op", "line", "bytes", "used_bytes", "unused_bytes", "duplicate_bytes",
                               "round_trip_bytes").rows()
    assert per == [
        # h: the red half overwritten before any read, the black half released unread; the black half back unchanged
        ("h", "transfer_to", 16, GRID, 0, GRID, 0, 0),
        ("h", "transfer_from", 16, GRID, GRID // 2, 0, 0, GRID // 2),
        # u: the red interior overwritten before any read, and the four corners never read
        ("u", "transfer_to", 20, GRID, GRID - RED_INTERIOR - 32, RED_INTERIOR + 32, 0, 0),
        # f: its border never read
        ("f", "transfer_to", 20, GRID, GRID - BORDER, BORDER, 0, 0),
        # u back: its border never written
        ("u", "transfer_from", 20, GRID, GRID - BORDER, 0, 0, BORDER),
    ]
    found = [(f.kind.value, f.variable, f.access.line, f.bytes, f.fix.split(" at ")[0]) for f in t.check("transfers")]
    assert found == [
        ("round-trip", "h", 16, GRID // 2, "copy back only what the device changed: narrow `h[0:n * n]`"),
        ("unused-transfer", "h", 16, GRID, "change `map(tofrom: h[0:n * n])` to `map(from: h[0:n * n])`"),
    ]
