"""The measurements: per kernel, native and recorded runs alternated, analysis of each log, and the
other tools at a reduced size; then `trace analyze` on synthetic logs.

Every ratio compares runs made in this process, alternated, so a machine shared with other work
slows both sides alike; medians over ``repeat`` rounds damp the rest.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import build as builds
from . import synthetic
from .kernels import Kernel
from .runner import Measurement, run_measured, run_retrying, size_watchdog
from .stats import log_stats, mib, ratio, summarize
from .tmpfiles import TmpfileSweeper

MPIEXEC = "mpiexec.mpich"
TOOLS = ("memcheck", "asan", "tsan", "msan")
# What a user would set so a run finishes: libomptarget leaks a few blocks at exit (LeakSanitizer
# would fail every run), and uninstrumented libomp / libmpi make TSan and MSan report false positives.
TOOL_ENV = {
    "asan": {"ASAN_OPTIONS": "detect_leaks=0"},
    "tsan": {"TSAN_OPTIONS": "exitcode=0 report_signal_unsafe=0"},
    "msan": {"MSAN_OPTIONS": "exitcode=0"},
}
# UCX (under mpich) patches mmap at startup in a way that crashes every sanitizer runtime.
MPI_TOOL_ENV = {"UCX_MEM_MMAP_HOOK_MODE": "none"}
VALGRIND = ["valgrind", "--tool=memcheck", "-q", "--error-exitcode=0"]


@dataclass
class Settings:
    repeat: int = 3
    quick: bool = False
    tools: bool = True
    full: bool = True                 # the full-size native / recorded / analyze rounds
    tool_timeout: float = 300.0
    run_timeout: float = 900.0
    workdir: Path = Path("bench/build")
    keep_logs: bool = False
    max_raw_bytes: int = 16 << 30     # a recorded run whose raw chunks grow past this is stopped


@dataclass
class Context:
    settings: Settings
    sweeper: TmpfileSweeper = field(default_factory=TmpfileSweeper)
    step: Callable[[str], None] = lambda _msg: None
    notes: list[str] = field(default_factory=list)

    @property
    def out(self) -> Path:
        return self.settings.workdir / "out"

    def output_log(self, name: str) -> Path:
        self.out.mkdir(parents=True, exist_ok=True)
        return self.out / f"{name}.txt"


def tool_env(kernel: Kernel, variant: str) -> dict[str, str]:
    env = dict(TOOL_ENV.get(variant, {}))
    if kernel.mpi and variant in TOOL_ENV:
        env.update(MPI_TOOL_ENV)
    return env


def run_command(kernel: Kernel, variant: str, exe: Path, args: tuple[str, ...], log: Path | None) -> list[str]:
    """The command line that runs ``exe`` as ``variant`` (recorded runs write ``log``)."""
    program = [str(exe), *args]
    if variant == "recorded":
        ranks = ["-n", str(kernel.ranks)] if kernel.mpi else []
        return [builds.TRACE, "record", "-o", str(log), *ranks, "--", *program]
    if variant == "memcheck":
        program = [*VALGRIND, *program]
    return [MPIEXEC, "-n", str(kernel.ranks), *program] if kernel.mpi else program


def _analyze(ctx: Context, log: Path, name: str, check: str | None = None) -> Measurement:
    """`trace analyze` (all default checkers, or only ``check``) with its report going to the run's output file."""
    only = ["--check", check] if check else []
    return run_measured([builds.TRACE, "analyze", str(log), "--format", "json", *only], cwd=ctx.out,
                        log=ctx.output_log(f"{name}.analyze{'.' + check if check else ''}"),
                        timeout=ctx.settings.run_timeout)


def _info(ctx: Context, log: Path, name: str, *flags: str) -> dict[str, Any]:
    """Seconds (whole command) and peak memory of `trace info`; --verify reads every event."""
    m = run_measured([builds.TRACE, "info", str(log), *flags], cwd=ctx.out,
                     log=ctx.output_log(f"{name}.info{''.join(flags)}"), timeout=ctx.settings.run_timeout)
    return {"seconds": round(m.seconds, 3), "peak_rss_mib": mib(m.peak_rss_kib),
            "error": None if m.ok else f"exit status {m.returncode}"}


def per_checker(ctx: Context, log: Path, name: str) -> dict[str, Any]:
    """Seconds and peak memory of `trace analyze --check X`, one process per checker (every registered one)."""
    from quiver.replay.registry import CHECKERS

    out = {}
    for check in CHECKERS:
        ctx.step(f"{name}: trace analyze --check {check}")
        m = _analyze(ctx, log, name, check)
        out[check] = {"seconds": round(m.seconds, 3), "peak_rss_mib": mib(m.peak_rss_kib),
                      "error": None if analysis_ok(m) else f"exit status {m.returncode}"}
    return out


