"""Sharded analysis: the checkers over shards of a run, on any executor, with one merged report.

Phases (quiver.replay.distributed.partition says what a shard is):
1. **map** (one task per source: a rank file, or a run of record batches of one file): route rows
   to their shards' fragment files, return the run's global rows (sync and window events);
2. **global pass** (here): the vector clocks of the whole run from the global rows only, computed
   once and shipped to every RMA partition through the scratch directory;
3. **check** (one task per partition): assemble each partition's rows into an in-memory log and run
   the same pure checkers as `trace analyze` on one log;
4. **merge** (here): ``merge_findings`` over the partitions' findings in shard order.

Determinism: an OMP shard is one process's complete log; an RMA (window, rank) shard sees exactly
the rows and clocks the single-log analysis gives it, in the same relative order; results are
concatenated in shard order whatever finished first. So the report is byte-identical for every
backend, worker count and partitioning.
"""

from __future__ import annotations

import os
import pickle
import shutil
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import lru_cache
from itertools import pairwise
from pathlib import Path
from typing import Any

import numpy as np
from quiver.formats import EventLog, LogSet, open_logs, read_log, write_log
from quiver.replay.distributed.executors import Executor, SerialExecutor
from quiver.replay.distributed.partition import (
    FAMILY_SHIFT,
    OMP,
    RANK_MASK,
    RMA,
    Partition,
    Piece,
    Source,
    plan_partitions,
)
from quiver.replay.distributed.shuffle import (
    MapResult,
    concat,
    event_columns,
    map_source,
    read_pieces,
    read_rows,
    sort_rows,
    write_rows,
)
from quiver.replay.driver import AnalysisReport, run_checks
from quiver.replay.log_scan import has_rma
from quiver.replay.registry import CheckOptions, available_checkers
from quiver.replay.report.findings import Finding, merge_findings
from quiver.replay.rma.check import check_rma_partition
from quiver.replay.rma.sync import Clocks, clocks, rank_order

MAX_PARTITION_ROWS = 4_000_000      # routed rows per partition task (one rank may exceed it alone)
PARTITIONS_PER_WORKER = 4           # enough tasks to balance uneven shards
MAP_TASKS_PER_WORKER = 8
# phase name, total items -> called with the number of shards (or sources) each finished task covers
Progress = Callable[[str, int], Callable[[int], None]]


@dataclass(frozen=True)
class Context:
    """What every partition task needs besides its own rows (small; shipped with each task)."""

    scratch: str
    omp_checks: tuple[str, ...]
    options: CheckOptions
    ranks: np.ndarray
    strings: tuple[str, ...]
    locations: tuple[tuple[str, int, int, str], ...]
    run: dict[str, Any]
    has_global: bool


# --- worker side --------------------------------------------------------------------------------

@lru_cache(maxsize=2)
def _global_rows(scratch: str) -> dict[str, np.ndarray]:
    return read_rows(os.path.join(scratch, "global.arrow"))


@lru_cache(maxsize=2)
def _clocks(scratch: str) -> Clocks:
    with open(os.path.join(scratch, "clocks.pkl"), "rb") as f:
        off, nranks, waits = pickle.load(f)
    table = np.load(os.path.join(scratch, "clocks.npy"), mmap_mode="r")
    return Clocks(table, off, nranks, waits)


def _save_clocks(scratch: Path, clk: Clocks) -> None:
    np.save(scratch / "clocks.npy", clk.table)
    with open(scratch / "clocks.pkl", "wb") as f:
        pickle.dump((clk.off, clk.nranks, clk.pscw_wait), f)


@contextmanager
def _shard_log(cols: dict[str, np.ndarray], ctx: Context, name: str) -> Iterator[EventLog]:
    """The rows as an ordinary (uncompressed, memory-mapped) log file in the scratch directory,
    removed once checked."""
    path = os.path.join(ctx.scratch, f"{name}.{os.getpid()}.arrow")
    write_log(path, event_columns(cols), strings=ctx.strings, locations=ctx.locations, run=ctx.run,
              compression=None)
    try:
        yield read_log(path)
    finally:
        os.unlink(path)


