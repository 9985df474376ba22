"""The C VSM kernel built on first use: `trace analyze` of a plain offloading log runs without numba;
no C compiler (or a failing one) is one line and exit 2; concurrent first uses leave one whole library."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from quiver.formats import ConstructKind, DataOpKind, LogBuilder

HOST, DEV = 0x7F00_0000_0000, 0x5500_0000_0000
TRACE = str(Path(sys.executable).with_name("trace"))

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
    site = ("native.c", 5, "main")
    b.alloc(HOST, 256, site=site)
    c = b.construct_begin(ConstructKind.TARGET, site=site)
    b.map_clause(c, "a", HOST, 256, 0, site=site, text="a[0:64]")
    b.data_op(DataOpKind.ALLOC, HOST, DEV, 256, construct=c, var="a")
    b.kernel(c)
    b.access(DEV, 256, device=0, construct=c, site=("native.c", 7, "main"))
    b.data_op(DataOpKind.DELETE, HOST, DEV, 256, construct=c, var="a")
    b.construct_end(c)
    return b.write(path)


def test_a_plain_offloading_log_is_analysed_without_importing_numba(tmp_path: Path) -> None:
    log = _uninitialised_read(tmp_path / "uum.arrow")
    r = subprocess.run([sys.executable, "-c", PROBE, str(log)], capture_output=True, text=True, check=True)
    out = json.loads(r.stdout)
    assert out == {"kinds": ["use-of-uninitialized-memory"], "checks": ["mapping", "race", "schedules", "rma"],
                   "numba": False}


def _analyze(log: Path, cache: Path, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run([TRACE, "analyze", str(log)], capture_output=True, text=True, check=False,
                          env=dict(os.environ, QUIVER_NATIVE_BUILD=str(cache), **env))


def test_no_c_compiler_is_one_line_and_exit_2(tmp_path: Path) -> None:
    log = _uninitialised_read(tmp_path / "uum.arrow")
    r = _analyze(log, tmp_path / "cache", QUIVER_KERNEL_CC=str(tmp_path / "no-such-cc"))
    assert r.returncode == 2
    assert r.stderr.startswith("trace: error: no C compiler (") and "QUIVER_KERNEL_CC" in r.stderr
    assert len(r.stderr.splitlines()) == 1 and "Traceback" not in r.stderr


def test_without_a_compiler_a_library_built_earlier_is_used(tmp_path: Path) -> None:
    """Built once (here by this machine's compiler, or on a machine sharing the cache), then used where
    no compiler is found."""
    log = _uninitialised_read(tmp_path / "uum.arrow")
    assert _analyze(log, tmp_path / "cache").returncode == 1
    r = _analyze(log, tmp_path / "cache", QUIVER_KERNEL_CC=str(tmp_path / "no-such-cc"))
    assert (r.returncode, r.stderr) == (1, "")
    assert "use-of-uninitialized-memory" in r.stdout


def test_a_failing_build_is_one_line_and_exit_2(tmp_path: Path) -> None:
    cc = tmp_path / "broken-cc"
    cc.write_text("#!/bin/sh\necho 'broken-cc: error: out of licences' >&2\nexit 1\n")
    cc.chmod(0o755)
    log = _uninitialised_read(tmp_path / "uum.arrow")
    r = _analyze(log, tmp_path / "cache", QUIVER_KERNEL_CC=str(cc))
    assert r.returncode == 2
    assert r.stderr == f"trace: error: building libquiver_vsm.so with {cc} failed: broken-cc: error: out of licences\n"
    assert not list((tmp_path / "cache").iterdir())   # no half-built library left behind


def test_concurrent_first_uses_build_one_whole_library(tmp_path: Path) -> None:
    """Three analyses start together on an empty cache: each builds to a temporary name and renames it,
    so all three load a whole library and the cache holds one library and no temporary files."""
    log = _uninitialised_read(tmp_path / "uum.arrow")
    cache = tmp_path / "cache"
    env = dict(os.environ, QUIVER_NATIVE_BUILD=str(cache))
    procs = [subprocess.Popen([TRACE, "analyze", str(log), "--format", "json"], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, env=env) for _ in range(3)]
    outs = [p.communicate(timeout=300) for p in procs]
    assert [p.returncode for p in procs] == [1, 1, 1], outs
    kinds = [sorted(f["kind"] for f in json.loads(out)["findings"]) for out, _err in outs]
    assert kinds == [["use-of-uninitialized-memory"]] * 3
    # one library each: the VSM kernel and the reader's batch scan (formats/batch_scan.c)
    names = sorted(p.name for p in cache.iterdir())
    assert [n.split("-")[0] for n in names] == ["libquiver_scan", "libquiver_vsm"], names


def test_a_log_without_offloading_needs_no_compiler(tmp_path: Path) -> None:
    """Host memory and accesses only (an MPI or host-only program): nothing the mapping checker could
    find, so it neither replays the log nor builds its kernel."""
    b = LogBuilder()
    site = ("host.c", 3, "main")
    b.alloc(HOST, 256, site=site)
    b.access(HOST, 64, site=("host.c", 4, "main"))
    b.access(HOST, 64, write=True, site=("host.c", 5, "main"))
    b.free(HOST, site=site)
    log = b.write(tmp_path / "host.arrow")
    r = _analyze(log, tmp_path / "cache", QUIVER_KERNEL_CC=str(tmp_path / "no-such-cc"))
    assert (r.returncode, r.stderr) == (0, "")
    assert not (tmp_path / "cache").exists()


def test_building_removes_libraries_of_the_same_name_unused_for_two_weeks(tmp_path: Path) -> None:
    """Each source change builds a new library; the old ones of the same name go once unused for
    STALE_AFTER_S. One used recently (another checkout sharing the cache) and other names stay."""
    cache = tmp_path / "cache"
    cache.mkdir()
    stale, recent, other = (cache / n for n in ("libquiver_vsm-0000000000000000-00000000.so",
                                                "libquiver_vsm-1111111111111111-00000000.so",
                                                "libquiver_rt-2222222222222222-00000000.so"))
    month_ago = time.time() - 30 * 24 * 3600
    for lib in (stale, recent, other):
        lib.write_bytes(b"")
        if lib is not recent:                                 # recent: used elsewhere just now
            os.utime(lib, (month_ago, month_ago))
    log = _uninitialised_read(tmp_path / "uum.arrow")
    assert _analyze(log, cache).returncode == 1               # builds, and prunes the stale one
    [built] = set(cache.glob("libquiver_vsm-*.so")) - {recent}
    [scan] = cache.glob("libquiver_scan-*.so")                 # the reader's batch scan (formats/batch_scan.c)
    assert sorted(p.name for p in cache.iterdir()) == sorted([built.name, recent.name, other.name, scan.name])
    os.utime(built, (month_ago, month_ago))
    assert _analyze(log, cache).returncode == 1               # a use refreshes its mtime
    assert built.stat().st_mtime > month_ago + 3600
