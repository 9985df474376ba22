"""Every checker but the VSM (tests/replay/test_vsm_masked.py) on masked ACCESS runs (format version 6).

Why: a masked row stands for the slots of a window whose bit is set in ``id2``; absent slots are not
accessed. Each case builds a log in which a gap slot, and only a gap slot, would make a finding if it
were taken as accessed (or a present slot, and only that one, does make it), and checks what
`trace analyze` says; most also compare with the same log whose masked rows are written as one plain
row per present slot (``expand_masked``).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import pytest
from nowait_logs import Program
from planes_logs import store_after_put
from quiver.formats import AccessFlag, ConstructKind, DataOpKind, EventKind, LogBuilder, MapType
from quiver.formats.writer import write_log

import quiver

DEV = 0x800000


def expand_masked(cols: dict[str, np.ndarray]) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """(columns with every masked row replaced by one plain row per present slot, the row each comes from)."""
    masked = (cols["kind"] == int(EventKind.ACCESS)) & ((cols["op"] & int(AccessFlag.MASKED)) != 0)
    slots = np.where(masked, cols["aux2"], 1).astype(np.int64)
    origin = np.repeat(np.arange(len(slots), dtype=np.int64), slots)
    k = np.arange(len(origin), dtype=np.int64) - np.repeat(np.cumsum(slots) - slots, slots)
    m = masked[origin]
    present = ~m | ((cols["id2"][origin].view(np.uint64) >> k.astype(np.uint64)) & np.uint64(1) == 1)
    origin, k, m = origin[present], k[present], m[present]
    out = {c: v[origin].copy() for c, v in cols.items()}
    out["addr"] = (out["addr"].astype(np.int64) + np.where(m, k * out["addr2"].astype(np.int64), 0)).astype(
        cols["addr"].dtype)
    out["op"][m] &= ~int(AccessFlag.MASKED)
    out["aux2"][m], out["addr2"][m], out["id2"][m] = 0, 0, -1
    assert int(masked.sum()) > 0, "a masked test without masked rows"
    return out, origin


def findings(b: LogBuilder, directory: Path, check: str, compare: bool = True) -> list[dict]:
    """What `check` finds in the builder's log (asserted the same as in its expanded log when ``compare``,
    occurrences aside: a masked row is one occurrence, its slots as rows one each)."""
    cols = b.columns()
    run = dict(b.run)
    run.setdefault("threads", len(np.unique(cols["thread"])))
    path = write_log(directory / "masked.arrow", cols, strings=b.strings, locations=b.locations, run=run)
    got = [f.to_dict() for f in quiver.open(path).check(check)]
    if compare:
        wide, _origin = expand_masked(cols)
        path = write_log(directory / "expanded.arrow", wide, strings=b.strings, locations=b.locations, run=run)
        want = [f.to_dict() for f in quiver.open(path).check(check)]
        assert _but_counts(got) == _but_counts(want)
    return got


def _but_counts(found: list[dict]) -> list[dict]:
    return [{k: v for k, v in f.items() if k not in ("occurrences", "history")} for f in found]


def two_nowait_kernels(m0: int, lo1: int, m1: int) -> Program:
    """Two `target nowait` kernels that nothing orders, each writing `a`'s device copy with one masked row
    (8-byte elements; the second's slots start at element ``lo1``)."""
    p = Program("mask.c")
    a = p.var("a", 0x4000, 64, elem=8)
    p.target_data(3, [(a, "alloc")])
    t1 = p.nowait_target(5, [(a, "alloc")], [(a, "w", 6, {"mask": m0})])
    t2 = p.nowait_target(8, [(a, "alloc")], [(a, "w", 9, {"mask": m1, "lo": lo1})])
    t1.run(thread=1)
    t2.run(thread=2)
    p.taskwait(11)
    p.end_target_data()
    return p


def test_masked_writes_with_interleaved_disjoint_slots_do_not_race(tmp_path):
    """Even elements by one kernel, odd ones by the other: the spans interleave, no slot is shared."""
    assert findings(two_nowait_kernels(0b0101_0101, 1, 0b0101_0101).b, tmp_path, "race") == []


def test_masked_writes_sharing_one_slot_race_on_it_only(tmp_path):
    """The second kernel's row also takes element 2 (its slot 1): one race, on those 8 bytes."""
    (f,) = findings(two_nowait_kernels(0b0101_0101, 1, 0b0101_0111).b, tmp_path, "race")
    assert (f["kind"], f["variable"], f["details"]["offset"]) == ("data-race", "a", 16)
    assert {f["access"]["line"], f["related"][0]["site"]["line"]} == {6, 9}


def rma_store_after_put(mask: int) -> LogBuilder:
    """An MPI_Put from ``buf`` (16 bytes), then a local masked store of 8-byte slots from buf - 16 (Fig. 4a of
    the RMA checker's tests, the store as a masked row)."""
    return store_after_put(lambda b, buf: b.access(buf - 16, 8, write=True, rank=0, site=("a.c", 12), mask=mask,
                                                   width=8))


@pytest.mark.parametrize(("mask", "lines"), [(0b10001, []), (0b10101, [(12, 10)]), (0b11001, [(12, 10)])])
def test_an_rma_race_only_where_the_store_has_a_slot(tmp_path, mask, lines):
    """Slots 0 and 4 lie around the put's origin buffer (slots 2-3): the gap covers it, no race; slot 2 or 3
    present: a race."""
    found = findings(rma_store_after_put(mask), tmp_path, "rma")
    assert [(f["access"]["line"], f["related"][0]["site"]["line"]) for f in found] == lines


def kernel_reads_part_of_a_copy(mask: int | None) -> LogBuilder:
    """`a` (8 doubles) copied to the device; a kernel reads the slots of ``mask`` (None: nothing)."""
    b = LogBuilder(program="masked")
    b.alloc(0x2000, 64, site=("p.c", 1, "main"))
    b.access(0x2000, 64, write=True, site=("p.c", 2, "main"))
    c = b.construct_begin(ConstructKind.TARGET, site=("p.c", 5, "main"))
    b.map_clause(c, "a", 0x2000, 64, MapType.TO, site=("p.c", 5, "main"), text="a[0:8]")
    b.data_op(DataOpKind.ALLOC, 0x2000, DEV, 64, construct=c, var="a")
    b.data_op(DataOpKind.TRANSFER_TO, 0x2000, DEV, 64, construct=c, var="a")
    b.kernel(c)
    if mask is not None:
        b.access(DEV, 8, device=0, construct=c, site=("p.c", 7, "main"), mask=mask, width=8)
    b.data_op(DataOpKind.DELETE, 0x2000, DEV, 64, construct=c, var="a")
    b.construct_end(c)
    return b


def test_transfers_count_the_present_slots_as_read(tmp_path):
    """The kernel reads 3 of the 8 copied doubles (slots {0, 2, 7}): 40 bytes of the copy are unused, the
    five gap slots (reported: over half the copy); with no read, all 64."""
    found = findings(kernel_reads_part_of_a_copy(0b10000101), tmp_path, "transfers")
    assert {f["variable"]: f["bytes"] for f in found if f["kind"] == "unused-transfer"} == {"a": 40}
    none = findings(kernel_reads_part_of_a_copy(None), tmp_path, "transfers", compare=False)
    assert {f["variable"]: f["bytes"] for f in none if f["kind"] == "unused-transfer"} == {"a": 64}


def test_history_keeps_a_masked_row_only_when_a_present_slot_touches_the_range(tmp_path):
    """The kernel's masked read (slots {0, 2, 3, 5, 6, 7} of `a`) is in the history of element 2, not of
    element 1 (a gap); its detail says masked, its bytes are its present slots'."""
    path = kernel_reads_part_of_a_copy(0b11101101).write(tmp_path / "h.arrow")
    t = quiver.open(path)
    reads = t.history(addr=0x2000 + 16, size=8).filter(pl.col("operation") == "read")
    assert reads["line"].to_list() == [7]
    assert reads["detail"].to_list() == ["masked run: 6 of 8 slots of 8 bytes every 8 bytes"]
    assert reads["bytes"].to_list() == [48]
    assert t.history(addr=0x2000 + 8, size=8).filter(pl.col("operation") == "read").height == 0


def copy_back_then_host_write(mask: int) -> LogBuilder:
    """A kernel writes all of `a` (8 doubles), `a` is copied back, the host overwrites the slots of ``mask``
    (one masked row) and then reads all of `a`."""
    b = LogBuilder(program="masked")
    b.alloc(0x2000, 64, site=("p.c", 1, "main"))
    c = b.construct_begin(ConstructKind.TARGET, site=("p.c", 5, "main"))
    b.map_clause(c, "a", 0x2000, 64, MapType.FROM, site=("p.c", 5, "main"), text="a[0:8]")
    b.data_op(DataOpKind.ALLOC, 0x2000, DEV, 64, construct=c, var="a")
    b.kernel(c)
    b.access(DEV, 64, write=True, device=0, construct=c, site=("p.c", 7, "main"), width=8)
    b.data_op(DataOpKind.TRANSFER_FROM, 0x2000, DEV, 64, construct=c, var="a")
    b.data_op(DataOpKind.DELETE, 0x2000, DEV, 64, construct=c, var="a")
    b.construct_end(c)
    b.access(0x2000, 8, write=True, site=("p.c", 9, "main"), mask=mask, width=8)
    b.access(0x2000, 64, site=("p.c", 10, "main"), width=8)
    return b


def test_transfers_count_only_the_present_slots_of_a_host_write_as_overwritten(tmp_path):
    """6 of the 8 copied-back doubles are overwritten on the host before any read (slots {0, 1, 2, 4, 5, 7}):
    48 bytes of the copy back wasted; the gap slots are read, so used."""
    found = findings(copy_back_then_host_write(0b10110111), tmp_path, "transfers")
    assert {f["variable"]: f["bytes"] for f in found if f["kind"] == "unused-transfer"} == {"a": 48}
