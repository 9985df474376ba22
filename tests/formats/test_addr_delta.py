"""The delta-coded `addr` column of format version 4 (formats/addr_delta.py): whatever the addresses
(falling, wrapping, across batches and ranks), every reader of quiver.formats sees them as written."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from quiver.formats import EventKind, addr_delta, read_log, write_log, writer
from quiver.formats.schema import DELTA_ADDR_VERSION, FORMAT_VERSION

import quiver


@pytest.mark.parametrize("seed", range(5))
def test_codec_round_trips_any_uint64(seed):
    rng = np.random.default_rng(seed)
    a = rng.integers(0, np.iinfo(np.uint64).max, 1000, dtype=np.uint64, endpoint=True)
    a[::7] = np.uint64(0)                         # falls to 0: differences above 2^63
    a[3] = np.iinfo(np.uint64).max                # wraps both ways
    stored = addr_delta.encode(a)
    assert stored[0] == a[0] and np.array_equal(addr_delta.decode(stored), a)
    assert len(addr_delta.encode(a[:0])) == 0 and len(addr_delta.decode(stored[:0])) == 0


def _events(n: int, ranks: int, seed: int) -> dict[str, np.ndarray]:
    """ACCESS rows of several ranks, interleaved, at addresses that jump up and down."""
    rng = np.random.default_rng(seed)
    base = rng.choice(np.array([0x1000, 0x7F00_0000_0000, 0x5500_0000_0000, 0], np.uint64), n)
    return {"time_ns": np.arange(n, dtype=np.int64), "kind": np.full(n, EventKind.ACCESS, np.int16),
            "rank": rng.integers(0, ranks, n).astype(np.int32), "size": np.full(n, 4, np.uint64),
            "addr": base + rng.integers(0, 1 << 20, n).astype(np.uint64), "op": rng.integers(0, 2, n).astype(np.int32)}


@pytest.mark.parametrize("engine", ["pyarrow", "plain"])
def test_readers_see_absolute_addresses_across_batches_and_ranks(tmp_path, monkeypatch, engine):
    monkeypatch.setattr(writer, "BATCH_ROWS", 333)  # several batches, each coded on its own
    cols = _events(2000, ranks=3, seed=1)
    path = tmp_path / "run.arrow"
    chunks = [{c: v[a:b] for c, v in cols.items()} for a, b in ((0, 1000), (1000, 1001), (1001, 2000))]
    compression = None if engine == "plain" else "zstd"
    with writer.LogWriter(path, run={"ranks": 3}, compression=compression, engine=engine) as w:
        for chunk in chunks:
            w.write_columns(chunk)
    log = read_log(path)
    assert log.version == FORMAT_VERSION >= DELTA_ADDR_VERSION and log.num_batches > 6
    assert np.array_equal(log.col("addr"), cols["addr"])
    assert np.array_equal(np.concatenate([b["addr"] for b in log.batches(["addr", "kind"])]), cols["addr"])
    assert np.array_equal(log.batch(4, ["addr"])["addr"], cols["addr"][log_rows(log, 4)])
    views = quiver.open(path)
    assert views.accesses["addr"].to_list() == cols["addr"].tolist()
    assert views.events["addr"].to_list() == cols["addr"].tolist()
    stored = pl.read_ipc(path)["addr"].to_numpy()  # the file itself holds differences
    assert not np.array_equal(stored, cols["addr"])


def log_rows(log, i: int) -> slice:
    """Rows of batch i."""
    ends = np.cumsum([len(log.batch(j, ["kind"])["kind"]) for j in range(log.num_batches)])
    return slice(int(ends[i - 1]) if i else 0, int(ends[i]))


def test_version_3_logs_keep_absolute_addresses(tmp_path, monkeypatch):
    monkeypatch.setattr(writer, "FORMAT_VERSION", 3)
    cols = _events(500, ranks=2, seed=2)
    path = write_log(tmp_path / "v3.arrow", cols)
    log = read_log(path)
    assert log.version == 3
    assert np.array_equal(pl.read_ipc(path)["addr"].to_numpy(), cols["addr"])
    assert np.array_equal(log.col("addr"), cols["addr"])
