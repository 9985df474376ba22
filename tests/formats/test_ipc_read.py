"""Small logs read without pyarrow (formats/ipc_read.py): the same columns, metadata, reports and errors as
through pyarrow, on real recorded logs and on damaged copies of one; `trace analyze` of a small recorded
log imports no pyarrow."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from quiver.formats import LogFormatError, read_log
from quiver.formats import reader as reader_mod
from quiver.formats.ipc_read import PlainIpcFile, Unsupported
from quiver.formats.schema import COLUMN_NAMES

pytestmark = pytest.mark.clang

# (program, read without pyarrow): map_loop's 65,000 events are more than a log written uncompressed holds
# (tracer/finalize.py PLAIN_MAX_ROWS): zstd-compressed, read through pyarrow
PROGRAMS = (("omp/seed000_fig2.c", True), ("omp/seed000_fig6_swap.c", True), ("omp/map_loop.c", False))


def _pyarrow_only(monkeypatch) -> None:
    monkeypatch.setattr(reader_mod, "PLAIN_MAX_BYTES", -1)


def _everything(path: Path) -> tuple:
    """What a reader gives of ``path``: the metadata, every batch (all columns and a projection), every
    column; or the one-line error."""
    try:
        log = read_log(path)
        batches = [{n: (c.dtype.str, c.tolist()) for n, c in log.batch(i).items()} for i in range(log.num_batches)]
        batches += [{n: c.tolist() for n, c in log.batch(i, ["kind", "op", "aux2"]).items()}
                    for i in range(log.num_batches)]
        columns = {n: (log.col(n).dtype.str, log.col(n).tolist()) for n in COLUMN_NAMES}
        return (log.run, log.strings, log.locations, log.version, log.num_events, log.num_batches, batches, columns)
    except LogFormatError as e:
        return ("error", str(e))


@pytest.fixture(scope="module")
def recorded(tmp_path_factory, omp_build) -> list[Path]:
    out = []
    for src, _ in PROGRAMS:
        log = tmp_path_factory.mktemp("plain") / (Path(src).stem + ".arrow")
        r = subprocess.run([str(Path(sys.executable).with_name("trace")), "record", "-o", str(log), "--",
                            str(omp_build(src))], capture_output=True, text=True, cwd=log.parent, check=False)
        assert log.exists(), r.stderr
        out.append(log)
    return out


def test_recorded_logs_read_as_through_pyarrow(recorded, monkeypatch):
    for log, (_, plain_read) in zip(recorded, PROGRAMS, strict=True):
        assert (read_log(log)._plain is not None) == plain_read
        plain = _everything(log)
        assert plain[0] != "error" and plain[4] > 0
        _pyarrow_only(monkeypatch)
        assert read_log(log)._plain is None
        assert _everything(log) == plain
        monkeypatch.undo()
        assert read_log(log).table.equals(_arrow_table(log, monkeypatch), check_metadata=True)


def _arrow_table(log: Path, monkeypatch):
    _pyarrow_only(monkeypatch)
    try:
        return read_log(log).table
    finally:
        monkeypatch.undo()


PROBE = """
import sys
from quiver.formats import reader
if sys.argv[2] == "pyarrow":
    reader.PLAIN_MAX_BYTES = -1
from quiver import cli
code = cli.run(["analyze", "-f", sys.argv[3], sys.argv[1]])
print(code, *sorted(m for m in ("pyarrow", "quiver.tracer.recover", "subprocess", "tempfile") if m in sys.modules),
      file=sys.stderr)
"""


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_a_small_log_is_analysed_without_pyarrow_and_reported_alike(recorded, fmt):
    """Nor tracer/recover.py (no raw directory beside the log), nor what builds a C library (built)."""
    runs = {how: subprocess.run([sys.executable, "-c", PROBE, str(recorded[0]), how, fmt], capture_output=True,
                                text=True, check=True) for how in ("plain", "pyarrow")}
    assert runs["plain"].stderr.split() == ["1"]
    assert "pyarrow" in runs["pyarrow"].stderr.split()
    assert runs["plain"].stdout == runs["pyarrow"].stdout
    if fmt == "json":
        assert {f["kind"] for f in json.loads(runs["plain"].stdout)["findings"]} == {"use-of-stale-data", "data-race"}


def _variants(data: bytes, where: range):
    """One bit flipped at every offset of ``where``, a 0xff and a zero word at every 4th, cuts of the file."""
    for off in where:
        flipped = bytearray(data)
        flipped[off] ^= 1 << (off % 8)
        yield bytes(flipped)
        if off % 4 == 0:
            for word in (b"\xff" * 4, b"\0" * 4):
                v = bytearray(data)
                v[off:off + 4] = word[:len(data) - off]
                yield bytes(v)
    for cut in range(0, len(data), 97):
        yield data[:cut]


def _arrow_view(data: bytes) -> tuple:
    """What pyarrow reads of ``data`` (an exception's type if it reads nothing) in PlainIpcFile's terms."""
    import pyarrow as pa
    from pyarrow import ipc

    f = ipc.open_file(pa.BufferReader(data))
    batches = [f.get_batch_with_custom_metadata(i) for i in range(f.num_record_batches)]
    return ([(x.name, x.type.to_pandas_dtype().__name__) for x in f.schema], f.schema.metadata or {},
            [(b.batch.num_rows, dict(b.custom_metadata or {}), [c.to_numpy().tolist() for c in b.batch.columns])
             for b in batches])


def _plain_view(data: bytes) -> tuple | None:
    try:
        f = PlainIpcFile(np.frombuffer(data, np.uint8))
    except Unsupported:
        return None
    names = [n for n, _ in f.fields]
    return ([(n, d.type.__name__) for n, d in f.fields], f.metadata,
            [(rows, meta, [c.tolist() for c in f.batch(i, names)[0].values()])
             for i, (rows, meta, _) in enumerate(f.batches)])


def test_what_the_plain_reader_accepts_pyarrow_reads_alike(recorded):
    """Every bit of the footer and of each batch's message header flipped (the flatbuffers this module
    parses), words overwritten, cuts: whatever PlainIpcFile accepts, pyarrow reads and reads alike."""
    data = recorded[0].read_bytes()
    f = PlainIpcFile(np.frombuffer(data, np.uint8))
    footer = len(data) - 10 - int.from_bytes(data[-10:-6], "little")
    spans = [range(footer, len(data))]
    for rows, _, columns in f.batches:
        body = columns[0][0]
        spans.append(range(body - 8 * (rows > 0) - 512, body))   # the message header before its body
    accepted = 0
    for where in spans:
        for variant in _variants(data, where):
            plain = _plain_view(variant)
            if plain is not None:
                accepted += 1
                assert _arrow_view(variant) == plain
    assert accepted > 100


def test_damaged_copies_read_or_fail_as_through_pyarrow(recorded, tmp_path, monkeypatch):
    """Whatever the damage, the log read without pyarrow gives what pyarrow's gives: the same columns after
    the same checks, or the same one-line error (ipc_read.py never decides; it hands anything unexpected to
    pyarrow)."""
    data = recorded[0].read_bytes()
    plain_read = 0
    for k, variant in enumerate(_variants(data, range(0, len(data), 41))):
        path = tmp_path / f"v{k}.arrow"
        path.write_bytes(variant)
        got = _everything(path)
        plain_read += _plain_view(variant) is not None
        _pyarrow_only(monkeypatch)
        assert _everything(path) == got, k
        monkeypatch.undo()
        path.unlink()
    assert plain_read > 100   # most damage is in the column values, read without pyarrow
