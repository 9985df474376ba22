"""The wheel a user installs carries every native source and builds the tracer on first use.

Builds the wheel of this checkout (`pip wheel --no-deps`), installs it with its dependencies into
a fresh virtualenv outside the repository (pip's cache or the PyPI mirror serve the dependencies),
and from there, in a directory outside the repository: compiles an OpenMP program with the range
pass and an MPI program, records both, and analyses them. Nothing of the checkout is importable in
that virtualenv, so a source missing from the wheel fails here.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from quiver.tracer.native import SOURCE_SUFFIXES

pytestmark = [pytest.mark.slow, pytest.mark.clang]

REPO = Path(__file__).resolve().parents[1]
PROGRAMS = REPO / "tests" / "programs"
HAVE_MPI = shutil.which("mpicc.mpich") is not None and shutil.which("mpiexec.mpich") is not None


def run(cmd: list, cwd: Path, env: dict, timeout: int = 400, ok=(0,)) -> subprocess.CompletedProcess:
    proc = subprocess.run([str(c) for c in cmd], cwd=cwd, env=env, capture_output=True, text=True,
                          check=False, timeout=timeout)
    assert proc.returncode in ok, f"{cmd}: exit {proc.returncode}\n{proc.stdout}\n{proc.stderr}"
    return proc


def marker_line(source: Path, marker: str) -> int:
    return next(n for n, line in enumerate(source.read_text().splitlines(), 1) if marker in line)


@pytest.fixture(scope="module")
def installed():
    """(virtualenv, working directory, environment): the wheel installed outside the repository."""
    root = Path(tempfile.mkdtemp(prefix="quiver-wheel-"))
    assert not root.is_relative_to(REPO)
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "VIRTUAL_ENV", "QUIVER_NATIVE_BUILD", "NUMBA_CACHE_DIR")}
    env["PATH"] = os.pathsep.join(p for p in env.get("PATH", "").split(os.pathsep)
                                  if not Path(p).resolve().is_relative_to(REPO))
    try:
        # a copy without build products: setuptools reuses an in-tree build/ and would hide a
        # source the package data misses
        src = root / "src"
        shutil.copytree(REPO, src, ignore=shutil.ignore_patterns(
            ".git", ".venv", "build", "*.egg-info", "tests", "bench", "notebooks", "__pycache__", "*.so",
            ".pytest_cache", ".ruff_cache", ".hypothesis", "*.arrow", "*.arrow.raw"))
        wheels = root / "dist"
        run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", wheels, src], root, env)
        wheel = next(wheels.glob("quiver-*.whl"))
        venv = root / "venv"
        run([getattr(sys, "_base_executable", sys.executable), "-m", "venv", venv], root, env)
        run([venv / "bin" / "pip", "install", "-q", wheel], root, env, timeout=580)
        work = root / "work"
        work.mkdir()
        env["XDG_CACHE_HOME"] = str(root / "cache")   # the VSM kernel is built on first use, from the wheel
        yield venv, work, env
    finally:
        shutil.rmtree(root, ignore_errors=True)


def test_wheel_ships_every_native_source(installed):
    venv, work, env = installed
    probe = ("import quiver, pathlib; from quiver.tracer import native; "
             "print(quiver.__file__); print(native.NATIVE_DIR); print(native.ensure_built())")
    out = run([venv / "bin" / "python", "-c", probe], work, env).stdout.splitlines()
    package, native_dir, built = (Path(x) for x in out)
    assert package.is_relative_to(venv) and native_dir.is_relative_to(venv)
    ours = {p.relative_to(REPO / "tracer" / "native") for p in (REPO / "tracer" / "native").rglob("*")
            if p.suffix in SOURCE_SUFFIXES and "build" not in p.parts}
    shipped = {p.relative_to(native_dir) for p in native_dir.rglob("*")
               if p.suffix in SOURCE_SUFFIXES and "build" not in p.parts}
    assert ours == shipped
    libs = {p.name for p in built.iterdir()}
    assert {"libquiver_rt.so", "libquiver_omp.so", "libquiver_range.so"} <= libs
    if HAVE_MPI:
        assert "libquiver_mpi.so" in libs


def test_wheel_builds_the_vsm_kernel_on_first_use(installed):
    """The mapping checker's C kernel ships as source and is compiled into the (empty) user cache."""
    venv, work, env = installed
    probe = ("from quiver.replay.mapping import vsm_native; print(vsm_native.SOURCE); "
             "print(vsm_native.library()._name)")
    source, lib = (Path(x) for x in run([venv / "bin" / "python", "-c", probe], work, env).stdout.splitlines())
    assert source.is_relative_to(venv)
    assert {p.name for p in source.parent.glob("*.[ch]")} == {p.name for p in (REPO / "replay" / "mapping").glob("*.[ch]")}
    assert lib.parent == Path(env["XDG_CACHE_HOME"]) / "quiver" / "native" and lib.name.startswith("libquiver_vsm-")


def test_wheel_records_an_openmp_program_with_the_range_pass(installed):
    venv, work, env = installed
    src = PROGRAMS / "range" / "two_sites.c"
    trace = venv / "bin" / "trace"
    cc = run([trace, "cc", "-O2", "-g", src, "-o", work / "two_sites"], work, dict(env, QUIVER_CC_VERBOSE="1"))
    assert "-fpass-plugin=" in cc.stderr and str(venv) in cc.stderr
    run([trace, "record", "-o", work / "omp.arrow", "--", work / "two_sites"], work, env)
    report = json.loads(run([trace, "analyze", work / "omp.arrow", "--format", "json"], work, env, ok=(1,)).stdout)
    got = {(f["kind"], f["variable"], f["access"]["line"]) for f in report["findings"]}
    assert ("use-of-uninitialized-memory", "a", marker_line(src, "expect use-of-uninit")) in got


@pytest.mark.skipif(not HAVE_MPI, reason="needs mpich (mpicc.mpich, mpiexec.mpich)")
def test_wheel_records_an_mpi_program(installed):
    venv, work, env = installed
    src = PROGRAMS / "mpi" / "acc_race.c"
    trace = venv / "bin" / "trace"
    run([trace, "mpicc", "-g", src, "-o", work / "acc_race"], work, env)
    run([trace, "record", "-n", "3", "-o", work / "mpi.arrow", "--", work / "acc_race"], work, env)
    proc = run([trace, "analyze", work / "mpi.arrow", "--format", "json"], work, env, ok=(1,))
    races = {(f["kind"], f["access"]["line"], f["related"][0]["line"] if f.get("related") else None)
             for f in json.loads(proc.stdout)["findings"]}
    assert ("rma-race", marker_line(src, "// @B"), marker_line(src, "// @A")) in races, races
