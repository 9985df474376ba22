"""The mapping checker (VSM) on rows of planes (format version 5): the same findings as the planes as rows.

Why: a row of planes stands for ``name`` strided runs, one per plane (``id2`` bytes apart); the C kernel
applies them plane by plane inside the row. Every case compares the kernel with the pure-Python oracle
(which expands the planes itself) and with the same log whose rows of planes are written as one strided
row per plane (tests/replay/planes_logs.py): the same detections, the same diagnosis text, with findings
that only a plane other than the first can give (an uninitialised plane in the middle, stale bytes in the
last plane, an overflow of the last plane past the section).
"""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from oracle import oracle_detections
from planes_logs import expand_planes, kernel_agrees, remap_detections, same_findings, write_both
from quiver.formats import ConstructKind, DataOpKind, LogBuilder, MapType, read_log
from quiver.replay.mapping.vsm import replay_log, run_vsm
from quiver.replay.mapping.vsm_layout import LOG_BLOCK

HOST, DEV0 = 0x100000, 0x800000
ROW, ROWS, PLANES = 64, 8, 8          # a 3-D grid: 8 planes of 8 rows of 64 bytes
PSIZE = ROW * ROWS
SRC = "grid.c"


def site(line: int) -> tuple[str, int, str]:
    return (SRC, line, "main")


def grid(b: LogBuilder, *, copy_in: bool, planes: int = PLANES) -> int:
    """The grid allocated and written on the host, mapped to device 0 (alloc, or to)."""
    size = planes * PSIZE
    b.alloc(HOST, size, site=site(1))
    b.access(HOST, size, write=True, site=site(2), width=8)
    c = b.construct_begin(ConstructKind.TARGET_ENTER_DATA, site=site(3))
    b.map_clause(c, "g", HOST, size, MapType.TO if copy_in else 0, site=site(3), text="g[0:n]")
    b.data_op(DataOpKind.ALLOC, HOST, DEV0, size, construct=c, var="g")
    if copy_in:
        b.data_op(DataOpKind.TRANSFER_TO, HOST, DEV0, size, construct=c, var="g")
    b.construct_end(c, ConstructKind.TARGET_ENTER_DATA)
    return c


def interior(b: LogBuilder, c: int, line: int, first: int, planes: int, *, write: bool = False,
             base: int = DEV0, plane_stride: int = PSIZE) -> None:
    """Bytes 8..55 of rows 1..6 of planes [first, first + planes) on the device: one row of planes."""
    b.access(base + first * PSIZE + ROW + 8, 48, write=write, device=0, construct=c, site=site(line),
             stride=ROW, blocks=ROWS - 2, width=8, planes=planes, plane_stride=plane_stride)


def detections_agree(b: LogBuilder, exact: bool = True) -> list:
    """The kernel's detections (default and 8-byte shadow blocks; with histories, and the first pass alone)
    equal the oracle's and, events mapped back, the expanded log's (``exact``: occurrences too); returned."""
    cols = b.columns()
    wide, origin = expand_planes(cols)

    def expanded_agrees(lgb: int, want: list) -> None:
        got = remap_detections(run_vsm(wide, log_block=lgb).detections, origin)
        if exact:
            assert got == want
        else:
            assert [_but_occurrences(d) for d in got] == [_but_occurrences(d) for d in want]

    return kernel_agrees(cols, expanded_agrees)


def _but_occurrences(d) -> tuple:
    """A detection without its occurrence count: a row of planes is one occurrence (as a strided row is),
    its planes as rows one each."""
    return tuple(v for k, v in d.__dict__.items() if k != "occurrences")


