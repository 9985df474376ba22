"""`trace record --split`'s finalize on raw directories written with numpy: one log per rank,
one time base, a manifest for the whole run, the same events as the merged log."""

from __future__ import annotations

import json

import numpy as np
import pytest
from quiver.formats import EventKind, open_logs, read_log
from quiver.tracer.finalize import finalize
from quiver.tracer.finalize_split import finalize_split, prepare_split_dir
from test_finalize_raw import T0, write_rank

SRC = ";prog.c;main;12;3;;"


def two_ranks(raw, clean_1: bool = True):
    write_rank(raw, 0, {0: [{"time_ns": T0 + 10, "kind": EventKind.ACCESS, "addr": 64, "size": 8, "loc_str": 0},
                            {"time_ns": T0 + 30, "kind": EventKind.MPI_SYNC, "op": 1, "id": 0, "loc_str": 0}]},
               [SRC])
    write_rank(raw, 1, {0: [{"time_ns": T0 + 1500, "kind": EventKind.RMA, "op": 1, "id": 0, "id2": 0, "size": 4,
                             "loc_str": 1}],
                        1: [{"time_ns": T0 + 1200, "kind": EventKind.ACCESS, "addr": 8, "size": 4}]},
               ["x", ";prog.c;main;20;1;;"], clean=clean_1)
    info = raw / "r1.info"     # rank 1 started 1 us later than rank 0
    info.write_text(info.read_text().replace(f"start_mono_ns={T0}", f"start_mono_ns={T0 + 1000}"))


def test_split_has_one_log_per_rank_on_one_time_base(tmp_path):
    raw = tmp_path / "run.d.raw"
    two_ranks(raw)
    meta = finalize_split(raw, tmp_path / "run.d", {"program": "./prog", "argv": ["./prog"], "exit_status": 0})
    manifest = json.loads((tmp_path / "run.d" / "manifest.json").read_text())
    assert manifest["files"] == ["rank-00000.arrow", "rank-00001.arrow"] and manifest["ranks"] == 2
    assert manifest["run"] == meta
    assert meta["ranks"] == 2 and meta["threads"] == 3 and meta["events"] == 4 and meta["truncated"] is False
    r0, r1 = (read_log(tmp_path / "run.d" / f) for f in manifest["files"])
    assert r0.col("rank").tolist() == [0, 0] and r1.col("rank").tolist() == [1, 1]
    assert r0.run["rank"] == 0 and r1.run["rank"] == 1 and r1.run["ranks"] == 2
    assert r0.col("time_ns").tolist() == [10, 30]
    assert r1.col("time_ns").tolist() == [1200, 1500]         # the earliest rank's start is time 0
    assert r1.location(int(r1.col("loc")[1])).line == 20

    finalize(raw, tmp_path / "run.arrow", {})
    merged = read_log(tmp_path / "run.arrow")
    rows = sorted((int(t), int(r), int(k)) for log in (r0, r1)
                  for t, r, k in zip(log.col("time_ns"), log.col("rank"), log.col("kind"), strict=True))
    assert rows == list(zip(merged.col("time_ns").tolist(), merged.col("rank").tolist(),
                            merged.col("kind").tolist(), strict=True))
    assert open_logs(tmp_path / "run.d").split and not (raw / ".rank0").exists()


def test_a_rank_without_clean_exit_marks_the_run_truncated(tmp_path):
    raw = tmp_path / "raw"
    two_ranks(raw, clean_1=False)
    meta = finalize_split(raw, tmp_path / "run.d", {})
    assert meta["truncated"] is True
    assert read_log(tmp_path / "run.d" / "rank-00000.arrow").truncated is False
    assert read_log(tmp_path / "run.d" / "rank-00001.arrow").truncated is True


def test_empty_raw_directory_gives_one_empty_rank_file(tmp_path):
    raw = tmp_path / "raw"
    raw.mkdir()
    meta = finalize_split(raw, tmp_path / "run.d", {})
    logs = open_logs(tmp_path / "run.d")
    assert len(logs) == 1 and logs.open(0).num_events == 0 and meta["truncated"] is True


def test_output_directory_rules(tmp_path):
    f = tmp_path / "file"
    f.write_text("x")
    with pytest.raises(FileExistsError, match="exists and is not a directory"):
        prepare_split_dir(f)
    other = tmp_path / "other"
    other.mkdir()
    (other / "keep.txt").write_text("mine")
    with pytest.raises(FileExistsError, match="not a split log"):
        prepare_split_dir(other)
    raw = tmp_path / "raw"
    two_ranks(raw)
    out = tmp_path / "run.d"
    finalize_split(raw, out, {})
    (out / "rank-00007.arrow").write_bytes(b"stale")     # from an older, bigger run
    finalize_split(raw, out, {})                         # replaces the older split log
    assert sorted(p.name for p in out.iterdir()) == ["manifest.json", "rank-00000.arrow", "rank-00001.arrow"]
    assert np.array_equal(read_log(out / "rank-00000.arrow").col("time_ns"), [10, 30])
