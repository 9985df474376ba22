"""finalize of a recorded multi-thread program against a straightforward reference.

The reference reads the raw records with the structured RAW_DTYPE, orders them with a stable
Python sort by time, and derives every log field row by row from the definitions in
formats/FORMAT.md and tracer/native/qv_raw.h (string ids compared as strings, locations as
(file name, line, function)). finalize is run with its kernels as plain Python, as numpy passes,
compiled by numba and in C (finalize_c): all must give the reference's rows.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from quiver.formats import ConstructKind, EventKind, read_log
from quiver.tracer import finalize as finalize_mod
from quiver.tracer import finalize_c, finalize_kernels, finalize_numpy
from quiver.tracer.rawread import (
    F_AUX2_STR,
    F_AUX_STR,
    F_ID2_STR,
    F_NAME_INT,
    F_PC_RET,
    ranks_in,
    read_rank,
)
from quiver.tracer.symbolize import UNKNOWN, dedup_modules, parse_psource, symbolize

pytestmark = pytest.mark.clang

PLAIN = ("thread", "kind", "device", "addr", "addr2", "size", "id")
STRING_FLAGS = {"id2": F_ID2_STR, "aux": F_AUX_STR, "aux2": F_AUX2_STR}


def _place(loc) -> tuple[str, int, str] | None:
    return None if loc is None else (os.path.basename(loc[0]), loc[1], loc[3])


def reference_rows(raw: Path) -> list[dict]:
    """The log rows of the raw records (object rows aside), in log order."""
    recs, strings, modules, renames, t0 = [], {}, [], {}, None
    for rank in ranks_in(raw):
        rr = read_rank(raw, rank)
        strings[rank] = rr.strings
        modules += rr.modules
        for line in rr.info.get("devimg[]", "").splitlines():
            orig, _, copy = line.partition(" ")
            renames[orig] = copy
        t0 = min(int(rr.info["start_mono_ns"]), t0 if t0 is not None else int(rr.info["start_mono_ns"]))
        for ev in rr.streams:  # thread files in file order: ties in time keep this order
            recs += [(rank, r) for r in ev]
    recs.sort(key=lambda x: int(x[1]["time_ns"]))

    def text(rank: int, v: int) -> str | int:
        return strings[rank][v] if 0 <= v < len(strings[rank]) else v

    wanted = set()
    for rank, r in recs:  # code addresses of rows without psource, a return address's call at pc - 1
        src = int(r["loc_str"])
        pc = int(r["pc"]) - (1 if int(r["flags"]) & F_PC_RET and int(r["pc"]) else 0)
        if not 0 <= src < len(strings[rank]) and pc > 0:
            wanted.add(pc)
    wanted = sorted(wanted)
    found = symbolize(np.array(wanted, np.uint64), dedup_modules(modules, renames))
    pcs = {pc: None if loc == UNKNOWN else loc for pc, loc in zip(wanted, found, strict=True)}

    rows = []
    for rank, r in recs:
        flags = int(r["flags"])
        row = {"rank": rank} | {c: int(r[c]) for c in PLAIN}
        row["time_ns"] = max(int(r["time_ns"]) - t0, 0)
        row["op"] = int(r["op"])
        row["name"] = int(r["name"]) if flags & F_NAME_INT else text(rank, int(r["name"]))
        for c, bit in STRING_FLAGS.items():
            row[c] = text(rank, int(r[c])) if flags & bit else int(r[c])
        src = int(r["loc_str"])
        loc = parse_psource(strings[rank][src]) if 0 <= src < len(strings[rank]) else None
        if loc is None:
            pc = int(r["pc"]) - (1 if flags & F_PC_RET and int(r["pc"]) else 0)
            loc = pcs.get(pc) if pc > 0 else None
        row["loc"] = _place(loc)
        rows.append(row)

    # a task's creation (and its depend items) is located at the construct the task ran, else where created
    task_loc: dict[tuple[int, int], tuple] = {}
    for kind, key_col in ((EventKind.CONSTRUCT_BEGIN, "id2"), (EventKind.TASK_CREATE, "id")):
        for row in rows:
            if row["kind"] == kind and row[key_col] >= 0 and row["loc"] is not None:
                task_loc.setdefault((row["rank"], row[key_col]), row["loc"])
    for row in rows:
        if row["kind"] in (EventKind.TASK_CREATE, EventKind.TASK_DEPEND) and (row["rank"], row["id"]) in task_loc:
            row["loc"] = task_loc[(row["rank"], row["id"])]

    # `target data`: the enter-data construct a DATA_END closes begins it, the exit-data one it closes ends it
    ends = [r for r in rows if r["kind"] == EventKind.CONSTRUCT_BEGIN and r["op"] == ConstructKind.TARGET_DATA_END]
    opened = {(r["rank"], r["aux2"]) for r in ends}
    closed = {(r["rank"], r["id"]) for r in ends}
    for row in rows:
        if row["kind"] in (EventKind.CONSTRUCT_BEGIN, EventKind.CONSTRUCT_END):
            if row["op"] == ConstructKind.TARGET_ENTER_DATA and (row["rank"], row["id"]) in opened:
                row["op"] = ConstructKind.TARGET_DATA
            elif row["op"] == ConstructKind.TARGET_EXIT_DATA and (row["rank"], row["id"]) in closed:
                row["op"] = ConstructKind.TARGET_DATA_END
    return rows


def log_rows(path: Path, like: list[dict]) -> list[dict]:
    """The log's rows without the object rows, string ids and locations resolved as in `like`."""
    log = read_log(path)
    cols = log.columns()
    keep = ~((cols["kind"] == EventKind.ALLOC) & np.isin(cols["op"], (5, 6)))
    rows = [{c: int(v[i]) for c, v in cols.items()} for i in np.nonzero(keep)[0]]
    for row, ref in zip(rows, like, strict=False):
        for c in ("name", *STRING_FLAGS):
            if isinstance(ref[c], str):
                row[c] = log.strings[row[c]]
        loc = log.locations[row["loc"]] if row["loc"] >= 0 else None
        row["loc"] = None if loc is None else (os.path.basename(loc.file), loc.line, loc.function)
    return rows


