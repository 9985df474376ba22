"""The MPI-RMA checker on hybrid ranks (LogBuilder logs): threads of one rank are ordered only by
OpenMP synchronisation (quiver.replay.threads.omp_order), completion on any thread, accumulate datatypes."""

from __future__ import annotations

import numpy as np
from quiver.formats import DependKind, EventKind, LogBuilder, OmpMutexKind, RmaOp, SyncKind, read_log
from quiver.formats import MpiSyncKind as S
from quiver.replay.rma.check import check_rma
from quiver.replay.threads.omp_order import thread_edges

BASE = {0: 0x10000, 1: 0x20000, 2: 0x30000}
BUF = 0x90000
SUM = 1
INT, FLOAT = 7, 13      # basic-datatype codes of the PMPI tracer (FORMAT.md, RMA)


def world(n=2):
    b = LogBuilder(ranks=n)
    for r in range(n):
        b.win_create(r, 0, BASE[r], 64, disp_unit=4)
        b.mpi_sync(r, S.LOCK_ALL, 0)
    return b


def run(b, tmp_path):
    p = tmp_path / "log.arrow"
    b.write(p)
    return check_rma(read_log(p), None)


def lines(fs):
    return sorted((f.access.line, f.related[0].site.line) for f in fs)


def barrier(b, region=1, threads=(0, 1), rank=0):
    for t in threads:
        b.sync(SyncKind.BARRIER, thread=t, rank=rank, id=region, aux2=0)
    for t in threads:
        b.sync(SyncKind.BARRIER, thread=t, rank=rank, id=region, aux2=1)


def fork(b, region=1, threads=(0, 1), rank=0):
    b.sync(SyncKind.PARALLEL_BEGIN, thread=0, rank=rank, id=region)
    for t in threads:
        b.sync(SyncKind.IMPLICIT_TASK_BEGIN, thread=t, rank=rank, id=region)


def put_then_store(flush: bool, order) -> LogBuilder:
    """Thread 0 puts from BUF (and completes it), thread 1 stores into BUF after ``order(b)``."""
    b = world()
    fork(b)
    b.rma(0, RmaOp.PUT, 0, 1, 0, 4, origin_addr=BUF, site=("h.c", 10), thread=0)
    if flush:
        b.mpi_sync(0, S.FLUSH_LOCAL, 0, target=1, site=("h.c", 11), thread=0)
    order(b)
    b.access(BUF, 4, write=True, site=("h.c", 20), thread=1)
    return b


def test_store_on_another_thread_races_without_openmp_sync(tmp_path):
    fs = run(put_then_store(True, lambda b: None), tmp_path)
    assert lines(fs) == [(20, 10)]
    f = fs[0]
    assert (f.access.rank, f.access.thread, f.related[0].site.thread) == (0, 1, 0)
    assert f.details["threads"] == [1, 0]
    assert "rank 0 thread 1" in f.message and "rank 0 thread 0" in f.message
    assert "#pragma omp barrier" in f.fix and "MPI_Win_flush_local(1, win) on thread 0" in f.fix


def test_barrier_after_completion_orders_the_store(tmp_path):
    assert run(put_then_store(True, barrier), tmp_path) == []


def test_barrier_without_completion_is_not_enough(tmp_path):
    assert lines(run(put_then_store(False, barrier), tmp_path)) == [(20, 10)]


def test_mutex_release_orders_the_next_acquisition(tmp_path):
    def critical(b):
        b.sync(SyncKind.MUTEX_RELEASED, thread=0, id=77, aux2=OmpMutexKind.CRITICAL)
        b.sync(SyncKind.MUTEX_ACQUIRED, thread=1, id=77, aux2=OmpMutexKind.CRITICAL)

    b = world()
    fork(b)
    b.sync(SyncKind.MUTEX_ACQUIRED, thread=0, id=77, aux2=OmpMutexKind.CRITICAL)
    b.rma(0, RmaOp.PUT, 0, 1, 0, 4, origin_addr=BUF, site=("h.c", 10), thread=0)
    b.mpi_sync(0, S.FLUSH_LOCAL, 0, target=1, site=("h.c", 11), thread=0)
    critical(b)
    b.access(BUF, 4, write=True, site=("h.c", 20), thread=1)
    assert run(b, tmp_path) == []
    # another mutex orders nothing
    c = world()
    fork(c)
    c.sync(SyncKind.MUTEX_ACQUIRED, thread=0, id=77, aux2=OmpMutexKind.CRITICAL)
    c.rma(0, RmaOp.PUT, 0, 1, 0, 4, origin_addr=BUF, site=("h.c", 10), thread=0)
    c.mpi_sync(0, S.FLUSH_LOCAL, 0, target=1, site=("h.c", 11), thread=0)
    c.sync(SyncKind.MUTEX_RELEASED, thread=0, id=77, aux2=OmpMutexKind.CRITICAL)
    c.sync(SyncKind.MUTEX_ACQUIRED, thread=1, id=78, aux2=OmpMutexKind.LOCK)
    c.access(BUF, 4, write=True, site=("h.c", 20), thread=1)
    assert lines(run(c, tmp_path)) == [(20, 10)]


