"""`trace analyze` reports: text like a sanitizer, the JSON contract, SARIF 2.1.0, exit codes, options."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
from omp_sim import OmpSim
from quiver.replay.driver import AnalysisReport, UnknownCheck, resolve_checks
from quiver.replay.report.findings import Finding, FindingKind, Site
from quiver.replay.report.json import KINDS

TRACE = str(Path(sys.executable).with_name("trace"))
SCHEMA = json.loads((Path(__file__).with_name("sarif-2.1.0-subset.schema.json")).read_text())


def trace(*args: str, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run([TRACE, *args], capture_output=True, text=True, check=False, cwd=cwd)


def buggy_program(truncated: bool = False) -> OmpSim:
    """seed 002 Fig. 1 (UUM + overflow on b) and seed 000 Fig. 2 line 5 (stale a) in one log."""
    SIZE = 100
    sim = OmpSim("error.cpp")
    if truncated:
        sim.b.run.update(truncated=True, signal=11, exit_status=None)
    a = sim.malloc("a", 4 * SIZE, 4)
    b = sim.malloc("b", 4 * SIZE, 5)
    with (sim.target_data(11, [sim.map("from", "a", a, 0, SIZE, 12, "a[0:SIZE]"),
                               sim.map("alloc", "b", b, 0, SIZE // 2, 13, "b[0:SIZE / 2]")]),
          sim.target(14, [sim.map("from", "a", a, 0, SIZE, 15, "a[0:SIZE]"),
                          sim.map("to", "b", b, 0, SIZE // 2, 16, "b[0:SIZE / 2]")]) as k):
        k.read(b, 4 * SIZE, 18, via=b)
        k.write(a, 4 * SIZE, 18)
    x = sim.stack_array(4)
    with sim.target(22, [sim.scalar("to", "x", x, 4, 22)]) as k:
        k.write(x, 4, 23)
    sim.host_read(x, 4, 25)
    return sim


def clean_program() -> OmpSim:
    sim = OmpSim("ok.c")
    a = sim.malloc("a", 64, 3)
    with sim.target(5, [sim.map("tofrom", "a", a, 0, 16, 5, "a[0:16]")]) as k:
        k.read(a, 64, 6)
        k.write(a, 64, 6)
    sim.host_read(a, 64, 8)
    return sim


@pytest.fixture(scope="module")
def logs(tmp_path_factory):
    d = tmp_path_factory.mktemp("reports")
    return {"buggy": buggy_program().write(d / "buggy.arrow"), "clean": clean_program().write(d / "clean.arrow"),
            "truncated": buggy_program(truncated=True).write(d / "truncated.arrow"), "dir": d}


def test_text_report_reads_like_a_sanitizer_and_is_deterministic(logs):
    one = trace("analyze", str(logs["buggy"]), "--check", "mapping")
    two = trace("analyze", str(logs["buggy"]), "--check", "mapping")
    assert one.returncode == 1, one.stderr
    assert one.stdout == two.stdout
    lines = one.stdout.splitlines()
    headers = [line for line in lines if line.startswith("==quiver==")]
    assert headers == [
        "==quiver== ERROR: buffer-overflow on device 0 in main at error.cpp:18",
        "==quiver== ERROR: use-of-uninitialized-memory on device 0 in main at error.cpp:18",
        "==quiver== ERROR: use-of-stale-data on the host in main at error.cpp:25",
    ]
    assert "  b: 50 elements mapped (4-byte), element 50 accessed" in lines
    assert "  fix: enlarge `b[0:SIZE / 2]` to `b[0:SIZE]` in `map(alloc: b[0:SIZE / 2])` at error.cpp:13" in lines
    assert "  fix: change `map(to: x)` at error.cpp:22 to `map(tofrom: x)`" in lines
    assert "  history of the first bad byte:" in lines
    assert lines[-1] == (f"SUMMARY: quiver: 3 findings (1 buffer-overflow, 1 use-of-stale-data, "
                         f"1 use-of-uninitialized-memory) in {logs['buggy']} [checks: mapping]")


def test_clean_log_exits_zero(logs):
    r = trace("analyze", str(logs["clean"]), "--check", "mapping")
    assert r.returncode == 0, r.stderr
    assert r.stdout == f"SUMMARY: quiver: no findings in {logs['clean']} [checks: mapping]\n"


def test_json_contract(logs):
    r = trace("analyze", str(logs["buggy"]), "--check", "mapping", "--format", "json")
    assert r.returncode == 1
    doc = json.loads(r.stdout)
    assert set(doc) >= {"version", "log", "summary", "findings"}
    assert doc["version"] == 1 and doc["log"]["path"] == str(logs["buggy"]) and doc["log"]["truncated"] is False
    assert doc["summary"]["findings"] == 3 and doc["summary"]["exit_status"] == 1
    assert set(KINDS) == {"use-of-uninitialized-memory", "use-of-stale-data", "buffer-overflow", "unmapped-memory",
                          "data-race", "rma-race", "unused-transfer", "duplicate-transfer", "round-trip",
                          "repeated-allocation", "unused-allocation"}
    by_kind = {f["kind"]: f for f in doc["findings"]}
    assert set(by_kind) == {"buffer-overflow", "use-of-uninitialized-memory", "use-of-stale-data"}
    for f in doc["findings"]:
        assert f["kind"] in KINDS
        assert {"file", "line", "function"} <= set(f["access"])
        assert f["related"] and all({"file", "line", "role"} <= set(r) for r in f["related"])
    bo = by_kind["buffer-overflow"]
    assert (bo["variable"], bo["access"]["line"], bo["access"]["side"], bo["element"], bo["elements"]) == \
        ("b", 18, "device", 50, 50)
    clause = next(r for r in bo["related"] if r["role"] == "map-clause")
    assert (clause["file"], clause["line"], clause["message"]) == ("error.cpp", 13, "map(alloc: b[0:SIZE / 2])")
    stale = by_kind["use-of-stale-data"]
    assert [h["line"] for h in stale["history"]] == [22, 22, 23, 22, 25]
    again = trace("analyze", str(logs["buggy"]), "--check", "mapping", "--format", "json")
    assert again.stdout == r.stdout


def test_sarif_is_valid_2_1_0_with_results_flows_and_related_locations(logs):
    r = trace("analyze", str(logs["buggy"]), "--check", "mapping", "-f", "sarif")
    assert r.returncode == 1
    doc = json.loads(r.stdout)
    jsonschema.Draft7Validator(SCHEMA, format_checker=jsonschema.FormatChecker()).validate(doc)
    assert doc["version"] == "2.1.0"
    run = doc["runs"][0]
    rules = [rule["id"] for rule in run["tool"]["driver"]["rules"]]
    assert rules == [k.value for k in FindingKind]
    results = run["results"]
    assert len(results) == 3
    for res in results:
        assert rules[res["ruleIndex"]] == res["ruleId"]
        assert res["level"] == "error"
        loc = res["locations"][0]["physicalLocation"]
        assert loc["artifactLocation"]["uri"] == "error.cpp" and loc["region"]["startLine"] in (18, 25)
        assert res["relatedLocations"][0]["message"]["text"].startswith("map-clause: ")
    stale = next(res for res in results if res["ruleId"] == "use-of-stale-data")
    flow = stale["codeFlows"][0]["threadFlows"][0]["locations"]
    assert [step["location"]["physicalLocation"]["region"]["startLine"] for step in flow] == [22, 22, 23, 22, 25]
    assert "Fix: change `map(to: x)`" in stale["message"]["text"]


def test_sarif_schema_rejects_what_it_should():
    bad = {"version": "2.1.0", "runs": [{"tool": {"driver": {"name": "q"}},
                                         "results": [{"message": {"text": "x"},
                                                      "locations": [{"physicalLocation": {
                                                          "artifactLocation": {"uri": "a.c"},
                                                          "region": {"startLine": 0}}}]}]}]}
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(bad, SCHEMA)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"version": "2.0.0", "runs": []}, SCHEMA)


def test_truncated_log_is_analysed_and_says_so(logs):
    r = trace("analyze", str(logs["truncated"]), "--check", "mapping")
    assert r.returncode == 1
    assert r.stdout.splitlines()[0] == "==quiver== WARNING: log truncated (signal 11): events after 30 ns are missing"
    assert "(truncated log)" in r.stdout.splitlines()[-1]
    doc = json.loads(trace("analyze", str(logs["truncated"]), "-c", "mapping", "-f", "json").stdout)
    assert doc["log"]["truncated"] is True and "truncated" in doc["summary"]["note"]
    sarif = json.loads(trace("analyze", str(logs["truncated"]), "-c", "mapping", "-f", "sarif").stdout)
    notes = sarif["runs"][0]["invocations"][0]["toolExecutionNotifications"]
    assert "truncated" in notes[0]["message"]["text"]


def test_truncated_log_without_events_is_not_reported_clean(tmp_path):
    from quiver.formats import LogBuilder

    log = LogBuilder(truncated=True, truncated_reason="signal 11 (SIGSEGV)", signal=11, exit_status=None).write(
        tmp_path / "empty.arrow")
    r = trace("analyze", str(log))
    assert r.returncode == 2
    assert r.stdout.splitlines() == [
        "==quiver== WARNING: log truncated (signal 11 (SIGSEGV)) and holds no events: nothing could be checked", "",
        (f"SUMMARY: quiver: nothing checked (no events recorded) in {log} (truncated log) "
         "[checks: mapping, race, schedules, rma]")]
    doc = json.loads(trace("analyze", str(log), "-f", "json").stdout)
    assert doc["summary"]["exit_status"] == 2 and "nothing could be checked" in doc["summary"]["note"]


def test_output_file_and_check_selection(logs):
    out = logs["dir"] / "report.json"
    r = trace("analyze", str(logs["buggy"]), "-c", "mapping", "-c", "mapping", "-f", "json", "-o", str(out))
    assert r.returncode == 1 and r.stdout == ""
    assert json.loads(out.read_text())["checks"] == ["mapping"]


@pytest.mark.parametrize("args,message", [
    (["--check", "nosuch"], ("trace: error: unknown check 'nosuch' (known: mapping, race, schedules, rma, "
                             "transfers, all)")),
    (["--format", "xml"], "trace: error: Invalid value for '--format'"),
])
def test_usage_errors_are_one_line_exit_2(logs, args, message):
    r = trace("analyze", str(logs["clean"]), *args)
    assert r.returncode == 2
    assert r.stdout == ""
    assert len(r.stderr.strip().splitlines()) == 1 and r.stderr.startswith(message)


def test_unusable_input_exit_2(tmp_path):
    bad = tmp_path / "notalog.arrow"
    bad.write_text("hello")
    r = trace("analyze", str(bad))
    assert r.returncode == 2
    assert r.stderr.strip() == f"trace: error: {bad}: not an Arrow IPC file (not a quiver event log)"


def test_resolve_checks():
    assert resolve_checks(["mapping,rma", "mapping"]) == ["mapping", "rma"]
    assert resolve_checks(["all"])[:2] == ["mapping", "race"] and "transfers" in resolve_checks(["all"])
    assert "transfers" not in resolve_checks(None)
    with pytest.raises(UnknownCheck):
        resolve_checks(["mapping,bogus"])


def test_advisory_findings_alone_exit_zero():
    site = Site("a.c", 3, "main")
    report = AnalysisReport("x.arrow", {}, 1, ["redundant-transfer"], [],
                            [Finding(FindingKind.REDUNDANT_TRANSFER, "never read", site)])
    assert report.exit_status == 0
    report.findings.append(Finding(FindingKind.USE_OF_STALE_DATA, "stale", site))
    assert report.exit_status == 1


def test_sarif_paths_are_relative_to_the_source_root(tmp_path):
    """GitHub code scanning places a result only by a repository-relative URI (%SRCROOT%)."""
    src = tmp_path / "repo" / "src"
    src.mkdir(parents=True)
    sim = OmpSim(str(src / "kernel.c"))
    a = sim.malloc("a", 64, 3)
    with sim.target(5, [sim.map("alloc", "a", a, 0, 16, 5, "a[0:16]")]) as k:
        k.read(a, 64, 6)
    log = sim.write(tmp_path / "k.arrow")
    doc = json.loads(trace("analyze", str(log), "-f", "sarif", "--source-root", str(tmp_path / "repo")).stdout)
    jsonschema.Draft7Validator(SCHEMA, format_checker=jsonschema.FormatChecker()).validate(doc)
    run = doc["runs"][0]
    assert run["originalUriBaseIds"] == {"%SRCROOT%": {"uri": (tmp_path / "repo").as_uri() + "/"}}
    loc = run["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]
    assert loc == {"uri": "src/kernel.c", "uriBaseId": "%SRCROOT%"}
    assert run["tool"]["driver"]["informationUri"].startswith("file:///")
    outside = json.loads(trace("analyze", str(log), "-f", "sarif", "--source-root", str(tmp_path / "other")).stdout)
    loc = outside["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]
    assert loc == {"uri": (src / "kernel.c").as_uri()}


def test_the_same_race_on_several_ranks_is_one_finding():
    from quiver.replay.report.findings import Related, merge_findings
    from quiver.replay.report.text import render_finding

    def race(rank: int, line: int = 21) -> Finding:
        other = Related("other-access", Site("halo.c", 19, "main", "rank", rank=rank), f"MPI_Put on rank {rank}")
        return Finding(FindingKind.RMA_RACE, f"store on rank {rank} races", Site("halo.c", line, "main", "rank",
                       rank=rank), variable=f"local buffer of rank {rank}", related=[other],
                       fix=f"add MPI_Win_flush_local({1 - rank % 2}, win) before line {line}", bytes=8,
                       details={"ranks": [rank], "operations": ["store", "MPI_Put:origin-read"]})

    out = merge_findings([race(2), race(0), race(1), race(0, line=25)])
    assert [(f.access.line, f.access.rank, f.details["ranks"], f.bytes, f.occurrences) for f in out] == [
        (21, 0, [0, 1, 2], 24, 3), (25, 0, [0], 8, 1)]
    assert [a["rank"] for a in out[0].details["also_on"]] == [1, 2]
    assert out[0].details["also_on"][0]["fix"] == "add MPI_Win_flush_local(0, win) before line 21"
    assert "  also on: rank 1 (with rank 1), rank 2 (with rank 2): the same lines, 3 ranks in all" in render_finding(out[0])


def test_repeated_history_steps_are_folded():
    from quiver.replay.report.findings import HistoryStep, merge_findings
    from quiver.replay.report.json import finding_dict
    from quiver.replay.report.text import render_finding

    dev = Site("k.c", 12, "main", "device", device=0)
    write = HistoryStep("device write on device 0", dev, "host copy stale, device copy valid")
    steps = [HistoryStep("device 0 copy allocated", Site("k.c", 10), "host copy valid"), *[write] * 5,
             HistoryStep("read on the host (first bad access)", Site("k.c", 20))]
    f, = merge_findings([Finding(FindingKind.USE_OF_STALE_DATA, "stale", Site("k.c", 20), "a", history=steps)])
    assert [h.repeat for h in f.history] == [1, 5, 1]
    assert "    #1 k.c:12: device write on device 0 (x5)  -> host copy stale, device copy valid" in render_finding(f)
    assert finding_dict(f)["history"][1]["repeat"] == 5
