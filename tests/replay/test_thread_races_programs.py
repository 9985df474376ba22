"""End to end: a target region on one host thread racing with another thread's host write and
`target update` (sections, single nowait, sibling tasks), and the correctly synchronised variants.

Each program under tests/programs/threads/ marks the two lines of its race with
``/* expect data-race VAR */``; the report must hold exactly one race on VAR whose two sites are those
lines (which side is "the access" depends on which ran later), on two host threads or tasks.
``/* may KIND VAR */`` marks a finding that only some orders of the race give (the other thread's
host write landing before the kernel's read makes that read stale): allowed, at that line only.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest
from test_vsm_programs import PROGRAMS, TRACE, needs_clang

pytestmark = [pytest.mark.slow, needs_clang]

THREAD_PROGRAMS = sorted((PROGRAMS / "threads").glob("*.c"))
MARKER = re.compile(r"/\* expect (data-race) (\w+) \*/")
MAY = re.compile(r"/\* may ([\w-]+) (\w+) \*/")


def analyze_json(log: Path) -> tuple[int, dict]:
    r = subprocess.run([TRACE, "analyze", str(log), "--format", "json"], capture_output=True, text=True,
                       check=False)
    assert r.returncode in (0, 1), r.stderr
    return r.returncode, json.loads(r.stdout)


@pytest.mark.parametrize("src", THREAD_PROGRAMS, ids=[p.stem for p in THREAD_PROGRAMS])
def test_host_thread_races(record_c, src: Path):
    run = record_c(src)
    assert run.returncode == 0, run.stderr
    code, doc = analyze_json(run.log)
    marks = [(n, m) for n, text in enumerate(src.read_text().splitlines(), 1) for m in MARKER.findall(text)]
    if not marks:
        assert doc["findings"] == [] and code == 0
        return
    assert code == 1
    may = {(kind, var, n) for n, text in enumerate(src.read_text().splitlines(), 1) for kind, var in MAY.findall(text)}
    [f] = [g for g in doc["findings"] if (g["kind"], g["variable"], g["access"]["line"]) not in may]
    [other] = [r for r in f["related"] if r["role"] == "other-access"]
    assert f["kind"] == "data-race" and f["variable"] == marks[0][1][1]
    assert {f["access"]["line"], other["line"]} == {n for n, _m in marks}
    assert f["fix"]
    if "tasks" not in src.stem:   # two host threads (tasks are their own units, whichever thread ran them)
        assert f["access"]["thread"] != other["thread"]
        assert "host threads" in f["message"] and "barrier" in f["fix"]
    else:   # sibling tasks: only task synchronisation orders them, whichever threads ran them
        assert "explicit tasks" in f["message"] and "depend" in f["fix"] and "taskwait" in f["fix"]
        assert "run them on one thread" not in f["fix"]
