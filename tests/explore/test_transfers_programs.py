"""The transfers checker on real programs (tests/programs/transfers/waste.c): every kind of wasted data
movement OMPDataPerf reports gets a finding naming the variable and the construct line; the fixed
counterparts get none."""

from __future__ import annotations

import pytest
from quiver.replay.report.findings import ADVISORY_KINDS

pytestmark = pytest.mark.clang
SRC = "transfers/waste.c"

BUGGY = {
    "dup-update": [("duplicate-transfer", "a", 27, "remove `target update to(a[0:1024])`")],
    "tofrom-unwritten": [("round-trip", "a", 41, "change `map(tofrom: a[0:1024])` to `map(to: a[0:1024])`")],
    "loop-maps": [
        ("duplicate-transfer", "a", 57, "keep 'a[0:1024]' on device 0 instead of mapping it again"),
        ("duplicate-transfer", "b", 57, "keep 'b[0:1024]' on device 0 instead of mapping it again"),
        ("repeated-allocation", "a", 57, "'a[0:1024]' was allocated on device 0 4 times"),
        ("repeated-allocation", "b", 57, "'b[0:1024]' was allocated on device 0 4 times"),
    ],
    "to-only-written": [("unused-transfer", "a", 70, "change `map(to: a[0:1024])` to `map(alloc: a[0:1024])`")],
    "unused-alloc": [("unused-allocation", "tmp", 83, "remove `map(alloc: tmp[0:1024])` from the construct")],
}


@pytest.mark.parametrize("scenario", sorted(BUGGY))
def test_each_kind_is_found_with_variable_line_and_fix(record_c, scenario):
    run = record_c(SRC, args=[scenario])
    assert run.returncode == 0, run.stderr
    found = run.open().check("transfers")
    got = [(f.kind.value, f.variable, f.access.line, f.fix.split(" at ")[0]) for f in found]
    assert got == [(k, v, line, fix) for k, v, line, fix in BUGGY[scenario]]
    for f in found:
        assert f.kind in ADVISORY_KINDS
        assert f.access.file.endswith("waste.c")
        assert f.details["run_ns"] > 0 and f.details["wasted_ns"] > 0     # measured data-op durations
        assert f.details["peak_device_bytes"] >= 8192


@pytest.mark.parametrize("scenario", sorted(BUGGY))
def test_the_fixed_program_has_no_finding(record_c, scenario):
    run = record_c(SRC, args=[f"{scenario}-fixed"])
    assert run.returncode == 0, run.stderr
    assert run.open().check("transfers") == []


def test_costs_and_read_bytes_of_the_loop(record_c):
    run = record_c(SRC, args=["loop-maps"])
    t = run.open()
    dup = next(f for f in t.check("transfers") if f.kind.value == "duplicate-transfer" and f.variable == "a")
    # four runs of the construct copy a (8 KiB) in; the last three were already on the device; all were read
    assert (dup.bytes, dup.occurrences) == (3 * 8192, 3)
    assert (dup.details["transferred_bytes"], dup.details["read_bytes"], dup.details["transfers"]) == (
        4 * 8192, 4 * 8192, 4)
    assert dup.details["peak_device_bytes"] == 2 * 8192
    per = t.transfers()
    a_in = per.filter((per["variable"] == "a") & (per["op"] == "transfer_to"))
    assert a_in["duplicate_bytes"].to_list() == [0, 8192, 8192, 8192]
    assert a_in["used_bytes"].to_list() == [8192] * 4
    assert (a_in["duration_ns"] > 0).all()


def test_perfetto_marks_the_wasted_transfers(record_c, trace_cli_run, tmp_path):
    import json
    run = record_c(SRC, args=["loop-maps"])
    out = tmp_path / "lm.json"
    proc = trace_cli_run("export", str(run.log), "--to", "perfetto", "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(out.read_text())
    events = doc["traceEvents"] if isinstance(doc, dict) else doc
    wasted = sorted((e["name"], e["args"]["detail"]) for e in events if e.get("cat") == "wasted transfer")
    # runs 2-4 of the loop send a and b again: six copies marked, none of the first run's
    assert wasted == [("wasted: copy to device a", "duplicate 8192 B (transfer_to)")] * 3 + [
        ("wasted: copy to device b", "duplicate 8192 B (transfer_to)")] * 3
