"""`trace explain` and the construct table (OmpSan Table 4, seed 003) on LogBuilder logs."""

from __future__ import annotations

import json
import subprocess
import sys

from quiver.formats import ConstructKind, read_log
from quiver.replay.transfers.constructs import construct_items, explain_table

TRACE = [sys.executable, "-m", "quiver.cli"]


def run_trace(*args) -> subprocess.CompletedProcess:
    return subprocess.run([*TRACE, *map(str, args)], check=False, capture_output=True, text=True,
                          timeout=300)


def categories(table, line, kind):
    """{category: [clause, ...]} for one construct site."""
    rows = table.filter((table["line"] == line) & (table["construct_kind"] == kind)).sort("clause_index").to_dicts()
    out = {}
    for cat in ("copy_in", "copy_out", "persistent_in", "persistent_out", "alloc", "release"):
        out[cat] = [r["clause"] for r in rows if r[f"{cat}_runs"]]
    return out


def test_listing_5_3_classifies_every_construct_like_table_4(listing_log):
    table = explain_table(construct_items(read_log(listing_log)))
    assert categories(table, 6, "target_enter_data") == {
        "copy_in": ["A[0:10]"], "copy_out": [], "persistent_in": [], "persistent_out": ["A[0:10]", "B[0:10]"],
        "alloc": ["A[0:10]", "B[0:10]"], "release": []}
    # Table 4: the kernel at 7-9 finds A and B on the device and leaves them there
    assert categories(table, 7, "target") == {
        "copy_in": [], "copy_out": [], "persistent_in": ["B[0:10]", "A"], "persistent_out": ["B[0:10]", "A"],
        "alloc": [], "release": []}
    assert categories(table, 10, "target_data")["alloc"] == ["C[0:N]"]
    assert categories(table, 10, "target_data_end")["copy_out"] == ["C[0:N]"]
    # Table 4: B is copied out only at the exit data on line 13
    assert categories(table, 13, "target_exit_data") == {
        "copy_in": [], "copy_out": ["B[0:10]"], "persistent_in": ["B[0:10]"], "persistent_out": [],
        "alloc": [], "release": ["B[0:10]"]}
    row = table.filter((table["line"] == 7) & (table["variable"] == "A")).row(0, named=True)
    assert row["implicit"] and row["map_type_name"] == "tofrom" and row["end_line"] == 9


def test_explain_text_names_lines_bytes_and_the_fix(saxpy_log):
    out = run_trace("explain", saxpy_log)
    assert out.returncode == 0, out.stderr
    assert out.stdout == (
        "saxpy.c:10  target  (in main, device 0)\n"
        "  Copy In         a[0:N] (400 B), b[0:N] (400 B)\n"
        "  Copy Out        a[0:N] (400 B)\n"
        "  Alloc           a[0:N] (400 B), b[0:N] (400 B)\n"
        "  Release         a[0:N] (400 B), b[0:N] (400 B)\n"
        "  Wasted          a[0:N] (unused 400 B, 0 B read on the device, 400 B read on the host)\n"
        "\n"
        "Wasted data movement (1):\n"
        "  saxpy.c:10: unused-transfer: 400 of 400 bytes of 'a' copied to device 0 were never read there "
        "(overwritten on the device before any read)\n"
        "    fix: change `map(tofrom: a[0:N])` to `map(from: a[0:N])` at saxpy.c:10\n"
        "\n"
        "moved: 800 B to devices, 400 B back to the host; wasted: 400 B unused-transfer\n"
        "potential saving: 0 ns of data-op time (0% of the run's 18 ns)\n"
        "peak device memory: device 0 800 B\n")
    again = run_trace("explain", saxpy_log)
    assert again.stdout == out.stdout


def test_explain_json_and_filters(saxpy_log):
    out = run_trace("explain", saxpy_log, "--format", "json", "--variable", "a")
    doc = json.loads(out.stdout)
    (site,) = doc["constructs"]
    assert (site["file"], site["line"], site["construct"], site["runs"]) == ("saxpy.c", 10, "target", 1)
    (item,) = site["items"]
    assert item["variable"] == "a" and item["map_type"] == "tofrom"
    assert item["copy_in"] == {"bytes": 400, "runs": 1} and item["persistent_in"] == {"runs": 0}
    assert item["wasted"] == {"read_device_bytes": 0, "read_host_bytes": 400, "unused_bytes": 400,
                              "duplicate_bytes": 0, "round_trip_bytes": 0, "wasted_ns": 0}
    (red,) = doc["findings"]
    assert red["kind"] == "unused-transfer" and red["bytes"] == 400
    assert doc["totals"] == {"copy_in_bytes": 400, "copy_out_bytes": 400, "wasted_bytes": 400, "wasted_ns": 0,
                             "run_ns": {"0": 18}, "peak_device_bytes": [{"rank": 0, "device": 0, "peak_bytes": 800}]}
    none = json.loads(run_trace("explain", saxpy_log, "--format", "json", "--line", "99").stdout)
    assert none["constructs"] == [] and none["findings"] == []


def test_constructs_in_a_loop_are_one_site_with_runs(tmp_path):
    from test_redundant import TOFROM, Prog
    p = Prog()
    p.host(0x1000, 80, write=True)
    p.target(5, [("a", 0x1000, 80, TOFROM)], kind=ConstructKind.TARGET_ENTER_DATA)
    for _ in range(4):
        p.target(10, [("a", 0x1000, 80, TOFROM)], body=[("a", 0, 80, False)], present=("a",))
    out = run_trace("explain", p.b.write(tmp_path / "loop.arrow"))
    assert "r.c:10  target  (in main, device 0, ran 4 times)\n" in out.stdout
    assert "  Persistent In   a[0:20]\n" in out.stdout


def test_explain_bad_input_is_one_line_and_exit_2(tmp_path):
    bad = tmp_path / "bad.arrow"
    bad.write_text("not a log")
    out = run_trace("explain", bad)
    assert out.returncode == 2 and out.stderr.count("\n") == 1 and "not an Arrow IPC file" in out.stderr
    out = run_trace("explain", bad, "--format", "yaml")
    assert out.returncode == 2 and "unknown format" in out.stderr
