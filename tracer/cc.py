"""`trace cc` / `trace cxx` / `quiver-cc` / `quiver-cxx`: clang-19 plus what recording needs.

Why a wrapper (like mpicc): the program must be built with host offloading, the load/store
instrumentation, and linked (host and device image) against the tracer, with rpaths so the
binary runs without environment variables. Everything else on the command line goes to
clang unchanged, so the wrapper works as CC/CXX in Make or CMake projects.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from quiver.tracer.cc_args import Mode, mode
from quiver.tracer.native import LLVM_LIB, BuildError, ensure_built, pass_plugin

OFFLOAD_TRIPLE = "x86_64-unknown-linux-gnu"
COMPILERS = {"cc": "clang-19", "cxx": "clang++-19"}
# Per-access fallback (no pass plugin, or the escape hatch): one callback per load/store.
INSTRUMENT = ["-fsanitize-coverage=func,trace-loads,trace-stores", "-fno-sanitize-link-runtime"]
NO_RANGE_PASS = "--no-range-pass"   # wrapper option: per-access instrumentation (QUIVER_NO_RANGE_PASS=1 too)


def compiler(lang: str) -> str:
    return os.environ.get("QUIVER_CXX" if lang == "cxx" else "QUIVER_CC", COMPILERS[lang])


def links(args: list[str]) -> bool:
    """True when clang will run the linker for this command line (tracer/cc_args.py)."""
    return mode(args) is Mode.LINK


def has_debug_info(args: list[str]) -> bool:
    return any(a.startswith("-g") and a not in ("-g0",) for a in args)


def range_pass_disabled(args: list[str]) -> bool:
    return NO_RANGE_PASS in args or os.environ.get("QUIVER_NO_RANGE_PASS", "") not in ("", "0")


def instrument_flags(args: list[str]) -> list[str]:
    """The load/store instrumentation: the range pass plugin (docs/cc.md "How accesses are
    instrumented"), or per-access SanitizerCoverage callbacks when it is disabled or not built."""
    plugin = None if range_pass_disabled(args) else pass_plugin()
    return [f"-fpass-plugin={plugin}"] if plugin else list(INSTRUMENT)


def trailing_flags(args: list[str]) -> list[str]:
    """Flags after the user's. The per-access build keeps the vectorisers off: SanitizerCoverage's
    load/store callbacks skip vector accesses (`<12 x double>` stores of an array of structs would
    record nothing); after the user's flags so a `-fvectorize` of theirs does not undo it."""
    if mode(user_args(args)) is Mode.INFO or not instrument_flags(args)[0].startswith("-fsanitize-coverage"):
        return []
    return ["-fno-vectorize", "-fno-slp-vectorize"]


def user_args(args: list[str]) -> list[str]:
    """The command line without the wrapper's own options."""
    return [a for a in args if a != NO_RANGE_PASS]


def compile_flags(args: list[str]) -> list[str]:
    """Flags added in front of the user's: offloading, instrumentation, line tables."""
    flags = []
    if not any(a.startswith("-fopenmp") and not a.startswith("-fopenmp-") for a in args):
        flags.append("-fopenmp")
    if not any(a.startswith("-fopenmp-targets") for a in args):
        flags.append(f"-fopenmp-targets={OFFLOAD_TRIPLE}")
    flags += instrument_flags(args)
    if not has_debug_info(args):
        # Lines and map-clause names come from debug info; line tables do not change code.
        flags.append("-gline-tables-only")
    return flags


def link_flags(libdir: Path) -> list[str]:
    """Tracer libraries for the host program and its device image, plus rpaths."""
    d = str(libdir)
    return [
        f"-L{d}", "-Wl,--push-state,--no-as-needed", "-lquiver_omp", "-lquiver_rt", "-Wl,--pop-state",
        f"-Wl,-rpath,{d}", f"-Wl,-rpath,{LLVM_LIB}",
        "-Xoffload-linker", f"-L{d}", "-Xoffload-linker", "-lquiver_omp",
        "-Xoffload-linker", "-lquiver_rt",
    ]


def command(lang: str, args: list[str]) -> list[str]:
    """The clang command: unchanged when it compiles nothing (`--version`, `-print-*`), compile
    flags in front when it compiles or preprocesses, the tracer libraries after a link."""
    what = mode(user_args(args))
    if what is Mode.INFO:
        return [compiler(lang), *user_args(args)]
    cmd = [compiler(lang), *compile_flags(args), *user_args(args), *trailing_flags(args)]
    if what is Mode.LINK:
        cmd += link_flags(ensure_built())
    return cmd


def run(lang: str, args: list[str]) -> int:
    """Run the compiler; returns its exit status (its messages pass through)."""
    try:
        cmd = command(lang, args)
    except BuildError as e:
        print(f"trace: error: {e}", file=sys.stderr)
        return 2
    if os.environ.get("QUIVER_CC_VERBOSE"):
        print("trace: " + " ".join(cmd), file=sys.stderr)
    try:
        return subprocess.run(cmd, check=False).returncode
    except FileNotFoundError:
        print(f"trace: error: {cmd[0]} not found: install clang-19 (apt-get install clang-19 libomp-19-dev)",
              file=sys.stderr)
        return 2


def main_cc() -> None:
    """Console script `quiver-cc`: usable as CC."""
    sys.exit(run("cc", sys.argv[1:]))


def main_cxx() -> None:
    """Console script `quiver-cxx`: usable as CXX."""
    sys.exit(run("cxx", sys.argv[1:]))
