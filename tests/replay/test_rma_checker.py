"""The MPI-RMA race checker on LogBuilder logs: every rule of the extended analysis, the
baseline (seed 001 epochs, Table 2), and that every race is reported, not only the first."""

from __future__ import annotations

import numpy as np
import pytest
from quiver.formats import LogBuilder, MessageKind, RmaOp, read_log
from quiver.formats import MpiSyncKind as S
from quiver.replay.registry import CheckOptions
from quiver.replay.report.findings import FindingKind
from quiver.replay.rma.check import check_rma
from quiver.replay.rma.kernels import FIRST, TABLE2, paper_pairs

BASE = {0: 0x10000, 1: 0x20000, 2: 0x30000}
BUF = {0: 0x90000, 1: 0xA0000, 2: 0xB0000}
SUM, MAX, NO_OP = 1, 3, 12


def world(n=2, win=0):
    b = LogBuilder(ranks=n)
    for r in range(n):
        b.win_create(r, win, BASE[r], 64, disp_unit=4)
    return b


def run(b, tmp_path, baseline=False):
    p = tmp_path / f"log{int(baseline)}.arrow"
    b.write(p)
    return check_rma(read_log(p), CheckOptions(baseline=baseline))


def lines(fs):
    return sorted((f.access.line, f.related[0].site.line) for f in fs)


def all_(b, kind, n, **kw):
    for r in range(n):
        b.mpi_sync(r, kind, 0, **kw)


# -- seed 001 Fig. 4 --------------------------------------------------------------------------

def fig4a(flush):
    b = world()
    all_(b, S.LOCK_ALL, 2)
    b.rma(0, RmaOp.PUT, 0, 1, 0, 16, origin_addr=BUF[0], site=("a.c", 10))
    if flush:
        b.mpi_sync(0, S.FLUSH_LOCAL, 0, target=1, site=("a.c", 11))
    b.access(BUF[0], 4, write=True, rank=0, site=("a.c", 12))
    all_(b, S.UNLOCK_ALL, 2)
    return b


def test_fig4a_store_after_put_races_and_flush_local_fixes_it(tmp_path):
    fs = run(fig4a(False), tmp_path)
    assert lines(fs) == [(12, 10)]
    f = fs[0]
    assert f.kind is FindingKind.RMA_RACE and f.access.rank == 0
    assert "MPI_Win_flush_local(1, win) before line 12" in f.fix
    assert run(fig4a(True), tmp_path) == []
    assert lines(run(fig4a(True), tmp_path, baseline=True)) == [(12, 10)]   # the paper knows no flush


def test_fig4b_put_and_get_in_one_fence_epoch(tmp_path):
    b = world()
    all_(b, S.FENCE, 2)
    b.rma(0, RmaOp.PUT, 0, 1, 8, 4, origin_addr=BUF[0], site=("b.c", 5))
    b.rma(1, RmaOp.GET, 0, 1, 8, 4, origin_addr=BUF[1], site=("b.c", 6))
    all_(b, S.FENCE, 2)
    fs = run(b, tmp_path)
    assert lines(fs) == [(6, 5)]
    assert fs[0].details["byte_range"] == [8, 12] and fs[0].details["window"] == 0
    assert lines(run(b, tmp_path, baseline=True)) == [(6, 5)]


def test_fig4c_two_puts_from_two_origins(tmp_path):
    b = world(3)
    all_(b, S.LOCK_ALL, 3)
    b.rma(0, RmaOp.PUT, 0, 1, 0, 4, origin_addr=BUF[0], site=("c.c", 5))
    b.rma(2, RmaOp.PUT, 0, 1, 0, 4, origin_addr=BUF[2], site=("c.c", 9))
    all_(b, S.UNLOCK_ALL, 3)
    fs = run(b, tmp_path)
    assert lines(fs) == [(9, 5)] and fs[0].details["ranks"] == [0, 2]


