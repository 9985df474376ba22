"""End to end: the sites a mapping finding names besides its access (tests/programs/related/).

An implicit map (the compiler's zero-length map of a pointer the kernel uses) is no clause the user
wrote: a finding through one names the `target data` clause behind it and no "ignored clause"; an
explicit clause on the kernel's construct that had no effect is named as the ignored clause.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

PROGRAMS = Path(__file__).resolve().parents[1] / "programs" / "related"
TRACE = str(Path(sys.executable).with_name("trace"))

pytestmark = [pytest.mark.slow, pytest.mark.skipif(shutil.which("clang-19") is None,
                                                   reason="clang-19 is not installed")]


def line_of(src: Path, fragment: str) -> int:
    (n,) = [n for n, text in enumerate(src.read_text().splitlines(), 1) if fragment in text]
    return n


@pytest.fixture
def finding(record_c):
    def run(name: str, opt: str) -> dict:
        rec = record_c(PROGRAMS / name, opt=opt)
        assert rec.returncode == 0, rec.stderr
        r = subprocess.run([TRACE, "analyze", str(rec.log), "--format", "json"], capture_output=True, text=True,
                           check=False)
        assert r.returncode == 1, r.stderr
        (f,) = json.loads(r.stdout)["findings"]
        return f

    return run


@pytest.mark.parametrize("opt", ["-O0", "-O2"])
def test_an_implicit_map_is_not_an_ignored_clause(finding, opt):
    src = PROGRAMS / "implicit_pointer_short.c"
    f = finding(src.name, opt)
    assert (f["kind"], f["variable"], f["access"]["line"]) == ("buffer-overflow", "in", line_of(src, "/* expect"))
    roles = [(r["role"], r["line"]) for r in f["related"]]
    assert roles[:2] == [("map-clause", line_of(src, "omp target data")), ("construct", line_of(src, "omp target teams"))]
    assert "ignored-clause" not in [r for r, _ in roles]
    assert f["fix"] == (f"enlarge `in[0:w * (h - 1)]` to `in[0:w * h]` in `map(to: in[0:w * (h - 1)])` at "
                        f"{src}:{line_of(src, 'omp target data')}")


def test_an_explicit_clause_without_effect_is_named(finding):
    src = PROGRAMS / "explicit_clause_ignored.c"
    f = finding(src.name, "-O0")
    assert (f["kind"], f["variable"], f["access"]["line"]) == ("buffer-overflow", "in", line_of(src, "/* expect"))
    (ignored,) = [r for r in f["related"] if r["role"] == "ignored-clause"]
    assert ignored["line"] == line_of(src, "omp target teams")
    assert ignored["message"] == "map(to: in[0:w * (h - 1)]) had no effect: `in` was already present"