def _omp_findings(log: EventLog, ctx: Context) -> list[Finding]:
    return run_checks(log, list(ctx.omp_checks), ctx.options).findings


def run_partition(part: Partition, ctx: Context) -> list[Finding]:
    """The findings of one partition (a pure function of its shards' rows and the context)."""
    found: list[Finding] = []
    if part.family == OMP:
        for path in part.files:                       # whole logs: rank files, or a one-rank log
            found += _omp_findings(read_log(path), ctx)
        for rank, pieces in part.pieces:              # one rank of a single-file log
            with _shard_log(sort_rows(read_pieces(list(pieces))), ctx, f"shard-openmp-{rank}") as log:
                found += _omp_findings(log, ctx)
        return found
    if not ctx.has_global:
        return found
    routed = read_pieces([p for _r, pieces in part.pieces for p in pieces])
    cols = sort_rows(concat([_global_rows(ctx.scratch), routed]))
    with _shard_log(cols, ctx, f"shard-rma-{part.ranks[0]}-{part.ranks[-1]}") as log:
        return check_rma_partition(log, np.array(part.ranks, dtype=np.int64), ctx.ranks, _clocks(ctx.scratch),
                                   ctx.options.baseline)


# --- driver side --------------------------------------------------------------------------------

def _split_tables(logs: LogSet) -> tuple[list[Source], list[str], list[tuple], int]:
    """Sources of a split log (one per rank file) and the run-wide string and location tables."""
    strings: dict[str, int] = {}
    locations: dict[tuple, int] = {}
    sources, events = [], 0
    for i, path in enumerate(logs.files):
        log = read_log(path)
        events += log.num_events
        str_map = np.array([strings.setdefault(s, len(strings)) for s in log.strings], dtype=np.int64)
        loc_map = np.array([locations.setdefault((x.file, x.line, x.column, x.function), len(locations))
                            for x in log.locations], dtype=np.int64)
        sources.append(Source(i, str(path), split=True, loc_map=loc_map, str_map=str_map))
    return sources, list(strings), list(locations), events


def _has_rma_events(logs: LogSet) -> bool:
    """Any RMA call in the run? (reads only the ``kind`` column) Saves shuffling an OpenMP log's
    accesses for a checker that would find nothing."""
    return any(has_rma(read_log(path)) for path in logs.files)


def _file_sources(log: EventLog, workers: int) -> list[Source]:
    """Runs of record batches of one file, about two per worker."""
    n = max(log.num_batches, 1)
    k = max(1, min(n, 2 * workers))
    cuts = np.linspace(0, n, k + 1).round().astype(int)
    return [Source(i, str(log.path), int(a), int(b)) for i, (a, b) in enumerate(pairwise(cuts))]


def _routed_partitions(maps: list[MapResult], family: int, hint: int, start: int) -> list[Partition]:
    sizes: dict[int, int] = {}
    pieces: dict[int, list[Piece]] = {}
    for m in maps:                      # in source order: a shard's rows stay in the run's order
        for d, n in m.rows.items():
            if d >> FAMILY_SHIFT == family:
                r = d & RANK_MASK
                sizes[r] = sizes.get(r, 0) + n
                pieces.setdefault(r, []).append(m.piece(d))
    out = []
    for group in plan_partitions(family, sizes, hint, MAX_PARTITION_ROWS):
        out.append(Partition(start + len(out), family, tuple(group),
                             pieces=tuple((r, tuple(pieces[r])) for r in group)))
    return out


def _file_partitions(files: list[Path], hint: int) -> list[Partition]:
    groups = plan_partitions(OMP, {i: 1 for i in range(len(files))}, hint, MAX_PARTITION_ROWS)
    return [Partition(i, OMP, tuple(g), files=tuple(str(files[j]) for j in g)) for i, g in enumerate(groups)]


