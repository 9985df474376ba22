"""The plain Arrow IPC writer (formats/ipc_file.py) against pyarrow's: same schema, metadata, batches
and batch metadata, readable by read_log with its checksums; and a damaged value is still caught."""

from __future__ import annotations

import io

import numpy as np
import pyarrow as pa
import pytest
from pyarrow import ipc
from quiver.formats import LogFormatError, LogWriter, addr_delta, read_log
from quiver.formats.ipc_file import IpcFileWriter
from quiver.formats.schema import COLUMN_NAMES, COLUMNS, arrow_schema


def _batches(sizes: tuple[int, ...]) -> list[tuple[dict[str, np.ndarray], dict[bytes, bytes]]]:
    rng = np.random.default_rng(16)
    out = []
    for i, n in enumerate(sizes):
        cols = {c: rng.integers(-(1 << 62), 1 << 62, n).astype(t) for c, t in COLUMNS}
        out.append((cols, {b"quiver.xxh3": f"batch {i}".encode(), b"quiver.summary": b"{}"}))
    return out


@pytest.mark.parametrize("sizes", [(5, 0, 13), (0,), (1, 7, 64, 3)])
def test_reads_like_pyarrows_uncompressed_file(sizes):
    meta = {b"quiver.format": b"quiver-events", b"quiver.strings": "[\"é\", \"\"]".encode()}
    batches = _batches(sizes)
    plain = io.BytesIO()
    w = IpcFileWriter(plain, COLUMNS, meta)
    for cols, m in batches:
        w.write_batch(cols, m)
    w.close()
    schema = arrow_schema(meta)
    ref = io.BytesIO()
    with ipc.new_file(ref, schema) as rw:
        for cols, m in batches:
            rw.write_batch(pa.RecordBatch.from_arrays([pa.array(cols[n]) for n in COLUMN_NAMES], schema=schema),
                           custom_metadata=m)
    got, want = ipc.open_file(pa.BufferReader(plain.getvalue())), ipc.open_file(pa.BufferReader(ref.getvalue()))
    assert got.schema.equals(want.schema, check_metadata=True)
    assert got.num_record_batches == want.num_record_batches == len(sizes)
    for i in range(len(sizes)):
        g, w2 = got.get_batch_with_custom_metadata(i), want.get_batch_with_custom_metadata(i)
        g.batch.validate(full=True)
        assert g.batch.equals(w2.batch) and g.custom_metadata == w2.custom_metadata
    assert ipc.open_stream(pa.BufferReader(plain.getvalue()[8:])).read_all().equals(want.read_all())