@pytest.mark.parametrize("kernels", ["python", "numpy", "numpy-small-chunks", "compiled", "c"])
def test_finalize_matches_the_reference(record_c, tmp_path, monkeypatch, kernels):
    run = record_c("omp/finalize_mix.c", env={"QUIVER_KEEP_RAW": "1"})
    assert run.returncode == 0, run.stderr
    raw = Path(str(run.log) + ".raw")
    expected = reference_rows(raw)
    if kernels == "python":  # the kernels interpreted
        monkeypatch.setenv("QUIVER_JIT", "never")
    if kernels == "numpy-small-chunks":  # a real run's rows span many chunks and transposed blocks
        monkeypatch.setattr(finalize_numpy, "CHUNK", 8)
        monkeypatch.setattr(finalize_numpy, "BLOCK", 3)
    chosen = {"python": lambda: finalize_kernels.KERNELS, "numpy": lambda: finalize_numpy.NUMPY,
              "numpy-small-chunks": lambda: finalize_numpy.NUMPY,
              "compiled": finalize_kernels.compiled, "c": lambda: finalize_c.C}[kernels]()
    monkeypatch.setattr(finalize_mod, "kernels", lambda events: chosen)
    out = tmp_path / f"again-{kernels}.arrow"
    finalize_mod.finalize(raw, out)
    got = log_rows(out, expected)
    assert len(got) == len(expected)
    for i, (g, e) in enumerate(zip(got, expected, strict=True)):
        assert g == e, f"row {i}"
    # what the reference is checked on: several threads, a `target data` region, located target tasks,
    # global and stack objects
    assert len({r["thread"] for r in expected}) >= 3
    assert any(r["op"] == ConstructKind.TARGET_DATA and r["kind"] == EventKind.CONSTRUCT_BEGIN for r in expected)
    assert [r["loc"][1] for r in expected if r["kind"] == EventKind.TASK_CREATE] == [17, 19]
    log = read_log(out)
    objects = (log.col("kind") == EventKind.ALLOC) & np.isin(log.col("op"), (5, 6))
    assert sorted(log.strings[n] for n in log.col("name")[objects]) == ["g", "s"]
    assert read_log(run.log).columns().keys() == log.columns().keys()


def _same_log(a: Path, b: Path, same_run: bool = True) -> None:
    """Both logs read identically: every column, the strings, the locations and the run metadata
    (unless `same_run` is False: `trace record` adds what it knows of the command line)."""
    la, lb = read_log(a), read_log(b)
    assert la.num_events == lb.num_events > 0
    ca, cb = la.columns(), lb.columns()
    for name in ca:
        assert ca[name].dtype == cb[name].dtype and np.array_equal(ca[name], cb[name]), name
    assert la.strings == lb.strings and la.locations == lb.locations
    assert la.run == lb.run or not same_run


def _finalize_both_ways(raw: Path, tmp_path: Path, monkeypatch) -> tuple[Path, Path, Path]:
    """The raw directory finalized by the plain writer (no pyarrow) uncompressed and zstd-compressed
    (formats/zstd.py), and by pyarrow with zstd."""
    from quiver.formats import ipc_file

    written = []
    plain_batch = ipc_file.IpcFileWriter.write_batch
    monkeypatch.setattr(ipc_file.IpcFileWriter, "write_batch",
                        lambda self, *a, **k: written.append(self.compression) or plain_batch(self, *a, **k))
    monkeypatch.setattr(finalize_mod, "PLAIN_MAX_ROWS", 1 << 30)
    plain = finalize_mod.finalize(raw, tmp_path / "plain.arrow") and tmp_path / "plain.arrow"
    assert written and set(written) == {None}, "the plain writer was not used"
    monkeypatch.setattr(finalize_mod, "PLAIN_MAX_ROWS", 0)
    written.clear()
    plain_zstd = finalize_mod.finalize(raw, tmp_path / "plain-zstd.arrow") and tmp_path / "plain-zstd.arrow"
    assert written and set(written) == {"zstd"}, "the plain writer did not compress"
    written.clear()
    monkeypatch.setattr(finalize_mod, "plain_engine_for", lambda compression: compression is None)  # no libzstd
    arrow = finalize_mod.finalize(raw, tmp_path / "zstd.arrow") and tmp_path / "zstd.arrow"
    assert not written, "the pyarrow writer was not used"
    return plain, plain_zstd, arrow


