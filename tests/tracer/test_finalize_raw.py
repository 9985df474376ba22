"""Finalize on raw directories written here with numpy (the layout of tracer/native/qv_raw.h)."""

from __future__ import annotations

import struct
from pathlib import Path

import numpy as np
from quiver.formats import ConstructKind, EventKind, read_log
from quiver.tracer.finalize import finalize
from quiver.tracer.rawread import F_AUX2_STR, RAW_DTYPE, read_events

T0 = 1_000_000


def raw_events(rows: list[dict]) -> np.ndarray:
    ev = np.zeros(len(rows), RAW_DTYPE)
    defaults = {"id": -1, "id2": -1, "loc_str": -1, "name": -1, "device": -1}
    for i, row in enumerate(rows):
        for k, v in {**defaults, **row}.items():
            ev[k][i] = v
    return ev


def write_rank(raw: Path, rank: int, threads: dict[int, list[dict]], strings: list[str], clean: bool = True,
               extra_bytes: int = 0) -> None:
    raw.mkdir(exist_ok=True)
    for tid, rows in threads.items():
        data = raw_events([{**r, "thread": tid} for r in rows]).tobytes() + b"\x01" * extra_bytes
        (raw / f"r{rank}.t{tid}.ev").write_bytes(data)
    blob = b"".join(struct.pack("<II", i, len(s.encode())) + s.encode() for i, s in enumerate(strings))
    (raw / f"r{rank}.str").write_bytes(blob)
    info = f"pid=1\nstart_mono_ns={T0}\nstart_unix_ns=5\ndevices=1\n" + ("clean_exit=1\n" if clean else "")
    (raw / f"r{rank}.info").write_text(info)


def test_rows_merge_by_time_and_strings_become_one_table(tmp_path):
    raw = tmp_path / "run.arrow.raw"
    src = ";prog.c;main;12;3;;"
    write_rank(raw, 0, {
        0: [
            {"time_ns": T0 + 10, "kind": EventKind.CONSTRUCT_BEGIN, "op": ConstructKind.TARGET_ENTER_DATA, "id": 0,
             "device": 0, "loc_str": 0},
            {"time_ns": T0 + 11, "kind": EventKind.MAP_CLAUSE, "id": 0, "name": 1, "aux2": 2, "flags": F_AUX2_STR,
             "loc_str": 0, "size": 8},
            {"time_ns": T0 + 40, "kind": EventKind.CONSTRUCT_BEGIN, "op": ConstructKind.TARGET_DATA_END, "id": 1,
             "aux2": 0, "device": 0, "loc_str": 0},
        ],
        1: [{"time_ns": T0 + 20, "kind": EventKind.ACCESS, "addr": 64, "size": 8, "op": 1, "device": 0, "id": 0}],
    }, [src, "b", "b[0:2]"], extra_bytes=17)  # 17 bytes of a record cut by a crash
    out = tmp_path / "run.arrow"
    meta = finalize(raw, out, {"program": "./prog", "argv": ["./prog"], "exit_status": 0})
    log = read_log(out)
    assert meta["truncated"] is False and log.run["partial_records"] == 2  # one per thread file
    assert log.col("time_ns").tolist() == [10, 11, 20, 40]
    assert log.col("thread").tolist() == [0, 0, 1, 0]
    # `target data` pairing: the enter-data begin closed by a DATA_END becomes TARGET_DATA
    assert log.col("op")[0] == ConstructKind.TARGET_DATA
    names = log.col("name")
    assert log.strings[names[1]] == "b" and log.strings[log.col("aux2")[1]] == "b[0:2]"
    loc = log.locations[log.col("loc")[0]]
    assert (loc.file, loc.line, loc.function) == ("prog.c", 12, "main")
    assert log.col("loc")[2] == -1  # no pc, no psource


def test_ranks_keep_their_own_string_ids_and_a_missing_exit_marks_truncated(tmp_path):
    raw = tmp_path / "r.raw"
    write_rank(raw, 0, {0: [{"time_ns": T0 + 5, "kind": EventKind.DATA_OP, "op": 1, "name": 0}]}, ["x"])
    write_rank(raw, 1, {0: [{"time_ns": T0 + 6, "kind": EventKind.DATA_OP, "op": 1, "name": 0}]}, ["y"],
               clean=False)
    meta = finalize(raw, tmp_path / "r.arrow")
    log = read_log(tmp_path / "r.arrow")
    assert [log.strings[i] for i in log.col("name")] == ["x", "y"]
    assert log.col("rank").tolist() == [0, 1]
    assert meta["truncated"] is True and meta["ranks"] == 2


def test_empty_raw_directory_gives_an_empty_truncated_log(tmp_path):
    raw = tmp_path / "e.raw"
    raw.mkdir()
    meta = finalize(raw, tmp_path / "e.arrow", {"program": "./p"})
    assert meta["truncated"] is True
    assert len(read_log(tmp_path / "e.arrow").col("kind")) == 0


def test_partial_record_is_dropped(tmp_path):
    p = tmp_path / "r0.t0.ev"
    p.write_bytes(raw_events([{"kind": 50}, {"kind": 50}]).tobytes() + b"\0" * 5)
    ev, cut = read_events(p)
    assert len(ev) == 2 and cut
