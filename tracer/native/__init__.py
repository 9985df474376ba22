"""Build the native tracer libraries (C sources next to this file) into a cache directory.

Why a build step at run time: the libraries must match this machine's clang-19/libomp, and a
hash of the sources names the output directory, so binaries built by `trace cc` keep working
(their rpath points at the directory of the sources they were built with).

Libraries (all shared, linked into the program and into its device image):
  libquiver_rt.so   the raw-chunk writer (qv_buffer.c), one per process
  libquiver_omp.so  OMPT tool, offload entry wrappers, access callbacks, heap interposition
  libquiver_finalize.so  finalize's per-record passes (tracer/finalize_c.py), in the `trace` process
  (qv_rangeset.c, the watched address ranges, is compiled into it and into the PMPI library, and so
  is the access-run coalescer qv_coalesce.inc, included by both tracers' access files together with
  the list of the pass plugin's entry points, qv_entry_points.inc)
  libquiver_range.so  LLVM pass plugin `trace cc` loads with -fpass-plugin (pass/quiver_range.cpp):
                      load/store callbacks, one range call per loop for affine accesses; not built
                      (per-access -fsanitize-coverage instead) when llvm-19-dev is not installed
Other tracers add an entry to LIBS (e.g. the PMPI library, built with mpicc).
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
from pathlib import Path

from quiver.formats.native_build import compiler_id, sha256

NATIVE_DIR = Path(__file__).resolve().parent
CLANG = os.environ.get("QUIVER_CLANG", "clang-19")
LLVM_LIB = "/usr/lib/llvm-19/lib"
CXX = os.environ.get("QUIVER_CLANGXX", "clang++-19")
LLVM_CONFIG = os.environ.get("QUIVER_LLVM_CONFIG", "llvm-config-19")
PASS_SOURCE = "pass/quiver_range.cpp"
PASS_LIB = "libquiver_range.so"
# what the build reads (and the wheel ships: pyproject package-data, tests/test_wheel.py)
SOURCE_SUFFIXES = (".c", ".h", ".inc", ".cpp")
CFLAGS = ["-O2", "-g", "-fPIC", "-Wall", "-Wextra", "-std=gnu11", "-fno-omit-frame-pointer"]


class BuildError(RuntimeError):
    """The native libraries could not be built (compiler missing or failing)."""


class NativeLib:
    """One library and how it is built. (A plain class: `trace record` imports this module before the
    program starts, and `dataclasses` costs ~7 ms of CPU there.)"""

    def __init__(self, name: str, sources: list[str], deps: list[str] | None = None,
                 ldlibs: list[str] | None = None, cc: str = CLANG, optional: bool = False) -> None:
        self.name = name                  # lib<name>.so
        self.sources = sources            # relative to NATIVE_DIR
        self.deps = deps or []            # other LIBS linked with -l
        self.ldlibs = ldlibs or []
        self.cc = cc
        self.optional = optional          # skipped (not an error) when its compiler is missing


LIBS: list[NativeLib] = [
    NativeLib("quiver_rt", ["qv_buffer.c"], ldlibs=["-lpthread"]),
    NativeLib("quiver_omp", ["qv_omp.c", "qv_access.c", "qv_alloc.c", "qv_rangeset.c"], deps=["quiver_rt"],
              ldlibs=["-ldl", "-lpthread"]),
    # finalize's per-record passes (tracer/finalize_c.py), loaded by `trace record`, not by the program
    NativeLib("quiver_finalize", ["qv_finalize.c"]),
    # PMPI tracer (tracer/native/mpi/): built with the MPI compiler wrapper, skipped without MPI
    NativeLib("quiver_mpi", ["mpi/qv_mpi.c", "mpi/qv_mpi_access.c", "qv_rangeset.c"], deps=["quiver_rt"],
              ldlibs=["-ldl", "-lpthread"], cc=os.environ.get("QUIVER_MPICC", "mpicc.mpich"), optional=True),
]


def _source_files() -> list[Path]:
    """The tracer's sources, not what the builds and caches beside them hold (a walk that pruned
    nothing listed every past build on each `trace record`)."""
    files = []
    for root, dirs, names in os.walk(NATIVE_DIR):
        dirs[:] = [d for d in dirs if d not in ("build", "__pycache__")]
        files += [Path(root, n) for n in names if n.endswith(SOURCE_SUFFIXES)]
    return sorted(files)


@functools.cache  # once per process: `trace record` asks before the run and again in finalize (finalize_c)
def source_hash() -> str:
    h = sha256()
    for p in _source_files():
        h.update(str(p.relative_to(NATIVE_DIR)).encode())
        h.update(p.read_bytes())
    for lib in LIBS:
        h.update(repr((lib.name, lib.sources, lib.deps, lib.ldlibs, lib.cc, compiler_id(lib.cc))).encode())
    h.update(repr((CFLAGS, compiler_id(CXX), _llvm_include())).encode())
    return h.hexdigest()[:16]


def _cache_root() -> Path:
    env = os.environ.get("QUIVER_NATIVE_BUILD")
    if env:
        return Path(env)
    local = NATIVE_DIR / "build"
    try:
        local.mkdir(exist_ok=True)
        if os.access(local, os.W_OK):
            return local
    except OSError:
        pass
    xdg = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(xdg) / "quiver" / "native"


def build_dir() -> Path:
    """Where the libraries of the current sources live (built or not)."""
    return _cache_root() / source_hash()


def _compile(lib: NativeLib, out: Path) -> None:
    srcs = [str(NATIVE_DIR / s) for s in lib.sources]
    cmd = [lib.cc, *CFLAGS, "-shared", "-I", str(NATIVE_DIR), *srcs, "-o", str(out / f"lib{lib.name}.so"),
           f"-Wl,-soname,lib{lib.name}.so", "-Wl,-rpath,$ORIGIN", "-L", str(out)]
    cmd += [f"-l{d}" for d in lib.deps] + lib.ldlibs
    proc = subprocess.run(cmd, check=False, capture_output=True, text=True)
    if proc.returncode != 0:
        raise BuildError(f"building lib{lib.name}.so failed:\n{' '.join(cmd)}\n{proc.stderr.strip()}")


@functools.cache
def _llvm_include() -> str | None:
    """LLVM's include directory when the pass plugin can be built (llvm-19-dev installed)."""
    config = shutil.which(LLVM_CONFIG)
    if config is None:
        return None
    inc = str(Path(os.path.realpath(config)).parent.parent / "include")  # <prefix>/bin/llvm-config
    if not (Path(inc) / "llvm" / "Passes" / "PassPlugin.h").exists():
        try:
            inc = subprocess.run([LLVM_CONFIG, "--includedir"], capture_output=True, text=True,
                                 check=True).stdout.strip()
        except (OSError, subprocess.CalledProcessError):
            return None
    return inc if (Path(inc) / "llvm" / "Passes" / "PassPlugin.h").exists() and shutil.which(CXX) else None