def _columns(n: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(3)
    return {"time_ns": np.sort(rng.integers(0, 10**9, n)), "kind": np.full(n, 50, np.int16),
            "addr": rng.integers(0, 1 << 47, n).astype(np.uint64), "size": np.full(n, 8, np.uint64),
            "thread": rng.integers(0, 4, n).astype(np.int32)}


def test_log_writer_plain_engine_reads_like_pyarrow(tmp_path):
    cols = _columns(3000)
    logs = {}
    for engine in ("plain", "pyarrow"):
        with LogWriter(tmp_path / f"{engine}.arrow", strings=["a", "b"], locations=[("x.c", 3, 1, "main")],
                       run={"program": "x"}, compression=None, engine=engine) as w:
            w.write_columns({c: v[:1000] for c, v in cols.items()})
            w.write_columns({c: v[1000:] for c, v in cols.items()})
        logs[engine] = read_log(tmp_path / f"{engine}.arrow")
    a, b = logs["plain"], logs["pyarrow"]
    assert a.num_batches == b.num_batches == 2
    assert a.strings == b.strings and a.locations == b.locations and a.run == b.run
    for name in COLUMN_NAMES:
        assert np.array_equal(a.col(name), b.col(name)), name
        assert np.array_equal(a.batch(1, [name])[name], b.batch(1, [name])[name]), name


def test_a_damaged_value_in_a_plain_log_is_caught(tmp_path):
    path = tmp_path / "run.arrow"
    cols = _columns(100)
    with LogWriter(path, compression=None, engine="plain") as w:
        w.write_columns(cols)
    data = bytearray(path.read_bytes())
    at = bytes(data).find(addr_delta.encode(cols["addr"])[:4].tobytes())   # as stored (format version 4)
    assert at > 0
    data[at + 3] ^= 0x10
    path.write_bytes(bytes(data))
    with pytest.raises(LogFormatError, match="column 'addr' does not match its checksum"):
        read_log(path).batch(0)


def test_plain_engine_compresses_with_zstd_only(tmp_path):
    with pytest.raises(ValueError):
        LogWriter(tmp_path / "x.arrow", engine="plain", compression="lz4")
    with pytest.raises(ValueError):
        IpcFileWriter(io.BytesIO(), COLUMNS, {}, compression="lz4")


def _zstd_file_pair(sizes: tuple[int, ...], threads: int = 2) -> tuple[bytes, bytes]:
    """The same batches written zstd-compressed by the plain writer and by pyarrow (level 3 both)."""
    meta = {b"quiver.format": b"quiver-events"}
    batches = _batches(sizes)
    for i, (cols, _) in enumerate(batches):   # some columns repetitive, as a log's are
        if len(cols["kind"]):
            cols["kind"][:] = 50
            cols["size"][:] = np.arange(len(cols["size"])) % 3 * 8
            cols["rank"][:] = i
    plain = io.BytesIO()
    w = IpcFileWriter(plain, COLUMNS, meta, compression="zstd", threads=threads)
    for cols, m in batches:
        w.write_batch(cols, m)
    w.close()
    schema = arrow_schema(meta)
    ref = io.BytesIO()
    options = ipc.IpcWriteOptions(compression=pa.Codec("zstd", compression_level=3))
    with ipc.new_file(ref, schema, options=options) as rw:
        for cols, m in batches:
            rw.write_batch(pa.RecordBatch.from_arrays([pa.array(cols[n]) for n in COLUMN_NAMES], schema=schema),
                           custom_metadata=m)
    return plain.getvalue(), ref.getvalue()


@pytest.mark.parametrize(("sizes", "threads"), [((5, 0, 13), 1), ((0,), 2), ((1, 7, 64, 3), 2), ((20000, 3), 2),
                                                 ((20000,), 1)])
def test_zstd_plain_writer_reads_like_pyarrows_compressed_file(sizes, threads):
    """Compressed without pyarrow (formats/zstd.py): pyarrow reads the same batches, and each batch's body
    (every buffer's uncompressed length, then its zstd frame) is the one pyarrow writes."""
    plain, ref = _zstd_file_pair(sizes, threads)
    got, want = ipc.open_file(pa.BufferReader(plain)), ipc.open_file(pa.BufferReader(ref))
    assert got.num_record_batches == want.num_record_batches == len(sizes)
    for i in range(len(sizes)):
        g, w2 = got.get_batch_with_custom_metadata(i), want.get_batch_with_custom_metadata(i)
        g.batch.validate(full=True)
        assert g.batch.equals(w2.batch) and g.custom_metadata == w2.custom_metadata
    bodies = [[m.body.to_pybytes() for m in ipc.MessageReader.open_stream(pa.BufferReader(f[8:]))
               if m.type == "record batch"] for f in (plain, ref)]
    assert bodies[0] == bodies[1]
    if sum(sizes) >= 20000:   # compressed: the repetitive columns (kind, size, rank: 14 bytes a row) shrink
        uncompressed = io.BytesIO()
        w = IpcFileWriter(uncompressed, COLUMNS, {b"quiver.format": b"quiver-events"})
        for cols, m in _batches(sizes):
            w.write_batch(cols, m)
        w.close()
        assert len(plain) < len(uncompressed.getvalue()) - 10 * sum(sizes)
    assert ipc.open_stream(pa.BufferReader(plain[8:])).read_all().equals(want.read_all())


def test_log_writer_plain_zstd_reads_like_pyarrow(tmp_path):
    """LogWriter's plain engine with zstd: the log read_log gives (checksums verified, the constant-column
    hint of compressed batches used) is the pyarrow engine's; and it is not the plain subset
    formats/ipc_read.py reads (that one refuses compressed batches: pyarrow reads it)."""
    from quiver.formats.integrity import META_CONSTANT
    from quiver.formats.ipc_read import PlainIpcFile, Unsupported

    cols = _columns(3000)
    logs = {}
    for engine in ("plain", "pyarrow"):
        with LogWriter(tmp_path / f"{engine}.arrow", strings=["a"], run={"program": "x"}, compression="zstd",
                       engine=engine) as w:
            w.write_columns({c: v[:1000] for c, v in cols.items()})
            w.write_columns({c: v[1000:] for c, v in cols.items()})
        logs[engine] = read_log(tmp_path / f"{engine}.arrow")
    a, b = logs["plain"], logs["pyarrow"]
    assert a.num_batches == b.num_batches == 2 and a.run == b.run
    for name in COLUMN_NAMES:
        assert np.array_equal(a.col(name), b.col(name)), name
    metas = [ipc.open_file(pa.memory_map(str(tmp_path / f"{e}.arrow"))).get_batch_with_custom_metadata(0).custom_metadata
             for e in ("plain", "pyarrow")]
    assert metas[0] == metas[1] and META_CONSTANT in metas[0]
    with pytest.raises(Unsupported):
        PlainIpcFile(np.frombuffer((tmp_path / "plain.arrow").read_bytes(), np.uint8))


def test_stored_addr_is_what_the_writer_would_store(tmp_path):
    cols = _columns(500)
    stored = addr_delta.encode(cols["addr"])
    paths = [tmp_path / "given.arrow", tmp_path / "computed.arrow"]
    for path, given in zip(paths, (stored, None), strict=True):
        with LogWriter(path, compression="zstd", engine="plain") as w:
            w.write_columns(cols, stored_addr=given)
    assert paths[0].read_bytes() == paths[1].read_bytes()
    with LogWriter(tmp_path / "bad.arrow", compression=None, engine="plain") as w, pytest.raises(ValueError):
        w.write_columns(cols, stored_addr=stored[:10])
