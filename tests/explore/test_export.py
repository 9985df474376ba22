"""`trace export`: Chrome/Perfetto JSON and Parquet from LogBuilder logs."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import polars as pl
import pytest

import quiver

TRACE = [sys.executable, "-m", "quiver.cli"]


def run_trace(*args) -> subprocess.CompletedProcess:
    return subprocess.run([*TRACE, *map(str, args)], check=False, capture_output=True, text=True, timeout=300)


def export_json(log, tmp_path, *extra, name="out.json"):
    out = tmp_path / name
    proc = run_trace("export", log, "--to", "perfetto", "-o", out, *extra)
    assert proc.returncode == 0, proc.stderr
    return out, json.loads(out.read_text())


def test_every_event_has_ph_ts_pid_tid_and_kernels_and_copies_are_slices(saxpy_log, tmp_path):
    out, doc = export_json(saxpy_log, tmp_path, "--check", "redundant-transfer")
    events = doc["traceEvents"]
    assert doc["displayTimeUnit"] == "ns"
    assert all({"ph", "ts", "pid", "tid"} <= e.keys() for e in events)
    slices = [e for e in events if e["ph"] == "X"]
    kernels = [e for e in slices if e["cat"] == "kernel"]
    copies = [e for e in slices if e["cat"] in ("transfer", "wasted transfer")]
    assert [k["name"] for k in kernels] == ["kernel saxpy.c:10"]
    assert [(c["name"], c["args"]["variable"], c["args"]["bytes"]) for c in copies] == [
        ("wasted: copy to device a", "a", 400), ("copy to device b", "b", 400), ("copy from device a", "a", 400)]
    assert copies[0]["cat"] == "wasted transfer" and copies[0]["args"]["detail"] == "unused 400 B (transfer_to)"
    assert {c["tid"] for c in copies + kernels} == {10_000_000}      # the device 0 track
    names = {(e["pid"], e["tid"]): e["args"]["name"] for e in events if e["name"] == "thread_name"}
    assert names == {(0, 0): "thread 0 (initial)", (0, 10_000_000): "device 0 (driven by thread 0)"}
    (finding,) = [e for e in events if e["ph"] == "i"]
    assert finding["name"] == "unused-transfer: a" and finding["cat"] == "finding"
    assert "map(from: a[0:N])" in finding["args"]["detail"]
    # nanoseconds kept: timestamps are microseconds with exactly three decimals
    text = out.read_text()
    assert re.findall(r'"ts":([0-9.]+),"dur"', text) and all(
        re.fullmatch(r"\d+\.\d{3}", t) for t in re.findall(r'"ts":([0-9.]+),"dur"', text))
    kernel = kernels[0]
    assert kernel["ts"] == pytest.approx(0.011) and kernel["dur"] == pytest.approx(0.003)


def test_export_is_deterministic_and_chrome_is_the_same_json(saxpy_log, tmp_path):
    a, _ = export_json(saxpy_log, tmp_path, "--no-findings", name="a.json")
    b, _ = export_json(saxpy_log, tmp_path, "--no-findings", name="b.json")
    c = tmp_path / "c.json"
    assert run_trace("export", saxpy_log, "--to", "chrome", "-o", c, "--no-findings").returncode == 0
    assert a.read_bytes() == b.read_bytes()
    strip = lambda p: json.loads(p.read_text())["traceEvents"]
    assert strip(a) == strip(c)


def test_rma_calls_are_flows_from_origin_to_target(mpi_log, tmp_path):
    _out, doc = export_json(mpi_log, tmp_path, "--no-findings")
    events = doc["traceEvents"]
    starts = [e for e in events if e["ph"] == "s"]
    ends = [e for e in events if e["ph"] == "f"]
    assert [(s["pid"], f["pid"], s["id"] == f["id"]) for s, f in zip(starts, ends)] == [(0, 1, True), (1, 0, True)]
    target_slices = [e for e in events if e["ph"] == "X" and e["tid"] >= 20_000_000]
    put = next(e for e in target_slices if e["pid"] == 1)
    assert put["name"] == "put from rank 0" and put["args"]["bytes"] == 8 and put["args"]["detail"] == \
        "window 0 disp 16"
    # the put lasts until rank 0's closing fence (the event right before it in the log)
    fence = [e for e in events if e["ph"] == "i" and e["pid"] == 0 and e["name"] == "fence"][1]
    assert put["ts"] + put["dur"] == pytest.approx(fence["ts"])
    processes = {e["pid"]: e["args"]["name"] for e in events if e["name"] == "process_name"}
    assert processes == {0: "rank 0 (./rma)", 1: "rank 1 (./rma)"}
    tracks = {e["args"]["name"] for e in events if e["name"] == "thread_name"}
    assert "window 0 <- rank 0" in tracks


def test_rank_and_time_filters(mpi_log, tmp_path):
    _out, doc = export_json(mpi_log, tmp_path, "--no-findings", "--ranks", "1")
    assert {e["pid"] for e in doc["traceEvents"]} == {1}
    assert not [e for e in doc["traceEvents"] if e["ph"] in "sf"]     # the other end was filtered out
    _out, doc = export_json(mpi_log, tmp_path, "--no-findings", "--from-ns", "5", "--to-ns", "7")
    timed = [e for e in doc["traceEvents"] if e["ph"] != "M"]
    assert timed and all(0.004 <= e["ts"] <= 0.007 for e in timed)


def test_parquet_directory_has_one_file_per_family(saxpy_log, tmp_path):
    out = tmp_path / "frames"
    proc = run_trace("export", saxpy_log, "--to", "parquet", "-o", out, "--check", "redundant-transfer")
    assert proc.returncode == 0, proc.stderr
    assert sorted(p.name for p in out.iterdir()) == [
        "accesses.parquet", "allocs.parquet", "constructs.parquet", "data_ops.parquet", "findings.parquet",
        "kernels.parquet", "maps.parquet", "run.json"]
    t = quiver.open(saxpy_log)
    assert pl.read_parquet(out / "maps.parquet").equals(t.maps)
    assert pl.read_parquet(out / "data_ops.parquet").equals(t.data_ops)
    assert pl.read_parquet(out / "findings.parquet")["kind"].to_list() == ["unused-transfer"]
    again = run_trace("export", saxpy_log, "--to", "parquet", "-o", out, "--no-findings", "--ranks", "0")
    assert again.returncode == 0 and not (out / "findings.parquet").exists()


def test_parquet_never_replaces_a_directory_it_did_not_write(saxpy_log, tmp_path):
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("keep me")
    proc = run_trace("export", saxpy_log, "--to", "parquet", "-o", tmp_path / "mine")
    assert proc.returncode == 2 and "not a quiver Parquet export" in proc.stderr
    assert (tmp_path / "mine" / "notes.txt").read_text() == "keep me"


@pytest.mark.parametrize("args, message", [
    (["--to", "svg"], "unknown export format 'svg'"),
    (["--to", "perfetto", "--ranks", "a,b"], "bad --ranks"),
    (["--to", "perfetto", "--from-ns", "9", "--to-ns", "3"], "is after --to-ns"),
    (["--to", "perfetto", "--check", "nope"], "unknown check 'nope'"),
])
def test_bad_options_are_one_line_and_exit_2(saxpy_log, args, message):
    proc = run_trace("export", saxpy_log, *args)
    assert proc.returncode == 2 and message in proc.stderr and proc.stderr.count("\n") == 1


def test_default_output_sits_next_to_the_log(saxpy_log):
    proc = run_trace("export", saxpy_log, "--to", "perfetto", "--no-findings")
    assert proc.returncode == 0
    assert saxpy_log.with_suffix(".json").exists()


def test_split_log_directory_exports_every_rank(tmp_path):
    from explore_logs import saxpy_tofrom_log
    from quiver.formats import LogBuilder, MpiSyncKind
    from quiver.formats.logset import rank_file_name, write_manifest

    d = tmp_path / "run.d"
    d.mkdir()
    saxpy_tofrom_log(d / rank_file_name(0))
    b = LogBuilder(program="./saxpy", ranks=2)
    b.mpi_sync(1, MpiSyncKind.FENCE, 0, site=("saxpy.c", 30, "main"))
    b.write(d / rank_file_name(1))
    write_manifest(d, [rank_file_name(0), rank_file_name(1)], {"program": "./saxpy", "ranks": 2})
    _out, doc = export_json(d, tmp_path, "--no-findings")
    assert {e["pid"] for e in doc["traceEvents"] if e["ph"] != "M"} == {0, 1}
    explained = run_trace("explain", d)
    assert explained.returncode == 0 and "rank 0: saxpy.c:10  target" in explained.stdout
    assert run_trace("export", d, "--to", "parquet").returncode == 2
