"""Synthetic logs (LogBuilder) shaped like real recordings, for the exploration tools.

A module of its own (not conftest) so tests can import the builders by a unique name."""

from __future__ import annotations

from quiver.formats import ConstructKind, DataOpKind, LogBuilder, MapType

A, B, C = 0x10000, 0x20000, 0x30000
DA, DB, DC = 0x90000, 0xA0000, 0xB0000
N = 100
SRC = "saxpy.c"


def saxpy_tofrom_log(path, *, kernel_reads_a: bool = False):
    """``map(tofrom: a[0:N]) map(to: b[0:N])`` where the kernel only writes ``a``: the copy of ``a``
    to the device is never read there (the clause should be ``from``)."""
    b = LogBuilder(program="./saxpy", argv=["./saxpy"], devices=[0])
    b.alloc(A, 4 * N, site=(SRC, 5, "main"))
    b.alloc(B, 4 * N, site=(SRC, 6, "main"))
    b.access(A, 4 * N, write=True, site=(SRC, 8, "main"))
    b.access(B, 4 * N, write=True, site=(SRC, 8, "main"))
    c = b.construct_begin(ConstructKind.TARGET, site=(SRC, 10, "main"))
    b.map_clause(c, "a", A, 4 * N, MapType.TO | MapType.FROM | MapType.TARGET_PARAM, site=(SRC, 10, "main"),
                 text="a[0:N]", index=0)
    b.map_clause(c, "b", B, 4 * N, MapType.TO | MapType.TARGET_PARAM, site=(SRC, 10, "main"), text="b[0:N]",
                 index=1)
    b.data_op(DataOpKind.ALLOC, A, DA, 4 * N, construct=c, var="a", site=(SRC, 10, "main"))
    b.data_op(DataOpKind.TRANSFER_TO, A, DA, 4 * N, construct=c, var="a", site=(SRC, 10, "main"))
    b.data_op(DataOpKind.ALLOC, B, DB, 4 * N, construct=c, var="b", site=(SRC, 10, "main"))
    b.data_op(DataOpKind.TRANSFER_TO, B, DB, 4 * N, construct=c, var="b", site=(SRC, 10, "main"))
    b.kernel(c, site=(SRC, 10, "main"))
    b.access(DB, 4 * N, device=0, construct=c, site=(SRC, 13, "main"), thread=1)
    if kernel_reads_a:
        b.access(DA, 4 * N, device=0, construct=c, site=(SRC, 13, "main"), thread=1)
    b.access(DA, 4 * N, write=True, device=0, construct=c, site=(SRC, 13, "main"), thread=1)
    b.data_op(DataOpKind.TRANSFER_FROM, A, DA, 4 * N, construct=c, var="a", site=(SRC, 10, "main"))
    b.data_op(DataOpKind.DELETE, A, DA, 4 * N, construct=c, var="a", site=(SRC, 10, "main"))
    b.data_op(DataOpKind.DELETE, B, DB, 4 * N, construct=c, var="b", site=(SRC, 10, "main"))
    b.construct_end(c, site=(SRC, 10, "main"))
    b.access(A, 4 * N, site=(SRC, 16, "main"))
    return b.write(path)