def test_separate_fence_epochs_do_not_race(tmp_path):
    b = world()
    all_(b, S.FENCE, 2)
    b.rma(0, RmaOp.PUT, 0, 1, 0, 4, origin_addr=BUF[0], site=("d.c", 5))
    all_(b, S.FENCE, 2)
    b.access(BASE[1], 4, rank=1, site=("d.c", 7))
    b.rma(1, RmaOp.GET, 0, 1, 0, 4, origin_addr=BUF[1], site=("d.c", 8))
    all_(b, S.FENCE, 2)
    assert run(b, tmp_path) == []
    assert run(b, tmp_path, baseline=True) == []


# -- flush, messages, barriers ----------------------------------------------------------------

@pytest.mark.parametrize("flush,order,racy", [
    (S.FLUSH, "barrier", False), (S.FLUSH, "message", False), (S.FLUSH_LOCAL, "message", True),
    (None, "barrier", True), (S.FLUSH_ALL, "barrier", False), (S.FLUSH_LOCAL_ALL, "barrier", True),
])
def test_flush_then_synchronise_inside_a_passive_epoch(tmp_path, flush, order, racy):
    b = world()
    all_(b, S.LOCK_ALL, 2)
    b.rma(0, RmaOp.PUT, 0, 1, 0, 4, origin_addr=BUF[0], site=("e.c", 5))
    if flush is not None:
        b.mpi_sync(0, flush, 0, target=1 if flush in (S.FLUSH, S.FLUSH_LOCAL) else -1)
    if order == "barrier":
        for r in (0, 1):
            b.message(r, MessageKind.BARRIER, comm=0)
    else:
        b.message(0, MessageKind.SEND, peer=1, tag=3)
        b.message(1, MessageKind.RECV, peer=0, tag=3)
    b.access(BASE[1], 4, rank=1, site=("e.c", 9))
    all_(b, S.UNLOCK_ALL, 2)
    assert lines(run(b, tmp_path)) == ([(9, 5)] if racy else [])


def test_message_chain_through_a_third_rank_orders(tmp_path):
    b = world(3)
    all_(b, S.LOCK_ALL, 3)
    b.rma(0, RmaOp.PUT, 0, 2, 0, 4, origin_addr=BUF[0], site=("f.c", 5))
    b.mpi_sync(0, S.FLUSH, 0, target=2)
    b.message(0, MessageKind.SEND, peer=1, tag=1)
    b.message(1, MessageKind.RECV, peer=0, tag=1)
    b.message(1, MessageKind.SEND, peer=2, tag=1)
    b.message(2, MessageKind.RECV, peer=1, tag=1)
    b.access(BASE[2], 4, write=True, rank=2, site=("f.c", 9))
    all_(b, S.UNLOCK_ALL, 3)
    assert run(b, tmp_path) == []


def test_messages_match_by_tag_not_by_arrival(tmp_path):
    b = world()
    all_(b, S.LOCK_ALL, 2)
    b.rma(0, RmaOp.PUT, 0, 1, 0, 4, origin_addr=BUF[0], site=("g.c", 5))
    b.message(0, MessageKind.SEND, peer=1, tag=1)       # before the flush
    b.mpi_sync(0, S.FLUSH, 0, target=1)
    b.message(0, MessageKind.SEND, peer=1, tag=2)       # after the flush
    b.message(1, MessageKind.RECV, peer=0, tag=1)
    b.access(BASE[1], 4, rank=1, site=("g.c", 10))       # ordered only after the tag-1 message
    b.message(1, MessageKind.RECV, peer=0, tag=2)
    b.access(BASE[1], 4, rank=1, site=("g.c", 12))
    all_(b, S.UNLOCK_ALL, 2)
    assert lines(run(b, tmp_path)) == [(10, 5)]


def test_unmatched_receive_does_not_hang(tmp_path):
    b = world()
    all_(b, S.LOCK_ALL, 2)
    b.rma(0, RmaOp.PUT, 0, 1, 0, 4, origin_addr=BUF[0], site=("h.c", 5))
    b.message(1, MessageKind.RECV, peer=0, tag=9)       # the sender crashed before sending
    b.access(BASE[1], 4, rank=1, site=("h.c", 7))
    assert lines(run(b, tmp_path)) == [(7, 5)]


