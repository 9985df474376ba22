"""The event-log format: round trips through the builder, schema checks, bulk reads without Python loops."""

from __future__ import annotations

import json

import numpy as np
import polars as pl
import pytest
from pyarrow import ipc
from quiver.formats import (
    COLUMN_NAMES,
    FORMAT_VERSION,
    ConstructKind,
    DataOpKind,
    EventKind,
    LogBuilder,
    LogFormatError,
    MapType,
    RmaOp,
    read_log,
)

import quiver


def small_log(path):
    b = LogBuilder(program="demo", argv=["./demo", "7"])
    b.alloc(0x1000, 400, site=("demo.c", 4, "main"))
    c = b.construct_begin(ConstructKind.TARGET, site=("demo.c", 9, "main"), nowait=True, task=3)
    b.map_clause(c, "b", 0x1000, 400, MapType.TO | MapType.FROM, site=("demo.c", 9, "main"), text="b[0:100]")
    b.data_op(DataOpKind.ALLOC, 0x1000, 0x9000, 400, construct=c, var="b")
    b.data_op(DataOpKind.TRANSFER_TO, 0x1000, 0x9000, 400, construct=c, var="b")
    b.kernel(c)
    b.access(0x9000, 4, device=0, construct=c, site=("demo.c", 11, "main"), thread=2)
    b.access(0x1000, 8, write=True, site=("demo.c", 14, "main"))
    b.construct_end(c)
    b.win_create(1, 0, 0x5000, 64, disp_unit=4)
    b.rma(0, RmaOp.PUT, 0, 1, 8, 4, site=("rma.c", 20, "main"))
    return b.write(path)


def test_builder_round_trip_keeps_order_strings_and_locations(tmp_path):
    log = read_log(small_log(tmp_path / "demo.arrow"))
    assert log.version == FORMAT_VERSION
    assert log.run["program"] == "demo" and log.run["argv"] == ["./demo", "7"]
    kinds = log.col("kind").tolist()
    assert kinds == [EventKind.ALLOC, EventKind.CONSTRUCT_BEGIN, EventKind.MAP_CLAUSE, EventKind.DATA_OP,
                     EventKind.DATA_OP, EventKind.KERNEL, EventKind.ACCESS, EventKind.ACCESS,
                     EventKind.CONSTRUCT_END, EventKind.WIN_CREATE, EventKind.RMA]
    assert np.all(np.diff(log.col("time_ns")) > 0)
    mc = int(np.flatnonzero(log.col("kind") == EventKind.MAP_CLAUSE)[0])
    assert log.string(int(log.col("name")[mc])) == "b"
    assert log.string(int(log.col("aux2")[mc])) == "b[0:100]"
    assert str(log.location(int(log.col("loc")[mc]))) == "demo.c:9 (main)"


def test_log_is_one_table_for_pyarrow_and_polars(tmp_path):
    path = small_log(tmp_path / "demo.arrow")
    table = ipc.open_file(str(path)).read_all()
    assert table.column_names == COLUMN_NAMES and table.num_rows == 11
    df = pl.read_ipc(path)
    assert df.columns == COLUMN_NAMES and df.height == 11
    meta = table.schema.metadata
    assert int(meta[b"quiver.format_version"]) == FORMAT_VERSION
    assert json.loads(meta[b"quiver.strings"]) == ["b", "b[0:100]"]


def test_open_gives_readable_family_frames(tmp_path):
    t = quiver.open(small_log(tmp_path / "demo.arrow"))
    maps = t.maps
    assert maps.select("variable", "clause", "bytes", "file", "line").row(0) == ("b", "b[0:100]", 400, "demo.c", 9)
    ops = t.data_ops
    assert ops["op"].to_list() == ["alloc", "transfer_to"]
    assert ops["device_addr"].to_list() == [0x9000, 0x9000]
    acc = t.accesses
    assert acc.select("side", "write", "line").rows() == [("device", False, 11), ("host", True, 14)]
    assert t.rma.select("op", "target", "target_disp", "line").row(0) == ("put", 1, 8, 20)
    assert t.counts()["accesses"] == 2 and t.counts()["rma"] == 1
    assert t.constructs.filter(pl.col("event") == "construct_begin")["flags"].to_list() == [1]


def test_ten_million_accesses_read_back_as_numpy_without_python_loop(tmp_path):
    n = 10_000_000
    b = LogBuilder()
    addr = np.arange(n, dtype=np.uint64) * 8 + 0x10000
    b.append_columns({"kind": np.full(n, EventKind.ACCESS, np.int16), "addr": addr,
                      "size": np.full(n, 8, np.uint64), "op": (np.arange(n) % 2).astype(np.int32)})
    path = b.write(tmp_path / "big.arrow")
    log = read_log(path)
    assert log.num_events == n and log.num_batches > 1
    got = log.col("addr")
    assert got.dtype == np.uint64 and np.array_equal(got, addr)
    total = sum(len(batch["addr"]) for batch in log.batches())
    assert total == n


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda p: p, "no such file"),
        (lambda p: (p.write_bytes(b""), p)[1], "empty file"),
        (lambda p: (p.write_text("hello, I am a text file\n"), p)[1], "not an Arrow IPC file"),
        (lambda p: (p.write_bytes(np.random.default_rng(1).bytes(4096)), p)[1], "not an Arrow IPC file"),
    ],
    ids=["missing", "empty", "text", "random"],
)
def test_unusable_files_raise_one_line(tmp_path, make, message):
    path = make(tmp_path / "x.arrow")
    with pytest.raises(LogFormatError, match=message) as e:
        read_log(path)
    assert "\n" not in str(e.value)


def test_truncated_log_is_rejected(tmp_path):
    path = small_log(tmp_path / "demo.arrow")
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(LogFormatError, match="truncated"):
        read_log(path)


def test_foreign_arrow_file_and_other_versions_are_rejected(tmp_path):
    import pyarrow as pa

    foreign = tmp_path / "foreign.arrow"
    table = pa.table({"x": [1, 2, 3]})
    with ipc.new_file(str(foreign), table.schema) as w:
        w.write_table(table)
    with pytest.raises(LogFormatError, match="not a quiver event log"):
        read_log(foreign)

    good = read_log(small_log(tmp_path / "demo.arrow")).table
    for version, word in ((FORMAT_VERSION + 1, "newer"), (0, "older")):
        meta = dict(good.schema.metadata)
        meta[b"quiver.format_version"] = str(version).encode()
        other = tmp_path / f"v{version}.arrow"
        with ipc.new_file(str(other), good.schema.with_metadata(meta)) as w:
            w.write_table(good.replace_schema_metadata(meta))
        with pytest.raises(LogFormatError, match=word):
            read_log(other)

    retyped = good.set_column(COLUMN_NAMES.index("addr"), "addr", good.column("addr").cast(pa.int32()))
    bad = tmp_path / "retyped.arrow"
    with ipc.new_file(str(bad), retyped.schema) as w:
        w.write_table(retyped)
    with pytest.raises(LogFormatError, match="column 'addr' has type int32"):
        read_log(bad)
