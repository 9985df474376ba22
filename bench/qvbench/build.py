"""Compile a kernel in each variant the benchmark compares, caching builds by source and command.

Variants: ``native`` (plain clang-19 offloading build), ``recorded`` (`trace cc` / `trace mpicc`),
and the tools a user would otherwise reach for: ``asan``, ``tsan``, ``msan`` (valgrind memcheck
runs the native binary). Each build says how it was made when that differs from the native one.
"""

from __future__ import annotations

import hashlib
import importlib
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from .kernels import Kernel

REPO = Path(__file__).resolve().parents[2]
CLANG = "clang-19"
CLANGXX = "clang++-19"
MPICC = "mpicc.mpich"
LLVM_LIB = "/usr/lib/llvm-19/lib"
SANITIZER_RT = f"{LLVM_LIB}/clang/19/lib/linux"
OFFLOAD = ["-fopenmp", "-fopenmp-targets=x86_64-unknown-linux-gnu", f"-Wl,-rpath,{LLVM_LIB}"]
TRACE = str(Path(sys.executable).with_name("trace"))
MPI_ENV = {"MPICH_CC": CLANG}


@dataclass(frozen=True)
class Build:
    variant: str
    executable: Path | None
    note: str = ""                # how this build differs from the native one, or why it failed
    error: str = ""

    @property
    def ok(self) -> bool:
        return self.executable is not None


def trace_available(command: str) -> bool:
    """Whether `trace <command>` is implemented in this checkout (parts land independently)."""
    from quiver.cli import COMMANDS

    for name, module, func in COMMANDS:
        if name == command:
            try:
                return hasattr(importlib.import_module(module), func)
            except ModuleNotFoundError as e:
                if e.name != module:
                    raise
                return False
    return False


def mapping_checker_available() -> bool:
    from quiver.replay.registry import available_checkers

    return "mapping" in available_checkers()


def _tracer_fingerprint() -> bytes:
    native = REPO / "tracer" / "native"
    h = hashlib.sha256()
    sources = [p for p in native.rglob("*") if p.suffix in (".c", ".h", ".cpp") and "build" not in p.parts]
    for p in sorted(sources):  # the runtime and the pass plugin
        h.update(str(p.relative_to(native)).encode() + p.read_bytes())
    return h.digest()


def _commands(kernel: Kernel, variant: str, exe: Path) -> tuple[list[list[str]], str]:
    """The commands that build ``exe``, and a note on how the build differs from native."""
    src, libm = str(kernel.source), (["-lm"] if kernel.needs_libm else [])
    opt = kernel.opt
    if kernel.mpi:
        omp = ["-fopenmp"] if kernel.openmp else []
        base = [MPICC, opt, *omp]
        return {
            "native": ([[*base, src, "-o", str(exe)]], ""),
            "recorded": ([[TRACE, "mpicc", opt, *omp, src, "-o", str(exe)]], ""),
            "asan": ([[*base, "-g", "-fsanitize=address", src, "-o", str(exe)]], "UCX_MEM_MMAP_HOOK_MODE=none"),
            "tsan": ([[*base, "-g", "-fsanitize=thread", src, "-o", str(exe)]], "UCX_MEM_MMAP_HOOK_MODE=none"),
            "msan": ([[*base, "-g", "-fsanitize=memory", src, "-o", str(exe)]],
                     "libmpi not instrumented; UCX_MEM_MMAP_HOOK_MODE=none"),
        }[variant]
    obj = str(exe) + ".o"
    rt_rpath = f"-Wl,-rpath,{SANITIZER_RT}"
    cc, trace_cc = (CLANGXX, "cxx") if kernel.cxx else (CLANG, "cc")
    if variant in ("native", "recorded"):
        return {
            "native": ([[cc, opt, *OFFLOAD, src, "-o", str(exe), *libm]], ""),
            "recorded": ([[TRACE, trace_cc, opt, src, "-o", str(exe), *libm]], ""),
        }[variant]
    return {
        # The static ASan runtime cannot go into the device image (a DSO): instrument both sides,
        # link the shared runtime into the host program (first, so it comes first in the initial
        # library list), and the device image resolves against it.
        "asan": ([[CLANG, "-O2", "-g", *OFFLOAD, "-fsanitize=address", "-c", src, "-o", obj],
                  [CLANG, *OFFLOAD, "-Wl,--no-as-needed", f"{SANITIZER_RT}/libclang_rt.asan-x86_64.so",
                   "-Wl,--as-needed", obj, "-o", str(exe), *libm, rt_rpath]],
                 "offload build, shared ASan runtime"),
        "tsan": ([[CLANG, "-O2", "-g", *OFFLOAD, "-fsanitize=thread", "-shared-libsan", rt_rpath, src, "-o",
                   str(exe), *libm]], "offload build, shared TSan runtime; libomp not instrumented"),
        # No shared MSan runtime exists, so the device image cannot link: target regions run on the host.
        "msan": ([[CLANG, "-O2", "-g", "-fopenmp", f"-Wl,-rpath,{LLVM_LIB}", "-fsanitize=memory", src, "-o",
                   str(exe), *libm]], "host-only -fopenmp build (MSan cannot link the device image)"),
    }[variant]


def build(kernel: Kernel, variant: str, build_dir: Path, log: Path) -> Build:
    """Build (or reuse a cached build of) ``kernel`` in ``variant``; failures become a Build with error."""
    if variant == "recorded":
        needed = "mpicc" if kernel.mpi else "cc"
        if not trace_available(needed):
            return Build(variant, None, error=f"`trace {needed}` not available yet")
    out_dir = build_dir / variant
    out_dir.mkdir(parents=True, exist_ok=True)
    exe = out_dir / kernel.name
    commands, note = _commands(kernel, variant, exe)
    key = hashlib.sha256(kernel.source.read_bytes() + repr(commands).encode()
                         + (_tracer_fingerprint() if variant == "recorded" else b"")).hexdigest()
    stamp = exe.with_suffix(".key")
    if exe.exists() and stamp.exists() and stamp.read_text() == key:
        return Build(variant, exe, note)
    env = dict(os.environ, **MPI_ENV) if kernel.mpi else None
    with open(log, "ab") as out:
        for cmd in commands:
            out.write(("$ " + " ".join(cmd) + "\n").encode())
            out.flush()
            r = subprocess.run(cmd, check=False, cwd=out_dir, env=env, stdout=out, stderr=subprocess.STDOUT,
                               stdin=subprocess.DEVNULL)
            if r.returncode != 0:
                exe.unlink(missing_ok=True)
                return Build(variant, None, note, error=f"build failed (exit {r.returncode}, see {log})")
    stamp.write_text(key)
    return Build(variant, exe, note)


def tool_installed(program: str) -> bool:
    return shutil.which(program) is not None
