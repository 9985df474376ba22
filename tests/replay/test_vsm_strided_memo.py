"""Strided rows the VSM kernel settles without a pass over their blocks: the same findings as row by row.

Why: a strided ACCESS row stands for many rows of memory (an array of structs' field, a grid's
interior rows). The kernel settles one in O(1) when its strided memo says its rows already hold what
the row writes (or the valid bit it reads), and writes the rows of a split shadow block in one pass.
Every case here runs against the pure-Python oracle (row by row, byte by byte) with the default and
with 8-byte shadow blocks, on shadow states where a shortcut would be wrong if it looked at the
wrong rows: one row of the span never written, one row changed since, rows of another stride, more
patterns than the memo holds. The counters (``VsmSession.strided_counts``: rows settled at once,
blocks applied one by one) show that the shortcut is taken where it should be.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from oracle import oracle_detections
from planes_logs import kernel_agrees
from quiver.formats import ConstructKind, DataOpKind, LogBuilder, MapType, read_log
from quiver.replay.mapping.vsm import replay_log, run_vsm
from quiver.replay.mapping.vsm_layout import LOG_BLOCK, SM_CAP, SM_MIN_ROWS

HOST, DEV0, DEV1 = 0x100000, 0x800000, 0xC00000
STRIDE = 48                    # struct { double x, y, z, vx, vy, vz; }: a field is 8 bytes every 48
ROWS = 300                     # 14400 bytes: four default shadow blocks
SRC = "aos.c"


def site(line: int) -> tuple[str, int, str]:
    return (SRC, line, "main")


def mapped(b: LogBuilder, *, copy_in: bool, rows: int = ROWS, stride: int = STRIDE) -> int:
    """The array of structs allocated and written on the host, mapped to device 0 (alloc, or to)."""
    size = rows * stride
    b.alloc(HOST, size, site=site(1))
    b.access(HOST, size, write=True, site=site(2))
    c = b.construct_begin(ConstructKind.TARGET_ENTER_DATA, site=site(3))
    b.map_clause(c, "p", HOST, size, MapType.TO if copy_in else 0, site=site(3), text="p[0:n]")
    b.data_op(DataOpKind.ALLOC, HOST, DEV0, size, construct=c, var="p")
    if copy_in:
        b.data_op(DataOpKind.TRANSFER_TO, HOST, DEV0, size, construct=c, var="p")
    b.construct_end(c, ConstructKind.TARGET_ENTER_DATA)
    return c


def field(b: LogBuilder, c: int, line: int, offset: int, *, write: bool = False, first: int = 0,
          rows: int = ROWS, stride: int = STRIDE, size: int = 8) -> None:
    """A device strided access to one field of rows [first, first + rows)."""
    b.access(DEV0 + first * stride + offset, size, write=write, device=0, construct=c, site=site(line),
             stride=stride, blocks=rows, width=8)


def replay(b: LogBuilder) -> tuple[list[tuple], tuple[int, int]]:
    """(kind, first and last bad host offset, bytes, occurrences, line) of each detection, equal for the
    kernel (default and 8-byte blocks) and the oracle; and the default run's strided counters."""
    cols = b.columns()
    want = kernel_agrees(cols)
    # the counters of the first pass (a history replay watches bytes and takes no shortcut)
    counts = run_vsm(cols, history=False).session.strided_counts
    found = [(d.kind, d.host_addr - HOST, d.last_host_addr - HOST, d.bytes, d.occurrences,
              d.loc) for d in want]
    return found, counts


def line_of(b: LogBuilder, line: int) -> int:
    return b.location(SRC, line, "main")


def test_rewriting_and_reading_fields_of_an_uninitialised_copy_is_settled_at_once():
    """map(alloc:): the span of a field is never uniformly valid, so only the memo settles the rows.
    Writing vz, then x, then vz again (x's rows lie in vz's gaps: vz stays known), then reading both."""
    b = LogBuilder()
    c = mapped(b, copy_in=False)
    field(b, c, 10, 40, write=True)
    field(b, c, 11, 0, write=True)
    field(b, c, 12, 40, write=True)      # settled: the memo knows vz's rows hold the written state
    field(b, c, 13, 0)                   # settled: x's rows are valid
    field(b, c, 14, 40)
    found, counts = replay(b)
    assert found == []
    assert counts == (3, 2 * ROWS)


