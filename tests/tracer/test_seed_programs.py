"""Record the seeds' listings (written from the papers) and check the events the tracer wrote."""

from __future__ import annotations

import polars as pl
import pytest

pytestmark = pytest.mark.clang

ALLOC, TO, FROM, DELETE = "alloc", "transfer_to", "transfer_from", "delete"


def ops(t, variable: str, line: int | None = None) -> list[str]:
    """Data-op kinds on `variable`, in log order (optionally only those of the construct at `line`)."""
    d = t.data_ops.filter(pl.col("variable") == variable)
    if line is not None:
        d = d.filter(pl.col("line") == line)
    return d["op"].to_list()


def construct_kinds(t) -> list[tuple[str, int]]:
    c = t.constructs.filter(pl.col("event") == "construct_begin")
    return list(zip(c["construct_kind"].to_list(), c["line"].to_list(), strict=True))


def test_seed000_fig1_alloc_b_is_never_copied(record_c):
    run = record_c("omp/seed000_fig1_alloc.c")
    assert run.returncode == 0, run.stderr
    assert run.stdout == "done\n"
    t = run.open()
    b_map = t.maps.filter(pl.col("variable") == "b").row(0, named=True)
    assert b_map["clause"].startswith("b[0:") and b_map["line"] == 8
    assert b_map["map_type"] & 0x3 == 0  # alloc: neither to nor from
    assert b_map["bytes"] == 64 * 64 * 4
    b_ops = t.data_ops.filter(pl.col("variable") == "b")
    assert b_ops["op"].to_list() == [ALLOC, DELETE]
    alloc = b_ops.row(0, named=True)
    assert alloc["bytes"] == 64 * 64 * 4 and alloc["line"] == 8
    assert ops(t, "a") == [ALLOC, TO, DELETE] and ops(t, "c") == [ALLOC, TO, FROM, DELETE]
    # the kernel reads all of b's device copy at line 13, on the device side
    dev_lo, dev_hi = alloc["device_addr"], alloc["device_addr"] + alloc["bytes"]
    reads = t.accesses.filter((pl.col("side") == "device") & ~pl.col("write") & (pl.col("addr") >= dev_lo)
                              & (pl.col("addr") < dev_hi))
    assert reads["line"].unique().to_list() == [13]
    assert reads["bytes"].sum() >= 64 * 64 * 4
    assert reads["file"][0].endswith("seed000_fig1_alloc.c")
    # data ops feeding the kernel come before its accesses, the copy back after them
    seq_alloc = alloc["seq"]
    seq_from = t.data_ops.filter((pl.col("variable") == "c") & (pl.col("op") == FROM))["seq"][0]
    assert seq_alloc < reads["seq"].min() and reads["seq"].max() < seq_from


def test_seed000_fig2_stale_read_and_nowait_kernel(record_c):
    run = record_c("omp/seed000_fig2.c")
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines()[0] == "a = 1"
    t = run.open()
    # the nowait kernel may run before or after the end of the data region
    assert sorted(construct_kinds(t)) == [("target", 4), ("target", 9), ("target_data", 7), ("target_data_end", 7)]
    assert ops(t, "a", line=4) == [ALLOC, TO, DELETE]  # map(to: a): nothing comes back
    a_host = t.data_ops.filter(pl.col("line") == 4)["host_addr"][0]
    host_reads = t.accesses.filter((pl.col("side") == "host") & (pl.col("addr") == a_host) & ~pl.col("write"))
    assert 6 in host_reads["line"].to_list()
    assert 13 in t.accesses.filter((pl.col("side") == "host") & pl.col("write"))["line"].to_list()
    nowait = t.constructs.filter((pl.col("event") == "construct_begin") & (pl.col("line") == 9)).row(0, named=True)
    assert nowait["flags"] & 1  # NOWAIT
    assert nowait["thread"] != 0 and nowait["target_task"] >= 0
    writes = t.accesses.filter((pl.col("side") == "device") & (pl.col("line") == 11))
    assert writes["thread"].unique().to_list() == [nowait["thread"]]
    assert writes["construct"].unique().to_list() == [nowait["construct"]]


def test_seed000_fig6_pointer_swap(record_c):
    run = record_c("omp/seed000_fig6_swap.c")
    assert run.returncode == 0, run.stderr
    t = run.open()
    allocs = t.allocs.filter(pl.col("event") == "alloc").sort("seq")
    a0, anext = allocs.row(0, named=True), allocs.row(1, named=True)
    assert (a0["line"], anext["line"], a0["bytes"]) == (11, 12, 32 * 4)
    kernels = t.kernels.filter(pl.col("line") == 5)
    assert kernels.height == 3
    # the map clauses of the kernel see the swapped pointers
    kmaps = t.maps.filter((pl.col("line") == 5) & (pl.col("variable") == "A0"))["host_begin"].to_list()
    assert kmaps == [a0["addr"], anext["addr"], a0["addr"]]
    # only the original h_Anext block comes back at the end of the region
    back = t.data_ops.filter(pl.col("op") == FROM)
    assert back["host_addr"].to_list() == [anext["addr"]] and back["line"].to_list() == [14]
    # after three swaps, line 23 reads the block that never came back
    late = t.accesses.filter((pl.col("side") == "host") & (pl.col("line") == 23))
    assert late.height == 1
    assert a0["addr"] <= late["addr"][0] < a0["addr"] + a0["bytes"]