def _compile_pass(out: Path) -> None:
    """Build the pass plugin; nothing when llvm-19-dev is missing (trace cc then falls back)."""
    if _llvm_include() is None:
        return
    flags = subprocess.run([LLVM_CONFIG, "--cxxflags"], capture_output=True, text=True, check=True).stdout.split()
    cmd = [CXX, *flags, "-O2", "-fPIC", "-shared", "-Wall", str(NATIVE_DIR / PASS_SOURCE), "-o", str(out / PASS_LIB)]
    proc = subprocess.run(cmd, check=False, capture_output=True, text=True)
    if proc.returncode != 0:
        raise BuildError(f"building {PASS_LIB} failed:\n{' '.join(cmd)}\n{proc.stderr.strip()}")


def ensure_built() -> Path:
    """Build the libraries if the current sources have not been built yet; return their directory."""
    final = build_dir()
    if all((final / f"lib{lib.name}.so").exists() for lib in LIBS if not lib.optional):
        return final
    import tempfile

    final.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".tmp-", dir=final.parent))
    try:
        for lib in LIBS:
            if shutil.which(lib.cc) is None:
                if lib.optional:
                    continue
                raise BuildError(f"{lib.cc} not found: install clang-19 (apt-get install clang-19 libomp-19-dev)")
            _compile(lib, tmp)
        _compile_pass(tmp)
        try:
            os.rename(tmp, final)
        except OSError:  # built concurrently by another process: keep theirs
            if not (final / "libquiver_omp.so").exists():
                raise
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return final


def pass_plugin() -> Path | None:
    """The pass plugin for -fpass-plugin, building if needed; None when it cannot be built here."""
    p = ensure_built() / PASS_LIB
    return p if p.exists() else None