def analysis_ok(m: Measurement) -> bool:
    """`trace analyze` exits 0 when clean and 1 with findings; 2 and 3 mean it failed."""
    return not m.timed_out and m.returncode in (0, 1)


def _record(ctx: Context, kernel: Kernel, exe: Path, args: tuple[str, ...], log: Path, name: str) -> Measurement:
    """One `trace record` run, stopped if its raw chunks outgrow the disk budget."""
    from quiver.tracer.record import raw_dir_for

    raw = raw_dir_for(log)

    def clear() -> None:
        _remove_log(log)
        _remove_log(raw)

    m = run_retrying(run_command(kernel, "recorded", exe, args, log), cwd=ctx.out, log=ctx.output_log(name),
                     before=clear, timeout=ctx.settings.run_timeout, sweeper=ctx.sweeper,
                     watchdog=size_watchdog(raw, ctx.settings.max_raw_bytes))
    if not m.ok:
        _remove_log(raw)
    return m


def _remove_log(path: Path) -> None:
    if path.is_dir():
        shutil.rmtree(path, ignore_errors=True)
    else:
        path.unlink(missing_ok=True)


def measure_kernel(ctx: Context, kernel: Kernel) -> dict[str, Any]:
    s = ctx.settings
    size = "quick" if s.quick else "full"
    args = kernel.args(size)
    bdir = s.workdir / "bin"
    blog = ctx.output_log(f"{kernel.name}.build")
    ctx.step(f"{kernel.name}: build native")
    native = builds.build(kernel, "native", bdir, blog)
    if not native.ok:
        raise RuntimeError(f"{kernel.name}: native build failed: {native.error}")
    ctx.sweeper.register(native.executable)
    ctx.step(f"{kernel.name}: build recorded (trace cc)")
    recorded = builds.build(kernel, "recorded", bdir, blog)
    if recorded.ok:
        ctx.sweeper.register(recorded.executable)
    can_analyze = recorded.ok and builds.trace_available("analyze")

    row: dict[str, Any] = {"name": kernel.name, "shape": kernel.shape, "args": list(args), "ranks": kernel.ranks,
                           "opt": kernel.opt, "tuned": kernel.tuned, "recorded_error": recorded.error or None}
    runs: dict[str, list[Measurement]] = {"native": [], "recorded": [], "analyze": []}
    log = ctx.out / f"{kernel.name}.arrow"
    stats: dict[str, Any] | None = None
    for r in range(s.repeat if s.full else 0):
        ctx.step(f"{kernel.name}: native run {r + 1}/{s.repeat}")
        runs["native"].append(run_retrying(run_command(kernel, "native", native.executable, args, None),
                                           cwd=ctx.out, log=ctx.output_log(f"{kernel.name}.native"),
                                           timeout=s.run_timeout, sweeper=ctx.sweeper))
        if not recorded.ok or (runs["recorded"] and not runs["recorded"][-1].ok):
            continue  # a recording that failed once is not tried again
        ctx.step(f"{kernel.name}: recorded run {r + 1}/{s.repeat}")
        m = _record(ctx, kernel, recorded.executable, args, log, f"{kernel.name}.recorded")
        runs["recorded"].append(m)
        if not (m.ok and log.exists()):
            continue
        stats = log_stats(log)
        if can_analyze:
            ctx.step(f"{kernel.name}: trace analyze {r + 1}/{s.repeat}")
            a = _analyze(ctx, log, kernel.name)
            runs["analyze"].append(Measurement(a.seconds, a.peak_rss_kib, 0 if analysis_ok(a) else a.returncode,
                                               a.timed_out))
            row["analyze_exit_status"] = a.returncode
    if not s.keep_logs:
        _remove_log(log)
    row["native"] = summarize(runs["native"])
    row["recorded"] = summarize(runs["recorded"]) if recorded.ok else None
    row["ratio"] = ratio(row["recorded"]["seconds"], row["native"]["seconds"]) if recorded.ok else None
    row["ratios"] = [round(b.seconds / a.seconds, 3) for a, b in zip(runs["native"], runs["recorded"])
                     if a.ok and b.ok]
    row["log"] = stats
    if runs["analyze"]:
        a = summarize(runs["analyze"])
        a["events_per_s"] = ratio(stats["events"], a["seconds"]) if stats else None
        a["accesses_per_s"] = ratio(stats["accesses"], a["seconds"]) if stats else None
        a["vs_recorded"] = ratio(a["seconds"], row["recorded"]["seconds"])
        row["analyze"] = a
    else:
        row["analyze"] = None
    row["tools"] = measure_tools(ctx, kernel, native, recorded) if s.tools and kernel.has_tools else None
    return row