def test_seed002_fig1_half_mapped_b(record_c):
    run = record_c("omp/seed002_fig1.cpp")
    assert run.returncode == 0, run.stderr
    t = run.open()
    news = t.allocs.filter(pl.col("event") == "alloc").sort("seq")
    assert news["line"].to_list()[:2] == [4, 5] and news["bytes"].to_list()[:2] == [4000, 4000]
    assert construct_kinds(t) == [("target_data", 11), ("target", 14), ("target_data_end", 11)]
    assert ops(t, "b") == [ALLOC, DELETE]  # alloc: b is never transferred
    b_alloc = t.data_ops.filter((pl.col("variable") == "b") & (pl.col("op") == ALLOC)).row(0, named=True)
    assert b_alloc["bytes"] == 2000
    clauses = t.maps.filter(pl.col("variable") == "b")["clause"].to_list()
    assert clauses == ["b[0:1000 / 2]"] * 3  # data begin, target, data end
    # the kernel reads b[0:SIZE] through a CV of SIZE/2 elements: past its end
    reads = t.accesses.filter((pl.col("side") == "device") & ~pl.col("write") & (pl.col("line") == 18))
    lo = reads["addr"].min()
    hi = (reads["addr"] + reads["bytes"]).max()
    assert lo == b_alloc["device_addr"] and hi - lo == 4000


def test_seed003_listing_2_1_scalar_is_firstprivate(record_c):
    run = record_c("omp/seed003_l21_scalar.c")
    assert run.stdout == "0\n"
    t = run.open()
    sum_map = t.maps.filter(pl.col("variable") == "sum").row(0, named=True)
    assert sum_map["map_type"] & 0x100  # LITERAL: passed by value
    assert ops(t, "sum") == []


def test_seed003_listing_2_2_explicit_map(record_c):
    run = record_c("omp/seed003_l22_explicit.c")
    assert run.stdout == "100\n"
    t = run.open()
    assert ops(t, "sum") == [ALLOC, TO, FROM, DELETE]
    assert t.data_ops.filter((pl.col("variable") == "sum") & (pl.col("op") == FROM))["bytes"].to_list() == [4]


@pytest.mark.parametrize("src", ["omp/seed003_l23_alloc.c", "omp/seed003_l24_from.c"])
def test_seed003_listings_2_3_and_2_4_copy_out_at_exit_data(record_c, src):
    run = record_c(src)
    assert run.stdout == "0123456789\n"  # OpenMP 5.x reference counting (LLVM 19)
    t = run.open()
    assert construct_kinds(t) == [("target_enter_data", 6), ("target", 7), ("target_exit_data", 10)]
    assert ops(t, "B", line=6) == [ALLOC] and ops(t, "B", line=7) == []
    assert ops(t, "B", line=10) == [FROM, DELETE]


def test_seed003_listing_2_5_refcount_keeps_A_on_device(record_c):
    run = record_c("omp/seed003_l25_refcount.c")
    t = run.open()
    assert ops(t, "A", line=7) == []  # map(from) inside the data region: no copy back
    reads = t.accesses.filter((pl.col("side") == "host") & (pl.col("line") == 11))
    back = t.data_ops.filter((pl.col("variable") == "A") & (pl.col("op") == FROM)).row(0, named=True)
    assert back["line"] == 5
    assert reads["seq"].max() < back["seq"]  # the host read A before it came back
    assert run.stdout == "0\n"


def test_seed003_listing_2_6_update_copies_back(record_c):
    run = record_c("omp/seed003_l26_update.c")
    assert run.stdout == "4950\n"
    t = run.open()
    assert ("target_update", 10) in construct_kinds(t)
    upd = t.data_ops.filter((pl.col("line") == 10) & (pl.col("op") == FROM)).row(0, named=True)
    assert upd["variable"] == "A" and upd["bytes"] == 400
    reads = t.accesses.filter((pl.col("side") == "host") & (pl.col("line") == 12))
    assert upd["seq"] < reads["seq"].min()


def test_seed003_listing_5_3_classification(record_c):
    run = record_c("omp/seed003_l53_classify.c")
    assert run.stdout == "0123456789\n"
    t = run.open()
    assert construct_kinds(t) == [("target_enter_data", 9), ("target", 10), ("target_data", 13),
                                  ("target_data_end", 13), ("target_exit_data", 16)]
    assert ops(t, "A", line=9) == [ALLOC, TO] and ops(t, "B", line=9) == [ALLOC]
    assert ops(t, "B", line=10) == [] and ops(t, "B", line=13) == []
    assert ops(t, "C", line=13) == [ALLOC, FROM, DELETE]
    assert ops(t, "B", line=16) == [FROM, DELETE]
