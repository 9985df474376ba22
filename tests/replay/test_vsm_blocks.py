"""The VSM kernel's block shadow on arrays of many blocks: exact detections, equal to the oracle's.

Why: the kernel keeps uniform blocks of shadow bytes as one value and skips byte scans where a
block's bounds decide a read; these cases make every shortcut meet a change it must notice (a host
write inside a block known valid, a copy over part of a block, another device writing, strided
runs crossing a mapped section's end or reading stale rows). Each case runs with the default
block size and with 8-byte blocks, and must match the pure-Python oracle byte for byte.
"""

from __future__ import annotations

import numpy as np
import pytest
from oracle import oracle_detections
from quiver.formats import ConstructKind, DataOpKind, LogBuilder, MapType
from quiver.replay.mapping.vsm import reusing_shadows, run_vsm
from quiver.replay.mapping.vsm_layout import LOG_BLOCK

HOST, DEV0, DEV1 = 0x10000, 0x80000, 0xC0000
N = 3 * 4096 + 100          # three default blocks and a bit
SRC = "blocks.c"


def site(line: int) -> tuple[str, int, str]:
    return (SRC, line, "main")


def mapped(b: LogBuilder, *, devices=(0,), size: int = N, copy_in: bool = True) -> dict[int, int]:
    """``a`` allocated on the host, written there, mapped (alloc + optional copy-in) on each device."""
    b.alloc(HOST, size, site=site(1))
    b.access(HOST, size, write=True, site=site(2))
    cons = {}
    for d in devices:
        c = b.construct_begin(ConstructKind.TARGET_ENTER_DATA, site=site(3), device=d)
        b.map_clause(c, "a", HOST, size, MapType.TO if copy_in else 0, site=site(3),
                     text="a[0:n]", device=d)
        dev = (DEV0, DEV1)[d]
        b.data_op(DataOpKind.ALLOC, HOST, dev, size, construct=c, var="a", device=d)
        if copy_in:
            b.data_op(DataOpKind.TRANSFER_TO, HOST, dev, size, construct=c, var="a", device=d)
        b.construct_end(c, ConstructKind.TARGET_ENTER_DATA, device=d)
        cons[d] = c
    return cons


def detections(b: LogBuilder) -> list[tuple]:
    """(kind, device, first and last bad host offset, bytes, occurrences, line) of each detection; both
    engines agree."""
    cols = b.columns()
    want = oracle_detections(cols)
    for lgb in (LOG_BLOCK, 3):
        assert run_vsm(cols, log_block=lgb).detections == want
    return [(d.kind, d.device, d.host_addr - HOST, d.last_host_addr - HOST, d.bytes, d.occurrences, d.loc)
            for d in want]


def line_of(b: LogBuilder, line: int) -> int:
    return b.location(SRC, line, "main")


@pytest.mark.parametrize("lo,n", [(5000, 10), (4096, 4096), (4090, 20), (0, N)])
def test_host_write_inside_a_valid_block_makes_the_device_copy_stale(lo, n):
    b = LogBuilder()
    c = mapped(b)[0]
    b.access(DEV0, N, device=0, construct=c, site=site(10))            # whole copy valid: no finding
    b.access(HOST + lo, n, write=True, site=site(11))
    b.access(DEV0, N, device=0, construct=c, site=site(12))
    b.access(DEV0, N, device=0, construct=c, site=site(12))            # the same read again: one more occurrence
    assert detections(b) == [("stale", 0, lo, lo + n - 1, 2 * n, 2, line_of(b, 12))]


def test_copy_to_part_of_the_array_refreshes_only_that_part():
    b = LogBuilder()
    c = mapped(b)[0]
    b.access(HOST, N, write=True, site=site(10))                       # every CV byte stale
    u = b.construct_begin(ConstructKind.TARGET_UPDATE, site=site(11))
    b.data_op(DataOpKind.TRANSFER_TO, HOST + 4000, DEV0 + 4000, 5000, construct=u, var="a")   # over a block edge
    b.construct_end(u, ConstructKind.TARGET_UPDATE)
    b.access(DEV0 + 3000, 7000, device=0, construct=c, site=site(12))
    assert detections(b) == [("stale", 0, 3000, 9999, 2000, 1, line_of(b, 12))]   # 3000..3999 and 9000..9999


def test_a_write_on_one_device_makes_the_other_device_and_the_host_stale():
    b = LogBuilder()
    cons = mapped(b, devices=(0, 1))
    b.access(DEV1, N, device=1, construct=cons[1], site=site(10))     # valid on device 1
    b.access(DEV0 + 4096, 4096, write=True, device=0, construct=cons[0], site=site(11))
    b.access(DEV1, N, device=1, construct=cons[1], site=site(12))
    b.access(DEV0, N, device=0, construct=cons[0], site=site(13))     # the writer's own copy: valid
    b.access(HOST + 4000, 200, site=site(14))
    assert detections(b) == [("stale", 1, 4096, 8191, 4096, 1, line_of(b, 12)),
                             ("stale", -1, 4096, 4199, 104, 1, line_of(b, 14))]


