"""Every MPI and hybrid MPI + OpenMP test program gives byte-identical reports with its checkers' kernels
interpreted (QUIVER_JIT=never, what small logs get) and compiled by numba (QUIVER_JIT=always).

Why: formats/jit.py runs one source of each kernel both ways; numba and Python disagree on a few
things (integer widths and wrap-around, typed containers), and a kernel that relied on one of them
would make a report depend on the size of its log.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from mpi_programs import all_programs
from quiver.formats.jit import SMALL_LOG

pytestmark = [pytest.mark.mpi, pytest.mark.slow]


@pytest.mark.parametrize("name", [p.name for p in all_programs()])
def test_reports_are_the_same_interpreted_and_compiled(mpi_record, analyze_jit, name):
    rec = mpi_record(name)
    assert rec.log.exists(), rec.proc.stderr[-2000:]
    interpreted = analyze_jit(rec.log, "never")
    compiled = analyze_jit(rec.log, "always")
    assert interpreted.text == compiled.text
    assert interpreted.json == compiled.json
    assert interpreted.kernels == compiled.kernels
    assert "quiver.replay.rma.kernels.race_pairs" in compiled.kernels or name in ("exit_status", "crash_rank")
    assert interpreted.compiled == {False} and compiled.compiled == {True}


PROBE = ("import json, sys; from quiver import cli; code = cli.run(['analyze', '-f', 'json', sys.argv[1]]); "
         "print(json.dumps({'code': code, 'numba': 'numba' in sys.modules, 'numpy.ma': 'numpy.ma' in sys.modules, "
         "'tasks': 'quiver.replay.nowait.tasks' in sys.modules}), "
         "file=sys.stderr)")


def _analyze_in_a_fresh_process(log, mode: str) -> tuple[dict, dict]:
    env = {**os.environ, "QUIVER_JIT": mode}
    out = subprocess.run([sys.executable, "-c", PROBE, str(log)], capture_output=True, text=True, check=True, env=env)
    return json.loads(out.stdout), json.loads(out.stderr.strip().splitlines()[-1])


@pytest.mark.parametrize("name", ["fig4b_race", "thr_sync"])
def test_a_small_log_is_analysed_without_importing_numba(mpi_record, name):
    """`trace analyze` of a log of a few hundred events: the RMA checker's kernels (and, for a hybrid rank,
    the thread-order ones) run interpreted; numba's import alone would cost more than the analysis. Nor
    numpy.ma (~8 ms), which numpy 2's plain np.unique imports on its first call (formats/sets.py). Nor, for
    a plain MPI rank, the nowait task model's module (~2 ms): only a rank with OpenMP tasks needs it."""
    rec = mpi_record(name)
    report, probe = _analyze_in_a_fresh_process(rec.log, "auto")
    assert probe == {"code": 1, "numba": False, "numpy.ma": False, "tasks": name == "thr_sync"}
    assert report["log"]["events"] <= SMALL_LOG
    assert sorted((f["access"]["line"], f["related"][0]["line"]) for f in report["findings"]) == rec.program.expected
    compiled, probe = _analyze_in_a_fresh_process(rec.log, "always")
    assert (probe["code"], probe["numba"]) == (1, True)
    assert compiled["findings"] == report["findings"]
