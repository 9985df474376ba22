"""Format version 5: planes of strided ACCESS rows in the format layer (builder, blocks, views, stats,
versions). The checkers' side is in tests/replay/test_vsm_planes.py and test_planes_checkers.py; the
validation rules' one-line refusals in test_hostile_inputs.py."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from pyarrow import ipc
from quiver.formats import LogBuilder, LogFormatError, read_log
from quiver.formats.blocks import expand_blocks, explode_blocks, row_blocks
from quiver.formats.schema import FORMAT_VERSION
from quiver.formats.stats import LogStats

import quiver

TRACE = str(Path(sys.executable).with_name("trace"))


def planes_log(path: Path) -> Path:
    """A row of 3 planes (2 blocks of 4 bytes every 8, planes 32 bytes apart), a plain row, a strided row."""
    b = LogBuilder(program="planes")
    b.access(0x1000, 4, write=True, stride=8, blocks=2, planes=3, plane_stride=32, width=4)
    b.access(0x2000, 16)
    b.access(0x3000, 8, stride=24, blocks=5)
    return b.write(path)


def test_the_current_version_is_written_and_the_planes_are_the_rows_name_and_id2(tmp_path):
    assert FORMAT_VERSION >= 5
    log = read_log(planes_log(tmp_path / "p.arrow"))
    assert log.version == FORMAT_VERSION
    t = log.table
    assert t.column("name").to_pylist() == [3, -1, -1] and t.column("id2").to_pylist() == [32, -1, -1]


def test_blocks_of_planes_plane_by_plane(tmp_path):
    cols = read_log(planes_log(tmp_path / "p.arrow")).columns()
    row, lo, hi = expand_blocks(cols["addr"], cols["size"], cols["addr2"], cols["aux2"], cols["name"], cols["id2"])
    assert row.tolist() == [0] * 6 + [1] + [2] * 5
    assert (lo[:6] - 0x1000).tolist() == [0, 8, 32, 40, 64, 72] and (hi - lo)[:6].tolist() == [4] * 6
    assert (lo[7:] - 0x3000).tolist() == [0, 24, 48, 72, 96]
    # without name/id2: one plane a row (what a consumer of version 1-4 columns gets)
    assert expand_blocks(cols["addr"], cols["size"], cols["addr2"], cols["aux2"])[0].tolist() == [0, 0, 1] + [2] * 5
    assert row_blocks(cols["aux2"], cols["name"]).tolist() == [6, 1, 5]


def test_the_accesses_view_has_planes_and_explode_blocks_expands_them(tmp_path):
    t = quiver.open(planes_log(tmp_path / "p.arrow"))
    acc = t.accesses
    assert acc["planes"].to_list() == [3, 1, 1] and acc["plane_stride"].to_list() == [32, 0, 0]
    assert acc["blocks"].to_list() == [2, 1, 5] and acc["stride"].to_list() == [8, 0, 24]
    ex = explode_blocks(acc)
    first = ex.filter(ex["seq"] == 0)
    assert (np.array(first["addr"].to_list()) - 0x1000).tolist() == [0, 8, 32, 40, 64, 72]
    assert first["plane"].to_list() == [0, 0, 1, 1, 2, 2] and first["block"].to_list() == [0, 1] * 3
    assert ex.height == 12


def test_the_builder_refuses_planes_that_break_the_rules():
    b = LogBuilder()
    with pytest.raises(ValueError, match="need a strided run"):
        b.access(0x1000, 4, planes=2, plane_stride=64)
    with pytest.raises(ValueError, match="plane_stride > the run's span"):
        b.access(0x1000, 4, stride=8, blocks=2, planes=2, plane_stride=8)
    with pytest.raises(ValueError, match="multiple of stride"):
        b.access(0x1000, 4, stride=8, blocks=2, planes=2, plane_stride=36)
    b.access(0x1000, 4, stride=8, blocks=2, planes=2, plane_stride=16)    # just past the span: fine


def info_counts_blocks(path, rows: int, blocks: int) -> None:
    """`trace info` (JSON and text, from the stored stats and with --verify) says the log's ACCESS rows
    stand for `blocks` blocks."""
    for extra in ((), ("--verify",)):
        r = subprocess.run([TRACE, "info", str(path), "--json", *extra], capture_output=True, text=True, check=False)
        assert r.returncode == 0, r.stderr
        assert json.loads(r.stdout)["access_blocks"] == blocks
        text = subprocess.run([TRACE, "info", str(path), *extra], capture_output=True, text=True, check=False).stdout
        assert f"accesses    {rows} (standing for {blocks} blocks: strided runs, planes and masked runs)" in text, text


def test_stats_and_trace_info_count_planes_x_blocks(tmp_path):
    path = planes_log(tmp_path / "p.arrow")
    log = read_log(path)
    assert log.run["stats"]["access_blocks"] == 6 + 1 + 5
    assert LogStats.of(log.columns()).blocks == 12
    info_counts_blocks(path, 3, 12)
    # counts of a writer that did not count blocks (finalize's raw counts) merged with counted ones: unknown
    counts = [0] * 256
    counts[50] = 5
    merged = LogStats()
    merged.merge(LogStats(counts, 0, 1))
    merged.merge(LogStats.of(log.columns()))
    assert merged.blocks is None and "access_blocks" not in merged.to_json()
    assert LogStats.from_json(LogStats.of(log.columns()).to_json()).blocks == 12


def test_a_version_4_log_still_reads(tmp_path):
    from quiver.formats import writer

    old = writer.FORMAT_VERSION
    try:
        writer.FORMAT_VERSION = 4
        b = LogBuilder()
        b.access(0x1000, 4, stride=8, blocks=2, width=4)
        path = b.write(tmp_path / "v4.arrow")
    finally:
        writer.FORMAT_VERSION = old
    log = read_log(path)
    assert log.version == 4 and log.columns()["aux2"].tolist() == [2]
    assert quiver.open(path).accesses["planes"].to_list() == [1]


def test_planes_in_a_version_4_log_are_refused_with_one_line(tmp_path):
    """No version 1-4 writer wrote a plane count: an ACCESS `name` >= 2 there is damage, not planes."""
    from quiver.formats import writer

    old = writer.FORMAT_VERSION
    try:
        writer.FORMAT_VERSION = 4
        b = LogBuilder()
        b.access(0x1000, 4, stride=8, blocks=2, width=4, planes=3, plane_stride=64)
        path = b.write(tmp_path / "v4planes.arrow")
    finally:
        writer.FORMAT_VERSION = old
    with pytest.raises(LogFormatError, match=r"planes of an access run in a version 4 log \(planes: version 5 on\)"):
        read_log(path).columns()
    r = subprocess.run([TRACE, "analyze", "--check", "all", str(path)], capture_output=True, text=True, check=False)
    assert r.returncode == 2 and len(r.stderr.splitlines()) == 1, r.stderr
    assert "version 4 log" in r.stderr


def test_a_version_7_log_is_refused_with_one_line(tmp_path):
    good = read_log(planes_log(tmp_path / "p.arrow")).table
    meta = dict(good.schema.metadata)
    meta[b"quiver.format_version"] = b"7"
    path = tmp_path / "v7.arrow"
    with ipc.new_file(str(path), good.schema.with_metadata(meta)) as w:
        w.write_table(good.replace_schema_metadata(meta))
    with pytest.raises(LogFormatError, match=r"format version 7 is newer than this quiver reads \(6\); upgrade quiver"):
        read_log(path)
    r = subprocess.run([TRACE, "analyze", str(path)], capture_output=True, text=True, check=False)
    assert r.returncode == 2 and len(r.stderr.splitlines()) == 1, r.stderr
    assert "format version 7 is newer than this quiver reads (6)" in r.stderr