def analyze_sharded(path: str | os.PathLike, checks: list[str], options: CheckOptions | None = None,
                    executor: Executor | None = None, scratch: str | os.PathLike | None = None,
                    progress: Progress | None = None) -> AnalysisReport:
    """Run ``checks`` over a log or split-log directory shard by shard on ``executor``."""
    options = CheckOptions(max_schedules=(options or CheckOptions()).max_schedules,
                           baseline=(options or CheckOptions()).baseline)   # no callbacks in tasks
    executor = executor or SerialExecutor()
    logs = open_logs(path)
    available = available_checkers(checks)
    names = [c for c in checks if c in available]
    omp = tuple(c for c in names if c != "rma")
    want_rma = "rma" in names and _has_rma_events(logs)
    if scratch is None and getattr(executor, "shared_filesystem_needed", False):
        scratch = Path(path).resolve().parent          # remote workers must see it too
    work = Path(tempfile.mkdtemp(prefix="quiver-shards-", dir=scratch))
    try:
        if logs.split:
            sources, strings, locations, events = _split_tables(logs)
        else:
            single = logs.open(0)
            sources, strings, events = _file_sources(single, executor.workers), single.strings, single.num_events
            locations = [(x.file, x.line, x.column, x.function) for x in single.locations]
        multi_rank = int(logs.run.get("ranks", 1) or 1) > 1
        families = ({RMA} if want_rma else set()) | ({OMP} if omp and not logs.split and multi_rank else set())
        maps = _map(executor, sources, frozenset(families), work, progress)
        ranks = np.unique(np.concatenate([m.ranks for m in maps])) if maps else np.zeros(0, np.int64)
        if omp and not logs.split and OMP not in families and len(ranks) > 1:
            maps_omp = _map(executor, sources, frozenset({OMP}), work, progress, tag="omp")
            families.add(OMP)
        else:
            maps_omp = maps
        has_global = want_rma and any(m.has_rma for m in maps)
        if has_global:
            g = sort_rows(concat([m.global_rows for m in maps]))
            write_rows(work / "global.arrow", g)
            gcols = event_columns(g)
            _save_clocks(work, clocks(gcols, strings, rank_order(gcols, ranks)))
        hint = executor.workers * PARTITIONS_PER_WORKER
        parts: list[Partition] = []
        if omp:
            if logs.split:
                parts += _file_partitions(logs.files, hint)
            elif OMP in families:
                parts += _routed_partitions(maps_omp, OMP, hint, 0)
            else:
                parts.append(Partition(0, OMP, (0,), files=(str(logs.files[0]),)))
        if has_global:
            parts += _routed_partitions(maps, RMA, hint, len(parts))
        ctx = Context(str(work), omp, options, ranks, tuple(strings), tuple(map(tuple, locations)),
                      dict(logs.run), has_global)
        advance = progress("checking shards", sum(p.shards for p in parts)) if progress else None
        results = executor.run(run_partition, [(p, ctx) for p in parts],
                               on_done=(lambda i: advance(parts[i].shards)) if advance else None)
    finally:
        if not os.environ.get("QUIVER_KEEP_SHARDS"):
            shutil.rmtree(work, ignore_errors=True)
    found = [f for r in results for f in r]
    return AnalysisReport(log_path=str(path), run=dict(logs.run), events=events, checks=names,
                          unavailable=[c for c in checks if c not in available], findings=merge_findings(found))


def map_sources(sources: list[Source], families: frozenset[int], scratch: str) -> list[MapResult]:
    """Several sources in one task (one at a time: memory stays that of one source)."""
    return [map_source(s, families, scratch) for s in sources]


def _map(executor: Executor, sources: list[Source], families: frozenset[int], work: Path,
         progress: Progress | None, tag: str = "") -> list[MapResult]:
    if not families:
        return []
    out = work / f"map{tag}"
    out.mkdir()
    # a few tasks per worker: thousands of small rank files would cost a round trip each
    per_task = max(1, len(sources) // (executor.workers * MAP_TASKS_PER_WORKER))
    chunks = [sources[i:i + per_task] for i in range(0, len(sources), per_task)]
    advance = progress("reading", len(sources)) if progress else None
    done = executor.run(map_sources, [(c, families, str(out)) for c in chunks],
                        on_done=(lambda i: advance(len(chunks[i]))) if advance else None)
    return [m for chunk in done for m in chunk]
