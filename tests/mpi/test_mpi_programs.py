"""Real MPI-RMA programs, compiled with `trace mpicc`, run under mpiexec.mpich with 2-3 ranks,
checked for rma-race findings with the exact lines of both accesses.

One program per producible ✗ cell of seed 001 Table 1 with its correct counterpart, Fig. 4 a-c,
and each feature past the paper (flush/flush_local, lock/unlock, PSCW, Rput/Rget, accumulate
atomicity, barriers and messages inside a passive epoch) with a racy and a safe variant.
"""

from __future__ import annotations

import pytest
from mpi_programs import all_programs
from quiver.formats import read_log
from quiver.replay.registry import CheckOptions
from quiver.replay.report.findings import FindingKind
from quiver.replay.rma.check import check_rma

pytestmark = [pytest.mark.mpi, pytest.mark.slow]

PROGRAMS = [p for p in all_programs() if p.name not in ("exit_status",)]


def findings(rec, baseline=False):
    key = ("findings", baseline)
    if key not in rec.cache:
        rec.cache[key] = check_rma(read_log(rec.log), CheckOptions(baseline=baseline))
    return rec.cache[key]


@pytest.mark.parametrize("name", [p.name for p in PROGRAMS])
def test_program_races_exactly(mpi_record, name):
    rec = mpi_record(name)
    p = rec.program
    if name != "crash_rank":
        assert rec.proc.returncode == 0, rec.proc.stderr[-2000:]
    fs = findings(rec)
    got = sorted((f.access.line, f.related[0].site.line) for f in fs)
    assert got == p.expected, [f.message for f in fs]
    for f in fs:
        assert f.kind is FindingKind.RMA_RACE
        assert f.access.file.endswith(f"{name}.c") and f.related[0].site.file.endswith(f"{name}.c")
        assert f.related[0].role == "other-access"
        assert f.access.side == "rank"
        assert set(f.details["ranks"]) == {f.access.rank, f.related[0].site.rank}
        assert f.details["operations"] and f.fix


def test_fig4a_finding_in_detail(mpi_record):
    f, = findings(mpi_record("oput_store_race"))
    assert f.access.rank == 0 and f.related[0].site.rank == 0
    assert f.details["operations"] == ["store", "MPI_Put:origin-read"]
    assert f.variable == "local buffer of rank 0"
    assert f.fix == ("complete the MPI_Put at line 12 before reusing its buffer: add MPI_Win_flush_local(1, win) "
                     "before line 13")


def test_window_column_is_one_strided_access_run(mpi_record):
    """The MPI tracer coalesces like the OpenMP tracer (tracer/native/qv_coalesce.inc): the 32 loads
    of one window column, 128 bytes apart, are one strided ACCESS row, not one row per element."""
    rec = mpi_record("column_race")
    log = read_log(rec.log)
    access = (log.col("kind") == 50) & (log.col("rank") == 1)
    rows = [(int(s), int(st), int(b), int(o)) for s, st, b, o in
            zip(log.col("size")[access], log.col("addr2")[access], log.col("aux2")[access], log.col("op")[access])]
    assert rows == [(4, 128, 32, 0)]
    f, = findings(rec)
    assert f.details["byte_range"] == [652, 656] and f.access.line == rec.program.lines["B"]


def test_fig4c_names_window_bytes_and_ranks(mpi_record):
    f, = findings(mpi_record("fig4c_race"))
    assert f.details["ranks"] == [0, 2] and f.details["memory_rank"] == 1
    assert f.details["window"] == 0 and f.details["byte_range"] == [0, 4] and f.details["displacement"] == 0
    assert f.details["operations"] == ["MPI_Put:target-write", "MPI_Put:target-write"]
    assert "MPI_LOCK_EXCLUSIVE" in f.fix


def test_flush_local_fix_names_the_missing_call(mpi_record):
    f, = findings(mpi_record("flush_msg_race"))
    assert f.access.rank == 1 and f.related[0].site.rank == 0
    assert "MPI_Win_flush(1, win)" in f.fix and "before line 17" in f.fix


def test_subcommunicator_window_ranks_are_world_ranks(mpi_record):
    rec = mpi_record("subcomm_race")
    f, = findings(rec)
    assert f.details["memory_rank"] == 2 and f.details["ranks"] == [0, 2]
    log = read_log(rec.log)
    import numpy as np
    kind, ids, ranks = log.col("kind"), log.col("id"), log.col("rank")
    created = sorted({(int(r), int(i)) for k, i, r in zip(kind, ids, ranks) if k == 60})
    assert created == [(0, 0), (0, 1), (1, 1), (2, 0), (2, 1)]
    assert np.all(log.col("id2")[kind == 64] == 2)


