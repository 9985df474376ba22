"""quiver-cc / quiver-cxx / quiver-mpicc as the compiler of real CMake, Make and autoconf projects.

Each project in projects/ has one bug; the test configures and builds it the way its users do
(`cmake -DCMAKE_C_COMPILER=quiver-cc`, `make CC=quiver-cc`, `./configure CC=quiver-cc`), records
the program and asserts the one finding (kind, variable, file and line). CMake links its compiler
probes with `-v` and autoconf preprocesses with `-E` and asks `--version`: the wrapper must get
each shape right or the configure step fails ("Could NOT find OpenMP_C").
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.clang, pytest.mark.slow]

PROJECTS = Path(__file__).resolve().parent / "projects"
BIN = Path(sys.executable).parent
TRACE = str(BIN / "trace")
HAVE_CMAKE = shutil.which("cmake") is not None
HAVE_AUTOCONF = shutil.which("autoconf") is not None
HAVE_MPI = shutil.which("mpicc.mpich") is not None and shutil.which("mpiexec.mpich") is not None


def run(cmd: list[str], cwd: Path, **kw) -> subprocess.CompletedProcess:
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}", **kw.pop("env", {})}
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, check=False, env=env, timeout=300, **kw)
    assert proc.returncode == 0, f"{' '.join(cmd)} failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return proc


def findings(exe: Path, tmp: Path, ranks: int | None = None) -> list[tuple[str, str, str, int]]:
    """(kind, variable, source file name, line) of each finding of a recorded run."""
    log = tmp / "run.arrow"
    run([TRACE, "record", *(["-n", str(ranks)] if ranks else []), "-o", str(log), "--", str(exe)], cwd=tmp)
    proc = subprocess.run([TRACE, "analyze", "--format", "json", str(log)], capture_output=True, text=True,
                          check=False)
    assert proc.returncode == 1, proc.stderr
    report = json.loads(proc.stdout)
    return sorted((f["kind"], f["variable"], Path(f["access"]["file"]).name, f["access"]["line"])
                  for f in report["findings"])


@pytest.mark.skipif(not HAVE_CMAKE, reason="cmake is not installed (apt-get install cmake)")
def test_cmake_project_with_find_package_openmp(tmp_path):
    build = tmp_path / "build"
    conf = run(["cmake", "-S", str(PROJECTS / "cmake_omp"), "-B", str(build), "-DCMAKE_BUILD_TYPE=Debug",
                "-DCMAKE_C_COMPILER=quiver-cc", "-DCMAKE_CXX_COMPILER=quiver-cxx"], cwd=tmp_path)
    assert "Detecting C compiler ABI info - done" in conf.stdout      # the probe linked with -v
    assert "Detecting CXX compiler ABI info - done" in conf.stdout
    assert "Found OpenMP_C" in conf.stdout and "Found OpenMP_CXX" in conf.stdout
    run(["cmake", "--build", str(build)], cwd=tmp_path)
    assert findings(build / "smooth_main", tmp_path) == [
        ("use-of-uninitialized-memory", "in", "smooth.c", 7)]


@pytest.mark.skipif(not (HAVE_CMAKE and HAVE_MPI), reason="needs cmake and mpich")
def test_cmake_project_with_find_package_mpi_at_O1(tmp_path):
    build = tmp_path / "build"
    conf = run(["cmake", "-S", str(PROJECTS / "cmake_mpi"), "-B", str(build), "-DCMAKE_C_COMPILER=quiver-mpicc",
                "-DCMAKE_C_FLAGS=-g -O1"], cwd=tmp_path)
    assert "Found MPI_C" in conf.stdout
    run(["cmake", "--build", str(build)], cwd=tmp_path)
    log = tmp_path / "run.arrow"
    run([TRACE, "record", "-n", "2", "-o", str(log), "--", str(build / "halo")], cwd=tmp_path)
    report = json.loads(subprocess.run([TRACE, "analyze", "--format", "json", str(log)], capture_output=True,
                                       text=True, check=False).stdout)
    got = [(f["kind"], f["access"]["line"], f["related"][0]["line"], f["details"]["ranks"])
           for f in report["findings"]]
    # the loop refilling the origin buffer (line 21) races with the pending MPI_Put (line 19), on both ranks
    assert got == [("rma-race", 21, 19, [0, 1])]


def test_makefile_project(tmp_path):
    src = tmp_path / "make_omp"
    shutil.copytree(PROJECTS / "make_omp", src)
    out = run(["make", "CC=quiver-cc"], cwd=src)
    assert "quiver-cc -g -O1 -fopenmp -MMD -MP -c main.c -o main.o" in out.stdout
    assert (src / "main.d").is_file()                                  # -MMD -MP still wrote dependencies
    assert findings(src / "jacobi", tmp_path) == [("use-of-stale-data", "unew", "main.c", 11)]


@pytest.mark.skipif(not HAVE_AUTOCONF, reason="autoconf is not installed (apt-get install autoconf)")
def test_autoconf_configure_project(tmp_path):
    src = tmp_path / "autoconf_omp"
    shutil.copytree(PROJECTS / "autoconf_omp", src)
    run(["autoconf"], cwd=src)
    conf = run(["./configure", "CC=quiver-cc", "CFLAGS=-g -O1"], cwd=src)
    for line in ("checking whether the C compiler works... yes", "checking whether we are cross compiling... no",
                 "checking how to run the C preprocessor... quiver-cc -E", "checking for omp.h... yes",
                 "checking for sqrt in -lm... yes"):
        assert line in conf.stdout
    run(["make"], cwd=src)
    assert findings(src / "saxpy", tmp_path) == [("use-of-uninitialized-memory", "y", "saxpy.c", 16)]
