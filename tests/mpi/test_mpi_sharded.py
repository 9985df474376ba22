"""Recorded 3-rank MPI-RMA programs analysed shard by shard: the same JSON report alone, with
--workers 2 and with --dask local; `trace record --split` and every command on its directory."""

from __future__ import annotations

import json
import subprocess

import pytest
from mpi_programs import TRACE

pytestmark = [pytest.mark.mpi, pytest.mark.slow]

try:
    import distributed  # noqa: F401
    HAVE_DASK = True
except ImportError:
    HAVE_DASK = False


def trace(*args: str, timeout: int = 600) -> subprocess.CompletedProcess:
    return subprocess.run([TRACE, *args], capture_output=True, text=True, check=False, timeout=timeout)


def races(report: str) -> list[tuple[int, int, int, int]]:
    return sorted((f["access"]["line"], f["access"]["rank"], f["related"][0]["line"], f["related"][0]["rank"])
                  for f in json.loads(report)["findings"])


def test_recorded_log_same_report_alone_workers_and_dask(mpi_record):
    rec = mpi_record("every_race")
    assert rec.proc.returncode == 0, rec.proc.stderr[-2000:]
    args = ["analyze", str(rec.log), "--check", "rma", "--format", "json"]
    alone = trace(*args)
    assert alone.returncode == 1, alone.stderr
    assert sorted((a, b) for a, _ra, b, _rb in races(alone.stdout)) == rec.program.expected
    workers = trace(*args, "--workers", "2")
    assert workers.returncode == 1 and workers.stdout == alone.stdout, workers.stderr
    if not HAVE_DASK:
        pytest.skip("dask[distributed] is not installed: --dask local not tested")
    dask = trace(*args, "--dask", "local", "--workers", "2")
    assert dask.returncode == 1 and dask.stdout == alone.stdout, dask.stderr


@pytest.fixture(scope="module")
def split_run(mpi_binaries, tmp_path_factory):
    d = tmp_path_factory.mktemp("split") / "run.d"
    proc = trace("record", "-n", "3", "--split", "-o", str(d), "--", str(mpi_binaries["every_race"]), timeout=180)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return d


def test_record_split_writes_rank_files_and_manifest(split_run):
    manifest = json.loads((split_run / "manifest.json").read_text())
    assert manifest["format"] == "quiver-split" and manifest["ranks"] == 3
    assert manifest["files"] == ["rank-00000.arrow", "rank-00001.arrow", "rank-00002.arrow"]
    assert manifest["run"]["ranks"] == 3 and manifest["run"]["truncated"] is False
    assert not split_run.with_name("run.d.raw").exists()
    from quiver.formats import read_log
    for r, name in enumerate(manifest["files"]):
        log = read_log(split_run / name)
        assert set(log.col("rank").tolist()) == {r} and log.run["rank"] == r


def test_split_run_analysis_matches_the_program(mpi_record, split_run):
    expected = mpi_record("every_race").program.expected
    alone = trace("analyze", str(split_run), "--check", "rma", "--format", "json")
    assert alone.returncode == 1, alone.stderr
    assert sorted((a, b) for a, _ra, b, _rb in races(alone.stdout)) == expected
    workers = trace("analyze", str(split_run), "--check", "rma", "--format", "json", "--workers", "2")
    assert workers.stdout == alone.stdout


def test_split_run_info_explain_export(split_run, tmp_path):
    info = trace("info", "--json", str(split_run))
    assert info.returncode == 0, info.stderr
    s = json.loads(info.stdout)
    assert s["ranks"] == 3 and s["rank_files"] == 3 and s["threads"] == 3
    assert s["counts"]["rma"] > 0 and s["events"] == sum(s["counts"].values())
    text = trace("info", str(split_run)).stdout
    assert text.splitlines()[0] == f"log:            {split_run} (split: 3 rank files)"
    assert trace("explain", str(split_run)).returncode == 0
    out = tmp_path / "t.json"
    exp = trace("export", str(split_run), "--to", "perfetto", "--check", "rma", "-o", str(out))
    assert exp.returncode == 0, exp.stderr
    events = json.loads(out.read_text())["traceEvents"]
    markers = [e for e in events if str(e.get("name", "")).startswith("rma-race")]
    assert len(markers) == 2


def test_record_split_refuses_a_file(mpi_binaries, tmp_path):
    f = tmp_path / "run.d"
    f.write_text("x")
    proc = trace("record", "-n", "3", "--split", "-o", str(f), "--", str(mpi_binaries["every_race"]))
    assert proc.returncode == 2
    assert proc.stderr.strip() == f"trace: error: {f} exists and is not a directory (a split log is a directory)"


@pytest.mark.parametrize("name", ["thr_serialized", "thr_sync"])
def test_hybrid_logs_same_report_shard_by_shard(mpi_record, name):
    """Every shard gets the OpenMP events (tasks and their `depend` items too) the thread clocks need."""
    rec = mpi_record(name)
    assert rec.proc.returncode == 0, rec.proc.stderr[-2000:]
    args = ["analyze", str(rec.log), "--check", "rma", "--format", "json"]
    alone = trace(*args)
    assert sorted((a, b) for a, _ra, b, _rb in races(alone.stdout)) == rec.program.expected
    workers = trace(*args, "--workers", "2")
    assert workers.returncode == 1 and workers.stdout == alone.stdout, workers.stderr
