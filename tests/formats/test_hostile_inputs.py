"""Hostile and careless inputs to the reading commands (issue 21): one line on stderr and exit 2,
never a hang, a traceback, a file opened outside a split directory, or a write through a link."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from quiver.formats import ConstructKind, DataOpKind, LogBuilder, LogFormatError, MapType, open_logs, read_log
from quiver.formats.writer import LogWriter, write_log

from quiver.info import SCAN_COLUMNS

TRACE = str(Path(sys.executable).with_name("trace"))


def trace(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([TRACE, *args], capture_output=True, text=True, timeout=120, cwd=cwd, check=False)


def unusable(r: subprocess.CompletedProcess, message: str | None = None) -> None:
    assert r.returncode == 2, r.stderr
    assert len(r.stderr.splitlines()) == 1 and r.stderr.startswith("trace: error: "), r.stderr
    if message is not None:
        assert message in r.stderr, r.stderr


@pytest.fixture(params=["zstd", "plain"])
def log_engine(request, monkeypatch) -> str:
    """Every log these tests write, once zstd-compressed (read through pyarrow) and once as `trace record`
    writes a small run's (formats/ipc_file.py), which is read without pyarrow (formats/ipc_read.py)."""
    if request.param == "plain":
        real = LogWriter.__init__

        def plain(self, path, **kw) -> None:
            real(self, path, **{**kw, "compression": None, "engine": "plain"})

        monkeypatch.setattr(LogWriter, "__init__", plain)
    return request.param


def builder(ranks: int = 1) -> LogBuilder:
    b = LogBuilder(ranks=ranks)
    c = b.construct_begin(ConstructKind.TARGET, ("a.c", 4, "main"))
    b.map_clause(c, "a", 0x1000, 64, MapType.TO, ("a.c", 4, "main"))
    b.data_op(DataOpKind.ALLOC, 0x1000, 0x9000, 64, construct=c)
    b.data_op(DataOpKind.TRANSFER_TO, 0x1000, 0x9000, 64, construct=c)
    b.access(0x9000, 8, write=True, device=0, construct=c, stride=16, blocks=4)
    b.data_op(DataOpKind.DELETE, 0x1000, 0x9000, 64, construct=c)
    b.construct_end(c)
    for r in range(1, ranks):
        b.access(0x1000, 4, rank=r)
    return b


@pytest.mark.parametrize("command", [("analyze",), ("info",), ("explain",), ("export", "--to", "chrome")])
def test_a_fifo_is_refused_without_opening_it(tmp_path, command):
    fifo = tmp_path / "run.arrow"
    os.mkfifo(fifo)
    r = trace(command[0], str(fifo), *command[1:])     # a hang would hit the 120 s timeout
    unusable(r, "not a regular file")


def test_a_fifo_as_a_rank_file_is_refused(tmp_path):
    d = tmp_path / "run.d"
    builder(2).write_split(d)
    (d / "rank-00001.arrow").unlink()
    os.mkfifo(d / "rank-00001.arrow")
    unusable(trace("analyze", str(d)), "not a regular file")


def _manifest(d: Path, **changes) -> None:
    m = json.loads((d / "manifest.json").read_text())
    m.update(changes)
    (d / "manifest.json").write_text(json.dumps(m))


@pytest.mark.parametrize(("files", "message"), [
    (["../outside/rank-00000.arrow", "rank-00001.arrow"], "is not a file name rank-N.arrow"),
    (["/etc/passwd", "rank-00001.arrow"], "is not a file name rank-N.arrow"),
    (["rank-00000.arrow", "rank-00000.arrow"], "rank 0 is listed more than once"),
    (["rank-00000.arrow", "rank-0.arrow"], "rank 0 is listed more than once"),
])
def test_a_manifest_cannot_point_outside_or_repeat_a_rank(tmp_path, files, message):
    d = tmp_path / "run.d"
    builder(2).write_split(d)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "rank-00000.arrow").write_bytes((d / "rank-00000.arrow").read_bytes())
    _manifest(d, files=files)
    for command in ("analyze", "info", "explain"):
        r = trace(command, str(d))
        unusable(r, message)
        assert "passwd" not in r.stderr or "/etc/passwd'" in r.stderr    # named as given, never opened


