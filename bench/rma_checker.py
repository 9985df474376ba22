"""Throughput of the MPI-RMA race checker on a builder-made log (~1M RMA and access events).

Shape: 3 ranks, one window of 64 KiB each, a halo-exchange-like loop: per iteration every rank
puts 64 small blocks to its right neighbour and gets 64 from its left neighbour, loads and stores
its own window and origin buffers, then fences (half the iterations) or flushes + barriers
inside one lock_all epoch (the other half). One racy line per phase keeps the checker honest.

    .venv/bin/python bench/rma_checker.py [--events 1000000] [--out log.arrow]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np
from quiver.formats import EventKind, LogBuilder, MessageKind, MpiSyncKind, RmaOp, read_log
from quiver.replay.registry import CheckOptions
from quiver.replay.rma.check import check_rma

RANKS, WIN, BLOCKS = 3, 64 * 1024, 64
BASE = [0x100000 * (r + 1) for r in range(RANKS)]
BUF = [0x900000 + 0x100000 * r for r in range(RANKS)]


def block(b: LogBuilder, it: int, loc_put: int, loc_get: int, loc_st: int, loc_ld: int) -> None:
    """One iteration of every rank, as numpy columns."""
    cols: dict[str, list[np.ndarray]] = {}

    defaults = {"id": -1, "id2": -1, "aux": 0, "aux2": 0, "name": -1, "device": -1, "addr": 0, "size": 0, "op": 0}

    def add(**kw) -> None:
        n = max(len(np.atleast_1d(v)) for v in kw.values())
        for k, v in {**defaults, **kw}.items():
            cols.setdefault(k, []).append(np.broadcast_to(np.asarray(v), (n,)).copy())

    for r in range(RANKS):
        right, left = (r + 1) % RANKS, (r - 1) % RANKS
        disp = (np.arange(BLOCKS) * 64 + (it % 8) * 8) % (WIN // 2)
        add(kind=EventKind.RMA, rank=r, op=int(RmaOp.PUT), id=0, id2=right, aux=disp, size=8,
            addr=BUF[r] + np.arange(BLOCKS) * 8, loc=loc_put, aux2=-1, name=0, device=8)
        add(kind=EventKind.RMA, rank=r, op=int(RmaOp.GET), id=0, id2=left, aux=WIN // 2 + disp, size=8,
            addr=BUF[r] + 4096 + np.arange(BLOCKS) * 8, loc=loc_get, aux2=-1, name=0, device=8)
        # local work on the own window's interior, and reads of last iteration's gets
        add(kind=EventKind.ACCESS, rank=r, op=1, addr=BASE[r] + WIN // 2 + 8192 + np.arange(BLOCKS) * 16, size=8,
            loc=loc_st)
        add(kind=EventKind.ACCESS, rank=r, op=0, addr=BASE[r] + 16384 + np.arange(BLOCKS) * 16, size=8, loc=loc_ld)
    b.append_columns({k: np.concatenate(v) for k, v in cols.items()})


def make_log(path: Path, events: int) -> int:
    b = LogBuilder(program="rma-bench", ranks=RANKS)
    for r in range(RANKS):
        b.win_create(r, 0, BASE[r], WIN, disp_unit=1)
    per_iter = RANKS * BLOCKS * 4 + RANKS * 4
    iters = max(2, events // per_iter)
    loc_put, loc_get = b.location("halo.c", 40, "exchange"), b.location("halo.c", 41, "exchange")
    loc_st, loc_ld = b.location("halo.c", 50, "compute"), b.location("halo.c", 51, "compute")
    for r in range(RANKS):
        b.mpi_sync(r, MpiSyncKind.FENCE, 0)
    for it in range(iters // 2):
        block(b, it, loc_put, loc_get, loc_st, loc_ld)
        if it % 50 == 0:   # a real race: rank 1 stores where rank 0 puts
            b.access(BASE[1] + (it % 8) * 8, 8, write=True, rank=1, site=("halo.c", 60, "bug"))
        for r in range(RANKS):
            b.mpi_sync(r, MpiSyncKind.FENCE, 0)
    for r in range(RANKS):
        b.mpi_sync(r, MpiSyncKind.LOCK_ALL, 0)
    for it in range(iters // 2, iters):
        block(b, it, loc_put, loc_get, loc_st, loc_ld)
        for r in range(RANKS):
            b.mpi_sync(r, MpiSyncKind.FLUSH_ALL, 0)
        for r in range(RANKS):
            b.message(r, MessageKind.BARRIER)
    for r in range(RANKS):
        b.mpi_sync(r, MpiSyncKind.UNLOCK_ALL, 0)
        b.win_free(r, 0)
    b.write(path, compression=None)
    return len(read_log(path).col("kind"))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--events", type=int, default=1_000_000)
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="quiver-bench-rma-") as tmp:
        run(args.out or Path(tmp) / "rma-bench.arrow", args.events)


def run(path: Path, events: int) -> None:
    n = make_log(path, events)
    check_rma(read_log(path))           # numba compilation (cached on disk after the first run)
    for baseline in (False, True):
        t0 = time.perf_counter()
        fs = check_rma(read_log(path), CheckOptions(baseline=baseline))
        dt = time.perf_counter() - t0
        name = "baseline" if baseline else "extended"
        print(f"{name:9s} {n} events in {dt:.2f} s = {n / dt / 1e6:.2f} M events/s, {len(fs)} findings: "
              + "; ".join(f"{f.access.short()}<->{f.related[0].site.short()} x{f.occurrences}" for f in fs))


if __name__ == "__main__":
    main()