def test_an_uninitialised_plane_in_the_middle_is_found_in_that_plane():
    """map(alloc:), the interior of planes 0..2 and 4..7 written (two rows of planes), then all 8 planes
    read as one row: exactly plane 3's interior is uninitialised, and the diagnosis says so as it does for
    the planes as rows."""
    b = LogBuilder(program="grid")
    c = grid(b, copy_in=False)
    interior(b, c, 10, 0, 3, write=True)
    interior(b, c, 11, 4, 4, write=True)
    interior(b, c, 12, 0, PLANES)
    want = detections_agree(b)
    assert [(d.kind, d.host_addr - HOST, d.last_host_addr - HOST, d.bytes, d.occurrences) for d in want] == \
        [("uum", 3 * PSIZE + ROW + 8, 3 * PSIZE + 6 * ROW + 55, 6 * 48, 1)]


def test_uninitialised_and_the_same_finding_in_two_planes():
    """Planes 2 and 5 never written; the read of all planes is one occurrence of one finding whose bytes
    cover both planes (as a strided row's blocks are); the expanded log's detection is the same but for its
    count of occurrences (two rows against one)."""
    b = LogBuilder(program="grid")
    c = grid(b, copy_in=False)
    for first, n in ((0, 2), (3, 2), (6, 2)):
        interior(b, c, 10, first, n, write=True)
    interior(b, c, 12, 0, PLANES)
    want = detections_agree(b, exact=False)
    assert [(d.kind, d.host_addr - HOST, d.last_host_addr - HOST, d.bytes, d.occurrences) for d in want] == \
        [("uum", 2 * PSIZE + ROW + 8, 5 * PSIZE + 6 * ROW + 55, 2 * 6 * 48, 1)]


def test_stale_bytes_in_the_last_plane_and_the_diagnosis_text(tmp_path):
    """The device writes every plane's interior, the host then writes 4 bytes of the last plane's row 3, and
    the device reads all planes: stale data in the last plane only; `trace analyze`'s findings (message,
    element, history, fix) are those of the log with the planes as rows."""
    b = LogBuilder(program="grid")
    c = grid(b, copy_in=True)
    interior(b, c, 10, 0, PLANES, write=True)
    last = (PLANES - 1) * PSIZE + 3 * ROW + 16
    b.access(HOST + last, 4, write=True, site=site(11), width=4)
    interior(b, c, 12, 0, PLANES)
    want = detections_agree(b)
    assert [(d.kind, d.host_addr - HOST, d.bytes, d.occurrences) for d in want] == [("stale", last, 4, 1)]
    found = same_findings(b, tmp_path, "mapping")
    assert len(found) == 1 and found[0]["kind"] == "use-of-stale-data" and found[0]["access"]["line"] == 12
    assert found[0]["element"] == last // 8


def test_the_last_plane_overflows_the_section(tmp_path):
    """Only planes 0..5 mapped (a section of the grid); a row of 7 planes: its last plane lies past the
    section, an overflow of `g`, found as for the 7th strided row; planes before it are clean."""
    b = LogBuilder(program="grid")
    c = grid(b, copy_in=True, planes=6)
    interior(b, c, 10, 0, 7)
    want = detections_agree(b)
    assert [(d.kind, d.host_addr - HOST, d.bytes) for d in want] == [("overflow", 6 * PSIZE + ROW + 8, 6 * 48)]
    found = same_findings(b, tmp_path, "mapping")
    assert [f["kind"] for f in found] == ["buffer-overflow"]


def test_planes_rows_settle_by_the_memo_after_one_sweep():
    """A sweep over the interior written twice and read: the second and third rows of planes are settled
    plane by plane by the strided memo (the first is applied block by block); no findings."""
    b = LogBuilder(program="grid")
    c = grid(b, copy_in=False)
    interior(b, c, 10, 0, PLANES, write=True)
    interior(b, c, 11, 0, PLANES, write=True)
    interior(b, c, 12, 0, PLANES)
    assert detections_agree(b) == []
    fast, rows = run_vsm(b.columns(), history=False).session.strided_counts
    assert (fast, rows) == (2 * PLANES, PLANES * (ROWS - 2))