@pytest.mark.usefixtures("log_engine")
def test_a_rank_file_linking_out_or_holding_another_rank_is_refused(tmp_path):
    d = tmp_path / "run.d"
    builder(2).write_split(d)
    (tmp_path / "elsewhere.arrow").write_bytes((d / "rank-00001.arrow").read_bytes())
    (d / "rank-00001.arrow").unlink()
    (d / "rank-00001.arrow").symlink_to(tmp_path / "elsewhere.arrow")
    unusable(trace("analyze", str(d)), "links outside the directory")
    (d / "rank-00001.arrow").unlink()
    (d / "rank-00001.arrow").write_bytes((d / "rank-00000.arrow").read_bytes())
    unusable(trace("analyze", str(d)), "holds rank 0, not rank 1")
    _manifest(d, ranks=3)
    unusable(trace("info", str(d)), "'ranks' is 3 but 2 files are listed")


def _crafted(tmp_path: Path, **row) -> Path:
    """The builder's log with one value of its strided ACCESS row (or given columns) replaced."""
    cols = builder().columns()
    i = int(np.flatnonzero(cols["kind"] == 50)[0])
    for name, value in row.items():
        cols[name][i] = value
    b = builder()
    path = tmp_path / "crafted.arrow"
    write_log(path, cols, strings=b.strings, locations=b.locations, run=b.run)
    return path


@pytest.mark.parametrize(("row", "message"), [
    ({"aux2": 1 << 62}, "strided access run outside the 48-bit address space"),
    ({"aux2": 1 << 30, "addr2": 9}, "strided access runs stand for 1073741824 blocks"),
    ({"rank": 999_999_937}, "rank out of range (999999937)"),
    ({"kind": -3}, "unknown event kind (-3)"),
    ({"kind": 99}, "unknown event kind (99)"),
    ({"device": 1 << 17}, "unknown device number (131072)"),
    ({"loc": 12}, "location id out of range (12)"),
    ({"size": 1 << 60}, "48-bit address space"),
    # planes of the strided row (format version 5; its plane spans 3 * 16 + 8 = 56 bytes)
    ({"name": 3, "aux2": 1}, "planes of an access run that is not strided (3)"),
    ({"name": 3, "id2": 56}, "planes of a strided access run that overlap (plane stride within the plane's span) (56)"),
    ({"name": 3, "id2": 72}, "at another phase (plane stride not a multiple of the stride) (72)"),
    ({"name": 1 << 20, "id2": 1 << 30}, "strided access run outside the 48-bit address space"),
    ({"name": 1 << 25, "id2": 64}, "strided access runs stand for 134217728 blocks"),
    ({"name": -5}, "negative plane count (-5)"),
    # the strided row made a masked run (format version 6: op bit 4, 4 slots of 8 bytes every 16, bitmap id2)
    ({"op": 5, "id2": 0b11001}, "masked access run with a bit beyond its slots (25)"),
    ({"op": 5, "id2": 0b1010}, "masked access run whose first slot is absent (bit 0 clear) (10)"),
    ({"op": 5, "id2": 0b0011}, "masked access run whose last slot is absent (bit slots - 1 clear) (3)"),
    ({"op": 5, "aux2": 65, "id2": -(1 << 63) | 1}, "masked access run of a slot count outside 2-64 (65)"),
    ({"op": 5, "aux2": 1, "id2": 1}, "masked access run of a slot count outside 2-64 (1)"),
    ({"op": 5, "id2": 0b1001, "addr2": 4}, "masked access run whose slot stride is below its size (4)"),
    ({"op": 5, "id2": 0b1001, "name": 2}, "planes of a masked access run (2)"),
])
@pytest.mark.usefixtures("log_engine")
def test_crafted_values_are_unusable_input_for_every_command(tmp_path, row, message):
    path = _crafted(tmp_path, **row)
    commands = [("analyze",)]
    if set(row) <= set(SCAN_COLUMNS):   # `trace info --verify` reads (and so validates) every column
        commands.append(("info", "--verify"))
    if "aux2" in row and "addr2" not in row:   # the row that made every command spin: all of them
        commands += [("explain",), ("export", "--to", "chrome", "-o", "-")]
    for command in commands:
        unusable(trace(command[0], str(path), *command[1:]), message)