# -- locks, PSCW, requests --------------------------------------------------------------------

@pytest.mark.parametrize("t0,t2,racy", [(1, 1, False), (1, 2, False), (2, 2, True)])
def test_lock_types_per_target(tmp_path, t0, t2, racy):
    b = world(3)
    for r, lt, line in ((0, t0, 5), (2, t2, 9)):
        b.mpi_sync(r, S.LOCK, 0, target=1, lock_type=lt)
        b.rma(r, RmaOp.PUT, 0, 1, 0, 4, origin_addr=BUF[r], site=("l.c", line))
    for r in (0, 2):
        b.mpi_sync(r, S.UNLOCK, 0, target=1)
    assert lines(run(b, tmp_path)) == ([(9, 5)] if racy else [])


def test_unlock_completes_operations_of_the_same_origin(tmp_path):
    b = world()
    b.mpi_sync(0, S.LOCK, 0, target=1, lock_type=2)
    b.rma(0, RmaOp.PUT, 0, 1, 0, 4, origin_addr=BUF[0], site=("u.c", 5))
    b.mpi_sync(0, S.UNLOCK, 0, target=1)
    b.mpi_sync(0, S.LOCK, 0, target=1, lock_type=2)
    b.rma(0, RmaOp.GET, 0, 1, 0, 4, origin_addr=BUF[0] + 16, site=("u.c", 8))
    b.mpi_sync(0, S.UNLOCK, 0, target=1)
    assert run(b, tmp_path) == []
    b2 = world()
    b2.mpi_sync(0, S.LOCK, 0, target=1, lock_type=2)
    b2.rma(0, RmaOp.PUT, 0, 1, 0, 4, origin_addr=BUF[0], site=("u.c", 5))
    b2.rma(0, RmaOp.GET, 0, 1, 0, 4, origin_addr=BUF[0] + 16, site=("u.c", 6))
    b2.mpi_sync(0, S.UNLOCK, 0, target=1)
    fs = run(b2, tmp_path)
    assert lines(fs) == [(6, 5)] and "MPI_Win_flush(1, win) between line 5 and line 6" in fs[0].fix


@pytest.mark.parametrize("load_after_wait", [True, False])
def test_pscw(tmp_path, load_after_wait):
    b = world()
    b.mpi_sync(1, S.POST, 0, group=[0])
    b.mpi_sync(0, S.START, 0, group=[1])
    b.rma(0, RmaOp.PUT, 0, 1, 0, 4, origin_addr=BUF[0], site=("p.c", 5))
    b.mpi_sync(0, S.COMPLETE, 0)
    if not load_after_wait:
        b.access(BASE[1], 4, rank=1, site=("p.c", 9))
    b.mpi_sync(1, S.WAIT, 0)
    if load_after_wait:
        b.access(BASE[1], 4, rank=1, site=("p.c", 9))
    assert lines(run(b, tmp_path)) == ([] if load_after_wait else [(9, 5)])


def test_pscw_store_before_post_is_ordered_even_if_logged_after_the_put(tmp_path):
    b = world()
    b.mpi_sync(0, S.START, 0, group=[1])                 # MPICH's start does not wait for the post
    b.rma(0, RmaOp.PUT, 0, 1, 0, 4, origin_addr=BUF[0], site=("q.c", 5))
    b.access(BASE[1], 4, write=True, rank=1, site=("q.c", 8))
    b.mpi_sync(1, S.POST, 0, group=[0])
    b.mpi_sync(0, S.COMPLETE, 0)
    b.mpi_sync(1, S.WAIT, 0)
    assert run(b, tmp_path) == []


@pytest.mark.parametrize("op,wait_first,racy", [
    (RmaOp.RPUT, True, False), (RmaOp.RPUT, False, True), (RmaOp.RGET, True, False), (RmaOp.RGET, False, True)])