def test_a_streamed_replay_of_a_written_log_agrees(tmp_path):
    b = LogBuilder(program="grid")
    c = grid(b, copy_in=False)
    interior(b, c, 10, 0, 3, write=True)
    interior(b, c, 11, 4, 4, write=True)
    interior(b, c, 12, 0, PLANES)
    planes, expanded, origin = write_both(b, tmp_path)
    streamed, _session = replay_log(read_log(planes))
    assert streamed == oracle_detections(b.columns())
    wide, _s = replay_log(read_log(expanded))
    assert remap_detections(wide, origin) == streamed
    assert [(d.kind, d.host_addr - HOST) for d in streamed] == [("uum", 3 * PSIZE + ROW + 8)]


# random programs over a grid of 8 planes: rows of planes of the interior (or of a field every 16 bytes, a
# red-black colour), host writes, device reads and writes of single rows, copies: the kernel against the
# oracle and against the same log with the planes as rows
plane_op = st.one_of(
    st.tuples(st.just("planes"), st.integers(0, PLANES - 2), st.integers(2, PLANES), st.booleans(),
              st.sampled_from([1, 2])),
    st.tuples(st.just("colour"), st.integers(0, PLANES * ROWS - 2), st.integers(2, 8), st.booleans(),
              st.integers(0, 1)),
    st.tuples(st.just("host"), st.integers(0, PLANES * PSIZE - 1), st.integers(1, 24), st.booleans()),
    st.tuples(st.just("dense"), st.integers(0, PLANES * PSIZE - 1), st.integers(1, 96), st.booleans()),
    st.tuples(st.just("update"), st.booleans(), st.integers(0, PLANES - 1), st.integers(1, PLANES)),
)


def build_grid(ops: list, copy_in: bool) -> LogBuilder:
    b = LogBuilder(program="grid")
    c = grid(b, copy_in=copy_in)
    size = PLANES * PSIZE
    for o in ops:
        if o[0] == "planes":      # may run past the grid: overflows
            _, first, n, write, every = o
            n = min(n, (PLANES + 1 - first) // every)
            if n >= 2:
                interior(b, c, 10, first, n, write=write, plane_stride=every * PSIZE)
        elif o[0] == "colour":    # 8 bytes every 16 in `rows` grid rows, every other grid row (a red-black colour)
            _, row, rows, write, phase = o
            rows = min(rows, (PLANES * ROWS - row) // 2)
            if rows >= 2:
                b.access(DEV0 + row * ROW + 8 * phase, 8, write=write, device=0, construct=c, site=site(11),
                         stride=16, blocks=ROW // 16, width=8, planes=rows, plane_stride=2 * ROW)
        elif o[0] == "host":
            _, off, n, write = o
            b.access(HOST + off, min(n, size - off), write=write, site=site(20))
        elif o[0] == "dense":
            _, off, n, write = o
            b.access(DEV0 + off, min(n, size - off), write=write, device=0, construct=c, site=site(22))
        else:
            _, to, first, n = o
            n = min(n, PLANES - first)
            u = b.construct_begin(ConstructKind.TARGET_UPDATE, site=site(23))
            b.data_op(DataOpKind.TRANSFER_TO if to else DataOpKind.TRANSFER_FROM, HOST + first * PSIZE,
                      DEV0 + first * PSIZE, n * PSIZE, construct=u, var="g")
            b.construct_end(u, ConstructKind.TARGET_UPDATE)
    b.access(DEV0, 1, device=0, construct=c, site=site(30), stride=ROW, blocks=2, planes=2, plane_stride=PSIZE)
    return b


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(plane_op, min_size=3, max_size=30), st.booleans(), st.sampled_from([3, 4, 6, LOG_BLOCK]))
def test_random_rows_of_planes_match_the_oracle_and_the_expanded_log(ops, copy_in, lgb):
    cols = build_grid(ops, copy_in).columns()
    want = oracle_detections(cols)
    assert run_vsm(cols, log_block=lgb).detections == want
    wide, origin = expand_planes(cols)
    got = remap_detections(run_vsm(wide, log_block=lgb).detections, origin)
    assert [_but_occurrences(d) for d in got] == [_but_occurrences(d) for d in want]
    assert np.all([g.occurrences >= w.occurrences for g, w in zip(got, want, strict=True)])
