"""The transfers check gives the same report on one log, on its split form and on the sharded backend."""

from __future__ import annotations

import subprocess
import sys

from test_redundant import TO, TOFROM, Prog

TRACE = [sys.executable, "-m", "quiver.cli"]


def _two_rank_program() -> Prog:
    p = Prog(ranks=2)
    for rank in (0, 1):
        p.host(0x1000, 80, write=True, rank=rank)
        p.host(0x2000, 80, write=True, rank=rank)
        for _ in range(3):     # a map in a loop: repeated allocations and duplicate copies of a
            p.target(10, [("a", 0x1000, 80, TO), ("b", 0x2000, 80, TOFROM)],
                     body=[("a", 0, 80, False), ("b", 0, 80, True)], rank=rank)
        p.target(20, [("a", 0x1000, 80, TOFROM)], body=[("a", 0, 80, False)], rank=rank)   # round trip
        p.host(0x2000, 80, rank=rank)
    return p


def _report(*args) -> str:
    proc = subprocess.run([*TRACE, "analyze", "--check", "transfers", *map(str, args)], capture_output=True,
                          text=True, check=False, timeout=600)
    assert proc.returncode == 0, proc.stderr        # advisory: never exit 1
    return proc.stdout.rsplit("SUMMARY:", 1)[0]     # the summary line names the log path


def test_same_report_serial_split_and_sharded(tmp_path):
    p = _two_rank_program()
    one = p.b.write(tmp_path / "run.arrow")
    split = p.b.write_split(tmp_path / "run.d")
    serial = _report(one)
    heads = sorted(line.split(" on ")[0].split(": ")[1] + " " + line.rsplit(":", 1)[1]
                   for line in serial.splitlines() if line.startswith("==quiver== WARNING:"))
    # per rank: line 10 sends a again (duplicate) and allocates a and b again; b is only written on the device
    # (unused copy in); line 20 maps a once more (duplicate, allocated again) and copies it back unchanged
    # (the same on both ranks: one finding each, at rank 0, listing rank 1)
    assert heads == sorted(["duplicate-transfer 10", "repeated-allocation 10", "repeated-allocation 10",
                            "unused-transfer 10", "duplicate-transfer 20", "repeated-allocation 20",
                            "round-trip 20"])
    assert serial.count("  also on: rank 1: the same lines, 2 ranks in all") == 7
    assert _report(split) == serial
    assert _report("--workers", "2", one) == serial