def listing_5_3_log(path):
    """OmpSan Listing 5.3 (seed 003) as libomptarget really runs it: enter data to A / from B (alloc),
    target map(from: B) (A, B present), target data map(from: B, C), exit data from B."""
    f = "listing53.c"
    b = LogBuilder(program="./listing53", devices=[0])
    A_, B_, C_ = 0x1000, 0x2000, 0x3000
    dA, dB, dC = 0x9000, 0xA000, 0xB000
    b.access(A_, 40, write=True, site=(f, 4, "main"))
    e = b.construct_begin(ConstructKind.TARGET_ENTER_DATA, site=(f, 6, "main"))
    b.map_clause(e, "A", A_, 40, MapType.TO, site=(f, 6, "main"), text="A[0:10]", index=0)
    b.map_clause(e, "B", B_, 40, MapType.FROM, site=(f, 6, "main"), text="B[0:10]", index=1)
    b.data_op(DataOpKind.ALLOC, A_, dA, 40, construct=e, var="A")
    b.data_op(DataOpKind.TRANSFER_TO, A_, dA, 40, construct=e, var="A")
    b.data_op(DataOpKind.ALLOC, B_, dB, 40, construct=e, var="B")
    b.construct_end(e, ConstructKind.TARGET_ENTER_DATA)
    t = b.construct_begin(ConstructKind.TARGET, site=(f, 7, "main"))
    b.map_clause(t, "B", B_, 40, MapType.FROM | MapType.TARGET_PARAM, site=(f, 7, "main"), text="B[0:10]", index=0)
    b.map_clause(t, "A", A_, 40, MapType.TO | MapType.FROM | MapType.TARGET_PARAM | MapType.IMPLICIT,
                 site=(f, 7, "main"), text="A", index=1)
    b.kernel(t)
    b.access(dA, 40, device=0, construct=t, site=(f, 9, "main"), thread=1)
    b.access(dB, 40, write=True, device=0, construct=t, site=(f, 9, "main"), thread=1)
    b.construct_end(t, site=(f, 9, "main"))
    d = b.construct_begin(ConstructKind.TARGET_DATA, site=(f, 10, "main"))
    b.map_clause(d, "B", B_, 40, MapType.FROM, site=(f, 10, "main"), text="B[0:10]", index=0)
    b.map_clause(d, "C", C_, 40, MapType.FROM, site=(f, 10, "main"), text="C[0:N]", index=1)
    b.data_op(DataOpKind.ALLOC, C_, dC, 40, construct=d, var="C")
    b.construct_end(d, ConstructKind.TARGET_DATA)
    b.access(B_, 40, site=(f, 12, "main"))
    b.access(C_, 40, write=True, site=(f, 12, "main"))
    de = b.construct_begin(ConstructKind.TARGET_DATA_END, site=(f, 10, "main"))
    b.map_clause(de, "B", B_, 40, MapType.FROM, site=(f, 10, "main"), text="B[0:10]", index=0)
    b.map_clause(de, "C", C_, 40, MapType.FROM, site=(f, 10, "main"), text="C[0:N]", index=1)
    b.data_op(DataOpKind.TRANSFER_FROM, C_, dC, 40, construct=de, var="C")
    b.data_op(DataOpKind.DELETE, C_, dC, 40, construct=de, var="C")
    b.construct_end(de, ConstructKind.TARGET_DATA_END)
    x = b.construct_begin(ConstructKind.TARGET_EXIT_DATA, site=(f, 13, "main"))
    b.map_clause(x, "B", B_, 40, MapType.FROM, site=(f, 13, "main"), text="B[0:10]", index=0)
    b.data_op(DataOpKind.TRANSFER_FROM, B_, dB, 40, construct=x, var="B")
    b.data_op(DataOpKind.DELETE, B_, dB, 40, construct=x, var="B")
    b.construct_end(x, ConstructKind.TARGET_EXIT_DATA)
    b.access(B_, 40, site=(f, 15, "main"))
    return b.write(path)


def rma_log(path):
    """Two ranks, one window: rank 0 puts 8 bytes into rank 1 between two fences, rank 1 reads it
    afterwards; rank 1 also gets from rank 0 under a lock."""
    from quiver.formats import MpiSyncKind, RmaOp
    f = "rma.c"
    b = LogBuilder(program="./rma", ranks=2)
    for r in (0, 1):
        b.win_create(r, 0, 0x5000, 64, site=(f, 10, "main"))
    for r in (0, 1):
        b.mpi_sync(r, MpiSyncKind.FENCE, 0, site=(f, 12, "main"))
    b.rma(0, RmaOp.PUT, 0, 1, 16, 8, origin_addr=0x7000, site=(f, 14, "main"))
    for r in (0, 1):
        b.mpi_sync(r, MpiSyncKind.FENCE, 0, site=(f, 16, "main"))
    b.access(0x5010, 8, rank=1, site=(f, 18, "main"))
    b.mpi_sync(1, MpiSyncKind.LOCK, 0, target=0, lock_type=2, site=(f, 20, "main"))
    b.rma(1, RmaOp.GET, 0, 0, 0, 4, origin_addr=0x7100, site=(f, 21, "main"))
    b.mpi_sync(1, MpiSyncKind.UNLOCK, 0, target=0, site=(f, 22, "main"))
    for r in (0, 1):
        b.win_free(r, 0, site=(f, 24, "main"))
    return b.write(path)


