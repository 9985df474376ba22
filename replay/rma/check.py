"""MPI-RMA race checker: ``check_rma(log, options) -> list[Finding]`` (kind ``rma-race``).

Pipeline (all numpy / numba over whole columns):
1. ``rma_sync``: cut every rank's program order at its sync events, vector clocks per segment;
2. ``rma_access``: one row per access (loads/stores, both sides of every RMA call) with its
   memory shard, completion cut, lock epoch, fence phase and the paper's epoch;
3. ``check_shard`` per (window, memory rank) shard: a pure function (a later version may run
   shards in other processes): ``rma_kernels.race_pairs`` (extended analysis) or
   ``rma_kernels.paper_pairs`` (``options.baseline``: exactly seed 001's epoch algorithm);
4. ``rma_report``: one Finding per distinct pair of racing sites.
"""

from __future__ import annotations

import numpy as np
from quiver.formats import EventLog
from quiver.replay.log_scan import has_rma
from quiver.replay.registry import CheckOptions
from quiver.replay.report.findings import Finding, merge_findings
from quiver.replay.rma.access import Accesses, build
from quiver.replay.rma.kernels import FIRST, TABLE2, merge_ranges, paper_pairs, race_pairs
from quiver.replay.rma.report import findings as make_findings
from quiver.replay.rma.sync import Clocks, _key, clocks, rank_order

MAX_PAIRS_PER_SHARD = 5_000_000


def _signature(a: Accesses) -> np.ndarray:
    """Accesses with equal signatures race with exactly the same partners (see rma_kernels)."""
    c = a.cols
    if len(a) == 0:
        return np.zeros(0, dtype=np.int64)
    local_seg = np.where(c["local"] == 1, c["seg"], -1)
    return _key(*[c[f] for f in ("loc", "issuer", "role", "write", "local", "atomic", "mop", "dsize", "lock",
                                 "excl", "end_rank", "end_cut", "rma_op")], local_seg)


def check_shard(a: Accesses, clk: Clocks, baseline: bool = False) -> tuple[np.ndarray, ...]:
    """Racing pairs of one shard's accesses: (x, y, lo, hi), indices into ``a``, merged byte ranges.

    Pure: depends only on the shard's rows and the clocks, so shards can run anywhere.
    """
    c = a.cols
    if baseline:
        keep = np.flatnonzero(c["bl_epoch"] >= 0)
        order = keep[np.lexsort((c["row"][keep], c["bl_epoch"][keep]))]
        epochs = c["bl_epoch"][order]
        bounds = np.r_[0, np.flatnonzero(np.diff(epochs)) + 1, len(order)].astype(np.int64)
        x, y, lo, hi = paper_pairs(c["lo"][order], c["hi"][order], c["bl_class"][order], bounds, TABLE2, FIRST)
    else:
        order = np.lexsort((c["row"], c["phase"]))
        phases = c["phase"][order]
        bounds = np.r_[0, np.flatnonzero(np.diff(phases)) + 1, len(order)].astype(np.int64)
        f = {k: np.ascontiguousarray(v[order]) for k, v in c.items()}
        sig = _signature(a)[order]
        x, y, lo, hi, _trunc = race_pairs(
            f["lo"], f["hi"], f["write"], f["local"], f["atomic"], f["mop"], f["dsize"], f["issuer"], f["seg"],
            f["row"], f["end_rank"], f["end_cut"], f["lock"], f["excl"], sig, bounds, clk.table, clk.off,
            MAX_PAIRS_PER_SHARD)
    x, y = order[x], order[y]
    if len(x):
        s = np.lexsort((lo, y, x))
        x, y, lo, hi = x[s], y[s], lo[s], hi[s]
        keep, lo, hi = merge_ranges(x, y, lo, hi)
        x, y, lo, hi = x[keep], y[keep], lo[keep], hi[keep]
    return x, y, lo, hi


def shards(a: Accesses) -> list[tuple[int, int, np.ndarray]]:
    """(window or -1, memory rank index, row indices) of every shard that holds an RMA access."""
    c = a.cols
    if len(a) == 0:
        return []
    inv = _key(c["shard"], c["owner"])
    order = np.argsort(inv, kind="stable")
    starts = np.searchsorted(inv[order], np.arange(int(inv.max()) + 2))
    out = []
    for g in range(len(starts) - 1):
        rows = order[starts[g]:starts[g + 1]]
        if (c["local"][rows] == 0).any():
            out.append((int(c["shard"][rows[0]]), int(c["owner"][rows[0]]), rows))
    return sorted(out, key=lambda s: (s[0], s[1]))


def analyze(log: EventLog, baseline: bool = False, *, ranks: np.ndarray | None = None, clk: Clocks | None = None,
            owners: np.ndarray | None = None):
    """Everything the checker computes, for notebooks and benchmarks: (accesses, regions, rank order, pairs).

    On one partition of a sharded run (quiver.replay.distributed.run), ``log`` holds every sync event plus the
    accesses routed to the memory ranks ``owners``; ``ranks`` and ``clk`` are the whole run's, and
    only the (window, rank) shards of ``owners`` are searched (the others are incomplete there).
    """
    cols = log.columns()
    ro = rank_order(cols, ranks)
    if clk is None:
        clk = clocks(cols, log.strings, ro)
    a, reg = build(cols, ro, clk)
    xs, ys, los, his = [], [], [], []
    for _w, m, rows in shards(a):
        if owners is not None and not np.isin(ro.ranks[m], owners):
            continue
        x, y, lo, hi = check_shard(a.take(rows), clk, baseline)
        xs.append(rows[x])
        ys.append(rows[y])
        los.append(lo)
        his.append(hi)
    cat = (lambda v: np.concatenate(v) if v else np.zeros(0, dtype=np.int64))
    return a, reg, ro, (cat(xs), cat(ys), cat(los), cat(his))


def check_rma(log: EventLog, options: CheckOptions | None = None) -> list[Finding]:
    """Every MPI-RMA race in the log (``options.baseline``: the paper's epoch algorithm only)."""
    options = options or CheckOptions()
    if not has_rma(log):
        return []
    a, reg, ro, (x, y, lo, hi) = analyze(log, options.baseline)
    return merge_findings(make_findings(log, a, reg, ro, x, y, lo, hi, options.baseline))


def check_rma_partition(log: EventLog, owners: np.ndarray, ranks: np.ndarray, clk: Clocks,
                        baseline: bool = False) -> list[Finding]:
    """The races in the memory of ``owners``, from one partition of a sharded run (see ``analyze``).

    Pure like ``check_shard``: the findings of a (window, rank) shard do not depend on which other
    shards share the partition, so any partitioning gives the findings of ``check_rma``.
    """
    if not has_rma(log):
        return []
    a, reg, ro, (x, y, lo, hi) = analyze(log, baseline, ranks=ranks, clk=clk, owners=owners)
    return merge_findings(make_findings(log, a, reg, ro, x, y, lo, hi, baseline))
