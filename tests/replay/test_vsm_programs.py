"""End to end: real OpenMP programs compiled with `trace cc`, recorded, analysed by the mapping checker.

tests/programs/mapping/*.c carry ``/* expect KIND VAR */`` markers on the lines that must be reported
(no marker: a correct program, no finding). The papers' listings under tests/programs/omp/ are
checked against the findings the seeds describe.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

PROGRAMS = Path(__file__).resolve().parents[1] / "programs"
needs_clang = pytest.mark.skipif(shutil.which("clang-19") is None, reason="clang-19 is not installed")
TRACE = str(Path(sys.executable).with_name("trace"))
MARKER = re.compile(r"/\* expect ([a-z-]+) (\w+) \*/")

pytestmark = [pytest.mark.slow, needs_clang]


def expected_from_markers(src: Path) -> set[tuple[str, str, int]]:
    out = set()
    for n, line in enumerate(src.read_text().splitlines(), 1):
        for kind, var in MARKER.findall(line):
            out.add((kind, var, n))
    return out


def line_of(src: Path, fragment: str) -> int:
    lines = [n for n, text in enumerate(src.read_text().splitlines(), 1) if fragment in text]
    assert len(lines) == 1, f"{fragment!r} not found once in {src}"
    return lines[0]


def analyze(log: Path, *args: str) -> tuple[int, dict]:
    r = subprocess.run([TRACE, "analyze", str(log), "--check", "mapping", "--format", "json", *args],
                       capture_output=True, text=True, check=False)
    assert r.returncode in (0, 1), r.stderr
    return r.returncode, json.loads(r.stdout)


def findings(doc: dict, src: Path) -> set[tuple[str, str, int]]:
    return {(f["kind"], f["variable"], f["access"]["line"]) for f in doc["findings"]
            if Path(f["access"]["file"]).name == src.name}


MAPPING_PROGRAMS = sorted((PROGRAMS / "mapping").glob("*.c"))


@pytest.mark.parametrize("src", MAPPING_PROGRAMS, ids=[p.stem for p in MAPPING_PROGRAMS])
def test_table3_programs(record_c, src):
    run = record_c(src)
    assert run.returncode == 0, run.stderr
    code, doc = analyze(run.log)
    expected = expected_from_markers(src)
    assert findings(doc, src) == expected
    assert len(doc["findings"]) == len(expected)
    assert code == (1 if expected else 0)
    for f in doc["findings"]:
        assert f["fix"], f
        assert any(r["role"] == "map-clause" for r in f["related"]), f


SEED_LISTINGS = {
    # seed 000 Fig. 1: alloc instead of to -> UUM on the device at the read of b
    "seed000_fig1_alloc.c": {("use-of-uninitialized-memory", "b", "reads b's uninitialised CV")},
    # seed 000 Fig. 6 (503.postencil): after an odd number of swaps the to-only copy is read
    "seed000_fig6_swap.c": {("use-of-stale-data", "h_A0", "after 3 swaps")},
    # seed 002 Fig. 1: b[0:SIZE/2] alloc: UUM in the mapped half, overflow past it
    "seed002_fig1.cpp": {("use-of-uninitialized-memory", "b", "a[i] = b[i];"),
                         ("buffer-overflow", "b", "a[i] = b[i];")},
    # seed 003 Listing 2.5: reference counting suppresses the inner from
    "seed003_l25_refcount.c": {("use-of-stale-data", "A", "A was not copied back yet")},
    # seed 003 Listing 2.3 is a bug under OpenMP 4.5 only; libomp 19 follows 5.x (alloc decrements)
    "seed003_l23_alloc.c": set(),
    "seed003_l24_from.c": set(),
    "seed003_l26_update.c": set(),
}


@pytest.mark.parametrize("name", sorted(SEED_LISTINGS))
def test_seed_listings(record_c, name):
    src = PROGRAMS / "omp" / name
    run = record_c(src)
    assert run.returncode == 0, run.stderr
    _code, doc = analyze(run.log)
    expected = {(kind, var, line_of(src, fragment)) for kind, var, fragment in SEED_LISTINGS[name]}
    assert findings(doc, src) == expected


def test_seed000_fig2_line_5_stale(record_c):
    """Fig. 2's first bug (line 6 in our copy); the nowait part depends on the schedule (race checker)."""
    src = PROGRAMS / "omp" / "seed000_fig2.c"
    run = record_c(src)
    _code, doc = analyze(run.log)
    stale = [f for f in doc["findings"] if f["access"]["line"] == line_of(src, "line 6: stale")]
    assert [(f["kind"], f["variable"]) for f in stale] == [("use-of-stale-data", "a")]
    assert stale[0]["fix"] == f"change `map(to: a)` at {src}:4 to `map(tofrom: a)`"


