"""Shared fixtures: compile real OpenMP programs with `trace cc` and record them with `trace record`.

Usage in any test module (programs live in tests/programs/, paths are relative to it):

    @pytest.mark.clang
    def test_something(record_c):
        run = record_c("omp/seed000_fig1_alloc.c")            # -O0, no args
        run = record_c("omp/passthrough.c", args=["x"], stdin="hi\\n", opt="-O1")
        run.returncode, run.stdout, run.stderr                   # of `trace record`
        t = run.open()                                          # quiver.open(run.log)
        t.data_ops.filter(pl.col("variable") == "b")

`omp_build(src, opt="-O0", extra=())` compiles only (cached per session); C++ sources
(.cpp) go through `trace cxx`. Mark tests that need the compiler with `@pytest.mark.clang`
(or `pytestmark = pytest.mark.clang`): they are skipped, with the reason, when clang-19 is absent.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

PROGRAMS = Path(__file__).resolve().parent / "programs"
TRACE = str(Path(sys.executable).with_name("trace"))
HAVE_CLANG = shutil.which("clang-19") is not None

SKIP_NO_CLANG = "clang-19 is not installed (apt-get install clang-19 libomp-19-dev)"


def pytest_configure(config) -> None:
    config.addinivalue_line("markers", "clang: compiles real programs with clang-19 (skipped when it is absent)")


# The longest modules, longest first: with `make test`'s workers (pytest-xdist, `--dist loadfile`:
# a module runs whole in one worker) they start first, so no worker is left with one of them at the
# end while the other idles. The order of the tests inside a module does not change.
LONGEST_MODULES = (
    "tests/tracer/test_range_pass.py",
    "tests/test_wheel.py",
    "tests/bench/test_bench_quick.py",
    "tests/replay/test_sharded.py",
    "tests/fuzz/test_damage.py",
    "tests/replay/test_vsm_native.py",
    "tests/mpi/test_jit_modes.py",
    "tests/replay/test_jit_modes_programs.py",
    "tests/buildsys/test_build_systems.py",
)


def _longest_first(items) -> None:
    rank = {m: i for i, m in enumerate(LONGEST_MODULES)}
    root = Path(__file__).resolve().parent.parent

    def key(item) -> int:
        try:
            return rank.get(Path(item.fspath).resolve().relative_to(root).as_posix(), len(rank))
        except ValueError:
            return len(rank)

    items.sort(key=key)  # stable: every other module keeps its place


def pytest_collection_modifyitems(config, items) -> None:
    if os.environ.get("PYTEST_XDIST_WORKER"):  # every worker collects, all in the same order
        _longest_first(items)
    if HAVE_CLANG:
        return
    skip = pytest.mark.skip(reason=SKIP_NO_CLANG)
    for item in items:
        if "clang" in item.keywords:
            item.add_marker(skip)


def trace_cli(*args: str, **kw) -> subprocess.CompletedProcess:
    """Run the `trace` command (the installed console script) and capture its output."""
    return subprocess.run([TRACE, *args], capture_output=True, text=True, check=False, **kw)


@pytest.fixture
def trace_cli_run() -> Callable[..., subprocess.CompletedProcess]:
    """`trace_cli_run("info", path)`: run the installed `trace` command, output captured."""
    return trace_cli


@dataclass
class Recorded:
    exe: Path
    log: Path
    returncode: int
    stdout: str
    stderr: str

    def open(self):
        import quiver

        return quiver.open(self.log)


@pytest.fixture(scope="session")
def device_images():
    """The offload runtime writes each run's device image to /tmp/tmpfile_* and never deletes it. `trace record`
    removes those of the runs it records; at the end of the session this removes what the session's other runs
    (a built program under gdb, or run as is) left: only files that appeared during the session and whose bytes
    are inside an executable the session built (bench/qvbench/tmpfiles.py), never another program's."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
    from qvbench.tmpfiles import TmpfileSweeper

    sweeper = TmpfileSweeper()
    before = sweeper.snapshot()
    yield sweeper
    sweeper.sweep(before)


@pytest.fixture(scope="session")
def omp_build(tmp_path_factory, device_images) -> Callable[..., Path]:
    """Compile a program under tests/programs with `trace cc`/`trace cxx`; cached per (source, flags)."""
    root = tmp_path_factory.mktemp("omp-bin")
    cache: dict[tuple, Path] = {}

    def build(src: str | Path, opt: str = "-O0", extra: Sequence[str] = ()) -> Path:
        path = Path(src) if Path(src).is_absolute() else PROGRAMS / src
        key = (str(path), opt, tuple(extra))
        if key not in cache:
            exe = root / f"{path.stem}{opt}{len(cache)}"
            lang = "cxx" if path.suffix in (".cpp", ".cc", ".cxx") else "cc"
            proc = trace_cli(lang, "-g", opt, *extra, str(path), "-o", str(exe))
            assert proc.returncode == 0, f"trace {lang} failed:\n{proc.stderr}"
            device_images.register(exe)
            cache[key] = exe
        return cache[key]

    return build


@pytest.fixture
def record_c(omp_build, tmp_path) -> Callable[..., Recorded]:
    """Build (cached) and record a program; returns a Recorded with the log path and the output."""
    counter = [0]

    def run(src: str | Path, args: Sequence[str] = (), opt: str = "-O0", extra: Sequence[str] = (),
            stdin: str | None = None, env: dict[str, str] | None = None, exe: Path | None = None) -> Recorded:
        exe = exe or omp_build(src, opt=opt, extra=extra)
        counter[0] += 1
        log = tmp_path / f"{Path(src).stem}{opt}.{counter[0]}.arrow"
        proc = subprocess.run([TRACE, "record", "-o", str(log), "--", str(exe), *args], input=stdin,
                              capture_output=True, text=True, check=False, cwd=tmp_path,
                              env={**os.environ, **(env or {})})
        return Recorded(exe, log, proc.returncode, proc.stdout, proc.stderr)

    return run


@dataclass
class JitRun:
    """One analysis of a log with QUIVER_JIT set: the reports, and the kernels called from Python."""

    text: str
    json: str
    kernels: set[str]      # "module.name" of each @kernel called from Python (not from a kernel)
    compiled: set[bool]    # how they ran


@pytest.fixture
def analyze_jit(monkeypatch) -> Callable[[Path, str], JitRun]:
    """``analyze_jit(log, "never" | "always")``: every checker over ``log`` in this process (the driver,
    as `trace analyze --check all`), the text and JSON reports, and how its kernels ran."""
    from quiver.formats import read_log
    from quiver.formats.jit import Kernel
    from quiver.replay.driver import resolve_checks, run_checks

    from quiver.commands.analyze_run import ReportFormat, render

    original = Kernel.__call__
    seen: list[tuple[str, bool]] = []
    depth = [0]

    def spy(self, *args, **kwargs):
        if depth[0] == 0:
            seen.append((f"{self.__module__}.{self.__name__}", self.compiled))
        depth[0] += 1
        try:
            return original(self, *args, **kwargs)
        finally:
            depth[0] -= 1

    monkeypatch.setattr(Kernel, "__call__", spy)

    def analyze(log: Path, mode: str) -> JitRun:
        monkeypatch.setenv("QUIVER_JIT", mode)
        seen.clear()
        report = run_checks(read_log(log), resolve_checks(["all"]), explicit=True)
        return JitRun(render(report, ReportFormat.text), render(report, ReportFormat.json),
                      {k for k, _c in seen}, {c for _k, c in seen})

    return analyze
