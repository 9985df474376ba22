"""`trace mpicc` / `trace mpicxx`: the MPI compiler wrapper on clang-19, plus what recording needs.

Why a wrapper on the wrapper: the program must be compiled with the load/store instrumentation
and linked against the PMPI tracer (before libmpi, so its MPI_* wrappers win) with an rpath,
so the binary records under `trace record -n N` without environment variables. Everything
else on the command line goes to mpicc unchanged.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from quiver.tracer.cc import has_debug_info, instrument_flags, trailing_flags, user_args
from quiver.tracer.cc_args import Mode, mode
from quiver.tracer.native import BuildError, ensure_built

# (MPI wrapper, how to tell it the compiler, compiler)
WRAPPERS = {"cc": ("mpicc.mpich", "-cc=", "clang-19"), "cxx": ("mpicxx.mpich", "-cxx=", "clang++-19")}


def wrapper(lang: str) -> tuple[str, str, str]:
    mpi, flag, comp = WRAPPERS[lang]
    env = "QUIVER_MPICXX" if lang == "cxx" else "QUIVER_MPICC"
    return os.environ.get(env, mpi), flag, os.environ.get("QUIVER_CXX" if lang == "cxx" else "QUIVER_CC", comp)


def mpi_link_flags(libdir: Path) -> list[str]:
    d = str(libdir)
    return [f"-L{d}", "-Wl,--push-state,--no-as-needed", "-lquiver_mpi", "-lquiver_rt", "-Wl,--pop-state",
            f"-Wl,-rpath,{d}"]


def command(lang: str, args: list[str]) -> list[str]:
    mpi, flag, comp = wrapper(lang)
    what = mode(user_args(args))
    if what is Mode.INFO:   # `-show`, `--version`, `-print-*`: what the MPI wrapper says, unchanged
        return [mpi, f"{flag}{comp}", *user_args(args)]
    cmd = [mpi, f"{flag}{comp}", *instrument_flags(args)]
    if not has_debug_info(args):
        cmd.append("-gline-tables-only")   # source lines of accesses and MPI calls
    cmd += [*user_args(args), *trailing_flags(args)]
    if what is Mode.LINK:
        libdir = ensure_built()
        if not (libdir / "libquiver_mpi.so").exists():
            raise BuildError(f"the PMPI tracer was not built ({mpi} missing?): install mpich "
                             "(apt-get install mpich libmpich-dev)")
        cmd += mpi_link_flags(libdir)
    return cmd


def run(lang: str, args: list[str]) -> int:
    """Run the MPI compiler wrapper; returns its exit status (its messages pass through)."""
    mpi = wrapper(lang)[0]
    if shutil.which(mpi) is None:
        print(f"trace: error: {mpi} not found: install mpich (apt-get install mpich libmpich-dev)", file=sys.stderr)
        return 2
    try:
        cmd = command(lang, args)
    except BuildError as e:
        print(f"trace: error: {e}", file=sys.stderr)
        return 2
    if os.environ.get("QUIVER_CC_VERBOSE"):
        print("trace: " + " ".join(cmd), file=sys.stderr)
    return subprocess.run(cmd, check=False).returncode


def main_mpicc() -> None:
    """Console script `quiver-mpicc`: usable as CC (or MPI_C_COMPILER) of an MPI build."""
    sys.exit(run("cc", sys.argv[1:]))


def main_mpicxx() -> None:
    """Console script `quiver-mpicxx`: usable as CXX of an MPI build."""
    sys.exit(run("cxx", sys.argv[1:]))