def test_a_read_over_rows_one_of_which_was_never_written_finds_exactly_that_row():
    """Rows 0..9 and 11.. of vz written (two strided rows: not one run), then all rows read: the read
    is not settled at once, and the finding is row 10's 8 bytes (element 10 * 6 + 5 of the array)."""
    b = LogBuilder()
    c = mapped(b, copy_in=False)
    field(b, c, 10, 40, write=True, rows=10)
    field(b, c, 10, 40, write=True, first=11, rows=ROWS - 11)
    field(b, c, 11, 40)
    found, counts = replay(b)
    row10 = 10 * STRIDE + 40
    assert found == [("uum", row10, row10 + 7, 8, 1, line_of(b, 11))]
    assert counts == (0, 10 + (ROWS - 11) + ROWS)


def test_adjacent_runs_of_rows_are_one_memo_entry():
    """The threads of one kernel leave adjacent runs of rows (0..149, 150..): a read of all rows is
    settled at once."""
    b = LogBuilder()
    c = mapped(b, copy_in=False)
    field(b, c, 10, 16, write=True, first=150, rows=ROWS - 150)
    field(b, c, 10, 16, write=True, rows=150)
    field(b, c, 11, 16)
    found, counts = replay(b)
    assert found == []
    assert counts == (1, ROWS)


def test_a_host_write_into_one_row_makes_that_row_stale_and_one_into_the_gaps_does_not():
    b = LogBuilder()
    c = mapped(b, copy_in=True)
    field(b, c, 10, 0, write=True)                                    # x on the device
    b.access(HOST + 7 * STRIDE + 8, 8, write=True, site=site(11))     # y of row 7 on the host: x untouched
    field(b, c, 12, 0, write=True)                                    # settled: x's rows still hold it
    b.access(HOST + 7 * STRIDE + 4, 2, write=True, site=site(13))     # inside x of row 7
    field(b, c, 14, 0)                                                # not settled: row 7's bytes changed
    found, counts = replay(b)
    assert found == [("stale", 7 * STRIDE + 4, 7 * STRIDE + 5, 2, 1, line_of(b, 14))]
    assert counts[0] == 1


def test_a_copy_to_the_device_between_two_reads_is_seen():
    """After the device wrote x, a target update copies rows 100..199 from the host, where x is out of
    date but for row 150 (the host wrote it): x of the other 99 rows goes stale on the device; a host
    write into row 250 after that adds 4 bytes. Exactly those bytes, not the memo's "x holds the write"."""
    b = LogBuilder()
    c = mapped(b, copy_in=False)
    field(b, c, 10, 0, write=True)
    b.access(HOST + 150 * STRIDE, 8, write=True, site=site(11))
    u = b.construct_begin(ConstructKind.TARGET_UPDATE, site=site(12))
    b.data_op(DataOpKind.TRANSFER_TO, HOST + 100 * STRIDE, DEV0 + 100 * STRIDE, 100 * STRIDE, construct=u, var="p")
    b.construct_end(u, ConstructKind.TARGET_UPDATE)
    b.access(HOST + 250 * STRIDE + 2, 4, write=True, site=site(13))
    field(b, c, 14, 0)
    found, _counts = replay(b)
    assert found == [("stale", 100 * STRIDE, 250 * STRIDE + 5, 99 * 8 + 4, 1, line_of(b, 14))]


