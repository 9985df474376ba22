"""Sharded analysis (replay/distributed/run.py) on builder logs: the same report from one process, local
worker processes and a Dask LocalCluster, for single files and split-log directories, and the
same findings as the single-log checkers (byte for byte in JSON)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from itertools import pairwise
from pathlib import Path

import numpy as np
import pytest
from quiver.formats import ConstructKind, DataOpKind, LogBuilder, MessageKind, RmaOp, read_log, write_log
from quiver.formats import MpiSyncKind as S
from quiver.replay.distributed.executors import ProcessExecutor, SerialExecutor
from quiver.replay.distributed.partition import plan_partitions
from quiver.replay.distributed.run import analyze_sharded
from quiver.replay.driver import run_checks
from quiver.replay.registry import CheckOptions
from quiver.replay.report.json import render_json

BENCH = Path(__file__).resolve().parents[2] / "bench"
sys.path.insert(0, str(BENCH))
from sharded import LINES, halo_builder, racy_ranks

TRACE = str(Path(sys.executable).with_name("trace"))
try:
    import distributed  # noqa: F401
    HAVE_DASK = True
except ImportError:
    HAVE_DASK = False
needs_dask = pytest.mark.skipif(not HAVE_DASK, reason="dask[distributed] is not installed (pip install "
                                                       "'quiver[distributed]')")


def analyze_cli(log: Path, *args: str, timeout: int = 600) -> subprocess.CompletedProcess:
    return subprocess.run([TRACE, "analyze", str(log), "--check", "rma", "--format", "json", "--no-progress",
                           *args], capture_output=True, text=True, check=False, timeout=timeout)


def same_but_path(a: str, b: str, pa: Path, pb: Path) -> bool:
    return a.replace(json.dumps(str(pa)), "LOG") == b.replace(json.dumps(str(pb)), "LOG")


# --- the 1,024-rank halo exchange -------------------------------------------------------------

@pytest.fixture(scope="module")
def halo(tmp_path_factory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("halo")
    b = halo_builder(1024, iters=3, blocks=4)
    b.write(d / "halo.arrow")
    b.write_split(d / "halo.d")
    return {"file": d / "halo.arrow", "split": d / "halo.d"}


@pytest.fixture(scope="module")
def halo_reports(halo) -> dict[str, subprocess.CompletedProcess]:
    runs = {"one": analyze_cli(halo["split"]), "workers2": analyze_cli(halo["split"], "--workers", "2")}
    if HAVE_DASK:
        runs["dask"] = analyze_cli(halo["split"], "--dask", "local", "--workers", "2")
    return runs


def test_halo_split_finds_exactly_the_planted_races(halo, halo_reports):
    run = halo_reports["one"]
    assert run.returncode == 1, run.stderr
    report = json.loads(run.stdout)
    bad = racy_ranks(1024)
    got = sorted((f["access"]["line"], f["access"]["rank"], f["related"][0]["line"], f["related"][0]["rank"],
                  f["variable"]) for f in report["findings"])
    victim = bad["interior_put"] + 1
    assert got == sorted([
        (LINES["halo_store"], bad["halo_store"], LINES["put_right"], bad["halo_store"] - 1,
         f"window 0 on rank {bad['halo_store']}"),
        (LINES["store"], victim, LINES["interior_put"], bad["interior_put"], f"window 0 on rank {victim}"),
        (LINES["buffer_reuse"], bad["buffer_reuse"], LINES["put_left"], bad["buffer_reuse"],
         f"local buffer of rank {bad['buffer_reuse']}"),
    ])
    assert report["log"]["events"] == len(read_log(halo["file"]).col("kind"))


def test_halo_split_workers_2_is_byte_identical(halo_reports):
    assert halo_reports["workers2"].returncode == 1, halo_reports["workers2"].stderr
    assert halo_reports["workers2"].stdout == halo_reports["one"].stdout


@needs_dask
def test_halo_split_dask_local_is_byte_identical(halo_reports):
    assert halo_reports["dask"].returncode == 1, halo_reports["dask"].stderr
    assert halo_reports["dask"].stdout == halo_reports["one"].stdout


def test_halo_single_file_unsharded_equals_sharded_and_split(halo, halo_reports):
    plain = analyze_cli(halo["file"])                       # the single-log checker, no shards
    sharded = analyze_cli(halo["file"], "--workers", "2")   # the same file, sharded
    assert plain.returncode == sharded.returncode == 1, plain.stderr + sharded.stderr
    assert sharded.stdout == plain.stdout
    assert same_but_path(plain.stdout, halo_reports["one"].stdout, halo["file"], halo["split"])


# --- sharded == single-log on many small random RMA programs ----------------------------------

BASE, BUF = 0x10000, 0x90000


def random_rma_log(seed: int, ranks: int = 4) -> LogBuilder:
    """Random epochs (fence, lock_all, lock/unlock, PSCW) of puts/gets/accumulates, loads/stores,
    flushes, requests, barriers and messages on 2 windows; the checker decides what races."""
    rng = np.random.default_rng(seed)
    b = LogBuilder(ranks=ranks)
    for w in (0, 1):
        for r in range(ranks):
            b.win_create(r, w, BASE + 0x1000 * w, 64, disp_unit=4, site=("w.c", 5))
    req = 0
    for epoch in range(3):
        mode = ["fence", "lock_all", "lock", "pscw"][int(rng.integers(4))]
        w = int(rng.integers(2))
        if mode == "fence":
            for r in range(ranks):
                b.mpi_sync(r, S.FENCE, w, site=("w.c", 10))
        elif mode == "lock_all":
            for r in range(ranks):
                b.mpi_sync(r, S.LOCK_ALL, w, site=("w.c", 11))
        elif mode == "pscw":
            b.mpi_sync(0, S.POST, w, group=list(range(1, ranks)), site=("w.c", 12))
            for r in range(1, ranks):
                b.mpi_sync(r, S.START, w, group=[0], site=("w.c", 13))
        for _ in range(int(rng.integers(4, 12))):
            r = int(rng.integers(ranks))
            t = 0 if mode == "pscw" else int(rng.integers(ranks))
            if mode == "pscw" and r == 0:
                r = 1
            line = 20 + int(rng.integers(12))
            what = int(rng.integers(6))
            disp = 4 * int(rng.integers(8))
            if mode == "lock":
                b.mpi_sync(r, S.LOCK, w, target=t, lock_type=1 + int(rng.integers(2)), site=("w.c", 14))
            if what == 0:
                b.rma(r, RmaOp.PUT, w, t, disp, 8, origin_addr=BUF, site=("w.c", line))
            elif what == 1:
                b.rma(r, RmaOp.GET, w, t, disp, 4, origin_addr=BUF + 16, site=("w.c", line))
            elif what == 2:
                b.rma(r, RmaOp.ACCUMULATE, w, t, disp, 4, origin_addr=BUF, mpi_op=1 + int(rng.integers(2)),
                      datatype_size=4, site=("w.c", line))
            elif what == 3:
                b.rma(r, RmaOp.RPUT, w, t, disp, 4, origin_addr=BUF + 8, request=req, site=("w.c", line))
                if rng.integers(2):
                    b.request_complete(r, req, site=("w.c", 40))
                req += 1
            else:
                b.access(BASE + 0x1000 * w + disp, 4, write=what == 4, rank=r, site=("w.c", line))
                if rng.integers(3) == 0:
                    b.access(BUF, 4, write=True, rank=r, site=("w.c", line + 20))
            if mode == "lock":
                b.mpi_sync(r, S.UNLOCK, w, target=t, site=("w.c", 15))
            elif mode == "lock_all" and rng.integers(3) == 0:
                b.mpi_sync(r, S.FLUSH_ALL, w, site=("w.c", 16))
            if rng.integers(5) == 0:
                peer = int(rng.integers(ranks))
                if peer != r:
                    b.message(r, MessageKind.SEND, peer=peer, tag=7, site=("w.c", 41))
                    b.message(peer, MessageKind.RECV, peer=r, tag=7, site=("w.c", 42))
        if mode == "fence":
            for r in range(ranks):
                b.mpi_sync(r, S.FENCE, w, site=("w.c", 10))
        elif mode == "lock_all":
            for r in range(ranks):
                b.mpi_sync(r, S.UNLOCK_ALL, w, site=("w.c", 17))
        elif mode == "pscw":
            for r in range(1, ranks):
                b.mpi_sync(r, S.COMPLETE, w, site=("w.c", 18))
            b.mpi_sync(0, S.WAIT, w, site=("w.c", 19))
        if rng.integers(2):
            for r in range(ranks):
                b.message(r, MessageKind.BARRIER, site=("w.c", 43))
    return b


def write_in_batches(b: LogBuilder, path: Path, pieces: int = 3) -> Path:
    """The builder's log written as several record batches (several map sources)."""
    cols = b.columns()
    cuts = np.linspace(0, len(cols["kind"]), pieces + 1).astype(int)
    chunks = [{k: v[a:c] for k, v in cols.items()} for a, c in pairwise(cuts)]
    return write_log(path, chunks, strings=b.strings, locations=b.locations, run=b.run)


