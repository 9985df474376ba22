"""Every checker but the VSM (tests/replay/test_vsm_planes.py) on rows of planes (format version 5).

Why: a row of planes (``name`` >= 2 copies of a strided run, ``id2`` bytes apart) must mean to every
checker what its planes written as strided rows mean. Each case builds a log whose finding comes only
from a plane after the first (the first planes touch other memory), and compares what `trace analyze`
finds in it with what it finds in the same log with the planes as rows (tests/replay/planes_logs.py).
"""

from __future__ import annotations

import polars as pl
from nowait_logs import Program
from planes_logs import findings, same_findings, store_after_put, write_both
from quiver.formats import ConstructKind, DataOpKind, LogBuilder, MapType

import quiver

Z, A = 0x2000, 0x2100          # two host arrays of 256 bytes, one after the other
DEV = 0x800000


def test_a_race_in_the_last_plane_only(tmp_path):
    """The host reads a colour of three planes (4 bytes every 8, planes 128 bytes apart) before the
    taskwait: the first two planes lie in `z`, the last in `a`, which a `target nowait` copies back: a
    race on `a` from the last plane, the same as with the planes as rows."""
    p = Program("rbt.c")
    z = p.var("z", Z, 64)
    a = p.var("a", A, 64)
    p.write(z, 3)
    p.write(a, 3)
    t = p.nowait_target(5, [(a, "tofrom")], [(a, "r", 7), (a, "w", 7)])
    p.b.access(Z, 4, site=p.site(9), stride=8, blocks=2, planes=3, plane_stride=128, width=4)
    t.run()
    p.taskwait(10)
    found = same_findings(p.b, tmp_path, "race")
    assert [(f["variable"], f["access"]["line"]) for f in found] == [("a", 9)]
    assert found[0]["bytes"] == 8


def test_an_rma_race_in_the_last_plane_only(tmp_path):
    """A local store of three planes after an MPI_Put from the buffer: only the last plane lands in the
    put's origin buffer (Fig. 4a of the RMA checker's tests, the store as planes)."""
    b = store_after_put(lambda b, buf: b.access(buf - 2 * 64, 4, write=True, rank=0, site=("a.c", 12), stride=8,
                                                blocks=2, planes=3, plane_stride=64))
    found = same_findings(b, tmp_path, "rma")
    assert [(f["access"]["line"], f["related"][0]["site"]["line"]) for f in found] == [(12, 10)]


def two_arrays_on_the_device(kernel_reads: bool = True) -> LogBuilder:
    """z and a copied to the device (one after the other there too); a kernel reads a colour of three
    planes that starts in z: its last plane reads 4 x 8 bytes of a; both released."""
    b = LogBuilder(program="planes")
    for name, host in (("z", Z), ("a", A)):
        b.alloc(host, 256, site=("p.c", 1, "main"))
        b.access(host, 256, write=True, site=("p.c", 2, "main"))
    c = b.construct_begin(ConstructKind.TARGET, site=("p.c", 5, "main"))
    for i, (name, host) in enumerate((("z", Z), ("a", A))):
        b.map_clause(c, name, host, 256, MapType.TO, site=("p.c", 5, "main"), text=f"{name}[0:64]", index=i)
        b.data_op(DataOpKind.ALLOC, host, DEV + (host - Z), 256, construct=c, var=name)
        b.data_op(DataOpKind.TRANSFER_TO, host, DEV + (host - Z), 256, construct=c, var=name)
    b.kernel(c)
    if kernel_reads:
        b.access(DEV, 8, device=0, construct=c, site=("p.c", 7, "main"), stride=16, blocks=4, planes=3,
                 plane_stride=128, width=8)
    for name, host in (("z", Z), ("a", A)):
        b.data_op(DataOpKind.DELETE, host, DEV + (host - Z), 256, construct=c, var=name)
    b.construct_end(c)
    return b


def test_a_transfer_only_a_later_plane_reads(tmp_path):
    """The copy of `a` to the device is read only by the last plane of the kernel's row (bytes 0..55, 8
    of every 16): 32 of its 256 bytes are used, the rest unused, as with the planes as rows; without
    the read, all 256 are unused."""
    found = same_findings(two_arrays_on_the_device(), tmp_path, "transfers")
    unused = {f["variable"]: f["bytes"] for f in found if f["kind"] == "unused-transfer"}
    assert unused["a"] == 256 - 32
    b = two_arrays_on_the_device(kernel_reads=False)
    b.write(tmp_path / "none.arrow")
    assert {f["variable"]: f["bytes"] for f in findings(tmp_path / "none.arrow", "transfers")}["a"] == 256


def test_history_of_a_variable_only_a_later_plane_touches(tmp_path):
    """The history of `a` holds the kernel's row (its last plane, translated on its own, is in `a`'s device
    copy), as it holds the last plane's row of the expanded log; its detail says planes."""
    planes, expanded, origin = write_both(two_arrays_on_the_device(), tmp_path)
    got = quiver.open(planes).history("a")
    wide = quiver.open(expanded).history("a")
    assert got["seq"].to_list() == sorted({int(origin[s]) for s in wide["seq"].to_list()})
    kernel_row = got.filter(pl.col("operation") == "read")
    assert kernel_row.height == 1 and kernel_row["line"].to_list() == [7]
    assert kernel_row["detail"].to_list() == [
        "3 planes 128 bytes apart of a strided run: 4 blocks of 8 bytes every 16 bytes"]
    assert kernel_row["bytes"].to_list() == [3 * 4 * 8]
    assert kernel_row["host_addr"].to_list() == [Z]    # its first block's host address (plane 0, in `z`)
    assert quiver.open(planes).history("z").filter(pl.col("operation") == "read").height == 1