def measure_tools(ctx: Context, kernel: Kernel, native: builds.Build, recorded: builds.Build) -> dict[str, Any]:
    """valgrind memcheck and the sanitizers at a reduced size, alternated with native (and recorded)."""
    s = ctx.settings
    size = "quick" if s.quick else "tools"
    args = kernel.args(size)
    bdir = s.workdir / "bin"
    blog = ctx.output_log(f"{kernel.name}.build")
    variants: dict[str, builds.Build] = {"native": native}
    if recorded.ok:
        variants["recorded"] = recorded
    out: dict[str, Any] = {"args": list(args), "size": size}
    for tool in TOOLS:
        if tool == "memcheck":
            if not builds.tool_installed("valgrind"):
                out[tool] = {"error": "valgrind not installed"}
                continue
            variants[tool] = builds.Build(tool, native.executable)
            continue
        ctx.step(f"{kernel.name}: build {tool}")
        b = builds.build(kernel, tool, bdir, blog)
        if b.ok:
            ctx.sweeper.register(b.executable)
            variants[tool] = b
        else:
            out[tool] = {"error": b.error, "note": b.note}
    runs: dict[str, list[Measurement]] = {v: [] for v in variants}
    log = ctx.out / f"{kernel.name}.tools.arrow"
    for r in range(s.repeat):
        for variant, b in variants.items():
            if variant != "native" and runs[variant] and not runs[variant][-1].ok:
                continue  # a tool that timed out or failed once is not run again
            ctx.step(f"{kernel.name}: {variant} at reduced size {r + 1}/{s.repeat}")
            if variant == "recorded":
                runs[variant].append(_record(ctx, kernel, b.executable, args, log, f"{kernel.name}.recorded.tools"))
                continue
            runs[variant].append(run_retrying(run_command(kernel, variant, b.executable, args, None), cwd=ctx.out,
                                              log=ctx.output_log(f"{kernel.name}.{variant}.tools"),
                                              env=tool_env(kernel, variant), timeout=s.tool_timeout,
                                              sweeper=ctx.sweeper))
    _remove_log(log)
    base = summarize(runs["native"])
    out["native"] = base
    for variant, b in variants.items():
        if variant == "native":
            continue
        v = summarize(runs[variant])
        v["ratio"] = ratio(v["seconds"], base["seconds"])
        v["note"] = b.note
        out[variant] = v
    return out


def measure_synthetic(ctx: Context, events: int, *, streamed: bool, name: str) -> dict[str, Any]:
    """`trace analyze` of a builder-made (or streamed) clean log with ``events`` access events."""
    path = ctx.out / f"{name}.arrow"
    ctx.out.mkdir(parents=True, exist_ok=True)
    ctx.step(f"{name}: write a {events:,}-event log ({'LogWriter, streamed' if streamed else 'LogBuilder'})")
    if streamed:
        synthetic.write_streamed_log(path, events)
    else:
        synthetic.write_builder_log(path, events)
    stats = log_stats(path)
    row: dict[str, Any] = {"name": name, "events": events, "log": stats,
                           "builder": "LogWriter (streamed)" if streamed else "LogBuilder.append_columns"}
    ctx.step(f"{name}: trace info (stored stats, then --verify)")
    row["info"] = {"stored": _info(ctx, path, name), "verify": _info(ctx, path, name, "--verify")}
    if not builds.trace_available("analyze"):
        row["analyze"] = None
        row["error"] = "`trace analyze` not available yet"
    else:
        runs = []
        for r in range(1 if streamed else ctx.settings.repeat):
            ctx.step(f"{name}: trace analyze {r + 1}")
            runs.append(_analyze(ctx, path, name))
        a = summarize([Measurement(m.seconds, m.peak_rss_kib, 0 if analysis_ok(m) else m.returncode, m.timed_out)
                       for m in runs])
        a["exit_status"] = runs[-1].returncode
        a["events_per_s"] = ratio(stats["events"], a["seconds"])
        a["accesses_per_s"] = ratio(stats["accesses"], a["seconds"])
        row["analyze"] = a
        if streamed:
            row["per_checker"] = per_checker(ctx, path, name)
    if not streamed and builds.mapping_checker_available():
        ctx.step(f"{name}: VSM checker alone, one core")
        row["checker"] = checker_speed(path)
    if not ctx.settings.keep_logs:
        path.unlink(missing_ok=True)
    return row


CHECKER_SPEED = Path(__file__).with_name("checker_speed.py")


def checker_speed(path: Path) -> dict[str, Any]:
    """The VSM checker (C kernel) in a fresh process, one core (one numba thread for the rest), warm (second of two runs)."""
    import os

    env = dict(os.environ, NUMBA_NUM_THREADS="1")
    r = subprocess.run([sys.executable, str(CHECKER_SPEED), str(path), "mapping"], capture_output=True, text=True,
                       env=env, check=False)
    if r.returncode != 0:
        tail = r.stderr.strip().splitlines()[-1:] or ["no output"]
        return {"error": f"checker run failed: {tail[0]}"}
    return json.loads(r.stdout.strip().splitlines()[-1])


__all__ = ["Context", "Settings", "measure_kernel", "measure_synthetic", "mib"]