def test_request_completion(tmp_path, op, wait_first, racy):
    b = world()
    all_(b, S.LOCK_ALL, 2)
    b.rma(0, op, 0, 1, 0, 4, origin_addr=BUF[0], request=7, site=("r.c", 5))
    if wait_first:
        b.request_complete(0, 7)
    b.access(BUF[0], 4, write=True, rank=0, site=("r.c", 7))
    if not wait_first:
        b.request_complete(0, 7)
    all_(b, S.UNLOCK_ALL, 2)
    fs = run(b, tmp_path)
    assert lines(fs) == ([(7, 5)] if racy else [])
    if racy:
        assert "MPI_Wait on the request" in fs[0].fix


def test_rput_completion_is_local_only_but_rget_completes_the_target_read(tmp_path):
    for op, racy in ((RmaOp.RPUT, True), (RmaOp.RGET, False)):
        b = world()
        all_(b, S.LOCK_ALL, 2)
        b.rma(0, op, 0, 1, 0, 4, origin_addr=BUF[0], request=1, site=("s.c", 5))
        b.request_complete(0, 1)
        for r in (0, 1):
            b.message(r, MessageKind.BARRIER)
        b.access(BASE[1], 4, write=True, rank=1, site=("s.c", 9))
        all_(b, S.UNLOCK_ALL, 2)
        assert lines(run(b, tmp_path)) == ([(9, 5)] if racy else []), op


# -- accumulates ------------------------------------------------------------------------------

@pytest.mark.parametrize("op2,mop2,size2,racy", [
    (RmaOp.ACCUMULATE, SUM, 4, False), (RmaOp.FETCH_AND_OP, SUM, 4, False),
    (RmaOp.GET_ACCUMULATE, NO_OP, 4, False), (RmaOp.ACCUMULATE, MAX, 4, True),
    (RmaOp.ACCUMULATE, SUM, 8, True), (RmaOp.PUT, 0, 4, True), (RmaOp.GET, 0, 4, True)])
def test_accumulate_atomicity(tmp_path, op2, mop2, size2, racy):
    b = world(3)
    all_(b, S.LOCK_ALL, 3)
    b.rma(0, RmaOp.ACCUMULATE, 0, 1, 0, 8, origin_addr=BUF[0], mpi_op=SUM, datatype_size=4, site=("acc.c", 5))
    b.rma(2, op2, 0, 1, 0, 8, origin_addr=BUF[2], mpi_op=mop2, datatype_size=size2, site=("acc.c", 9))
    all_(b, S.UNLOCK_ALL, 3)
    assert lines(run(b, tmp_path)) == ([(9, 5)] if racy else [])
    assert lines(run(b, tmp_path, baseline=True)) == [(9, 5)]   # the paper treats accumulates as puts


def test_accumulate_against_a_load_races(tmp_path):
    b = world()
    all_(b, S.LOCK_ALL, 2)
    b.rma(0, RmaOp.ACCUMULATE, 0, 1, 0, 4, origin_addr=BUF[0], mpi_op=SUM, datatype_size=4, site=("x.c", 5))
    b.access(BASE[1], 4, rank=1, site=("x.c", 7))
    all_(b, S.UNLOCK_ALL, 2)
    assert lines(run(b, tmp_path)) == [(7, 5)]


def test_same_origin_accumulates_are_ordered(tmp_path):
    b = world()
    all_(b, S.LOCK_ALL, 2)
    b.rma(0, RmaOp.ACCUMULATE, 0, 1, 0, 4, origin_addr=BUF[0], mpi_op=SUM, datatype_size=4, site=("y.c", 5))
    b.rma(0, RmaOp.ACCUMULATE, 0, 1, 0, 4, origin_addr=BUF[0], mpi_op=MAX, datatype_size=4, site=("y.c", 6))
    all_(b, S.UNLOCK_ALL, 2)
    assert run(b, tmp_path) == []


# -- every race, loops, determinism -----------------------------------------------------------