def test_host_rows_of_another_stride_over_the_field_make_every_other_row_stale():
    b = LogBuilder()
    c = mapped(b, copy_in=True)
    field(b, c, 10, 0, write=True)
    b.access(HOST, 8, write=True, site=site(11), stride=2 * STRIDE, blocks=ROWS // 2)   # x of the even rows
    field(b, c, 12, 0)
    found, counts = replay(b)
    assert found == [("stale", 0, (ROWS - 2) * STRIDE + 7, 8 * (ROWS // 2), 1, line_of(b, 12))]
    assert counts == (0, 2 * ROWS)


def test_rows_of_the_same_stride_on_another_device_drop_the_rows_they_overlap():
    """Device 1 writes y of every row (in x's gaps: device 0's x stays valid, its read settled at once),
    then bytes 4..11 of every row (half of x): device 0's read of x finds those 4 bytes of each row."""
    b = LogBuilder()
    c = mapped(b, copy_in=True)
    c1 = b.construct_begin(ConstructKind.TARGET_ENTER_DATA, site=site(4), device=1)
    b.map_clause(c1, "p", HOST, ROWS * STRIDE, MapType.TO, site=site(4), text="p[0:n]", device=1)
    b.data_op(DataOpKind.ALLOC, HOST, DEV1, ROWS * STRIDE, construct=c1, var="p", device=1)
    b.data_op(DataOpKind.TRANSFER_TO, HOST, DEV1, ROWS * STRIDE, construct=c1, var="p", device=1)
    b.construct_end(c1, ConstructKind.TARGET_ENTER_DATA, device=1)
    field(b, c, 10, 0, write=True)
    b.access(DEV1 + 8, 8, write=True, device=1, construct=c1, site=site(11), stride=STRIDE, blocks=ROWS)
    field(b, c, 12, 0)
    b.access(DEV1 + 4, 8, write=True, device=1, construct=c1, site=site(13), stride=STRIDE, blocks=ROWS)
    field(b, c, 14, 0)
    found, counts = replay(b)
    assert found == [("stale", 4, (ROWS - 1) * STRIDE + 7, 4 * ROWS, 1, line_of(b, 14))]
    assert counts[0] >= 1


def test_planes_of_interior_rows_are_one_entry_and_a_change_in_one_plane_is_seen():
    """A 3-D grid of 20 planes of 8 rows of 64 bytes; a sweep writes the interior (bytes 4..59 of rows
    1..6) of planes 1..18 a plane at a time, two threads interleaved (1, 10, 2, 11, ...): the next sweep
    is settled at once. A host write into plane 5 makes exactly its 4 bytes stale on the device, and the
    sweep after it applies plane 5 row by row again (only it)."""
    planes, rows, row, psize = 20, 8, 64, 8 * 64
    b = LogBuilder()
    c = mapped(b, copy_in=False, rows=planes * rows, stride=row)
    order = [p for pair in zip(range(1, 10), range(10, 19)) for p in pair]

    def sweep(line: int, write: bool = True) -> None:
        for p in order:
            b.access(DEV0 + p * psize + row + 4, 56, write=write, device=0, construct=c, site=site(line),
                     stride=row, blocks=rows - 2, width=4)

    sweep(10)
    sweep(11)                                                            # settled: 18 rows at once
    b.access(HOST + 5 * psize + 3 * row + 10, 4, write=True, site=site(12))
    sweep(13, write=False)                                               # plane 5 is not settled
    sweep(14)
    sweep(15, write=False)
    found, counts = replay(b)
    bad = 5 * psize + 3 * row + 10
    assert found == [("stale", bad, bad + 3, 4, 1, line_of(b, 13))]
    # row by row: the first sweep, plane 5 read and rewritten; at once: the rest
    assert counts == (18 + 17 + 17 + 18, (18 + 2) * (rows - 2))


def test_more_field_patterns_than_the_memo_holds():
    """SM_CAP + 8 fields of a wide struct written, one of them changed on the host, all read twice,
    the last written first: the memo holds the last SM_CAP (those reads are settled at once); entries
    overwritten when it is full only cost time."""
    fields = SM_CAP + 8
    stride = 8 * fields
    rows = 40
    b = LogBuilder()
    c = mapped(b, copy_in=False, rows=rows, stride=stride)
    for f in range(fields):
        field(b, c, 10, 8 * f, write=True, rows=rows, stride=stride)
    b.access(HOST + 5 * stride + 8 * 3, 8, write=True, site=site(11))
    for _ in range(2):
        for f in reversed(range(fields)):
            field(b, c, 12, 8 * f, rows=rows, stride=stride)
    found, counts = replay(b)
    assert found == [("stale", 5 * stride + 24, 5 * stride + 31, 16, 2, line_of(b, 12))]
    assert counts[0] >= SM_CAP - 1   # (not field 3: row 5 changed)


def test_a_streamed_replay_of_a_written_log_agrees(tmp_path):
    b = LogBuilder()
    c = mapped(b, copy_in=False)
    field(b, c, 10, 40, write=True, rows=10)
    field(b, c, 10, 40, write=True, first=11, rows=ROWS - 11)
    for _ in range(3):
        field(b, c, 11, 40)
        field(b, c, 12, 40, write=True)
    path = tmp_path / "aos.arrow"
    b.write(path)
    streamed, _session = replay_log(read_log(path))
    assert streamed == oracle_detections(b.columns())
    assert [(d.kind, d.host_addr - HOST, d.bytes) for d in streamed] == [("uum", 10 * STRIDE + 40, 8)]


# random programs over an array of 40 structs of 6 fields: few shapes, so that rows repeat, adjoin,
# overlap and are changed between two strided rows all the time
R = 40
row_run = st.tuples(st.integers(0, R - 1), st.integers(1, R))
aos_op = st.one_of(
    st.tuples(st.just("field"), st.integers(0, 5), row_run, st.booleans(), st.sampled_from([8, 8, 16])),
    st.tuples(st.just("host"), st.integers(0, R * STRIDE - 1), st.integers(1, 12), st.booleans()),
    st.tuples(st.just("hstride"), st.integers(0, 5), row_run, st.sampled_from([2, 3])),
    st.tuples(st.just("dense"), st.integers(0, R * STRIDE - 1), st.integers(1, 64), st.booleans()),
    st.tuples(st.just("update"), st.booleans(), st.integers(0, R - 1), st.integers(1, R)),
    # the inner rows 1..6 of a "plane" of 8 rows (one run of rows every 8 rows: planes merge)
    st.tuples(st.just("plane"), st.integers(0, 5), st.integers(0, R // 8 - 1), st.booleans()),
    st.tuples(st.just("plane"), st.integers(0, 5), st.integers(0, R // 8 - 1), st.booleans()),
)


def build_aos(ops: list, copy_in: bool) -> dict[str, np.ndarray]:
    b = LogBuilder(program="aos")
    c = mapped(b, copy_in=copy_in, rows=R)
    size = R * STRIDE
    for o in ops:
        if o[0] == "field":
            _, f, (first, n), write, width = o
            n = min(n, R - first)
            if n >= 2:
                field(b, c, 10 + f, 8 * f, write=write, first=first, rows=n, size=width)
        elif o[0] == "plane":
            _, f, plane, write = o
            field(b, c, 16 + f, 8 * f, write=write, first=plane * 8 + 1, rows=6)
        elif o[0] == "host":
            _, off, n, write = o
            b.access(HOST + off, min(n, size - off), write=write, site=site(20))
        elif o[0] == "hstride":
            _, f, (first, n), every = o
            n = min(n, (R - first + every - 1) // every)
            if n >= 2:
                b.access(HOST + first * STRIDE + 8 * f, 8, write=True, site=site(21), stride=every * STRIDE, blocks=n)
        elif o[0] == "dense":
            _, off, n, write = o
            b.access(DEV0 + off, min(n, size - off), write=write, device=0, construct=c, site=site(22))
        else:
            _, to, first, n = o
            n = min(n, R - first)
            u = b.construct_begin(ConstructKind.TARGET_UPDATE, site=site(23))
            b.data_op(DataOpKind.TRANSFER_TO if to else DataOpKind.TRANSFER_FROM, HOST + first * STRIDE,
                      DEV0 + first * STRIDE, n * STRIDE, construct=u, var="p")
            b.construct_end(u, ConstructKind.TARGET_UPDATE)
    return b.columns()


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(aos_op, min_size=4, max_size=40), st.booleans(), st.sampled_from([3, 4, 6, LOG_BLOCK]))
def test_random_field_accesses_match_the_oracle(ops, copy_in, lgb):
    cols = build_aos(ops, copy_in)
    assert run_vsm(cols, log_block=lgb).detections == oracle_detections(cols)


def test_short_strided_rows_are_applied_block_by_block_and_leave_the_memo_alone():
    """A conditional store leaves the tracer's short strided runs (2-4 elements a few apart) all over an
    array: they neither ask the memo nor feed it (SM_MIN_ROWS), since a stream of them filled it with
    entries nothing reuses and every row then paid for all of them. Rewriting the same short rows is
    applied block by block (no shortcut), a long field after them still is settled at once, and the
    findings are the oracle's: the one element the short rows never wrote is read uninitialised."""
    b = LogBuilder()
    c = mapped(b, copy_in=False, rows=ROWS, stride=STRIDE)
    starts = [r for r in range(0, ROWS - 4, 5) if r != 100]
    for line in (10, 11):                                    # the same short rows, twice
        for r in starts:
            field(b, c, line, 16, write=True, first=r, rows=4)
    field(b, c, 12, 40, write=True)
    field(b, c, 13, 40, write=True)                          # a long field: settled by the memo
    b.access(DEV0 + 100 * STRIDE + 16, 8, device=0, construct=c, site=site(14))
    found, counts = replay(b)
    assert found == [("uum", 100 * STRIDE + 16, 100 * STRIDE + 23, 8, 1, line_of(b, 14))]
    assert SM_MIN_ROWS > 4
    assert counts == (1, 2 * len(starts) * 4 + ROWS)     # (with the memo: the second pass settled at once)


@pytest.mark.parametrize("ndev", [5, 9])
def test_short_rows_of_a_wide_shadow_are_written_a_word_at_a_time(ndev):
    """With 5 or 9 devices the shadow has 16 or 32 bits an element; a strided write of 8-byte rows every
    16 bytes (a red-black sweep's colour) is applied a 64-bit word at a time, the same map on every
    lane. On the last device: one colour written twice (the second changes nothing), the whole copy read:
    the other colour is uninitialised, exactly as the oracle says; then the other colour written too and
    read again: no more findings."""
    rows, size = 64, 64 * 16
    b = LogBuilder()
    b.alloc(HOST, size, site=site(1))
    c = b.construct_begin(ConstructKind.TARGET_ENTER_DATA, site=site(3))
    for d in range(ndev):
        b.map_clause(c, "p", HOST, size, 0, site=site(3), text="p[0:n]", device=d)
        b.data_op(DataOpKind.ALLOC, HOST, DEV0 + d * 0x10000, size, construct=c, var="p", device=d)
    b.construct_end(c, ConstructKind.TARGET_ENTER_DATA)
    last = DEV0 + (ndev - 1) * 0x10000
    for line in (10, 11):
        b.access(last, 8, write=True, device=ndev - 1, construct=c, site=site(line), stride=16, blocks=rows, width=8)
    b.access(last, size, device=ndev - 1, construct=c, site=site(12))
    b.access(last + 8, 8, write=True, device=ndev - 1, construct=c, site=site(13), stride=16, blocks=rows, width=8)
    b.access(last, size, device=ndev - 1, construct=c, site=site(14))
    found, counts = replay(b)
    assert found == [("uum", 8, size - 1, 8 * rows, 1, line_of(b, 12))]
    assert counts[1] >= 2 * rows


def test_a_red_black_sweep_is_settled_from_the_second_sweep_on():
    """Planes rows of a red-black colour (its grid rows of one parity: 8 bytes every 16, planes two grid
    rows apart, so a plane's distance is two hulls and the halo), swept twice: after the first sweep the
    memo holds each parity's planes as one planes entry (one entry per plane, 67 of them, would not fit),
    and the second sweep's writes are settled plane by plane without a pass over their blocks."""
    width, height = 66, 70                      # doubles per grid row, grid rows (halo included)
    row = 8 * width
    b = LogBuilder()
    size = width * height * 8
    b.alloc(HOST, size, site=site(1))
    c = b.construct_begin(ConstructKind.TARGET_ENTER_DATA, site=site(3))
    b.map_clause(c, "u", HOST, size, 0, site=site(3), text="u[0:n*n]")   # map(alloc:): only the memo settles
    b.data_op(DataOpKind.ALLOC, HOST, DEV0, size, construct=c, var="u")
    b.construct_end(c, ConstructKind.TARGET_ENTER_DATA)
    planes = blocks = 0
    for sweep in range(2):
        for first in (1, 2):                   # the two parities of the interior rows 1..height-2
            j0 = 1 + first % 2                 # colour 0: `j = 1 + (i + 0) % 2`
            nb, np_ = (width - 1 - j0) // 2, (height - 1 - first) // 2
            b.access(DEV0 + first * row + 8 * j0, 8, write=True, device=0, construct=c, site=site(20),
                     stride=16, blocks=nb, width=8, planes=np_, plane_stride=2 * row)
            if sweep == 0:
                blocks += nb * np_
            else:
                planes += np_
    found, counts = replay(b)
    assert found == []
    assert planes == 67 > SM_CAP
    assert counts == (planes, blocks)
