"""Differential: what is recorded does not depend on the optimisation level.

A program built at -O0 and at -O1/-O2/-O3 must record the same bytes written and the same bytes
touched per variable: loops the compiler turns into memset/memcpy (expanded inline into vector
moves for short lengths), struct copies, 10-byte long double stores and masked vector accesses
are instrumented by the pass plugin (instrumentOutliers). Bytes *read* may differ by design: the
tracer drops reads of bytes the thread wrote itself, and -O2 folds reads of known values.
Per line the logs are not compared: the tracer merges adjacent runs of different lines.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import polars as pl
import pytest

pytestmark = [pytest.mark.clang, pytest.mark.slow]

PROGRAMS = Path(__file__).resolve().parents[1] / "programs" / "opt"
TRACE = str(Path(sys.executable).with_name("trace"))


def profile(t) -> dict[tuple[str, str], int]:
    """Bytes written / touched by the host in each mapped variable."""
    objs = t.data_ops.filter(pl.col("op") == "alloc").select("variable", "host_addr", "bytes").unique()
    acc = t.accesses.filter(pl.col("side") == "host").select("addr", "bytes", "write")
    out = {}
    for var, lo, n in objs.sort("host_addr").iter_rows():
        for what, rows in (("written", acc.filter(pl.col("write"))), ("touched", acc)):
            mask = np.zeros(n, bool)
            for addr, b, _w in rows.iter_rows():
                s, e = max(addr, lo), min(addr + b, lo + n)
                if s < e:
                    mask[s - lo:e - lo] = True
            out[(var, what)] = int(mask.sum())
    return out


def test_host_accesses_recorded_alike_at_every_level(record_c):
    profiles = {}
    for opt in ("-O0", "-O1", "-O2", "-O3"):
        run = record_c(PROGRAMS / "host_shapes.c", args=[], opt=opt)
        assert run.returncode == 0, run.stderr
        profiles[opt] = profile(run.open())
    base = profiles["-O0"]
    assert base[("ld", "written")] == 16 * 10          # long double: 10 bytes each, not skipped
    assert base[("bytes", "written")] == 24 and base[("small", "written")] == 16
    assert base[("qs", "written")] == 24                # qs[3] = ps[argc]: a struct copy (memcpy)
    assert base[("a", "written")] == base[("b", "written")] == 4000
    for opt in ("-O1", "-O2", "-O3"):
        assert profiles[opt] == base, opt


@pytest.mark.skipif(shutil.which("mpiexec.mpich") is None, reason="needs mpich (apt-get install mpich libmpich-dev)")
@pytest.mark.parametrize("opt", ["-O0", "-O1", "-O2"])
def test_mpi_put_origin_refilled_by_an_optimised_loop(tmp_path, trace_cli_run, opt):
    exe, log = tmp_path / "put_refill", tmp_path / "run.arrow"
    build = trace_cli_run("mpicc", "-g", opt, str(PROGRAMS / "put_refill.c"), "-o", str(exe))
    assert build.returncode == 0, build.stderr
    rec = subprocess.run([TRACE, "record", "-n", "2", "-o", str(log), "--", str(exe)],
                         capture_output=True, text=True, check=False, timeout=120)
    assert rec.returncode == 0, rec.stderr
    out = trace_cli_run("analyze", "--format", "json", str(log))
    report = json.loads(out.stdout)
    got = [(f["kind"], f["access"]["line"], f["related"][0]["line"], f["details"]["ranks"]) for f in report["findings"]]
    assert got == [("rma-race", 18, 16, [0, 1])]      # one finding: the same race on both ranks


def test_element_size_from_the_clause_at_O2(record_c, trace_cli_run):
    """-O2 turns the kernel's reads into one range (no element width); the clause b[0:1000] over
    4000 bytes still tells 4-byte elements."""
    src = Path(__file__).resolve().parents[2] / "notebooks" / "programs" / "saxpy_bug.c"
    run = record_c(src, opt="-O2")
    assert run.returncode == 0, run.stderr
    f, = json.loads(trace_cli_run("analyze", "--format", "json", str(run.log)).stdout)["findings"]
    assert (f["kind"], f["variable"], f["element_size"], f["elements"]) == ("use-of-uninitialized-memory", "b", 4, 1000)
    assert f["extent"] == "b: 1000 elements mapped (4-byte), element 0 accessed"
