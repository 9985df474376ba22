"""`trace info` from the stats finalize stores in the run metadata: the same output as the scan of
every event (`--verify`, and the fallback for logs without stats), on real recordings: OpenMP host
threads and offloading, MPI with two ranks (merged and `--split`), and a log `trace recover` wrote."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from quiver.formats import open_logs, read_log
from quiver.formats.stats import STATS_KEY

pytestmark = pytest.mark.clang
PROGRAMS = Path(__file__).resolve().parents[1] / "programs"
TRACE = str(Path(sys.executable).with_name("trace"))
HAVE_MPI = shutil.which("mpicc.mpich") is not None and shutil.which("mpiexec.mpich") is not None


def trace_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([TRACE, *args], capture_output=True, text=True, check=False)


def info(log: Path, *args: str) -> subprocess.CompletedProcess:
    return trace_cli("info", str(log), *args)


def same_from_metadata_and_scan(log: Path) -> dict:
    """Both outputs (text and JSON) of `trace info` and of `trace info --verify`, compared; the JSON."""
    for logfile in open_logs(log).files:      # every file carries its stats: nothing was scanned
        assert STATS_KEY in open_logs(logfile).open(0).run
    for extra in ((), ("--json",)):
        fast, scan = info(log, *extra), info(log, "--verify", *extra)
        assert fast.returncode == scan.returncode == 0, fast.stderr + scan.stderr
        assert fast.stdout == scan.stdout
    return json.loads(info(log, "--json").stdout)


def test_openmp_recording(record_c):
    run = record_c("omp/finalize_mix.c")
    assert run.returncode == 0, run.stderr
    s = same_from_metadata_and_scan(run.log)
    assert s["threads"] >= 3 and s["devices"] == [0] and s["counts"]["accesses"] > 0 and s["time_span_ns"] > 0


def test_recovered_log(record_c, tmp_path):
    run = record_c("omp/finalize_mix.c", env={"QUIVER_KEEP_RAW": "1"})
    raw = run.log.with_name(run.log.name + ".raw")
    r = trace_cli("recover", str(raw), "-o", str(tmp_path / "recovered.arrow"))
    assert r.returncode == 0, r.stderr
    s = same_from_metadata_and_scan(tmp_path / "recovered.arrow")
    assert s["truncated"] and s["events"] == json.loads(info(run.log, "--json").stdout)["events"]


def test_damaged_log_is_described_as_far_as_readable_with_verify(record_c, tmp_path):
    """The stored stats describe the log as written; `--verify` reads every batch and describes what is
    readable, with one DAMAGED line, as the scan always did."""
    run = record_c("omp/finalize_mix.c")
    whole = json.loads(info(run.log, "--json").stdout)
    data = bytearray(run.log.read_bytes())
    times = read_log(run.log).col("time_ns")       # a small run's log is uncompressed (formats/ipc_file.py)
    data[data.index(times[1:5].tobytes()) + 1] ^= 0xFF    # in the (only) record batch
    damaged = tmp_path / "damaged.arrow"
    damaged.write_bytes(bytes(data))
    fast = info(damaged, "--json")
    assert fast.returncode == 0 and json.loads(fast.stdout)["events"] == whole["events"]
    checked = info(damaged, "--verify", "--json")
    assert checked.returncode == 2 and checked.stderr.startswith("trace: error: ")
    s = json.loads(checked.stdout)
    assert len(s["damaged"]) == 1 and "damaged log (batch 0" in s["damaged"][0] and s["events"] == 0


MPI_PROGRAM = PROGRAMS / "mpi" / "rput_safe.c"


@pytest.mark.skipif(not HAVE_MPI, reason="needs mpich")
@pytest.mark.parametrize("split", [False, True], ids=["merged", "split"])
def test_mpi_two_ranks(tmp_path, split):
    exe = tmp_path / "rput_safe"
    assert trace_cli("mpicc", "-g", str(MPI_PROGRAM), "-o", str(exe)).returncode == 0
    log = tmp_path / ("run.d" if split else "run.arrow")
    r = subprocess.run([TRACE, "record", "-n", "2", *(["--split"] if split else []), "-o", str(log), "--", str(exe)],
                       capture_output=True, text=True, timeout=120, check=False, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    s = same_from_metadata_and_scan(log)
    assert s["ranks"] == 2 and s["counts"]["rma"] > 0 and ("rank_files" in s) == split
