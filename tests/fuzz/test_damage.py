"""Damaged copies of a real recorded log (bit flips, truncations, overwritten words at offsets spread
over the whole file) through `trace analyze`, `info` and `explain`: exit 0/1/2 with at most one line
on stderr, never exit 3, a traceback or a hang (each variant runs under a time limit: damage.py)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.clang

HERE = Path(__file__).resolve().parent
TRACE = str(Path(sys.executable).with_name("trace"))


def test_damaged_copies_of_a_real_log(tmp_path, omp_build):
    exe = omp_build("omp/seed000_fig2.c")
    log = tmp_path / "run.arrow"
    r = subprocess.run([TRACE, "record", "-o", str(log), "--", str(exe)], capture_output=True, text=True,
                       cwd=tmp_path, check=False)
    assert r.returncode == 0, r.stderr
    sweep = subprocess.run([sys.executable, str(HERE / "damage.py"), str(log), str(tmp_path / "variants"),
                            "--limit", "24", "--commands", "3"],
                           capture_output=True, text=True, timeout=580, check=False)
    assert sweep.returncode == 0, sweep.stdout + sweep.stderr
    assert sweep.stdout.splitlines()[-1] == "0 bad"