def test_a_strided_run_crossing_the_end_of_the_copy_overflows():
    b = LogBuilder()
    c = mapped(b)[0]
    # blocks of 64 bytes every 4096: the last one starts 20 bytes before the end of the copy
    b.access(DEV0 + N - 20 - 3 * 4096, 64, device=0, construct=c, site=site(10), stride=4096, blocks=4, width=4)
    assert detections(b) == [("overflow", 0, N, N + 43, 44, 1, line_of(b, 10))]


def test_strided_reads_of_stale_rows_count_bytes_per_block_and_one_occurrence_per_row():
    b = LogBuilder()
    c = mapped(b)[0]
    for row in range(4):                                                # the host rewrites every row's middle
        b.access(HOST + row * 3000 + 100, 50, write=True, site=site(10))
    for _ in range(2):   # rows of 300 bytes every 3000 bytes, from byte 0: the stale middles are read twice
        b.access(DEV0, 300, device=0, construct=c, site=site(11), stride=3000, blocks=4)
    assert detections(b) == [("stale", 0, 100, 3 * 3000 + 149, 2 * 4 * 50, 2, line_of(b, 11))]


def test_strided_writes_then_a_whole_read_back_on_the_host():
    b = LogBuilder()
    c = mapped(b)[0]
    b.access(DEV0 + 8, 16, write=True, device=0, construct=c, site=site(10), stride=1024, blocks=12)
    xo = b.construct_begin(ConstructKind.TARGET_EXIT_DATA, site=site(11))
    b.data_op(DataOpKind.DELETE, HOST, DEV0, N, construct=xo, var="a")   # no copy-out: the writes are lost
    b.construct_end(xo, ConstructKind.TARGET_EXIT_DATA)
    b.access(HOST, N, site=site(12))
    assert detections(b) == [("stale", -1, 8, 11 * 1024 + 23, 12 * 16, 1, line_of(b, 12))]


def test_alloc_clause_then_partial_copy_and_read_mixes_uninitialised_and_valid():
    b = LogBuilder()
    c = mapped(b, copy_in=False)[0]
    u = b.construct_begin(ConstructKind.TARGET_UPDATE, site=site(10))
    b.data_op(DataOpKind.TRANSFER_TO, HOST + 4096, DEV0 + 4096, 4096, construct=u, var="a")   # exactly one block
    b.construct_end(u, ConstructKind.TARGET_UPDATE)
    b.access(DEV0, 3 * 4096, device=0, construct=c, site=site(11))
    assert detections(b) == [("uum", 0, 0, 3 * 4096 - 1, 2 * 4096, 1, line_of(b, 11))]   # blocks 0 and 2


def test_history_of_the_first_bad_byte_sees_uniform_and_split_blocks():
    b = LogBuilder()
    c = mapped(b)[0]
    b.access(HOST + 4096, 4096, write=True, site=site(10))               # a whole block
    b.access(HOST + 4200, 8, write=True, site=site(11))                  # inside it
    b.access(DEV0 + 4100, 200, device=0, construct=c, site=site(12))
    cols = b.columns()
    want = oracle_detections(cols)
    for lgb in (LOG_BLOCK, 3, 2):
        got = run_vsm(cols, log_block=lgb).detections
        assert got == want
    d, = want
    assert (d.kind, d.host_addr - HOST, d.bytes) == ("stale", 4100, 200)
    rows = [int(np.flatnonzero(cols["loc"] == line_of(b, line))[0]) for line in (1, 2, 3, 10)]
    # host alloc, host write, device alloc and copy-in (after the construct's begin and clause), the
    # whole-block write; not line 11's write next to the byte
    assert [g for g, _state in d.history] == [rows[0], rows[1], rows[2] + 2, rows[2] + 3, rows[3]]


def test_strided_device_writes_initialise_the_copy():
    b = LogBuilder()
    c = mapped(b, copy_in=False)[0]                                     # map(alloc:): the copy is uninitialised
    b.access(DEV0, 4, write=True, device=0, construct=c, site=site(9))
    b.access(DEV0 + 64, 32, write=True, device=0, construct=c, site=site(10), stride=4096, blocks=3)
    b.access(HOST, N, write=True, site=site(11))                        # the device copy is now out of date
    b.access(DEV0, 3 * 4096, device=0, construct=c, site=site(12))
    # the bytes the device wrote are stale, the others were never initialised there
    assert detections(b) == [("stale", 0, 0, 2 * 4096 + 64 + 31, 4 + 3 * 32, 1, line_of(b, 12)),
                             ("uum", 0, 4, 3 * 4096 - 1, 3 * 4096 - 100, 1, line_of(b, 12))]