@pytest.mark.parametrize("baseline", [False, True])
def test_sharded_equals_single_log_on_random_rma_programs(tmp_path, baseline):
    options = CheckOptions(baseline=baseline)
    total = 0
    for seed in range(12):
        b = random_rma_log(seed)
        single = write_in_batches(b, tmp_path / f"r{seed}.arrow")
        split = b.write_split(tmp_path / f"r{seed}.d")
        plain = render_json(run_checks(read_log(single), ["rma"], options))
        sharded = render_json(analyze_sharded(single, ["rma"], options))
        from_split = render_json(analyze_sharded(split, ["rma"], options))
        assert sharded == plain, f"seed {seed}"
        assert same_but_path(plain, from_split, single, split), f"seed {seed}"
        total += json.loads(plain)["summary"]["findings"]
    assert total > 0            # the programs do race somewhere


def test_process_pool_equals_serial_on_random_rma_programs(tmp_path):
    b = random_rma_log(3)
    split = b.write_split(tmp_path / "r.d")
    serial = render_json(analyze_sharded(split, ["rma"], executor=SerialExecutor()))
    pool = ProcessExecutor(2)
    try:
        assert render_json(analyze_sharded(split, ["rma"], executor=pool)) == serial
    finally:
        pool.close()


# --- OpenMP checkers: one shard per rank ------------------------------------------------------

