"""Sharded `trace analyze --check rma`: speed-up of --workers N over one worker on a synthetic
many-rank halo exchange (the log `halo_builder` writes; also used by tests/replay/test_sharded.py).

Shape: R ranks in a ring, one window per rank (every rank's window at the same virtual address,
as in real processes), per iteration every rank stores and loads its interior, MPI_Puts its
boundary blocks into both neighbours' halos, then all ranks fence. Planted races (exact lines):
- line 31: rank 5 stores into its own left halo in the epoch where rank 4's Put writes it;
- line 32: rank R*2/3 puts into its right neighbour's interior while that rank stores there;
- line 33: rank R-24 reuses its send buffer before the fence completes its Put (origin buffer).

    .venv/bin/python bench/sharded.py [--ranks 1024] [--iters 8] [--blocks 64] [--workers 1,2] [--json out]

Prints one row per worker count (wall time of `trace analyze <split dir> --check rma
--format json`, the speed-up over one worker, CPU seconds of all its processes) and checks the
reports are byte-identical. The load average is printed too: on a shared machine whose cores are
busy, more workers cannot be faster.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from quiver.formats import EventKind, LogBuilder, MpiSyncKind, RmaOp

SOURCE = "halo.c"
WIN_BASE, WIN_SIZE = 0x7F0000001000, 1 << 16
HALO = 4096                      # left halo [0, HALO), right halo [WIN_SIZE - HALO, WIN_SIZE)
SEND_BUF = 0x7F0000200000
LINES = {"store": 20, "load": 21, "put_left": 24, "put_right": 25, "fence": 27,
         "halo_store": 31, "interior_put": 32, "buffer_reuse": 33}


def racy_ranks(ranks: int) -> dict[str, int]:
    return {"halo_store": 5 % ranks, "interior_put": (2 * ranks) // 3, "buffer_reuse": max(ranks - 24, 0)}


def _bulk(b: LogBuilder, **columns) -> None:
    """Append events given as arrays or scalars (broadcast to the longest array)."""
    n = max(np.size(v) for v in columns.values())
    b.append_columns({k: np.broadcast_to(np.asarray(v), (n,)) for k, v in columns.items()})


def halo_builder(ranks: int = 1024, iters: int = 3, blocks: int = 4) -> LogBuilder:
    """A many-rank halo exchange with three planted races (see the module docstring)."""
    b = LogBuilder(program="halo", argv=["halo", str(iters)], ranks=ranks)
    loc = {k: b.location(SOURCE, line, "main" if k != "fence" else "exchange") for k, line in LINES.items()}
    r = np.arange(ranks, dtype=np.int64)
    k = np.arange(blocks, dtype=np.int64)
    for rank in range(ranks):
        b.win_create(rank, 0, WIN_BASE, WIN_SIZE, site=(SOURCE, 12, "main"))
    fence = {"kind": EventKind.MPI_SYNC, "rank": r, "op": int(MpiSyncKind.FENCE), "id": 0, "loc": loc["fence"]}
    _bulk(b, **fence)
    bad = racy_ranks(ranks)
    block = (WIN_SIZE - 2 * HALO) // max(blocks, 1) // 2
    for it in range(iters):
        rr, kk = np.repeat(r, blocks), np.tile(k, ranks)
        interior = WIN_BASE + HALO + kk * 2 * block
        _bulk(b, kind=EventKind.ACCESS, rank=rr, op=1, addr=interior, size=block, loc=loc["store"])
        _bulk(b, kind=EventKind.ACCESS, rank=rr, op=0, addr=interior + block, size=block, loc=loc["load"])
        _bulk(b, kind=EventKind.ACCESS, rank=r, op=1, addr=SEND_BUF, size=2 * HALO, loc=loc["store"])
        for key, peer, disp, offset in (("put_left", (r - 1) % ranks, WIN_SIZE - HALO, 0),
                                        ("put_right", (r + 1) % ranks, 0, HALO)):
            _bulk(b, kind=EventKind.RMA, rank=r, op=int(RmaOp.PUT), id=0, id2=peer, aux=disp, size=HALO,
                  addr=SEND_BUF + offset, loc=loc[key], device=8, aux2=-1, name=0)
        if it == 1:
            target = (bad["interior_put"] + 1) % ranks
            b.access(WIN_BASE + 8, 8, write=True, rank=bad["halo_store"], site=loc["halo_store"])
            b.rma(bad["interior_put"], RmaOp.PUT, 0, target, HALO, 64, origin_addr=SEND_BUF, datatype_size=8,
                  site=loc["interior_put"])
            b.access(SEND_BUF, 16, write=True, rank=bad["buffer_reuse"], site=loc["buffer_reuse"])
        _bulk(b, **fence)
    _bulk(b, kind=EventKind.WIN_FREE, rank=r, id=0, loc=loc["fence"])
    return b


def _analyze(log: Path, workers: int) -> tuple[float, float, str]:
    """Wall seconds, CPU seconds (all processes) and the JSON report of one `trace analyze`."""
    trace = str(Path(sys.executable).with_name("trace"))
    cmd = [trace, "analyze", str(log), "--check", "rma", "--format", "json", "--no-progress"]
    if workers > 1:
        cmd += ["--workers", str(workers)]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    run = subprocess.run(cmd, capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if run.returncode not in (0, 1):
        raise SystemExit(f"trace analyze failed: {run.stderr.strip()}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return elapsed, cpu, run.stdout


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ranks", type=int, default=1024)
    ap.add_argument("--iters", type=int, default=8)
    ap.add_argument("--blocks", type=int, default=64, help="interior blocks stored/loaded per rank and iteration")
    ap.add_argument("--workers", default="1,2", help="comma-separated worker counts (1 = one process, serial)")
    ap.add_argument("--json", type=Path, help="write the numbers here")
    args = ap.parse_args(argv)
    counts = [int(x) for x in args.workers.split(",")]
    with tempfile.TemporaryDirectory(prefix="quiver-bench-sharded-") as tmp:
        log = Path(tmp) / "halo.d"
        b = halo_builder(args.ranks, args.iters, args.blocks)
        b.write_split(log)
        events = len(b.columns()["kind"])
        rows, reports = [], set()
        for w in counts:
            elapsed, cpu, out = _analyze(log, w)
            reports.add(out)
            rows.append({"workers": w, "seconds": round(elapsed, 3), "cpu_seconds": round(cpu, 3)})
    base = rows[0]["seconds"]
    for row in rows:
        row["speedup"] = round(base / row["seconds"], 2) if row["seconds"] else None
    findings = json.loads(next(iter(reports)))["summary"]["findings"]
    load = os.getloadavg()[0]
    print(f"sharded trace analyze --check rma: {args.ranks} ranks, {events} events, {findings} findings, "
          f"reports identical: {len(reports) == 1} ({os.cpu_count()} cores, load average {load:.1f})")
    print(f"{'workers':>8} {'seconds':>9} {'speed-up':>9} {'cpu s':>7}")
    for row in rows:
        print(f"{row['workers']:>8} {row['seconds']:>9.2f} {row['speedup']:>9.2f} {row['cpu_seconds']:>7.2f}")
    if args.json:
        args.json.write_text(json.dumps({"ranks": args.ranks, "events": events, "findings": findings,
                                         "identical": len(reports) == 1, "cores": os.cpu_count(),
                                         "load_average": round(load, 2), "runs": rows}, indent=1) + "\n")
    return 0 if len(reports) == 1 else 1


if __name__ == "__main__":
    sys.exit(main())
