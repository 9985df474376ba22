"""The report never says "clean" when it could not see: blind spots in text, JSON and SARIF, --fail-on-blind."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
from omp_sim import OmpSim

TRACE = str(Path(sys.executable).with_name("trace"))
SCHEMA = json.loads((Path(__file__).with_name("sarif-2.1.0-subset.schema.json")).read_text())


def trace(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([TRACE, *args], capture_output=True, text=True, check=False)


def offload_program(has_accesses: bool = True, truncated: bool = False) -> OmpSim:
    sim = OmpSim("ok.c")
    sim.b.run.update(has_accesses=has_accesses)
    if truncated:
        sim.b.run.update(truncated=True, signal=9, exit_status=None)
    a = sim.malloc("a", 64, 3)
    with sim.target(5, [sim.map("tofrom", "a", a, 0, 16, 5, "a[0:16]")]) as k:
        if has_accesses:
            k.read(a, 64, 6)
            k.write(a, 64, 6)
    if has_accesses:
        sim.host_read(a, 64, 8)
    return sim


@pytest.fixture(scope="module")
def logs(tmp_path_factory):
    d = tmp_path_factory.mktemp("blind")
    return {"clean": offload_program().write(d / "clean.arrow"),
            "blind": offload_program(has_accesses=False).write(d / "blind.arrow"),
            "cut": offload_program(truncated=True).write(d / "cut.arrow"),
            "empty": OmpSim("none.c").write(d / "empty.arrow")}


def test_clean_log_has_no_blind_spot(logs):
    r = trace("analyze", str(logs["clean"]), "--fail-on-blind")
    assert r.returncode == 0, r.stdout
    summary = f"SUMMARY: quiver: no findings in {logs['clean']} [checks: mapping, race, schedules, rma]"
    assert r.stdout.splitlines() == [summary]


def test_log_without_accesses_is_not_reported_clean(logs):
    r = trace("analyze", str(logs["blind"]))
    assert r.returncode == 0
    lines = r.stdout.splitlines()
    assert lines[0] == ("==quiver== WARNING: could not check mapping, race, schedules: no memory accesses were "
                        "recorded (the program was not built with `trace cc` / `trace mpicc`), so reads of stale or "
                        "uninitialised data, overflows and races with loads and stores cannot be seen")
    assert lines[-1] == (f"SUMMARY: quiver: no findings, 1 blind spot (no-accesses: see the warnings above) in "
                         f"{logs['blind']} [checks: mapping, race, schedules, rma]")
    assert trace("analyze", str(logs["blind"]), "--fail-on-blind").returncode == 4
    doc = json.loads(trace("analyze", str(logs["blind"]), "-f", "json", "--fail-on-blind").stdout)
    assert doc["blind_spots"] == [{"reason": "no-accesses", "checks": ["mapping", "race", "schedules"],
                                   "message": lines[0].removeprefix("==quiver== WARNING: ")}]
    assert doc["summary"]["blind_spots"] == 1 and doc["summary"]["exit_status"] == 4
    sarif = json.loads(trace("analyze", str(logs["blind"]), "-f", "sarif").stdout)
    jsonschema.validate(sarif, SCHEMA)
    note, = sarif["runs"][0]["invocations"][0]["toolExecutionNotifications"]
    assert note["level"] == "warning" and note["properties"]["reason"] == "no-accesses"


def test_empty_log_checked_nothing(logs):
    r = trace("analyze", str(logs["empty"]), "-f", "json")
    spot, = json.loads(r.stdout)["blind_spots"]
    assert spot["reason"] == "nothing-recorded" and spot["checks"] == ["mapping", "race", "schedules", "rma"]


def test_requested_check_without_its_events(logs):
    r = trace("analyze", str(logs["clean"]), "--check", "RMA,Mapping", "-f", "json", "--fail-on-blind")
    doc = json.loads(r.stdout)
    assert doc["checks"] == ["rma", "mapping"]                       # check names are case-insensitive
    assert [s["reason"] for s in doc["blind_spots"]] == ["no-rma"] and r.returncode == 4
    assert doc["blind_spots"][0]["message"] == "could not check rma: the log has no MPI-RMA windows"


def test_truncated_log_is_a_blind_spot(logs):
    r = trace("analyze", str(logs["cut"]), "-f", "json", "--fail-on-blind")
    doc = json.loads(r.stdout)
    assert [s["reason"] for s in doc["blind_spots"]] == ["truncated"] and r.returncode == 4