def test_seed002_fig1_fix_matches_the_paper(record_c):
    src = PROGRAMS / "omp" / "seed002_fig1.cpp"
    run = record_c(src)
    _code, doc = analyze(run.log)
    fixes = sorted(f["fix"] for f in doc["findings"])
    # the clause's own line, or its construct's line when the recorder only knows that one
    lines = {line_of(src, "map(alloc: b[0:SIZE / 2])"), line_of(src, "#pragma omp target data")}
    assert len(fixes) == 2
    line = int(fixes[0].split(f"{src}:")[1].split(" ")[0])
    assert line in lines
    assert fixes == [
        f"change `map(alloc: b[0:1000 / 2])` at {src}:{line} to `map(to: b[0:1000 / 2])`",
        f"enlarge `b[0:1000 / 2]` to `b[0:1000]` in `map(alloc: b[0:1000 / 2])` at {src}:{line}",
    ]


def test_two_runs_of_analyze_give_identical_text(record_c):
    run = record_c(PROGRAMS / "mapping" / "short_section.c")
    texts = [subprocess.run([TRACE, "analyze", str(run.log), "--check", "mapping"], capture_output=True,
                            text=True, check=False).stdout for _ in range(2)]
    assert texts[0] == texts[1] and "==quiver== ERROR: buffer-overflow on device 0" in texts[0]
    sarif = subprocess.run([TRACE, "analyze", str(run.log), "--check", "mapping", "-f", "sarif"],
                           capture_output=True, text=True, check=False)
    doc = json.loads(sarif.stdout)
    assert doc["version"] == "2.1.0" and doc["runs"][0]["results"]


def test_threads_of_one_kernel_give_the_same_report_whoever_ran_first(record_c):
    """Four threads read their chunks top down: the first bad read in time is some chunk's last element,
    but the report shows the lowest bad element of that kernel (element 0), in every run."""
    src = PROGRAMS / "mapping" / "threads_read_alloc.c"
    extents = set()
    for _ in range(3):
        run = record_c(src)
        _code, doc = analyze(run.log)
        (f,) = [f for f in doc["findings"] if f["variable"] == "b"]
        assert f["element"] == 0 and f["access"]["line"] == line_of(src, "s += b[i]")
        extents.add(f["extent"])
    assert extents == {"b: 4096 elements mapped (4-byte), element 0 accessed"}


@pytest.mark.parametrize(("name", "clause", "fix"), [
    # a motion clause copies nothing in: the fix is the map clause that made the device copy
    ("update_from_alloc.c", "map(alloc: out[0:N])",
     ("change `map(alloc: out[0:256])` at {src}:{line} to `map(to: out[0:256])` (its device copy still held bytes "
      "the device never wrote when `target update` at line {update} copied it back)")),
    ("from_unwritten.c", "map(from: a[0:N])",
     ("change `map(from: a[0:64])` at {src}:{line} to `map(tofrom: a[0:64])` (its device copy still held bytes the "
      "device never wrote when it was copied back)")),
])
def test_fix_of_a_host_read_of_bytes_the_device_never_wrote(record_c, name, clause, fix):
    """A host read of bytes copied back from a device copy no kernel fully wrote: the fix adds `to` to the map
    clause that made the device copy (never to a `target update`'s motion clause, which has no copy-in)."""
    src = PROGRAMS / "mapping" / name
    run = record_c(src)
    _code, doc = analyze(run.log)
    (f,) = doc["findings"]
    lines = {line_of(src, clause), line_of(src, "#pragma omp target data") if "target data" in src.read_text()
             else line_of(src, "#pragma omp target map")}
    line = int(f["fix"].split(f"{src}:")[1].split(" ")[0])
    assert line in lines
    update = line_of(src, "#pragma omp target update from") if "target update" in src.read_text() else 0
    assert f["fix"] == fix.format(src=src, line=line, update=update)
