"""Compile a C shared library on first use into the user's cache, named by a hash of what goes into it.

Why here (a leaf module, standard library only): replay's VSM kernel (replay/mapping/vsm_native.py) is
built this way, and the layers rule keeps replay from importing the tracer (whose libraries are built
by tracer/native with their own rules: clang-19, libomp, MPI, a directory per source hash).

What names the library: the sources' bytes, the flags (``-D`` values included) and the machine's
architecture, then the compiler binary (path, size, mtime: an upgrade rebuilds). A machine without a
compiler uses a library of the same sources that another compiler built (a cache shared with a
machine that has one, or a compiler removed after ``make setup``). Concurrent first uses (two
`trace analyze` at once, MPI ranks on a shared home) each compile to a private temporary name and
rename it into place; a rename is atomic, so a reader sees the old name missing or a whole library.
Each use refreshes the library's mtime; building one removes the libraries of the same name that no
one used for ``STALE_AFTER_S`` (other sources: an older quiver, another checkout sharing the cache).

    path = build_library("quiver_vsm", [src], flags)   # BuildError: no compiler, or it failed
"""

from __future__ import annotations

import functools
import os
import time
from pathlib import Path

from .errors import QuiverError

try:  # CPython's own SHA-256 (the same digests): hashlib would load OpenSSL first, ~2 ms of every command
    from _sha2 import sha256  # Python >= 3.12
except ImportError:
    try:
        from _sha256 import sha256  # Python 3.11
    except ImportError:
        from hashlib import sha256

# tried in order unless QUIVER_KERNEL_CC names the compiler
COMPILERS = ("cc", "gcc", "clang", "clang-19")
STALE_AFTER_S = 14 * 24 * 3600


class BuildError(QuiverError):
    """A native library could not be built here (no C compiler, or it failed); exit code 2."""


def cache_root() -> Path:
    """``$QUIVER_NATIVE_BUILD`` if set, else ``$XDG_CACHE_HOME/quiver/native`` (~/.cache/...)."""
    env = os.environ.get("QUIVER_NATIVE_BUILD")
    if env:
        return Path(env)
    xdg = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(xdg) / "quiver" / "native"


def which(name: str) -> str | None:
    """``shutil.which(name)``: the first executable file ``name`` on PATH. Why not shutil: its import (with
    bz2, lzma and fnmatch) is ~2 ms of every `trace analyze`, which looks a compiler up only to name its
    cached libraries."""
    search = os.environ.get("PATH", os.defpath)
    dirs = [""] if os.sep in name else search.split(os.pathsep) if search else []
    for d in dict.fromkeys(dirs):
        path = os.path.join(d, name)
        if os.path.exists(path) and os.access(path, os.X_OK) and not os.path.isdir(path):
            return path
    return None


def compiler() -> str | None:
    """Path of the C compiler to use: ``$QUIVER_KERNEL_CC`` (only that one) or the first of COMPILERS on PATH."""
    env = os.environ.get("QUIVER_KERNEL_CC")
    names = (env,) if env else COMPILERS
    for name in names:
        path = which(name)
        if path:
            return path
    return None


@functools.cache
def compiler_id(cc: str) -> str:
    """The installed compiler binary (path, size, mtime): changes when the compiler is upgraded, and
    costs a stat, not a process (the tracer's build hash uses it too, on every `trace record`)."""
    path = which(cc)
    if path is None:
        return "missing"
    real = os.path.realpath(path)
    st = os.stat(real)
    return f"{real}:{st.st_size}:{st.st_mtime_ns}"


def _source_key(name: str, sources: list[Path], flags: list[str]) -> str:
    """``lib<name>-<hash of sources, flags, architecture>``: what a library is built from."""
    h = sha256()
    for src in sources:
        h.update(src.name.encode())
        h.update(src.read_bytes())
    h.update(repr((flags, os.uname().machine)).encode())
    return f"lib{name}-{h.hexdigest()[:16]}"


