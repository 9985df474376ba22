"""End to end: device accesses to host memory that no map clause maps, and overruns into a neighbour.

Each program under tests/programs/unmapped/ is built at -O0 and -O2, recorded and analysed; the findings
must be exactly its ``/* expect KIND VAR */`` markers (kind, variable, line), every line non-zero.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from test_vsm_programs import PROGRAMS, analyze, expected_from_markers, findings, needs_clang

pytestmark = [pytest.mark.slow, needs_clang]

UNMAPPED_PROGRAMS = sorted((PROGRAMS / "unmapped").glob("*.c"))


@pytest.mark.parametrize("opt", ["-O0", "-O2"])
@pytest.mark.parametrize("src", UNMAPPED_PROGRAMS, ids=[p.stem for p in UNMAPPED_PROGRAMS])
def test_unmapped_and_neighbour_programs(record_c, src: Path, opt: str):
    run = record_c(src, opt=opt)
    assert run.returncode == 0, run.stderr
    code, doc = analyze(run.log)
    expected = expected_from_markers(src)
    assert findings(doc, src) == expected
    assert len(doc["findings"]) == len(expected)
    assert code == (1 if expected else 0)
    for f in doc["findings"]:
        assert f["access"]["line"] > 0, f
        assert f["fix"], f
        if f["kind"] == "unmapped-memory":
            assert "map(" in f["fix"] and f"{f['variable']}[0:" in f["fix"], f["fix"]
            # hoisted ranges keep their access width at every level: elements, not bytes
            assert f["element_size"] in (4, 8) and "sizeof" not in f["fix"], f
            assert not any(r["role"] == "map-clause" for r in f["related"]), f


def test_unmapped_heap_names_the_allocation_and_the_construct(record_c):
    src = PROGRAMS / "unmapped" / "unmapped_heap.c"
    run = record_c(src)
    _code, doc = analyze(run.log)
    [f] = doc["findings"]
    roles = {r["role"]: r for r in f["related"]}
    assert roles["allocation"]["line"] == 6 and roles["allocation"]["message"].startswith("malloc of 16384")
    assert roles["construct"]["line"] == 9
    assert f["element_size"] == 8 and f["element"] == 0 and f["bytes"] == 16384
    assert "`map(to: w[0:2048])` to the target construct" in f["fix"]


def test_unmapped_new_array_is_named_as_the_source_allocates_it(record_c):
    src = PROGRAMS / "unmapped" / "unmapped_new_array.cpp"
    run = record_c(src)
    _code, doc = analyze(run.log)
    assert findings(doc, src) == expected_from_markers(src)
    [f] = doc["findings"]
    roles = {r["role"]: r for r in f["related"]}
    assert roles["allocation"]["line"] == 5 and roles["allocation"]["message"].startswith("new[] of 8000")
    assert "`map(to: w[0:n])` to the target construct" in f["fix"]