def test_strided_rows_over_a_span_that_is_not_all_valid_are_checked_block_by_block():
    """The kernel settles a dense strided run with one check per shadow block of its span; a span whose
    gaps are uninitialised must still be checked row by row: reading the written rows is clean, reading
    rows shifted into the gaps is not, and once the whole copy is written every strided run is clean."""
    b = LogBuilder()
    c = mapped(b, copy_in=False)[0]
    b.access(DEV0, 48, write=True, device=0, construct=c, site=site(10), stride=64, blocks=100)
    b.access(DEV0, 48, device=0, construct=c, site=site(11), stride=64, blocks=100)   # the written rows: clean
    b.access(DEV0 + 40, 16, device=0, construct=c, site=site(12), stride=64, blocks=100)  # 8 bytes of each gap
    b.access(DEV0, N, write=True, device=0, construct=c, site=site(13))
    b.access(DEV0 + 40, 16, device=0, construct=c, site=site(14), stride=64, blocks=100)  # now settled: clean
    b.access(DEV0 + 8, 8, write=True, device=0, construct=c, site=site(15), stride=64, blocks=100)
    assert detections(b) == [("uum", 0, 48, 99 * 64 + 55, 100 * 8, 1, line_of(b, 12))]


def test_a_sweep_rewriting_a_split_block_still_changes_the_bytes_it_has_not_written_yet():
    """The second and third device sweeps over rows with unwritten borders find most bytes already
    written (the read-only check); the third also writes one border byte, which must go stale on
    the host, and the host read of the untouched borders stays valid."""
    b = LogBuilder()
    c = mapped(b)[0]
    for _ in range(2):   # rows of 1000 bytes every 1024: 24 border bytes per row keep the copied state
        b.access(DEV0, 1000, write=True, device=0, construct=c, site=site(10), stride=1024, blocks=12)
    b.access(DEV0, 1001, write=True, device=0, construct=c, site=site(11), stride=1024, blocks=12)
    b.access(HOST + 1001, 23, site=site(12))                            # border bytes: host copy valid
    b.access(HOST + 1000, 1, site=site(13))                             # written by the last sweep
    assert detections(b) == [("stale", -1, 1000, 1000, 1, 1, line_of(b, 13))]


def test_small_device_accesses_inside_a_cached_copy_still_see_every_change():
    """One-block device accesses to a copy the kernel has cached take a shortcut; a host write
    between two of them, and a device write before a host read, must still be seen."""
    b = LogBuilder()
    c = mapped(b)[0]
    b.access(DEV0, 8, device=0, construct=c, site=site(10))                   # valid; the copy is cached
    b.access(HOST + 5000, 8, write=True, site=site(11))
    b.access(DEV0 + 5000, 8, device=0, construct=c, site=site(12))
    b.access(DEV0 + 5004, 4, device=0, construct=c, site=site(12))
    b.access(DEV0 + 6000, 8, write=True, device=0, construct=c, site=site(13))
    b.access(DEV0 + 6000, 8, write=True, device=0, construct=c, site=site(13))  # already written: nothing new
    b.access(DEV0 + 6000, 8, device=0, construct=c, site=site(12))            # its own write: valid
    b.access(HOST + 6000, 8, site=site(14))
    assert detections(b) == [("stale", 0, 5000, 5007, 12, 2, line_of(b, 12)),
                             ("stale", -1, 6000, 6007, 8, 1, line_of(b, 14))]


def test_a_new_session_takes_over_the_shadow_of_a_finished_one():
    """One analysis replays a log several times; the next replay reuses the last one's shadow array
    (no fresh pages) and, since a session starts with every block uniform, finds the same."""
    b = LogBuilder()
    c = mapped(b)[0]
    b.access(HOST + 100, 8, write=True, site=site(10))
    b.access(DEV0 + 96, 16, device=0, construct=c, site=site(11))
    cols = b.columns()
    with reusing_shadows():
        first = run_vsm(cols, history=False)
        want, shadow = first.detections, first.session.shadow
        assert [(d.kind, d.host_addr - HOST, d.bytes) for d in want] == [("stale", 100, 8)]
        shadow[:] = 0xFF   # whatever the bytes hold
        del first
        again = run_vsm(cols, history=False)
        assert again.session.shadow is shadow and again.detections == want
        other = run_vsm(cols, history=False)   # the previous session is still alive: a new array
        assert other.session.shadow is not shadow and other.detections == want
        del again, other
    outside = run_vsm(cols, history=False)   # nothing is kept once the analysis is over
    assert outside.session.shadow is not shadow and outside.detections == want
