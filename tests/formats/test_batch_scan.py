"""The reader's C batch scan (formats/batch_scan.c) against its numpy reference: same digests as the
writer's checksums (integrity.digest), same ranges and kinds, same addresses; and through read_log,
the same damaged bytes and crafted values found with the same messages either way."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from quiver.formats import (
    ConstructKind,
    DataOpKind,
    LogBuilder,
    LogFormatError,
    MapType,
    addr_delta,
    batch_scan,
    integrity,
    read_log,
)
from quiver.formats.schema import COLUMN_NAMES
from quiver.formats.validate import BLOCKS_PER_EVENT
from quiver.formats.writer import write_log

CHUNK = 16384   # batch_scan.c's CHUNK: lengths around it cross the boundary of its streaming digest


@pytest.fixture(autouse=True)
def native_library() -> None:
    assert batch_scan.library() is not None, "batch_scan.c did not build: these tests would compare numpy with itself"


LENGTHS = [0, 1, 7, CHUNK - 1, CHUNK, CHUNK + 1, 3 * CHUNK + 5]


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.uint64])
@pytest.mark.parametrize("n", LENGTHS)
@pytest.mark.parametrize("ranges", [True, False])
def test_scan_agrees_with_numpy_and_the_writers_digest(dtype, n, ranges):
    rng = np.random.default_rng(n)
    info = np.iinfo(dtype)
    values = rng.integers(info.min, info.max, n, dtype=dtype, endpoint=True)
    if n > 2:
        values[n // 2] = info.min     # the extremes anywhere in a chunk, not only at the start
        values[-1] = info.max
    got, want = batch_scan.native_scan(values, ranges), batch_scan.reference_scan(values, ranges)
    assert got == want
    assert got.digest == integrity.digest(values)
    if ranges and n:
        assert (got.min, got.max) == (int(values.min()), int(values.max()))


@pytest.mark.parametrize("n", LENGTHS)
def test_kind_scan_finds_the_same_kinds_and_range(n):
    rng = np.random.default_rng(n)
    kinds = rng.choice(np.array([0, 3, 50, 63, 64, 99, 127], np.int16), n)
    if n > 3:
        kinds[n // 3], kinds[-1] = -7, 128   # outside [0, 128): in min/max, not in the kinds found
    got, want = batch_scan.native_scan(kinds, kind=True), batch_scan.reference_scan(kinds, kind=True)
    assert got == want
    if n:
        assert got.kinds == sum(1 << int(k) for k in set(kinds.tolist()) if 0 <= k < 128)


@pytest.mark.parametrize("n", LENGTHS)
def test_addr_running_sum_agrees_with_the_codec(n):
    stored = np.random.default_rng(n).integers(0, 1 << 64, n, dtype=np.uint64, endpoint=False)
    values, got = batch_scan.native_decode_addr(stored)
    np.testing.assert_array_equal(values, addr_delta.decode(stored))
    assert got.digest == integrity.digest(values)
    assert batch_scan.reference_decode_addr(stored)[1] == got


def builder() -> LogBuilder:
    b = LogBuilder(ranks=2)
    c = b.construct_begin(ConstructKind.TARGET, ("a.c", 4, "main"))
    b.map_clause(c, "a", 0x1000, 64, MapType.TO, ("a.c", 4, "main"), text="a[0:16]")
    b.data_op(DataOpKind.ALLOC, 0x1000, 0x9000, 64, construct=c)
    b.data_op(DataOpKind.TRANSFER_TO, 0x1000, 0x9000, 64, construct=c)
    for i in range(40):
        b.access(0x9000 + 4 * i, 4, write=i % 2 == 0, device=0, construct=c)
    b.access(0x9000, 8, write=True, device=0, construct=c, stride=16, blocks=4)
    b.data_op(DataOpKind.DELETE, 0x1000, 0x9000, 64, construct=c)
    b.construct_end(c)
    b.access(0x1000, 4, rank=1)
    return b


def _both(path: Path, monkeypatch) -> tuple[str, str]:
    """The message read_log(path).table raises with the C scan, then with the numpy reference."""
    messages = []
    for library in (batch_scan.library, lambda: None):
        monkeypatch.setattr(batch_scan, "library", library)
        with pytest.raises(LogFormatError) as e:
            read_log(path).table  # noqa: B018
        messages.append(str(e.value))
    return messages[0], messages[1]


@pytest.mark.parametrize(("kind", "column", "value", "message"), [
    (50, "rank", -1, "rank out of range (-1)"),
    (50, "thread", 1 << 21, "thread out of range (2097152)"),
    (50, "loc", 40, "location id out of range (40)"),
    (50, "device", 9, "unknown device number (9)"),
    (50, "size", (1 << 48) + 1, "size beyond the 48-bit address space (281474976710657)"),
    (50, "kind", 99, "unknown event kind (99)"),
    (50, "kind", 200, "unknown event kind (200)"),
    (23, "op", 9, "unknown operation code for its event kind (9)"),
    (23, "name", 77, "string id out of range (77)"),
    (22, "aux2", 55, "clause-text string id out of range (55)"),
    (50, "aux2", -2, "negative block count (-2)"),
])
def test_a_crafted_value_is_rejected_with_the_same_message_either_way(tmp_path, monkeypatch, kind, column, value,
                                                                       message):
    b = builder()
    cols = b.columns()
    rows = np.flatnonzero(cols["kind"] == kind)
    row = int(rows[len(rows) // 2])
    cols[column][row] = value
    path = write_log(tmp_path / "crafted.arrow", cols, strings=b.strings, locations=b.locations,
                     run={**b.run, "devices": 1})
    native, reference = _both(path, monkeypatch)
    assert native == reference
    assert f"damaged log (batch 0, row {row}): {message}" in native


@pytest.mark.parametrize("column", ["time_ns", "kind", "addr", "addr2", "size", "aux2"])
def test_a_flipped_byte_in_any_column_is_found_either_way(tmp_path, monkeypatch, column):
    b = builder()
    path = b.write(tmp_path / "run.arrow", compression=None)
    values = b.columns()[column]
    stored = (addr_delta.encode(values) if column == "addr" else values).tobytes()   # as on disk (v4)
    data = bytearray(path.read_bytes())
    at = data.index(stored) + len(stored) - len(stored) // 3
    data[at] ^= 0x10
    path.write_bytes(bytes(data))
    native, reference = _both(path, monkeypatch)
    assert native == reference
    assert f"damaged log (batch 0): column '{column}' does not match its checksum" in native


def test_a_clean_log_reads_the_same_either_way(tmp_path, monkeypatch):
    b = builder()
    path = b.write(tmp_path / "run.arrow")
    tables = []
    for library in (batch_scan.library, lambda: None):
        monkeypatch.setattr(batch_scan, "library", library)
        log = read_log(path)
        tables.append({name: log.col(name) for name in COLUMN_NAMES})
    for name in COLUMN_NAMES:
        np.testing.assert_array_equal(tables[0][name], tables[1][name])
        np.testing.assert_array_equal(tables[0][name], b.columns()[name])


@pytest.mark.parametrize("control", [10, 11, 20, 21, 22, 23, 24])
def test_control_events_skip_only_batches_without_control_kinds(tmp_path, monkeypatch, control):
    """read_control_events skips the per-row lookup in a batch whose scan found no control kind: the
    same control rows as the numpy path (which looks at every row), whichever control kind a batch of
    accesses also holds."""
    from quiver.replay.mapping.events import CONTROL_KINDS, read_control_events

    assert control in CONTROL_KINDS.tolist()
    b = builder()
    cols = b.columns()
    n = len(cols["kind"])
    accesses = {name: np.repeat(col[cols["kind"] == 50][:1], 5) for name, col in cols.items()}
    mixed = {name: col.copy() for name, col in accesses.items()}
    mixed["kind"][2] = control
    chunks = [{k: v[: n // 2] for k, v in cols.items()}, accesses, mixed, {k: v[n // 2:] for k, v in cols.items()}]
    path = write_log(tmp_path / "four.arrow", chunks, strings=b.strings, locations=b.locations, run=b.run)
    log = read_log(path)
    assert log.num_batches == 4
    native = read_control_events(log)
    assert log.kinds_in_batch(1) == 1 << 50     # the batch of accesses only
    monkeypatch.setattr(batch_scan, "library", lambda: None)
    reference = read_control_events(read_log(path))
    want = np.flatnonzero(np.isin(np.concatenate([c["kind"] for c in chunks]), CONTROL_KINDS))
    assert n // 2 + 5 + 2 in want.tolist() and native.event.tolist() == want.tolist()   # the mixed batch's row
    np.testing.assert_array_equal(native.event, reference.event)
    for name in ("kind", "addr", "size", "id"):
        np.testing.assert_array_equal(native[name], reference[name])


def _shape_rows(rng: np.random.Generator, n: int) -> dict[str, np.ndarray]:
    """n rows of kinds 50 (ACCESS, mostly) and 22: single accesses, strided runs, planes and masked runs, a few with
    one field pushed past a shape rule (or onto its edge)."""
    from quiver.formats.schema import COLUMN_DTYPES

    cols = {c: np.zeros(n, COLUMN_DTYPES[c]) for c in COLUMN_NAMES}
    cols["kind"][:] = np.where(rng.random(n) < 0.9, 50, 22)
    cols["name"][:] = -1
    cols["id2"][:] = -1
    for i in range(n):
        shape = rng.integers(0, 4)
        size = int(rng.choice([1, 4, 8, 16]))
        cols["size"][i], cols["aux2"][i], cols["addr2"][i] = size, 1, 0
        if shape == 1:   # strided
            cols["aux2"][i], cols["addr2"][i] = rng.integers(2, 300), size + rng.integers(1, 64)
        elif shape == 2:   # planes
            blocks, stride = int(rng.integers(2, 40)), size * int(rng.integers(2, 5))
            span = (blocks - 1) * stride + size
            cols["aux2"][i], cols["addr2"][i], cols["name"][i] = blocks, stride, rng.integers(2, 50)
            cols["id2"][i] = (span // stride + 1 + int(rng.integers(0, 3))) * stride
        elif shape == 3:   # masked
            slots = int(rng.integers(2, 65))
            bits = int(rng.integers(0, 1 << 62)) & ((1 << slots) - 1) | 1 | 1 << (slots - 1)
            cols["op"][i], cols["aux2"][i], cols["addr2"][i] = 4 | int(rng.integers(0, 2)), slots, size
            cols["id2"][i] = np.uint64(bits).view(np.int64)
        if shape == 3 and rng.random() < 0.03:   # a bit past the slots (or, the last slot's bit clear, two rules)
            cols["aux2"][i] -= 1
        elif rng.random() < 0.03:   # damage (or an edge that is still valid)
            column = str(rng.choice(["aux2", "addr2", "name", "id2", "size", "op"]))
            value = int(rng.choice([-3, -2, -1, 0, 1, 2, 63, 64, 65, 1 << 47, 1 << 48, (1 << 62) + 5]))
            if column in ("addr2", "size"):
                value = abs(value)
            cols[column][i] = np.array(value).astype(cols[column].dtype)
    other = cols["kind"] != 50   # map clauses (kind 22): a map type, no clause text
    cols["op"][other], cols["aux2"][other], cols["name"][other], cols["id2"][other] = 1, -1, -1, -1
    return cols


@pytest.mark.parametrize("seed", range(8))
def test_access_shapes_prove_clean_only_what_the_numpy_rules_accept(monkeypatch, seed):
    """batch_scan.c's qv_access_shapes (the one-pass proof that a batch's strided runs, planes and masked runs keep
    their shape rules) never calls clean a batch validate.py's numpy rules reject, and counts the blocks they count
    (the budget: a batch over it is rejected the same either way)."""
    from quiver.formats.validate import ADDRESS_LIMIT, BatchRules
    from quiver.formats.validate import MASKED as MASKED_BIT

    rng = np.random.default_rng(seed)
    verdicts = set()
    for _ in range(60):
        cols = _shape_rows(rng, int(rng.integers(1, 400)))
        shapes = batch_scan.access_shapes(cols, 50, MASKED_BIT, 64, ADDRESS_LIMIT)
        assert shapes is not None
        monkeypatch.setattr(batch_scan, "library", lambda: None)
        budgets = []
        for budget in (10**12, int(shapes.blocks) - BLOCKS_PER_EVENT * len(cols["kind"]) - 1):
            rules = BatchRules(Path("x.arrow"), 100, 1, 8, 2, budget, 6)
            try:
                rules.check(cols, 0)
                budgets.append("ok")
            except LogFormatError as e:
                budgets.append("budget" if "stand for" in str(e) else "shape")
        monkeypatch.undo()
        verdicts.add((shapes.clean, budgets[0]))
        if budgets[0] == "shape":
            assert not shapes.clean
        if shapes.clean and (cols["aux2"][cols["kind"] == 50] >= 2).any():
            assert budgets == ["ok", "budget"]   # a budget one block short of its blocks: rejected
    assert (True, "ok") in verdicts and (False, "shape") in verdicts
