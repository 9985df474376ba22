"""A 3-rank MPI run when a rank dies or `trace record` is killed (issue 17): `trace record -n` never
hangs, no rank, proxy or mpiexec outlives it, and the other ranks' recorded events (rank 0's race)
are in the log."""

from __future__ import annotations

import json
import signal
import subprocess
from pathlib import Path

import pytest
from quiver.formats import read_log
from run_guard import TRACE, kill_survivors, marker_line, read_line, start_record, survivors

pytestmark = [pytest.mark.mpi, pytest.mark.slow]

SOURCE = Path(__file__).resolve().parents[1] / "programs" / "crash" / "mpi_hang.c"


@pytest.fixture(scope="module")
def mpi_hang(tmp_path_factory) -> Path:
    exe = tmp_path_factory.mktemp("mpi_hang") / "mpi_hang"
    r = subprocess.run([TRACE, "mpicc", "-g", str(SOURCE), "-o", str(exe)], check=False, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return exe


def _race(log: Path) -> list[tuple[int, int, list[int]]]:
    r = subprocess.run([TRACE, "analyze", "-f", "json", "--check", "rma", str(log)], check=False, capture_output=True, text=True)
    assert r.returncode == 1, r.stderr
    return [(f["access"]["line"], f["related"][0]["line"], f["details"]["ranks"])
            for f in json.loads(r.stdout)["findings"]]


EXPECTED = [(marker_line(SOURCE, "B"), marker_line(SOURCE, "A"), [0])]


@pytest.mark.parametrize(("how", "code", "reason"), [
    ("kill", 9, "the program ended without flushing the tracer (exit status 9)"),
    ("abort", 7, "MPI_Abort with error code 7"),
])
def test_a_dying_rank_loses_no_other_ranks_events(mpi_hang, tmp_path, how, code, reason):
    log = tmp_path / "run.arrow"
    proc, tag = start_record(["-n", "3", "-o", str(log), "--", str(mpi_hang), how], tmp_path)
    try:
        proc.communicate(timeout=300)  # a hang guard: trace record -n must end by itself
        assert survivors(tag) == []
    finally:
        kill_survivors(tag)
    assert proc.returncode == code
    run = read_log(log).run
    assert run["truncated"] is True and run["truncated_reason"] == reason
    assert sorted(set(read_log(log).col("rank").tolist())) == [0, 1, 2]
    assert _race(log) == EXPECTED


def test_killing_trace_record_kills_mpiexec_and_every_rank(mpi_hang, tmp_path):
    log = tmp_path / "run.arrow"
    proc, tag = start_record(["-n", "3", "-o", str(log), "--", str(mpi_hang), "hang"], tmp_path)
    raw = tmp_path / "run.arrow.raw"
    try:
        assert read_line(proc) == "waiting\n"  # every rank has recorded its part and waits
        proc.send_signal(signal.SIGKILL)
        proc.wait(120)
        assert survivors(tag) == []
    finally:
        kill_survivors(tag)
    r = subprocess.run([TRACE, "recover", str(raw)], check=False, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    run = read_log(log).run
    assert run["truncated_reason"] == "launcher killed" and run["ranks"] == 3
    assert _race(log) == EXPECTED



def test_timeout_ends_every_rank(mpi_hang, tmp_path):
    log = tmp_path / "run.arrow"
    proc, tag = start_record(["--timeout", "3", "-n", "3", "-o", str(log), "--", str(mpi_hang), "hang"], tmp_path)
    try:
        _, err = proc.communicate(timeout=300)
        assert survivors(tag) == []
    finally:
        kill_survivors(tag)
    assert proc.returncode == 124
    assert "trace: time limit reached (3 s): program ended; log is truncated" in err.decode().splitlines()
    run = read_log(log).run
    assert run["truncated_reason"] == "time limit" and run["ranks"] == 3
    assert _race(log) == EXPECTED