@pytest.mark.usefixtures("log_engine")
def test_unknown_data_op_is_not_ignored(tmp_path):
    cols = builder().columns()
    cols["op"][int(np.flatnonzero(cols["kind"] == 23)[0])] = 9
    path = tmp_path / "op.arrow"
    write_log(path, cols, strings=builder().strings, locations=builder().locations, run=builder().run)
    with pytest.raises(LogFormatError, match=r"unknown operation code for its event kind \(9\)"):
        read_log(path).table  # noqa: B018


@pytest.mark.usefixtures("log_engine")
def test_a_damaged_byte_names_the_batch_and_what_is_lost(tmp_path):
    path = builder().write(tmp_path / "run.arrow", compression=None)
    data = bytearray(path.read_bytes())
    from quiver.formats import addr_delta

    stored = addr_delta.encode(builder().columns()["addr"]).tobytes()   # the addr column as stored (v4)
    at = data.index(stored) + len(stored) // 2
    data[at] ^= 0x01
    path.write_bytes(bytes(data))
    with pytest.raises(LogFormatError, match=r"damaged log \(batch 0\): column 'addr' does not match its checksum; "
                                             r"its events are lost: ranks 0, threads 0, time 0-\d+ ns"):
        read_log(path).table  # noqa: B018
    unusable(trace("analyze", str(path)), "damaged log (batch 0)")


@pytest.mark.usefixtures("log_engine")
def test_version_2_logs_still_read(tmp_path):
    """A log of the previous format version (no checksums) is read, unchecked but value-validated."""
    from quiver.formats import schema, writer

    old = schema.FORMAT_VERSION
    try:
        writer.FORMAT_VERSION = 2
        path = builder().write(tmp_path / "v2.arrow")
    finally:
        writer.FORMAT_VERSION = old
    log = read_log(path)
    assert log.version == 2 and log.table.num_rows == log.num_events > 0
    assert open_logs(path).files == [path]


def test_bad_options_and_outputs_are_unusable_input(tmp_path):
    path = builder().write(tmp_path / "run.arrow")
    unusable(trace("analyze", str(path), "--dask", "garbage"), "not a scheduler address")
    unusable(trace("analyze", str(path), "-o", str(tmp_path / "missing" / "r.txt")), "does not exist")
    (tmp_path / "afile").write_text("x")
    unusable(trace("analyze", str(path), "-o", str(tmp_path / "afile" / "r.txt")))
    unusable(trace("analyze", str(path), "-o", str(tmp_path)))
    unusable(trace("explain", str(path), "-o", str(tmp_path / "missing" / "r.txt")), "does not exist")


def test_report_outputs_never_write_through_a_planted_link(tmp_path):
    path = builder().write(tmp_path / "run.arrow")
    secret = tmp_path / "secret"
    secret.write_text("private\n")
    for name in ("report.txt.part", ".report.txt.tmp", "t.json.part", "e.txt.part"):
        (tmp_path / name).symlink_to(secret)
    assert trace("analyze", str(path), "-o", str(tmp_path / "report.txt")).returncode in (0, 1)
    assert trace("export", str(path), "--to", "chrome", "-o", str(tmp_path / "t.json")).returncode == 0
    assert trace("explain", str(path), "-o", str(tmp_path / "e.txt")).returncode == 0
    assert secret.read_text() == "private\n"
    assert (tmp_path / "report.txt").is_file() and not (tmp_path / "report.txt").is_symlink()