def test_every_race_is_reported_and_loops_fold(tmp_path):
    b = world(3)
    all_(b, S.LOCK_ALL, 3)
    n = 500
    b.append_columns({   # rank 0: n puts to rank 1 from one line (all unordered), bulk-appended
        "kind": np.full(n, 64), "rank": np.zeros(n), "op": np.full(n, int(RmaOp.PUT)), "id": np.zeros(n),
        "id2": np.ones(n), "aux": np.arange(n) % 8 * 4, "size": np.full(n, 4), "addr": np.full(n, BUF[0]),
        "loc": np.full(n, b.location("z.c", 5)), "aux2": np.full(n, -1)})
    b.rma(2, RmaOp.GET, 0, 1, 0, 32, origin_addr=BUF[2], site=("z.c", 9))
    b.access(BASE[1] + 60, 4, write=True, rank=1, site=("z.c", 12))   # disjoint: no race
    b.rma(2, RmaOp.PUT, 0, 0, 0, 4, origin_addr=BUF[2] + 64, site=("z.c", 14))
    b.access(BASE[0], 4, rank=0, site=("z.c", 16))
    all_(b, S.UNLOCK_ALL, 3)
    fs = run(b, tmp_path)
    assert lines(fs) == [(5, 5), (9, 5), (16, 14)]
    self_race = next(f for f in fs if f.access.line == 5)
    assert self_race.occurrences >= 8
    again = run(b, tmp_path)
    assert [f.to_dict() for f in fs] == [f.to_dict() for f in again]


def test_accesses_outside_windows_and_buffers_are_ignored(tmp_path):
    b = world()
    all_(b, S.FENCE, 2)
    b.rma(0, RmaOp.PUT, 0, 1, 0, 4, origin_addr=BUF[0], site=("w.c", 5))
    b.access(0x5000, 4, write=True, rank=1, site=("w.c", 6))
    b.access(BUF[0] + 8, 4, write=True, rank=0, site=("w.c", 7))
    all_(b, S.FENCE, 2)
    assert run(b, tmp_path) == []


def test_table2_transitions():
    o_get, o_put, t_get, t_put, load, store = range(6)
    cases = [  # (first, second, error?)
        (o_put, store, True), (store, o_put, False), (o_put, load, False), (o_get, load, True),
        (load, o_get, False), (t_get, load, False), (t_get, store, True), (t_put, load, True),
        (load, t_put, True), (t_get, t_get, False), (t_put, t_get, True), (o_put, o_put, False),
        (o_get, o_get, True), (t_get, o_put, False), (store, t_get, True), (load, store, False),
    ]
    for first, second, err in cases:
        lo = np.array([0, 0], dtype=np.int64)
        hi = np.array([4, 4], dtype=np.int64)
        x, _y, _lo, _hi = paper_pairs(lo, hi, np.array([first, second], dtype=np.int64),
                                     np.array([0, 2], dtype=np.int64), TABLE2, FIRST)
        assert (len(x) == 1) == err, (first, second)


def test_paper_intervals_split_and_report_only_overlaps():
    # T_PUT [0,8), LOAD [4,12): error on [4,8) only; LOAD [8,12) on an empty interval is fine
    lo = np.array([0, 4], dtype=np.int64)
    hi = np.array([8, 12], dtype=np.int64)
    x, y, a, z = paper_pairs(lo, hi, np.array([3, 4], dtype=np.int64), np.array([0, 2], dtype=np.int64),
                             TABLE2, FIRST)
    assert list(x) == [0] and list(y) == [1] and list(a) == [4] and list(z) == [8]


@pytest.mark.parametrize(("stride", "racy"), [(16, False), (12, True)])
def test_strided_local_store_races_only_where_its_blocks_are(tmp_path, stride, racy):
    """Rank 1 stores three 4-byte blocks every `stride` bytes from its window base while rank 0 puts
    into it: blocks [0,4) [16,20) [32,36) leave the put's [8,12) in a gap (their span does not); blocks
    [0,4) [12,16) [24,28) overlap the put's [8,16) at [12,16)."""
    b = world()
    all_(b, S.FENCE, 2)
    b.rma(0, RmaOp.PUT, 0, 1, 8, 4 if stride == 16 else 8, origin_addr=BUF[0], site=("s.c", 10))
    b.access(BASE[1], 4, write=True, rank=1, site=("s.c", 20), stride=stride, blocks=3)
    all_(b, S.FENCE, 2)
    assert lines(run(b, tmp_path)) == ([(20, 10)] if racy else [])