def test_plain_and_pyarrow_writers_give_the_same_log(record_c, tmp_path, monkeypatch):
    """A small run's log is written without pyarrow (formats/ipc_file.py): it must read exactly like the
    zstd log pyarrow writes from the same raw records, checksums included (read_log verifies them)."""
    run = record_c("omp/finalize_mix.c", env={"QUIVER_KEEP_RAW": "1"})
    assert run.returncode == 0, run.stderr
    plain, plain_zstd, arrow = _finalize_both_ways(Path(str(run.log) + ".raw"), tmp_path, monkeypatch)
    _same_log(plain, arrow)
    _same_log(plain_zstd, arrow)
    _same_batches(plain_zstd, arrow)
    _same_log(run.log, arrow, same_run=False)   # `trace record` itself took the plain path for this small run


def _same_batches(a: Path, b: Path) -> None:
    """The record batches of both files as pyarrow reads them, with their custom metadata (checksums,
    summary, the constant-column hint of compressed batches)."""
    import pyarrow as pa
    from pyarrow import ipc

    fa, fb = ipc.open_file(pa.memory_map(str(a))), ipc.open_file(pa.memory_map(str(b)))
    assert fa.num_record_batches == fb.num_record_batches > 0
    for i in range(fa.num_record_batches):
        x, y = fa.get_batch_with_custom_metadata(i), fb.get_batch_with_custom_metadata(i)
        assert x.batch.equals(y.batch) and x.custom_metadata == y.custom_metadata


@pytest.mark.skipif(shutil.which("mpiexec.mpich") is None, reason="mpich is not installed")
def test_plain_and_pyarrow_writers_agree_on_two_ranks(trace_cli_run, tmp_path, monkeypatch):
    exe = tmp_path / "fig4b_race"
    built = trace_cli_run("mpicc", "-g", str(Path(__file__).parents[1] / "programs/mpi/fig4b_race.c"), "-o", str(exe))
    assert built.returncode == 0, built.stderr
    log = tmp_path / "two.arrow"
    rec = subprocess.run([sys.executable, "-m", "quiver.cli", "record", "-n", "2", "-o", str(log), "--", str(exe)],
                         capture_output=True, text=True, check=False, cwd=tmp_path,
                         env={**os.environ, "QUIVER_KEEP_RAW": "1"})
    assert log.exists(), rec.stderr
    plain, plain_zstd, arrow = _finalize_both_ways(Path(str(log) + ".raw"), tmp_path, monkeypatch)
    _same_log(plain, arrow)
    _same_log(plain_zstd, arrow)
    assert set(read_log(plain).col("rank").tolist()) == {0, 1}


@pytest.mark.parametrize("kernels", ["python", "numpy", "compiled", "c", "record"])
def test_stored_stats_count_the_blocks_of_planes(record_c, tmp_path, monkeypatch, kernels):
    """The stats finalize stores (what `trace info` prints without reading the events) count the blocks
    the ACCESS rows stand for: strided runs' blocks times their planes (format version 5), by every
    scan implementation and by `trace record`'s small-run path."""
    from quiver.formats.stats import STATS_KEY, LogStats

    run = record_c(Path(__file__).resolve().parents[1] / "programs" / "nests" / "redblack_odd.c", opt="-O2",
                   env={"QUIVER_KEEP_RAW": "1"})
    assert run.returncode == 0, run.stderr
    out = run.log
    if kernels != "record":
        if kernels == "python":
            monkeypatch.setenv("QUIVER_JIT", "never")
        chosen = {"python": lambda: finalize_kernels.KERNELS, "numpy": lambda: finalize_numpy.NUMPY,
                  "compiled": finalize_kernels.compiled, "c": lambda: finalize_c.C}[kernels]()
        monkeypatch.setattr(finalize_mod, "kernels", lambda events: chosen)
        out = tmp_path / f"again-{kernels}.arrow"
        finalize_mod.finalize(Path(str(run.log) + ".raw"), out)
    log = read_log(out)
    cols = log.columns()
    access = cols["kind"] == EventKind.ACCESS
    planes = np.maximum(cols["name"][access], 1)
    assert planes.max() >= 2
    want = int((np.maximum(cols["aux2"][access], 1) * planes).sum())
    assert LogStats.from_json(log.run[STATS_KEY]).blocks == want
