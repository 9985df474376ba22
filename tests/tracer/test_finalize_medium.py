"""Runs of many small kernels (more rows than a small log, at most one record batch) are finalized by
the numpy-free path (tracer/finalize_small.py) and written zstd-compressed without pyarrow
(formats/zstd.py): the same file, byte for byte, as finalize.py writes, and `trace record` imports
neither numpy nor pyarrow for them (their import competed with the program for the cores).

tests/programs/omp/many_kernels.c: 400 steps of two target regions with their own map clauses, one
inside a `target data` region (construct fixes), global and stack objects (object rows merged in by
time): ~19,000 rows.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from quiver.formats import ConstructKind, EventKind, read_log
from quiver.tracer import finalize_small as small_mod
from quiver.tracer.finalize import finalize
from quiver.tracer.finalize_small import PLAIN_MAX_ROWS, finalize_small

pytestmark = pytest.mark.clang

PROGRAM = "omp/many_kernels.c"
KEEP = {"QUIVER_KEEP_RAW": "1"}


def _run_meta(log: Path) -> dict:
    run = dict(read_log(log).run)
    for k in ("stats", "events", "last_event_ns"):    # what finalize computes, not what the caller passes
        run.pop(k, None)
    return run


def test_many_small_kernels_give_the_numpy_paths_log(record_c, tmp_path):
    run = record_c(PROGRAM, env=KEEP)
    assert run.returncode == 0, run.stderr
    raw = Path(str(run.log) + ".raw")
    log = read_log(run.log)
    assert PLAIN_MAX_ROWS < log.num_events <= small_mod.SMALL_MAX_ROWS
    kind, op = log.col("kind"), log.col("op")
    # what the medium run exercises: construct fixes, object rows, transfers of every kernel's clauses
    assert {int(ConstructKind.TARGET_DATA), int(ConstructKind.TARGET_DATA_END)} <= set(op[kind == EventKind.CONSTRUCT_BEGIN].tolist())
    assert {5, 6} <= set(op[kind == EventKind.ALLOC].tolist())   # AllocKind.GLOBAL, STACK
    assert (kind == EventKind.DATA_OP).sum() >= 400 * 4
    big, medium = tmp_path / "numpy.arrow", tmp_path / "medium.arrow"
    meta = _run_meta(run.log)
    finalize(raw, big, meta)
    assert finalize_small(raw, medium, meta) is not None
    assert medium.read_bytes() == big.read_bytes()
    assert run.log.read_bytes() == big.read_bytes()   # what `trace record` wrote


def test_many_small_kernels_log_is_compressed_and_reads_back(record_c, tmp_path):
    """zstd through libzstd: a fraction of the uncompressed size, pyarrow, polars and read_log read it
    (checksums verified), and `trace analyze` finds nothing in the clean program."""
    import pyarrow as pa
    from pyarrow import ipc

    run = record_c(PROGRAM, env=KEEP)
    log = read_log(run.log)
    assert run.log.stat().st_size * 4 < log.num_events * 94   # 94 bytes a row uncompressed
    table = ipc.open_file(pa.memory_map(str(run.log))).read_all()
    assert table.num_rows == log.num_events
    import polars as pl

    frame = pl.read_ipc(run.log)   # polars decompresses it too (stored columns: `addr` delta-coded)
    assert all(np.array_equal(frame[c].to_numpy(), table.column(c).to_numpy()) for c in table.column_names)
    assert np.array_equal(table.column("time_ns").to_numpy(), log.col("time_ns"))
    assert np.all(np.diff(log.col("time_ns")) >= 0)
    analyzed = subprocess.run([str(Path(sys.executable).with_name("trace")), "analyze", str(run.log)],
                              capture_output=True, text=True, check=False)
    assert analyzed.returncode == 0, analyzed.stdout + analyzed.stderr


def test_recording_many_small_kernels_imports_no_numpy(omp_build, tmp_path):
    exe = omp_build(PROGRAM)
    out = tmp_path / "m.arrow"
    code = ("import sys; from pathlib import Path; from quiver.tracer.record import record\n"
            f"r = record([{str(exe)!r}], Path({str(out)!r}), warn=lambda m: None)\n"
            "print(r.exit_code, sorted(m for m in ('numpy', 'pyarrow', 'numba') if m in sys.modules))\n")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=tmp_path)
    assert run.stdout.strip().splitlines()[-1] == "0 []", run.stderr
    assert read_log(out).num_events > PLAIN_MAX_ROWS


def test_object_rows_merge_in_before_rows_of_the_same_time(monkeypatch):
    """_merge_objects: finalize._merge_by_time's order (a stable sort by time, the object rows first)."""
    from array import array

    cols = {c: array(t, v) for c, t, v in (("time_ns", "q", [1, 3, 3, 5]), ("id", "q", [10, 11, 12, 13]))}
    objects = {c: array(t, v) for c, t, v in (("time_ns", "q", [3, 0, 9, 3]), ("id", "q", [20, 21, 22, 23]))}
    monkeypatch.setattr(small_mod, "COLUMN_NAMES", ("time_ns", "id"))
    merged = small_mod._merge_objects(objects, cols)
    assert merged["time_ns"].tolist() == [0, 1, 3, 3, 3, 3, 5, 9]
    assert merged["id"].tolist() == [21, 10, 20, 23, 11, 12, 13, 22]
