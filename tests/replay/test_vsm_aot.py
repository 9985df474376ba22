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


NUMBA_PROBE = """
import json, sys
from quiver.formats import read_log
from quiver.replay.mapping import vsm, vsm_kernel
from quiver.replay.registry import CheckOptions
vsm._AOT = False   # the numba kernel, as without the ahead-of-time build
findings = vsm.check_mapping(read_log(sys.argv[1]), CheckOptions())
print(json.dumps({"kinds": [f.kind.value for f in findings],
                  "signatures": len(vsm_kernel.apply_events.signatures)}))
"""


def test_the_numba_kernel_has_one_specialisation_for_a_log_with_findings(tmp_path: Path) -> None:
    """A streamed batch is replayed without loc/id/aux, then again with them for its finding: both
    calls must have the same array types, or numba compiles (and loads at every start) the kernel twice."""
    log = _uninitialised_read(tmp_path / "uum.arrow")
    r = subprocess.run([sys.executable, "-c", NUMBA_PROBE, str(log)], capture_output=True, text=True, check=True)
    assert json.loads(r.stdout) == {"kinds": ["use-of-uninitialized-memory"], "signatures": 1}
