"""Real programs compiled with `trace cc` / `trace mpicc` and recorded with `trace record`:
the exploration tools on what the tracer really writes."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest

import quiver

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
TRACE = str(Path(sys.executable).with_name("trace"))
pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(shutil.which("clang-19") is None, reason="needs clang-19 and libomp-19")]


def trace(*args, cwd=None) -> subprocess.CompletedProcess:
    proc = subprocess.run([TRACE, *map(str, args)], capture_output=True, text=True, check=False, cwd=cwd,
                          timeout=600)
    return proc


@pytest.fixture(scope="module")
def wasteful(tmp_path_factory):
    d = tmp_path_factory.mktemp("wasteful")
    assert trace("cc", "-g", "-O1", HERE / "programs" / "wasteful.c", "-o", d / "w").returncode == 0
    rec = trace("record", "-o", d / "w.arrow", "--", d / "w", cwd=d)
    assert rec.returncode == 0, rec.stderr
    return d / "w.arrow"


def test_recorded_log_opens_as_non_empty_frames(wasteful):
    t = quiver.open(wasteful)
    for family in ("constructs", "maps", "data_ops", "kernels", "accesses"):
        assert t.view(family).height > 0, family
    assert set(t.maps["variable"]) >= {"in", "out", "big"}
    assert t.data_ops.filter(pl.col("op") == "transfer_to")["bytes"].to_list() == [2048, 2048, 2048]


def test_redundant_transfers_in_a_real_program(wasteful):
    got = [(f.variable, f.access.line, f.access.side, f.bytes, f.fix.split(" at ")[0])
           for f in quiver.open(wasteful).check(["redundant-transfer"])]
    assert got == [
        ("big", 17, "device", 2048, "change `map(to: big[0:256])` to `map(alloc: big[0:256])`"),
        ("out", 18, "device", 2048, "change `map(tofrom: out[0:256])` to `map(from: out[0:256])`"),
        ("big", 24, "host", 2048, "remove `target update from(big[0:256])`"),
    ]


def test_explain_of_a_real_program(wasteful):
    out = trace("explain", wasteful)
    assert out.returncode == 0
    text = out.stdout
    assert "wasteful.c:18  target  (in main, device 0)\n" in text
    assert "  Copy In         out[0:256] (2048 B), in[0:256] (2048 B)\n" in text
    assert "  Persistent In   big (implicit)\n" in text
    assert "moved: 6144 B to devices, 4096 B back to the host; wasted: 6144 B unused-transfer\n" in text
    assert "peak device memory: device 0 6144 B\n" in text


def test_listing_5_3_recorded_matches_table_4(tmp_path):
    src = ROOT / "tests" / "programs" / "omp" / "seed003_l53_classify.c"
    assert trace("cc", "-g", "-O0", src, "-o", tmp_path / "l53").returncode == 0
    assert trace("record", "-o", tmp_path / "l53.arrow", "--", tmp_path / "l53", cwd=tmp_path).returncode == 0
    doc = json.loads(trace("explain", tmp_path / "l53.arrow", "--format", "json").stdout)
    sites = {(s["line"], s["construct"]): {i["clause"]: i for i in s["items"]} for s in doc["constructs"]}
    enter = sites[(9, "target_enter_data")]
    assert enter["A[0:10]"]["copy_in"]["bytes"] == 40 and enter["B[0:10]"]["alloc"]["bytes"] == 40
    kernel = sites[(10, "target")]
    assert kernel["B[0:10]"]["persistent_in"]["runs"] == 1 and kernel["B[0:10]"]["copy_out"]["bytes"] == 0
    assert sites[(16, "target_exit_data")]["B[0:10]"]["copy_out"]["bytes"] == 40


def test_perfetto_export_of_a_real_program(wasteful, tmp_path):
    out = tmp_path / "w.json"
    proc = trace("export", wasteful, "--to", "perfetto", "-o", out, "--check", "redundant-transfer")
    assert proc.returncode == 0, proc.stderr
    events = json.loads(out.read_text())["traceEvents"]
    assert all({"ph", "ts", "pid", "tid"} <= e.keys() for e in events)
    kernels = [e for e in events if e["ph"] == "X" and e["cat"] == "kernel"]
    copies = [e for e in events if e["ph"] == "X" and e["cat"] in ("transfer", "wasted transfer")]
    assert [k["name"] for k in kernels] == ["kernel wasteful.c:18"]
    assert sorted((c["args"]["variable"], c["args"]["bytes"], c["cat"]) for c in copies) == [
        ("big", 2048, "wasted transfer"), ("big", 2048, "wasted transfer"), ("in", 2048, "transfer"),
        ("out", 2048, "transfer"), ("out", 2048, "wasted transfer")]
    assert all(c["dur"] >= 0 for c in copies + kernels)
    assert len([e for e in events if e["ph"] == "i" and e["cat"] == "finding"]) == 3


@pytest.mark.skipif(shutil.which("mpicc.mpich") is None, reason="needs mpich")
def test_mpi_put_is_a_flow_from_rank_0_to_rank_1(tmp_path):
    src = ROOT / "notebooks" / "programs" / "rma_race.c"
    assert trace("mpicc", "-g", src, "-o", tmp_path / "r").returncode == 0
    rec = trace("record", "-n", "2", "-o", tmp_path / "r.arrow", "--", tmp_path / "r", cwd=tmp_path)
    assert rec.returncode == 0, rec.stderr
    t = quiver.open(tmp_path / "r.arrow")
    assert t.rma.select("rank", "op", "target", "bytes").rows() == [(0, "put", 1, 16)]
    out = tmp_path / "r.json"
    assert trace("export", tmp_path / "r.arrow", "--to", "perfetto", "-o", out, "--no-findings").returncode == 0
    events = json.loads(out.read_text())["traceEvents"]
    flows = [(e["ph"], e["pid"]) for e in events if e["ph"] in ("s", "f")]
    assert flows == [("s", 0), ("f", 1)]
    h = t.history(addr=t.windows.filter((pl.col("rank") == 1) & (pl.col("event") == "win_create"))["base"].item()
                  + 12, size=4, rank=1)
    assert sorted(h["operation"].to_list()) == ["put from rank 0 writes here", "read", "write"]
