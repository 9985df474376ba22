"""The ahead-of-time VSM kernel: `trace analyze` of a plain offloading log runs without numba, and
a build that no longer matches the kernel's source is not used."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from quiver.formats import ConstructKind, DataOpKind, LogBuilder
from quiver.replay.mapping import vsm_aot

HOST, DEV = 0x7F00_0000_0000, 0x5500_0000_0000

PROBE = """
import json, sys
from quiver.formats import read_log
from quiver.replay.registry import default_checkers
from quiver.replay.driver import run_checks
report = run_checks(read_log(sys.argv[1]), default_checkers())
print(json.dumps({"kinds": [f.kind.value for f in report.findings], "checks": report.checks,
                  "numba": "numba" in sys.modules}))
"""


def _uninitialised_read(path: Path) -> Path:
    """``map(alloc: a[0:64])`` then a kernel reading it: one use of uninitialised memory."""
    b = LogBuilder()
    site = ("aot.c", 5, "main")
    b.alloc(HOST, 256, site=site)
    c = b.construct_begin(ConstructKind.TARGET, site=site)
    b.map_clause(c, "a", HOST, 256, 0, site=site, text="a[0:64]")
    b.data_op(DataOpKind.ALLOC, HOST, DEV, 256, construct=c, var="a")
    b.kernel(c)
    b.access(DEV, 256, device=0, construct=c, site=("aot.c", 7, "main"))
    b.data_op(DataOpKind.DELETE, HOST, DEV, 256, construct=c, var="a")
    b.construct_end(c)
    return b.write(path)


def test_a_plain_offloading_log_is_analysed_without_importing_numba(tmp_path: Path) -> None:
    assert vsm_aot.load() is not None, "replay/_vsm_aot is not built or stale: run `make aot`"
    log = _uninitialised_read(tmp_path / "uum.arrow")
    r = subprocess.run([sys.executable, "-c", PROBE, str(log)], capture_output=True, text=True, check=True)
    out = json.loads(r.stdout)
    assert out == {"kinds": ["use-of-uninitialized-memory"], "checks": ["mapping", "race", "schedules", "rma"],
                   "numba": False}


def test_a_stale_build_is_not_used(monkeypatch) -> None:
    assert vsm_aot.load() is not None
    monkeypatch.setattr(vsm_aot, "source_hash", lambda: 12345)
    assert vsm_aot.load() is None
