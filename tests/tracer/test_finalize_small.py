"""The numpy-free finalize of small runs (tracer/finalize_small.py) writes the log finalize.py writes.

Real recorded programs, their raw directories kept: an offloading program with threads, `target data`,
located target tasks and global and stack objects; a crashed (truncated) run; an MPI program on two
ranks. Each raw directory is finalized by both paths and the files compared byte for byte; the log
`trace record` wrote (the small path) is the same file too. And recording a small program never
imports numpy.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from quiver.formats import read_log
from quiver.tracer import finalize_small as small_mod
from quiver.tracer.finalize import finalize
from quiver.tracer.finalize_small import finalize_small

PROGRAMS = Path(__file__).resolve().parents[1] / "programs"
TRACE = str(Path(sys.executable).with_name("trace"))
pytestmark = pytest.mark.clang

KEEP = {"QUIVER_KEEP_RAW": "1"}


def _same_both_ways(log: Path, tmp_path: Path) -> bytes:
    raw = Path(str(log) + ".raw")
    run = dict(read_log(log).run)
    run.pop("stats", None)
    for k in ("events", "last_event_ns"):    # what finalize computes, not what the caller passes
        run.pop(k, None)
    big, little = tmp_path / "numpy.arrow", tmp_path / "small.arrow"
    finalize(raw, big, run)
    assert finalize_small(raw, little, run) is not None
    assert little.read_bytes() == big.read_bytes()
    assert log.read_bytes() == big.read_bytes()   # what `trace record` wrote
    return big.read_bytes()


@pytest.mark.parametrize("program", ["omp/finalize_mix.c", "omp/crash.c"])
def test_small_finalize_writes_the_same_log(record_c, tmp_path, program):
    run = record_c(program, env=KEEP)
    _same_both_ways(run.log, tmp_path)
    if program == "omp/crash.c":
        assert read_log(run.log).run["truncated"]


def test_small_finalize_covers_objects_tasks_and_target_data(record_c, tmp_path):
    """What finalize_mix exercises in the small path: `target data` fixes, task locations, objects."""
    import numpy as np
    from quiver.formats import AllocKind, ConstructKind, EventKind

    run = record_c("omp/finalize_mix.c", env=KEEP)
    little = tmp_path / "small.arrow"
    finalize_small(Path(str(run.log) + ".raw"), little)
    log = read_log(little)
    kind, op, loc = log.col("kind"), log.col("op"), log.col("loc")
    allocs = op[kind == EventKind.ALLOC]
    assert AllocKind.GLOBAL in allocs and AllocKind.STACK in allocs
    assert ConstructKind.TARGET_DATA in op[kind == EventKind.CONSTRUCT_BEGIN]
    assert np.all(loc[kind == EventKind.TASK_CREATE] >= 0) and (kind == EventKind.TASK_CREATE).any()


@pytest.mark.skipif(shutil.which("mpiexec.mpich") is None, reason="mpich is not installed")
def test_small_finalize_of_two_mpi_ranks(tmp_path):
    exe = tmp_path / "fig4b"
    subprocess.run([TRACE, "mpicc", "-g", str(PROGRAMS / "mpi" / "fig4b_race.c"), "-o", str(exe)], check=True,
                   capture_output=True)
    log = tmp_path / "fig4b.arrow"
    proc = subprocess.run([TRACE, "record", "-n", "2", "-o", str(log), "--", str(exe)], capture_output=True,
                          text=True, env={**os.environ, **KEEP}, check=False)
    assert proc.returncode == 0, proc.stderr
    assert read_log(log).run["ranks"] == 2
    _same_both_ways(log, tmp_path)


def test_big_runs_go_to_the_numpy_path(record_c, tmp_path, monkeypatch):
    run = record_c("omp/finalize_mix.c", env=KEEP)
    monkeypatch.setattr(small_mod, "PLAIN_MAX_ROWS", 10)
    monkeypatch.setattr(small_mod, "SMALL_MAX_ROWS", 10)
    assert finalize_small(Path(str(run.log) + ".raw"), tmp_path / "x.arrow") is None
    assert not (tmp_path / "x.arrow").exists()


def test_without_libzstd_only_uncompressed_logs_go_to_the_small_path(record_c, tmp_path, monkeypatch):
    """Above PLAIN_MAX_ROWS the log is compressed: without libzstd only pyarrow can, so finalize.py does it."""
    run = record_c("omp/finalize_mix.c", env=KEEP)
    raw = Path(str(run.log) + ".raw")
    monkeypatch.setattr(small_mod, "PLAIN_MAX_ROWS", 10)
    monkeypatch.setattr(small_mod, "plain_engine_for", lambda compression: compression is None)
    assert small_mod.small_max_rows() == 10
    assert finalize_small(raw, tmp_path / "x.arrow") is None
    monkeypatch.setattr(small_mod, "plain_engine_for", lambda compression: True)
    assert small_mod.small_max_rows() == small_mod.SMALL_MAX_ROWS
    assert finalize_small(raw, tmp_path / "x.arrow") is not None


def test_recording_a_small_program_imports_no_numpy(omp_build, tmp_path):
    """A small offloading run is finalized without numpy (nor pyarrow): ~0.1-0.2 s of CPU saved; and the
    whole recording does without dataclasses (inspect, ast, dis: ~7 ms of CPU, while the program runs)."""
    exe = omp_build(PROGRAMS.parent.parent / "bench" / "kernels" / "small.c", opt="-O2")
    out = tmp_path / "s.arrow"
    code = ("import sys; from pathlib import Path; from quiver.tracer.record import record\n"
            f"r = record([{str(exe)!r}], Path({str(out)!r}), warn=lambda m: None)\n"
            "print(r.exit_code, sorted(m for m in ('numpy', 'pyarrow', 'numba', 'dataclasses', 'inspect')\n"
            "                          if m in sys.modules))\n")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=tmp_path)
    assert run.stdout.strip().splitlines()[-1] == "0 []", run.stderr
    assert read_log(out).run["events"] > 0


@pytest.mark.parametrize("records", [100, (1 << 14) + 1, small_mod.SMALL_MAX_ROWS + 1])
def test_numpy_path_is_imported_while_the_program_runs_only_for_a_big_raw_directory(tmp_path, records):
    """record._prepare_finalize's thread imports finalize's numpy path once the raw directory holds more
    records than finalize_small takes (a big run then does not pay the import after it ends); a run of
    many small kernels (up to one record batch) never imports it (its import competed with the program
    for the cores)."""
    raw = tmp_path / "run.arrow.raw"
    raw.mkdir()
    (raw / "r0.t0.ev").write_bytes(bytes(96 * records))
    code = ("import sys, threading, time; from pathlib import Path; from quiver.tracer import record as r\n"
            "ended = threading.Event()\n"
            f"t = r._prepare_finalize(Path('/bin/true'), Path({str(raw)!r}), ended)\n"
            "time.sleep(0.5); ended.set(); t.join(); r.tools.stop_all()\n"
            "print('numpy' in sys.modules)\n")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert run.stdout.strip() == str(records > small_mod.small_max_rows()), run.stderr
