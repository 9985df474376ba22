"""Fixtures for the MPI tests: every program in tests/programs/mpi/ is compiled once per session
with `trace mpicc` (two at a time) and recorded at most once with `trace record -n RANKS`.

Each program says how to run it and what to expect in its header comment (see mpi_programs).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from mpi_programs import TRACE, Program, all_programs

HAVE_MPI = shutil.which("mpicc.mpich") is not None and shutil.which("mpiexec.mpich") is not None
HAVE_CLANG = shutil.which("clang-19") is not None


def pytest_collection_modifyitems(config, items) -> None:
    if HAVE_MPI and HAVE_CLANG:
        return
    skip = pytest.mark.skip(reason="needs mpich (mpicc.mpich, mpiexec.mpich) and clang-19")
    for item in items:
        if "mpi" in item.keywords:
            item.add_marker(skip)


def pytest_configure(config) -> None:
    config.addinivalue_line("markers", "mpi: compiles with trace mpicc and runs ranks under mpiexec.mpich")


@dataclass
class Recording:
    program: Program
    log: Path
    proc: subprocess.CompletedProcess
    cache: dict = field(default_factory=dict)


@pytest.fixture(scope="session")
def mpi_binaries(tmp_path_factory) -> dict[str, Path]:
    """Every MPI test program compiled with `trace mpicc -g` (once per session)."""
    out = tmp_path_factory.mktemp("mpi_bin")

    def build(p: Program) -> tuple[str, Path, subprocess.CompletedProcess]:
        exe = out / p.name
        proc = subprocess.run([TRACE, "mpicc", "-g", *p.flags, str(p.source), "-o", str(exe)], check=False,
                              capture_output=True, text=True)
        return p.name, exe, proc

    # build the native libraries once before compiling in parallel
    subprocess.run([sys.executable, "-c", "from quiver.tracer import native; native.ensure_built()"], check=True)
    with ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(build, all_programs()))
    bad = [(n, r.stderr) for n, _e, r in results if r.returncode != 0]
    assert not bad, f"trace mpicc failed: {bad[0]}"
    return {n: e for n, e, _r in results}


@pytest.fixture(scope="session")
def mpi_record(mpi_binaries, tmp_path_factory):
    """``mpi_record(name, *args)`` -> Recording (cached per session)."""
    out = tmp_path_factory.mktemp("mpi_logs")
    programs = {p.name: p for p in all_programs()}
    done: dict[tuple, Recording] = {}

    def record(name: str, *args: str) -> Recording:
        key = (name, args)
        if key not in done:
            p = programs[name]
            log = out / f"{name}.arrow"
            proc = subprocess.run([TRACE, "record", "-n", str(p.ranks), "-o", str(log), "--",
                                   str(mpi_binaries[name]), *args], check=False, capture_output=True, text=True,
                                  timeout=120)
            done[key] = Recording(p, log, proc)
        return done[key]

    return record