def test_crashed_rank_keeps_the_other_ranks_events(mpi_record):
    rec = mpi_record("crash_rank")
    assert rec.proc.returncode != 0
    log = read_log(rec.log)
    assert log.truncated
    assert sorted(set(log.col("rank").tolist())) == [0, 1]


def test_output_and_exit_status_pass_through(mpi_record):
    rec = mpi_record("exit_status", "xyz")
    assert rec.proc.returncode == 3
    assert "hello from rank 0 of argv xyz" in rec.proc.stdout
    assert "hello from rank 1 of argv xyz" in rec.proc.stdout
    assert read_log(rec.log).run["ranks"] == 2


@pytest.mark.parametrize("name", ["oget_oput_safe", "fig4c_safe", "flush_barrier_safe", "flush_msg_safe",
                                  "acc_safe"])
def test_baseline_reports_what_the_extended_analysis_removes(mpi_record, name):
    rec = mpi_record(name)
    assert findings(rec) == []
    base = findings(rec, baseline=True)
    assert base and all(f.details["analysis"].startswith("baseline") for f in base)


def test_baseline_misses_what_the_extended_analysis_adds(mpi_record):
    rec = mpi_record("pscw_race")
    assert findings(rec, baseline=True) == []
    assert len(findings(rec)) == 1


def test_report_is_deterministic(mpi_record):
    rec = mpi_record("every_race")
    a = [f.to_dict() for f in check_rma(read_log(rec.log))]
    b = [f.to_dict() for f in check_rma(read_log(rec.log))]
    assert a == b and len(a) == 2


def analyze_json(log, *extra):
    import json
    import subprocess
    import sys
    from pathlib import Path

    trace = str(Path(sys.executable).with_name("trace"))
    proc = subprocess.run([trace, "analyze", "--check", "rma", "--format", "json", *extra, str(log)],
                          capture_output=True, text=True, check=False)
    return proc.returncode, json.loads(proc.stdout) if proc.stdout.strip() else None, proc.stderr


def test_trace_analyze_json_reports_every_race(mpi_record):
    rec = mpi_record("every_race")
    code, report, err = analyze_json(rec.log)
    assert code == 1, err
    p = rec.program
    got = sorted((f["access"]["line"], f["related"][0]["line"]) for f in report["findings"])
    assert got == p.expected
    for f in report["findings"]:
        assert f["kind"] == "rma-race" and f["related"][0]["role"] == "other-access"
        assert f["details"]["ranks"] and f["fix"]


def test_trace_analyze_clean_program_exits_0(mpi_record):
    code, report, err = analyze_json(mpi_record("flush_barrier_safe").log)
    assert code == 0, err
    assert report["findings"] == []


def test_trace_analyze_baseline_flag(mpi_record):
    code, report, err = analyze_json(mpi_record("flush_barrier_safe").log, "--baseline")
    assert code == 1, err
    assert {f["details"]["analysis"] for f in report["findings"]} == {"baseline (seed 001 epochs)"}


def test_hybrid_finding_names_threads_and_the_openmp_fix(mpi_record):
    store, get = sorted(findings(mpi_record("thr_barrier")), key=lambda f: f.access.line)
    line = next(p for p in PROGRAMS if p.name == "thr_barrier").lines
    assert (store.access.rank, store.access.thread, store.related[0].site.thread) == (0, 1, 0)
    assert store.details["threads"] == [1, 0]
    assert store.fix.startswith("threads 0 and 1 of rank 0 are not ordered: complete the MPI_Put at line "
                                f"{line['A']} with MPI_Win_flush_local(1, win) on thread 0, then order the store at line "
                                f"{line['B']} on thread 1")
    assert "on rank 1 the store runs on thread 1" in get.fix and get.details["memory_rank"] == 1


def test_hybrid_task_race_gets_a_task_fix(mpi_record):
    """A task's MPI_Put races with its creator's store: the fix orders tasks (depend, taskwait,
    taskgroup), not threads with a barrier, which a task inside `single` cannot use."""
    line = next(p for p in PROGRAMS if p.name == "thr_taskgroup").lines
    [store] = [f for f in findings(mpi_record("thr_taskgroup")) if f.access.line == line["B"]]
    assert store.fix.startswith(f"the tasks of line {line['A']} and line {line['B']} on rank 0 are not ordered: "
                                f"complete the MPI_Put at line {line['A']} with MPI_Win_flush_local(1, win) in its "
                                "task, then order the task of the store")
    assert "taskwait" in store.fix and "barrier" not in store.fix
