"""OpenMP test programs (nowait tasks, host threads, wasted transfers) give byte-identical reports with
their checkers' kernels interpreted (QUIVER_JIT=never, what small logs get) and compiled by numba
(QUIVER_JIT=always); tests/mpi/test_jit_modes.py does the same for every MPI program."""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.clang, pytest.mark.slow]

# (program, arguments, a kernel its analysis must call): the race, schedule, thread-order and
# transfer kernels all get their turn
PROGRAMS = [
    ("nowait/depend_chain.c", [], "quiver.replay.nowait.races._sweep"),
    ("nowait/many_kernels.c", [], "quiver.replay.nowait.schedule_model._footprint"),
    ("nowait/seed000_fig2.c", [], "quiver.replay.nowait.happens_before._vector_clocks"),
    ("nowait/taskgroup.c", [], "quiver.replay.nowait.happens_before._taskgroups"),
    ("threads/ok_tasks_depend.c", [], "quiver.replay.threads.omp_order.dependence_edges"),
    ("threads/ok_sections_critical.c", [], "quiver.replay.nowait.tasks._assign_contexts"),
    ("transfers/waste.c", ["loop-maps"], "quiver.replay.transfers.redundant._decode"),
]


@pytest.mark.parametrize(("src", "args", "kernel"), PROGRAMS, ids=[p[0] for p in PROGRAMS])
def test_reports_are_the_same_interpreted_and_compiled(record_c, analyze_jit, src, args, kernel):
    run = record_c(src, args=args)
    assert run.returncode == 0, run.stderr
    interpreted = analyze_jit(run.log, "never")
    compiled = analyze_jit(run.log, "always")
    assert interpreted.text == compiled.text
    assert interpreted.json == compiled.json
    assert interpreted.kernels == compiled.kernels
    assert kernel in compiled.kernels, sorted(compiled.kernels)
    assert interpreted.compiled == {False} and compiled.compiled == {True}