def test_an_output_that_is_a_device_or_fifo_is_refused_and_left_as_it_is(tmp_path):
    """Renaming a finished file over `-o /dev/null` replaced the device node itself (as root: for
    every process on the machine). A FIFO stands in for the device here; a link to it as well."""
    path = builder().write(tmp_path / "run.arrow")
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    (tmp_path / "to-fifo").symlink_to(fifo)
    for out in (fifo, tmp_path / "to-fifo"):
        for command in (("export", "--to", "chrome"), ("analyze",), ("explain",)):
            unusable(trace(command[0], str(path), *command[1:], "-o", str(out)),
                     f"{out} is not a regular file; choose another output")
    assert fifo.is_fifo() and (tmp_path / "to-fifo").is_symlink()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fifo", "run.arrow", "to-fifo"]   # no temporaries left


@pytest.mark.usefixtures("log_engine")
def test_a_device_the_run_did_not_have_is_rejected_but_rma_datatype_sizes_are_not(tmp_path):
    from quiver.formats import RmaOp

    b = builder()
    b.run["devices"] = 1
    b.rma(0, RmaOp.ACCUMULATE, 1, 0, 0, 8, datatype_size=8)     # `device` holds the datatype size
    path = b.write(tmp_path / "ok.arrow")
    assert read_log(path).table.num_rows > 0
    cols = b.columns()
    cols["device"][int(np.flatnonzero(cols["kind"] == 23)[0])] = 77
    write_log(tmp_path / "bad.arrow", cols, strings=b.strings, locations=b.locations, run=b.run)
    with pytest.raises(LogFormatError, match=r"unknown device number \(77\)"):
        read_log(tmp_path / "bad.arrow").table  # noqa: B018


@pytest.mark.usefixtures("log_engine")
def test_info_describes_what_is_readable_and_what_a_damaged_batch_lost(tmp_path):
    b = builder()
    cols = b.columns()
    chunks = []
    for t0 in (0, 1000, 2000):            # three record batches, each a copy of the run at its own times
        chunk = {k: v.copy() for k, v in cols.items()}
        chunk["time_ns"] = chunk["time_ns"] + t0
        chunk["addr"] = chunk["addr"] + np.uint64(0x10000 * (t0 // 1000))     # distinct bytes per batch
        chunks.append(chunk)
    path = tmp_path / "run.arrow"
    write_log(path, chunks, strings=b.strings, locations=b.locations, run=b.run, compression=None)
    data = bytearray(path.read_bytes())
    # in batch 1's time_ns column (`trace info` reads only the columns it prints)
    at = data.index(np.array([1000 + int(cols["time_ns"][0])], dtype=np.int64).tobytes())
    data[at] ^= 0x01
    path.write_bytes(bytes(data))
    r = trace("info", str(path))
    assert r.returncode == 2
    damaged = [line for line in r.stdout.splitlines() if line.startswith("DAMAGED")]
    assert len(damaged) == 1 and "(batch 1): column 'time_ns' does not match its checksum" in damaged[0]
    assert r.stderr == f"trace: error: {damaged[0].removeprefix('DAMAGED: ')}\n"
    assert damaged[0].endswith(f"its events are lost: ranks 0, threads 0, time {1000 + int(cols['time_ns'][0])}-"
                               f"{1000 + int(cols['time_ns'][-1])} ns")
    assert f"({2 * len(cols['kind'])} events)" in r.stdout           # the two readable batches are counted


def test_footer_reads_hand_arrow_no_python_file_object(tmp_path, monkeypatch):
    """is_quiver_log and log_run read the footer through a file Arrow owns: through a Python file object
    a pool thread may hold Python buffers that need the GIL (apache/arrow#50482: a fuzzing run hung)."""
    import pyarrow as pa
    from pyarrow import ipc
    from quiver.formats import is_quiver_log
    from quiver.formats.reader import log_run

    path = builder().write(tmp_path / "run.arrow")
    sources = []
    real = ipc.open_file

    def spy(source, *args, **kw):
        sources.append(source)
        return real(source, *args, **kw)

    monkeypatch.setattr(ipc, "open_file", spy)
    assert is_quiver_log(path)
    assert log_run(path)["ranks"] == 1
    assert len(sources) == 2 and all(isinstance(s, pa.NativeFile) and not isinstance(s, pa.PythonFile)
                                     for s in sources), sources
    assert is_quiver_log(tmp_path) is False
