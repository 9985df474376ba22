"""Race checker on synthetic logs shaped like the OpenMP tracer's (LogBuilder via nowait_logs)."""

from __future__ import annotations

import numpy as np
import pytest
from nowait_logs import Program, fig2
from quiver.formats import LogBuilder, RmaOp, read_log
from quiver.replay.nowait.happens_before import build_happens_before
from quiver.replay.nowait.races import check_races, load_columns, race_findings
from quiver.replay.registry import CheckOptions
from quiver.replay.report.findings import FindingKind


def races(p: Program, tmp_path):
    log = read_log(p.write_log(tmp_path / "run.arrow"))
    return check_races(log, CheckOptions())


def pairs(findings):
    """(variable, access line, other line, copy side) of each race."""
    return sorted((f.variable, f.access.line, f.related[0].site.line, f.details["copy"]) for f in findings)


@pytest.mark.parametrize("when", ["launch", "before-end"])
def test_fig2_kernel_races_with_the_copy_back_at_the_end_of_target_data(tmp_path, when):
    found = races(fig2(when), tmp_path)
    assert [f.kind for f in found] == [FindingKind.DATA_RACE]
    f = found[0]
    assert pairs(found) == [("a", 7, 11, "device")]
    assert f.access.side == "host" or f.access.side == "device"
    assert f.related[0].role == "other-access"
    assert "kernel of `target nowait` (line 9)" in f.related[0].message
    assert "copy from the device at the end of `target data` (line 7)" in f.message
    assert "taskwait" in f.fix and "line 7" in f.fix
    assert f.bytes == 8 and f.occurrences == 2   # the copy back reads the CV, the release writes it


def test_read_before_taskwait(tmp_path):
    p = Program("rbt.c")
    a = p.var("a", 0x2000, 100)
    p.write(a, 3)
    t = p.nowait_target(5, [(a, "tofrom")], [(a, "r", 7), (a, "w", 7)])
    p.read(a, 9, lo=0, n=1)       # printf("%d", a[0]) before the taskwait
    t.run()
    p.taskwait(10)
    p.read(a, 11)
    found = races(p, tmp_path)
    assert pairs(found) == [("a", 9, 5, "host")]
    f = found[0]
    assert "copy from the device by `target nowait` (line 5) writing the host copy" in f.related[0].message
    assert f.message.startswith("data race on the host copy of `a`: the host read at rbt.c:9")
    assert f.fix.startswith("add `#pragma omp taskwait` before line 9")
    assert f.bytes == 4


def test_update_before_kernel_ends(tmp_path):
    p = Program("upd.c")
    a = p.var("a", 0x3000, 64)
    p.write(a, 2)
    p.target_data(4, [(a, "to")])
    t = p.nowait_target(6, [(a, "tofrom")], [(a, "w", 8)])
    t.run()                        # recorded: the kernel happened to finish first
    p.update(11, from_=[a])
    p.taskwait(12)
    p.read(a, 13)
    p.end_target_data()
    found = races(p, tmp_path)
    assert pairs(found) == [("a", 11, 8, "device")]
    f = found[0]
    assert "copy from the device by `target update` (line 11)" in f.message
    assert "line 11" in f.fix and "depend(out: a)" in f.fix and "line 6" in f.fix


def test_depend_chain_orders_everything(tmp_path):
    p = Program("chain.c")
    a = p.var("a", 0x4000, 32)
    b = p.var("b", 0x5000, 32)
    p.write(a, 2)
    p.write(b, 2)
    p.target_data(3, [(a, "to"), (b, "alloc")])
    t1 = p.nowait_target(5, [(a, "tofrom")], [(a, "w", 6)], depend=[("out", a)])
    t2 = p.nowait_target(8, [(a, "tofrom"), (b, "tofrom")], [(a, "r", 9), (b, "w", 9)],
                         depend=[("in", a), ("out", b)])
    t3 = p.nowait_update(11, from_=[b], depend=[("in", b)])
    t1.run(thread=1)
    t2.run(thread=2)
    t3.run(thread=1)
    p.taskwait(12)
    p.read(b, 13)
    p.end_target_data()
    assert races(p, tmp_path) == []