def test_completion_on_another_thread_completes_calls_ordered_before_it(tmp_path):
    def flush_on_thread_1(b, second_barrier):
        fork(b)
        b.rma(0, RmaOp.PUT, 0, 1, 0, 4, origin_addr=BUF, site=("h.c", 10), thread=0)
        barrier(b, 1)
        b.mpi_sync(0, S.FLUSH_LOCAL_ALL, 0, site=("h.c", 12), thread=1)
        if second_barrier:
            barrier(b, 1)
        b.access(BUF, 4, write=True, site=("h.c", 20), thread=0)

    b = world()
    flush_on_thread_1(b, True)
    assert run(b, tmp_path) == []
    c = world()
    flush_on_thread_1(c, False)
    assert lines(run(c, tmp_path)) == [(20, 10)]


def test_join_orders_the_team_before_the_encountering_thread(tmp_path):
    b = world()
    fork(b)
    b.rma(0, RmaOp.PUT, 0, 1, 0, 4, origin_addr=BUF, site=("h.c", 10), thread=1)
    b.mpi_sync(0, S.FLUSH_LOCAL, 0, target=1, site=("h.c", 11), thread=1)
    barrier(b, 1)
    b.sync(SyncKind.PARALLEL_END, thread=0, id=1)
    b.access(BUF, 4, write=True, site=("h.c", 20), thread=0)
    assert run(b, tmp_path) == []


def test_task_end_orders_before_taskwait(tmp_path):
    b = world()
    fork(b)
    b.task_create(5, flags=1, thread=0)
    b.task_begin(5, thread=1)
    b.rma(0, RmaOp.PUT, 0, 1, 0, 4, origin_addr=BUF, site=("h.c", 10), thread=1)
    b.mpi_sync(0, S.FLUSH_LOCAL, 0, target=1, site=("h.c", 11), thread=1)
    b.task_end(5, thread=1)
    b.sync(SyncKind.TASKWAIT, thread=0)
    b.access(BUF, 4, write=True, site=("h.c", 20), thread=0)
    assert run(b, tmp_path) == []


def test_thread_edges_fork_and_barrier(tmp_path):
    b = world()
    fork(b)
    barrier(b, 1)
    p = tmp_path / "e.arrow"
    b.write(p)
    log = read_log(p)
    cols = log.columns()
    s, d = thread_edges(cols)
    assert len(s) and np.all(s != d)
    kinds = {(int(cols["op"][i]), int(cols["op"][j])) for i, j in zip(s, d)}
    assert (int(SyncKind.PARALLEL_BEGIN), int(SyncKind.IMPLICIT_TASK_BEGIN)) in kinds
    assert (int(SyncKind.BARRIER), int(SyncKind.BARRIER)) in kinds


def test_accumulates_need_the_same_basic_datatype(tmp_path):
    def two(dt0, dt2, op2=SUM):
        b = world(3)
        b.rma(0, RmaOp.ACCUMULATE, 0, 1, 0, 4, mpi_op=SUM, datatype_size=dt0, site=("a.c", 5))
        b.rma(2, RmaOp.ACCUMULATE, 0, 1, 0, 4, mpi_op=op2, datatype_size=dt2, site=("a.c", 9))
        return b

    assert run(two(INT, INT), tmp_path) == []
    assert lines(run(two(INT, FLOAT), tmp_path)) == [(9, 5)]
    assert lines(run(two(INT, INT, op2=3), tmp_path)) == [(9, 5)]


def test_task_depend_orders_sibling_tasks(tmp_path):
    def tasks(depend: bool) -> LogBuilder:
        b = world()
        fork(b)
        b.task_create(5, flags=1, thread=0)
        b.task_create(6, flags=1, thread=0)
        if depend:
            b.task_depend(5, 0x500, DependKind.OUT, thread=0)
            b.task_depend(6, 0x500, DependKind.IN, thread=0)
        b.task_begin(5, thread=1)
        b.rma(0, RmaOp.PUT, 0, 1, 0, 4, origin_addr=BUF, site=("h.c", 10), thread=1)
        b.mpi_sync(0, S.FLUSH_LOCAL, 0, target=1, site=("h.c", 11), thread=1)
        b.task_end(5, thread=1)
        b.task_begin(6, thread=0)
        b.access(BUF, 4, write=True, site=("h.c", 20), thread=0)
        b.task_end(6, thread=0)
        return b

    assert run(tasks(True), tmp_path) == []
    assert lines(run(tasks(False), tmp_path)) == [(20, 10)]