def two_rank_mapping_bug() -> LogBuilder:
    """Each rank maps b with map(alloc:) and reads it on the device: uninitialised on both ranks."""
    b = LogBuilder(program="omp2", ranks=2)
    for r in (0, 1):
        b.alloc(0x1000, 400, site=("m.c", 4, "main"), rank=r)
        b.access(0x1000, 400, write=True, rank=r, site=("m.c", 6, "main"))
        c = b.construct_begin(ConstructKind.TARGET, site=("m.c", 9, "main"), rank=r)
        b.map_clause(c, "b", 0x1000, 400, 0, site=("m.c", 9, "main"), text="b[0:100]", rank=r)
        b.data_op(DataOpKind.ALLOC, 0x1000, 0x9000, 400, construct=c, var="b", rank=r)
        b.kernel(c, rank=r)
        b.access(0x9000, 4 * (r + 1), device=0, construct=c, site=("m.c", 11, "main"), rank=r)
        b.data_op(DataOpKind.DELETE, 0x1000, 0x9000, 400, construct=c, var="b", rank=r)
        b.construct_end(c, rank=r)
    return b


def test_openmp_checkers_per_rank_shard(tmp_path):
    b = two_rank_mapping_bug()
    single = b.write(tmp_path / "omp.arrow")
    split = b.write_split(tmp_path / "omp.d")
    plain = run_checks(read_log(single), ["mapping"])
    (f,) = plain.findings                      # the same bug on both ranks: one finding listing rank 1
    assert f.access.rank == 0 and f.details["ranks"] == [0, 1] and f.details["also_on"][0]["rank"] == 1
    sharded = analyze_sharded(single, ["mapping"])
    assert render_json(sharded) == render_json(plain)
    assert same_but_path(render_json(plain), render_json(analyze_sharded(split, ["mapping"])), single, split)


# --- plumbing -----------------------------------------------------------------------------------

def test_partitions_are_consecutive_and_capped():
    assert plan_partitions(1, {0: 5, 1: 5, 2: 5, 3: 5}, 2, 100) == [[0, 1], [2, 3]]
    assert plan_partitions(1, {0: 50, 1: 1, 2: 1}, 1, 10) == [[0], [1, 2]]
    assert plan_partitions(1, {}, 4, 10) == []


def test_dask_missing_is_one_line_and_exit_2(tmp_path):
    fake = tmp_path / "nodask"
    fake.mkdir()
    (fake / "distributed.py").write_text("raise ImportError('no dask here')\n")
    b = random_rma_log(1)
    log = b.write(tmp_path / "r.arrow")
    env = {**os.environ, "PYTHONPATH": str(fake)}
    run = subprocess.run([TRACE, "analyze", str(log), "--dask", "local"], capture_output=True, text=True,
                         check=False, env=env, timeout=120)
    assert run.returncode == 2
    assert run.stderr.strip().splitlines() == [
        "trace: error: Dask is not installed: pip install 'quiver[distributed]' (or: pip install 'dask[distributed]')"]
    assert run.stdout == ""


def test_unreachable_scheduler_is_one_line_and_exit_2(tmp_path):
    if not HAVE_DASK:
        pytest.skip("dask[distributed] is not installed")
    log = random_rma_log(1).write(tmp_path / "r.arrow")
    env = {**os.environ, "DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT": "3s"}
    run = subprocess.run([TRACE, "analyze", str(log), "--dask", "tcp://127.0.0.1:9", "--check", "rma"],
                         capture_output=True, text=True, check=False, timeout=180, env=env)
    assert run.returncode == 2, run.stderr
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("trace: error: cannot reach the Dask scheduler at tcp://127.0.0.1:9")


def test_bad_split_directory_is_one_line_and_exit_2(tmp_path):
    d = tmp_path / "notalog.d"
    d.mkdir()
    run = subprocess.run([TRACE, "analyze", str(d), "--workers", "2"], capture_output=True, text=True, check=False)
    assert run.returncode == 2
    assert run.stderr.strip() == f"trace: error: {d}: a directory without manifest.json, not a split quiver log"


@needs_dask
def test_remote_scheduler_address(tmp_path):
    """`--dask tcp://...` on a scheduler the test starts (scratch goes next to the log)."""
    from distributed import LocalCluster

    b = random_rma_log(5)
    split = b.write_split(tmp_path / "r.d")
    one = analyze_cli(split)
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=False, protocol="tcp",
                      dashboard_address=None) as cluster:
        run = analyze_cli(split, "--dask", cluster.scheduler_address)
    assert run.returncode == one.returncode, run.stderr
    assert run.stdout == one.stdout
    assert not list(tmp_path.glob("quiver-shards-*"))   # scratch next to the log, removed afterwards