def test_missing_depend_between_two_kernels(tmp_path):
    p = Program("tt.c")
    a = p.var("a", 0x4000, 32)
    p.target_data(3, [(a, "alloc")])
    t1 = p.nowait_target(5, [(a, "tofrom")], [(a, "w", 6)], depend=[("out", a)])
    t2 = p.nowait_target(8, [(a, "tofrom")], [(a, "r", 9)])          # forgot depend(in: a)
    t1.run(thread=1)
    t2.run(thread=2)
    p.taskwait(12)
    p.end_target_data()
    found = races(p, tmp_path)
    assert pairs(found) == [("a", 9, 6, "device")]
    assert "depend(out: a)" in found[0].fix and "depend(in: a)" in found[0].fix
    assert "line 5" in found[0].fix and "line 8" in found[0].fix


def test_taskgroup_orders_tasks_before_its_end(tmp_path):
    p = Program("tg.c")
    a = p.var("a", 0x4000, 8)
    p.taskgroup_begin(3)
    t = p.nowait_target(4, [(a, "tofrom")], [(a, "w", 5)])
    t.run()
    p.taskgroup_end(6)
    p.read(a, 7)
    assert races(p, tmp_path) == []


def test_taskwait_only_waits_for_tasks_created_before_it(tmp_path):
    p = Program("tw.c")
    a = p.var("a", 0x4000, 8)
    b = p.var("b", 0x6000, 8)
    t1 = p.nowait_target(4, [(a, "tofrom")], [(a, "w", 5)])
    t1.run()
    p.taskwait(6)
    t2 = p.nowait_target(7, [(b, "tofrom")], [(b, "w", 8)])
    p.read(a, 9)                     # ordered by the taskwait at line 6
    p.read(b, 10)                    # not ordered: t2 launched after the taskwait
    t2.run()
    p.taskwait(11)
    assert pairs(races(p, tmp_path)) == [("b", 10, 7, "host")]


def test_sixteen_independent_kernels_are_race_free(tmp_path):
    p = Program("many.c")
    vs = [p.var(f"x{i}", 0x10000 + i * 0x1000, 256) for i in range(16)]
    launched = [p.nowait_target(10 + i, [(v, "tofrom")], [(v, "r", 30), (v, "w", 30)]) for i, v in enumerate(vs)]
    for i, t in enumerate(launched):
        t.run(thread=1 + i % 4)
    p.taskwait(40)
    for v in vs:
        p.read(v, 41)
    assert races(p, tmp_path) == []


def test_chains_are_reused_across_taskwaits(tmp_path):
    """1000 nowait kernels in rounds of 8 with a taskwait keep the clocks narrow."""
    p = Program("loop.c")
    vs = [p.var(f"x{i}", 0x10000 + i * 0x1000, 16) for i in range(8)]
    for _round in range(125):
        ts = [p.nowait_target(10, [(v, "tofrom")], [(v, "w", 11)]) for v in vs]
        for t in ts:
            t.run(thread=1)
        p.taskwait(12)
        for v in vs:
            p.read(v, 13)
    log = read_log(p.write_log(tmp_path / "loop.arrow"))
    hb = build_happens_before(log, load_columns(log))
    assert hb.vc.shape[1] <= 10
    assert check_races(log, CheckOptions()) == []


def test_happens_before_is_a_partial_order_on_segments(tmp_path):
    log = read_log(fig2("before-end").write_log(tmp_path / "f.arrow"))
    hb = build_happens_before(log, load_columns(log))
    n = hb.n_segments
    rel = np.array([[hb.before(a, b) for b in range(n)] for a in range(n)])
    assert rel.diagonal().all()
    assert not (rel & rel.T & ~np.eye(n, dtype=bool)).any()       # antisymmetric
    assert ((rel.astype(int) @ rel.astype(int) > 0) <= rel).all()  # transitive


def test_report_is_deterministic(tmp_path):
    p = fig2("before-end")
    log = read_log(p.write_log(tmp_path / "d.arrow"))
    one = [f.to_dict() for f in check_races(log, CheckOptions())]
    two = [f.to_dict() for f in check_races(read_log(tmp_path / "d.arrow"), CheckOptions())]
    assert one == two


def test_no_nowait_no_race(tmp_path):
    p = Program("sync.c")
    a = p.var("a", 0x3000, 4)
    p.target(3, [(a, "to")], [(a, "w", 4)])
    p.read(a, 5)
    assert races(p, tmp_path) == []
    empty = LogBuilder(program="empty").write(tmp_path / "empty.arrow")
    assert check_races(read_log(empty), CheckOptions()) == []


