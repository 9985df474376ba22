"""Every MPI and hybrid MPI + OpenMP test program gives byte-identical reports with its checkers' kernels
interpreted (QUIVER_JIT=never, what small logs get) and compiled by numba (QUIVER_JIT=always).

Why: formats/jit.py runs one source of each kernel both ways; numba and Python disagree on a few
things (integer widths and wrap-around, typed containers), and a kernel that relied on one of them
would make a report depend on the size of its log.
"""

from __future__ import annotations

import pytest
from mpi_programs import all_programs

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