# What a library may be tuned for, least first: the flags each level adds. A library's file name
# carries its level, so that a machine without a compiler can pick one its CPU runs (below).
CPU_LEVELS = {"base": [], "avx2": ["-mavx2"], "avx512": ["-mavx2", "-mavx512f", "-mavx512vl", "-mavx512bw"]}
_LEVEL_NEEDS = {"base": set(), "avx2": {"avx2"}, "avx512": {"avx2", "avx512f", "avx512vl", "avx512bw"}}


@functools.cache
def cpu_level() -> str:
    """The best of CPU_LEVELS this CPU runs (x86-64; ``base`` elsewhere). Why: the byte loops of the VSM
    kernel and the batch scan (XXH3 included) pick their vector code at compile time; SSE2 alone halves
    their speed, and 64-bit min/max (the batch scan's ranges) are one instruction only in AVX-512."""
    if os.uname().machine != "x86_64":
        return "base"
    try:
        with open("/proc/cpuinfo") as f:
            have = next((set(line.split()) for line in f if line.startswith("flags")), set())
    except OSError:
        have = set()
    return [level for level, needs in _LEVEL_NEEDS.items() if needs <= have][-1]


def _runnable(level: str) -> list[str]:
    """The levels a library may have to run here, best first."""
    levels = list(CPU_LEVELS)
    return levels[: levels.index(level) + 1][::-1]


def library_path(key: str, cc: str, level: str = "base") -> Path:
    """Where the library of a source key, tuned for ``level``, built by compiler ``cc`` lives (built or not)."""
    return cache_root() / f"{key}-{level}-{sha256(compiler_id(cc).encode()).hexdigest()[:8]}.so"


def build_library(name: str, sources: list[Path], flags: list[str], headers: list[Path] = ()) -> Path:
    """The shared library of ``sources`` (``headers``: also part of its hash), compiled now if needed,
    with ``flags`` and those of this CPU's level (cpu_level). Without a compiler, a library of the same
    sources and flags built earlier (by another compiler, e.g. on a machine sharing the cache) for a
    level this CPU runs is used, the best one."""
    key = _source_key(name, [*sources, *headers], flags)
    level = cpu_level()
    cc = compiler()
    if cc is None:
        for fit in _runnable(level):
            built = sorted(cache_root().glob(f"{key}-{fit}-*.so"))
            if built:
                return _used(built[-1])
        wanted = os.environ.get("QUIVER_KERNEL_CC") or " or ".join(COMPILERS)
        raise BuildError(f"no C compiler ({wanted}) found to build lib{name}.so: install one "
                         "(e.g. apt-get install gcc) or set QUIVER_KERNEL_CC")
    path = library_path(key, cc, level)
    if path.exists():
        return _used(path)
    import subprocess  # only to build (~0.02 s of imports a cached library does not need)
    import tempfile

    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
        os.close(fd)
    except OSError as e:
        raise BuildError(f"cannot write lib{name}.so to {path.parent}: {e.strerror or e}; "
                         "set QUIVER_NATIVE_BUILD to a writable directory") from None
    cmd = [cc, *flags, *CPU_LEVELS[level], "-shared", "-fPIC", *map(str, sources), "-o", tmp]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if proc.returncode != 0:
            lines = proc.stderr.strip().splitlines()
            first = next((ln for ln in lines if "error" in ln), lines[0] if lines else f"exit status {proc.returncode}")
            raise BuildError(f"building lib{name}.so with {cc} failed: {first.strip()}")
        os.chmod(tmp, 0o755)   # mkstemp made it private; a shared cache directory serves others too
        os.replace(tmp, path)
    except OSError as e:
        raise BuildError(f"building lib{name}.so with {cc} failed: {e.strerror or e}") from None
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    _prune_stale(name, path)
    return path


def _used(path: Path) -> Path:
    """``path``, its mtime set to now: it is in use (a read-only shared cache keeps the old mtime)."""
    try:
        os.utime(path)
    except OSError:
        pass
    return path


def _prune_stale(name: str, keep: Path) -> None:
    """Remove the libraries of ``name`` other than ``keep`` that no one used for STALE_AFTER_S."""
    oldest = time.time() - STALE_AFTER_S
    for old in keep.parent.glob(f"lib{name}-*.so"):
        try:
            if old != keep and old.stat().st_mtime < oldest:
                old.unlink()
        except OSError:
            pass