def parallel_worker(fork: bool, join: str) -> Program:
    """The initial thread writes `a`, then a worker of a parallel region launches a nowait update of it."""
    p = Program("par.c")
    a = p.var("a", 0x4000, 8)
    p.target_data(3, [(a, "alloc")])
    p.write(a, 4)                                   # before the parallel region
    if fork:
        p.fork(5, region=1, thread=0)
        p.implicit_task(1, thread=0)
        p.implicit_task(1, thread=2)
    t = p.nowait_update(8, to=[a], thread=2)        # launched by the worker
    t.run(thread=1)
    p.taskwait(9, thread=2)
    if join == "arrive-depart":
        p.barrier(10, 1, thread=0, departure=False)
        p.barrier(10, 1, thread=2, departure=False)
        p.barrier(10, 1, thread=0, departure=True)
        p.barrier(10, 1, thread=2, departure=True)
    else:
        p.barrier(10, 1, thread=2)
        p.barrier(10, 1, thread=0)
    p.write(a, 11)                                  # after the region
    p.end_target_data()
    return p


@pytest.mark.parametrize("join", ["arrive-depart", "one-row"])
def test_fork_and_join_of_a_parallel_region_order_a_workers_task(tmp_path, join):
    assert races(parallel_worker(fork=True, join=join), tmp_path) == []


def test_without_the_fork_a_workers_task_is_unordered_with_the_initial_thread(tmp_path):
    found = pairs(races(parallel_worker(fork=False, join="arrive-depart"), tmp_path))
    assert found == [("a", 8, 3, "device"), ("a", 8, 4, "host")]    # the allocation at 3, the write at 4


def test_barrier_departure_waits_for_every_arrival(tmp_path):
    """Thread 2 writes `a` in a task it launched; thread 0 reads after the barrier: ordered."""
    p = Program("bar.c")
    a = p.var("a", 0x4000, 8)
    p.target_data(3, [(a, "to")])
    p.fork(4, region=1)
    p.implicit_task(1, thread=0)
    p.implicit_task(1, thread=2)
    p.barrier(10, 1, thread=0, departure=False)      # thread 0 arrives early
    t = p.nowait_update(6, from_=[a], thread=2)
    t.run(thread=1)
    p.barrier(10, 1, thread=2, departure=False)      # the barrier waits for the task
    p.barrier(10, 1, thread=0, departure=True)
    p.read(a, 11)
    p.barrier(10, 1, thread=2, departure=True)
    p.end_target_data()
    assert races(p, tmp_path) == []


def test_logs_without_openmp_constructs(tmp_path):
    """MPI-only logs: no constructs, no tasks; the analysis itself copes, not only the early exit."""
    b = LogBuilder(program="mpi", ranks=2)
    for r in range(2):
        b.win_create(r, 0, 0x1000, 64)
    b.rma(0, RmaOp.PUT, 0, 1, 0, 8)
    b.access(0x1000, 8, write=True, rank=1)
    log = read_log(b.write(tmp_path / "mpi.arrow"))
    cols = load_columns(log)
    hb = build_happens_before(log, cols)
    assert hb.tasks.n_tasks == 0 and not hb.tasks.target_ctx.any()
    assert race_findings(log, cols, hb) == []
    assert check_races(log, CheckOptions()) == []


@pytest.mark.parametrize(("stride", "expect"), [(2, []), (3, [("a", 12, 10, "device")])])
def test_strided_kernel_read_races_only_where_its_blocks_are(tmp_path, stride, expect):
    """A strided device read (elements 0, s, 2s, ...) of a kernel launched while a nowait kernel
    writes element 3: a race only when one of its blocks holds element 3, never for the gaps."""
    p = Program("strided.c")
    a = p.var("a", 0x4000, 64)
    p.target_data(5, [(a, "tofrom")])
    t = p.nowait_target(9, [(a, "tofrom")], [(a, "w", 10, 3, 1)])
    p.target(12, [(a, "tofrom")], [(a, "r", 12, 0, 1, stride, 8)])
    t.run()
    p.taskwait(14)
    p.end_target_data()
    assert pairs(races(p, tmp_path)) == expect
