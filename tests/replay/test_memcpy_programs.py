"""End to end: omp_target_memcpy between host memory and device memory (tests/programs/memcpy/).

A copy by a device memory routine (a DATA_OP with construct -1) whose device side is no live device
copy, or that copies between a device copy and another host buffer, reads (to device) or writes (from
device) its host bytes like a host access, and a copy out of a device copy reads that copy: a stale
host buffer copied to an ``omp_target_alloc`` buffer is reported at the memcpy, and a copy back from
one makes the host copy valid again.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from quiver.formats import DataOpKind, EventKind, read_log

PROGRAMS = Path(__file__).resolve().parents[1] / "programs" / "memcpy"
TRACE = str(Path(sys.executable).with_name("trace"))
MARKER = re.compile(r"/\* expect ([a-z-]+) ([\w.]+) \*/")

pytestmark = [pytest.mark.slow, pytest.mark.skipif(shutil.which("clang-19") is None,
                                                   reason="clang-19 is not installed")]

SOURCES = sorted(PROGRAMS.glob("*.c"))


def expected(src: Path) -> set[tuple[str, str, int]]:
    return {(kind, var, n) for n, line in enumerate(src.read_text().splitlines(), 1)
            for kind, var in MARKER.findall(line)}


def line_of(src: Path, fragment: str) -> int:
    (n,) = [n for n, text in enumerate(src.read_text().splitlines(), 1) if fragment in text]
    return n


def analyze(log: Path) -> tuple[int, dict]:
    import json

    r = subprocess.run([TRACE, "analyze", str(log), "--check", "mapping", "--format", "json"],
                       capture_output=True, text=True, check=False)
    assert r.returncode in (0, 1), r.stderr
    return r.returncode, json.loads(r.stdout)


@pytest.fixture
def recorded(record_c):
    """Record a program of tests/programs/memcpy (`trace record` removes the runtime's /tmp/tmpfile_* image)."""

    def run(name: str):
        r = record_c(PROGRAMS / name)
        assert r.returncode == 0, r.stderr
        return r

    return run


@pytest.mark.parametrize("src", SOURCES, ids=[p.stem for p in SOURCES])
def test_findings_match_markers(recorded, src):
    code, doc = analyze(recorded(src.name).log)
    got = {(f["kind"], f["variable"], f["access"]["line"]) for f in doc["findings"]}
    assert got == expected(src)
    assert code == (1 if expected(src) else 0)
    for f in doc["findings"]:
        assert Path(f["access"]["file"]).name == src.name
        assert any(r["role"] == "map-clause" for r in f["related"]), f


def test_stale_copy_to_device_names_the_memcpy_and_its_fix(recorded):
    src = PROGRAMS / "stale_to_device.c"
    _code, doc = analyze(recorded(src.name).log)
    line = line_of(src, "omp_target_memcpy(d, v.p")
    (f,) = [f for f in doc["findings"] if f["access"]["line"] == line]
    assert f["access"]["side"] == "host"
    assert f["message"] == ("read of stale data on the host by omp_target_memcpy (a copy to device 0): `v.p` was "
                            "last written on device 0 and not copied back")
    assert f["fix"] == f"add `#pragma omp target update from(v.p[0:64])` before line {line}"
    steps = [(s["operation"], s["line"]) for s in f["history"]]
    assert steps[-2:] == [("device write on device 0", line - 1),
                          ("read on the host by omp_target_memcpy (first bad access)", line)]


def test_copy_out_of_a_stale_device_copy(recorded):
    src = PROGRAMS / "from_device_copy.c"
    _code, doc = analyze(recorded(src.name).log)
    (f,) = [f for f in doc["findings"] if f["variable"] == "a"]
    line = line_of(src, "omp_get_mapped_ptr(a, dev)")
    assert (f["access"]["side"], f["access"]["device"]) == ("device", 0)
    assert f["fix"] == f"add `#pragma omp target update to(a[0:32])` before line {line} ({src})"


def test_device_memory_routines_outside_constructs_have_no_construct(recorded):
    """omp_target_alloc before the program's first construct: construct id -1 and the call's own line
    (the tracer's per-thread state used to start at construct 0, giving it that construct's id)."""
    src = PROGRAMS / "ok_copied_back.c"
    log = read_log(recorded(src.name).log)
    c = log.columns()
    alloc = np.flatnonzero((c["kind"] == int(EventKind.DATA_OP)) & (c["op"] == int(DataOpKind.ALLOC))
                           & (c["addr"] == 0))
    assert len(alloc) == 1
    assert int(c["id"][alloc[0]]) == -1
    assert log.location(int(c["loc"][alloc[0]])).line == line_of(src, "omp_target_alloc(")