def test_sibling_tasks_on_one_thread_are_not_ordered(tmp_path):
    """A task is its own context: two tasks the same thread happened to run one after the other are
    unordered (another schedule runs them on two threads at once)."""
    def tasks(taskwait_between: bool) -> LogBuilder:
        b = world()
        fork(b)
        b.task_create(5, flags=1, thread=0)
        if taskwait_between:
            b.task_begin(5, thread=0)
            b.rma(0, RmaOp.PUT, 0, 1, 0, 4, origin_addr=BUF, site=("h.c", 10), thread=0)
            b.mpi_sync(0, S.FLUSH_LOCAL, 0, target=1, site=("h.c", 11), thread=0)
            b.task_end(5, thread=0)
            b.sync(SyncKind.TASKWAIT, thread=0)
        b.task_create(6, flags=1, thread=0)
        if not taskwait_between:
            b.task_begin(5, thread=1)
            b.rma(0, RmaOp.PUT, 0, 1, 0, 4, origin_addr=BUF, site=("h.c", 10), thread=1)
            b.mpi_sync(0, S.FLUSH_LOCAL, 0, target=1, site=("h.c", 11), thread=1)
            b.task_end(5, thread=1)
        b.task_begin(6, thread=1)
        b.access(BUF, 4, write=True, site=("h.c", 20), thread=1)
        b.task_end(6, thread=1)
        return b

    assert lines(run(tasks(False), tmp_path)) == [(20, 10)]
    assert run(tasks(True), tmp_path) == []


def test_a_lock_belongs_to_the_process_not_the_thread(tmp_path):
    """Thread 0 of rank 0 locks rank 1 exclusively, thread 1 puts inside the epoch: serialised with
    rank 2's exclusive epoch on the same bytes; with shared locks on both sides the puts race."""
    def two_epochs(lock_type: int) -> LogBuilder:
        b = LogBuilder(ranks=3)
        for r in range(3):
            b.win_create(r, 0, BASE[r], 64, disp_unit=4)
        b.mpi_sync(0, S.LOCK, 0, target=1, lock_type=lock_type, thread=0)
        fork(b)
        b.rma(0, RmaOp.PUT, 0, 1, 0, 4, origin_addr=BUF, site=("l.c", 10), thread=1)
        barrier(b, 1)
        b.sync(SyncKind.PARALLEL_END, thread=0, id=1)
        b.mpi_sync(0, S.UNLOCK, 0, target=1, thread=0)
        b.mpi_sync(2, S.LOCK, 0, target=1, lock_type=lock_type)
        b.rma(2, RmaOp.PUT, 0, 1, 0, 4, origin_addr=BUF, site=("l.c", 20))
        b.mpi_sync(2, S.UNLOCK, 0, target=1)
        return b

    assert run(two_epochs(1), tmp_path) == []               # MPI_LOCK_EXCLUSIVE
    assert lines(run(two_epochs(2), tmp_path)) == [(20, 10)]  # MPI_LOCK_SHARED


def test_accumulates_are_atomic_element_by_element(tmp_path):
    """The same datatype and op, but elements that start 2 bytes apart: parts of elements overlap."""
    def two(disp2: int):
        b = world(3)
        b.rma(0, RmaOp.ACCUMULATE, 0, 1, 0, 8, mpi_op=SUM, datatype_size=INT, site=("a.c", 5))
        b.rma(2, RmaOp.ACCUMULATE, 0, 1, disp2, 8, mpi_op=SUM, datatype_size=INT, site=("a.c", 9))
        return b

    assert run(two(4), tmp_path) == []
    assert lines(run(two(2), tmp_path)) == [(9, 5)]


FLAG = 0xA0000
SEQ_CST, RELAXED = 7, 2     # LLVM AtomicOrdering in SYNC ATOMIC_* aux2


def flag_handoff(write_order: int, read_order: int, flushes: bool = False, read_flag: int = FLAG) -> LogBuilder:
    """Thread 0 puts from BUF, completes it and sets a flag; thread 1 reads a flag, then stores into BUF."""
    b = world()
    fork(b)
    b.rma(0, RmaOp.PUT, 0, 1, 0, 4, origin_addr=BUF, site=("h.c", 10), thread=0)
    b.mpi_sync(0, S.FLUSH_LOCAL, 0, target=1, site=("h.c", 11), thread=0)
    if flushes:
        b.sync(SyncKind.FLUSH, thread=0)
    b.event(EventKind.SYNC, op=int(SyncKind.ATOMIC_WRITE), addr=FLAG, size=4, aux2=write_order, thread=0)
    b.event(EventKind.SYNC, op=int(SyncKind.ATOMIC_READ), addr=read_flag, size=4, aux2=read_order, thread=1)
    if flushes:
        b.sync(SyncKind.FLUSH, thread=1)
    b.access(BUF, 4, write=True, site=("h.c", 20), thread=1)
    return b


def test_seq_cst_flag_orders_the_reader_after_the_writer(tmp_path):
    assert run(flag_handoff(SEQ_CST, SEQ_CST), tmp_path) == []


def test_relaxed_flag_orders_only_with_flushes(tmp_path):
    assert lines(run(flag_handoff(RELAXED, RELAXED), tmp_path)) == [(20, 10)]
    assert run(flag_handoff(RELAXED, RELAXED, flushes=True), tmp_path) == []


def test_a_flag_at_another_address_orders_nothing(tmp_path):
    assert lines(run(flag_handoff(SEQ_CST, SEQ_CST, read_flag=FLAG + 64), tmp_path)) == [(20, 10)]
