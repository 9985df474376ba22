"""Format version 6: masked ACCESS runs in the format layer (builder, blocks, views, stats, info, versions).
The one-line refusals of malformed masked rows are in test_hostile_inputs.py; the checkers' side in
tests/replay/test_masked_checkers.py."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from quiver.formats import AccessFlag, LogBuilder, LogFormatError, read_log
from quiver.formats.blocks import expand_blocks, explode_blocks, mask_bits, row_blocks
from quiver.formats.schema import FORMAT_VERSION, MASKED_VERSION
from quiver.formats.stats import LogStats
from test_planes import info_counts_blocks

import quiver

TRACE = str(Path(sys.executable).with_name("trace"))
FULL = (1 << 64) - 1 ^ (1 << 5)   # 64 slots, all but slot 5 (bit 63 set: a negative id2)


def masked_log(path: Path) -> Path:
    """A masked write of slots {0, 2, 3} of 4 contiguous doubles, a plain row, a masked read of slots {0, 2}
    of 8 bytes every 24, and a 64-slot masked row whose bitmap has bit 63 set."""
    b = LogBuilder(program="masked")
    b.access(0x1000, 8, write=True, mask=0b1101, width=8)
    b.access(0x2000, 16)
    b.access(0x3000, 8, stride=24, mask=0b101)
    b.access(0x4000, 4, mask=FULL, width=4)
    return b.write(path)


def test_version_6_and_the_builder_writes_the_row_shape(tmp_path):
    assert FORMAT_VERSION == MASKED_VERSION == 6 and AccessFlag.MASKED == 4
    log = read_log(masked_log(tmp_path / "m.arrow"))
    assert log.version == 6
    c = log.columns()
    assert c["op"].tolist() == [5, 0, 4, 4]
    assert c["aux2"].tolist() == [4, 0, 3, 64] and c["addr2"].tolist() == [8, 0, 24, 4]
    assert c["id2"].tolist()[:3] == [0b1101, -1, 0b101] and c["id2"][3] < 0
    assert c["id2"][3:].view(np.uint64).tolist() == [FULL] and c["name"].tolist() == [-1] * 4


def test_blocks_are_the_present_slots_only(tmp_path):
    c = read_log(masked_log(tmp_path / "m.arrow")).columns()
    masks = mask_bits(c["op"], c["id2"])
    row, lo, hi = expand_blocks(c["addr"], c["size"], c["addr2"], c["aux2"], c["name"], c["id2"], masks)
    first = row == 0
    assert (lo[first] - 0x1000).tolist() == [0, 16, 24] and (hi - lo)[first].tolist() == [8, 8, 8]
    assert (lo[row == 1] - 0x2000).tolist() == [0] and (hi - lo)[row == 1].tolist() == [16]
    assert (lo[row == 2] - 0x3000).tolist() == [0, 48]
    assert (lo[row == 3] - 0x4000).tolist() == [4 * i for i in range(64) if i != 5]
    assert row.tolist() == sorted(row.tolist())
    assert row_blocks(c["aux2"], c["name"], masks).tolist() == [3, 1, 2, 63]
    # no masked row: no bitmaps (plain logs pay one reduction)
    assert mask_bits(c["op"][1:2], c["id2"][1:2]) is None


def test_the_accesses_view_has_the_mask_and_explode_blocks_gives_the_present_slots(tmp_path):
    acc = quiver.open(masked_log(tmp_path / "m.arrow")).accesses
    assert acc["mask"].to_list() == [0b1101, None, 0b101, FULL]
    assert acc["blocks"].to_list() == [4, 1, 3, 64] and acc["planes"].to_list() == [1] * 4
    assert acc["plane_stride"].to_list() == [0] * 4 and acc["write"].to_list() == [True, False, False, False]
    ex = explode_blocks(acc)
    first = ex.filter(ex["seq"] == 0)
    assert (np.array(first["addr"].to_list()) - 0x1000).tolist() == [0, 16, 24]
    assert first["block"].to_list() == [0, 2, 3]
    assert ex.height == 3 + 1 + 2 + 63


def test_the_builder_refuses_masks_that_break_the_rules():
    b = LogBuilder()
    for mask, kw in ((0b1, {}), (0b110, {}), (0b101, {"blocks": 4}), (0b1011, {"blocks": 3}), (1 | 1 << 64, {})):
        with pytest.raises(ValueError, match="a masked access needs 2-64 slots"):
            b.access(0x1000, 4, mask=mask, **kw)
    with pytest.raises(ValueError, match="stride >= size and no planes"):
        b.access(0x1000, 8, mask=0b11, stride=4)
    with pytest.raises(ValueError, match="stride >= size and no planes"):
        b.access(0x1000, 8, mask=0b11, planes=2, plane_stride=64)


def test_stats_and_trace_info_count_the_present_slots(tmp_path):
    path = masked_log(tmp_path / "m.arrow")
    log = read_log(path)
    assert log.run["stats"]["access_blocks"] == 3 + 1 + 2 + 63
    assert LogStats.of(log.columns()).blocks == 69
    # the row-by-row count of a small run's array.array columns agrees
    from array import array

    cols = {k: array({"int16": "h", "int32": "i", "int64": "q", "uint64": "Q"}[str(v.dtype)], v.tolist())
            for k, v in log.columns().items()}
    assert LogStats.of(cols).blocks == 69
    info_counts_blocks(path, 4, 69)


def test_a_masked_row_in_a_version_5_log_is_refused_with_one_line(tmp_path, monkeypatch):
    """No version 1-5 writer wrote op bit 4 on an ACCESS row: there it is damage, not a masked run."""
    from quiver.formats import writer

    monkeypatch.setattr(writer, "FORMAT_VERSION", 5)
    b = LogBuilder()
    b.access(0x1000, 4)
    b.access(0x2000, 4, mask=0b1001, width=4)
    path = b.write(tmp_path / "v5masked.arrow")
    with pytest.raises(LogFormatError, match=r"batch 0, row 1\): masked access run in a version 5 log \(masked runs: "
                                             r"version 6 on\) \(4\)"):
        read_log(path).columns()
    r = subprocess.run([TRACE, "analyze", "--check", "all", str(path)], capture_output=True, text=True, check=False)
    assert r.returncode == 2 and len(r.stderr.splitlines()) == 1, r.stderr
    assert "masked access run in a version 5 log" in r.stderr
    # the same row without the bit reads in a version 5 log
    b = LogBuilder()
    b.access(0x2000, 4, stride=8, blocks=4, width=4)
    path = b.write(tmp_path / "v5.arrow")
    assert read_log(path).version == 5 and read_log(path).columns()["aux2"].tolist() == [4]
