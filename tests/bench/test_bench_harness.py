"""The benchmark harness's own parts: synthetic logs, tmpfile sweeping, option errors (no compiler)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from quiver.formats import EventKind, read_log

BENCH = Path(__file__).resolve().parents[2] / "bench"
sys.path.insert(0, str(BENCH))

from qvbench import kernels, synthetic, tmpfiles


def test_builder_and_streamed_synthetic_logs_hold_the_same_events(tmp_path: Path) -> None:
    n = 5_000_003  # more than one sweep of the arrays: two kernels
    a = read_log(synthetic.write_builder_log(tmp_path / "a.arrow", n))
    b = read_log(synthetic.write_streamed_log(tmp_path / "b.arrow", n))
    assert a.num_events == b.num_events
    for name in ("time_ns", "kind", "addr", "size", "op", "device", "id", "thread", "loc"):
        assert np.array_equal(a.col(name), b.col(name)), name
    kind = a.col("kind")
    device_accesses = (kind == EventKind.ACCESS) & (a.col("device") == 0)
    assert int(device_accesses.sum()) == n
    assert int((kind == EventKind.KERNEL).sum()) == 2
    assert np.all(np.diff(a.col("time_ns")) > 0)
    assert a.strings == b.strings and a.locations == b.locations
    # both store what `trace info` prints, and it is what a scan of the events finds
    from quiver.info import log_summary

    assert "stats" in a.run and "stats" in b.run
    assert log_summary(a) == {**log_summary(b), "path": str(a.path), "size_bytes": a.size_bytes}
    assert log_summary(b) == {**log_summary(b, verify=True)}


def test_synthetic_device_accesses_stay_inside_the_mapped_copies(tmp_path: Path) -> None:
    log = read_log(synthetic.write_builder_log(tmp_path / "s.arrow", 1000))
    dev = (log.col("kind") == EventKind.ACCESS) & (log.col("device") == 0)
    assert int(dev.sum()) == 1000
    addr, size = log.col("addr")[dev], log.col("size")[dev]
    nbytes = synthetic.ELEMS * synthetic.ELEM
    in_a = (addr >= synthetic.DEV_A) & (addr + size <= synthetic.DEV_A + nbytes)
    in_b = (addr >= synthetic.DEV_B) & (addr + size <= synthetic.DEV_B + nbytes)
    assert np.all(in_a | in_b)
    writes = log.col("op")[dev] == 1
    assert np.all(in_b[writes]) and np.all(in_a[~writes])


def test_sweeper_removes_only_images_of_our_executables(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(tmpfiles, "TMP_DIR", tmp_path)
    exe = tmp_path / "prog"
    image = b"\x7fELF device image bytes"
    exe.write_bytes(b"host code" + image + b"more host code")
    old = tmp_path / "tmpfile_old"
    old.write_bytes(image)
    s = tmpfiles.TmpfileSweeper()
    s.register(exe)
    before = s.snapshot()
    ours, theirs = tmp_path / "tmpfile_ours", tmp_path / "tmpfile_theirs"
    ours.write_bytes(image)
    theirs.write_bytes(b"someone else's image")
    assert s.sweep(before) == 1
    assert not ours.exists() and theirs.exists() and old.exists()


def _kernel_row(name: str, native: float, recorded: float, analyze: float) -> dict:
    return {"name": name, "ranks": 2 if name == "small-mpi" else 0, "opt": "-O2", "tuned": False, "args": ["1"],
            "ratio": recorded / native, "native": {"seconds": native}, "recorded": {"seconds": recorded},
            "analyze": {"seconds": analyze, "vs_recorded": analyze / recorded, "events_per_s": None}, "log": None}


def test_fixed_cost_of_both_small_programs_and_analyze_against_recording() -> None:
    from io import StringIO

    from qvbench.report import render, summary
    from rich.console import Console

    results = {"settings": {"quick": False, "repeat": 3}, "errors": [],
               "kernels": [_kernel_row("small", 0.02, 0.14, 0.12), _kernel_row("small-mpi", 0.05, 0.22, 0.40),
                           _kernel_row("heat2d", 0.5, 1.0, 0.6)]}
    s = results["summary"] = summary(results)
    assert s["fixed_cost_s"] == {"small": 0.12, "small-mpi": 0.17} and s["fixed_cost_met"] is False
    assert s["analyze_slower_than_recording"] == ["small-mpi"]
    out = StringIO()
    render(results, Console(file=out, width=250))
    text = out.getvalue()
    assert "small 0.120 s, small-mpi 0.170 s (target ≤ 0.15 s: NOT met)" in text
    assert "ana/rec" in text and "1.82" in text  # small-mpi: 0.40 / 0.22
    assert (s["record_ratio_worst_kernel"], s["record_worst_met"]) == ("small", False)   # 7×: the fixed cost
    assert (s["record_worst_loops_kernel"], s["record_worst_loops"]) == ("heat2d", 2.0)
    assert "worst without the fixed-cost programs (small, small-mpi, whose ratio is the fixed cost below): 2.00× " \
           "(heat2d)" in text


def test_kernel_selection() -> None:
    assert [k.name for k in kernels.select("cg,stencil")] == ["cg", "stencil"]
    assert len(kernels.select(None)) == len(kernels.KERNELS) == 20
    assert [k.name for k in kernels.KERNELS if k.tuned] == ["stencil", "lbm", "cg", "matvec", "pipeline", "halo"]
    with pytest.raises(ValueError, match="unknown kernel"):
        kernels.select("stencil,nope")


@pytest.mark.parametrize("args, message", [
    (["--kernels", "nope"], "unknown kernel(s) nope"),
    (["--repeat", "0"], "--repeat must be at least 1"),
    (["--bogus"], "unrecognized arguments: --bogus"),
])
def test_bad_options_give_one_line_and_exit_2(args: list[str], message: str) -> None:
    r = subprocess.run([sys.executable, str(BENCH / "run.py"), *args], capture_output=True, text=True,
                       check=False)
    assert r.returncode == 2
    assert r.stderr.count("\n") == 1 and message in r.stderr and r.stderr.startswith("bench: error:")
    assert r.stdout == ""


def test_a_second_bench_in_the_same_workdir_is_refused(tmp_path: Path) -> None:
    """Two benches sharing a workdir delete each other's logs: the second one stops at once."""
    import fcntl
    import os

    with open(tmp_path / ".lock", "w") as held:
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
        held.write(f"{os.getpid()}\n")
        held.flush()
        r = subprocess.run([sys.executable, str(BENCH / "run.py"), "--workdir", str(tmp_path), "--no-full",
                            "--no-tools", "--synthetic", "1000"], capture_output=True, text=True, check=False)
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr == (f"bench: error: another bench run (pid {os.getpid()}) is using {tmp_path}; "
                        "wait for it or pass --workdir DIR\n")


def test_a_source_program_is_built_at_the_level_asked_for(tmp_path: Path) -> None:
    """`bench/run.py --source prog.c --opt=-O1`: both builds of the program at -O1 (the default -O2)."""
    src = tmp_path / "prog.c"
    src.write_text("int main(void) { return 0; }\n")
    assert kernels.from_source(src, ["1"], "-O1").opt == "-O1"
    assert kernels.from_source(src, ["1"]).opt == "-O2"
