"""`trace record`: run a program with the tracer loaded, then finalize its raw chunks into a log.

Why a parent process: the program may crash or be killed at any point; the parent outlives it,
finalizes whatever raw chunks exist, marks the log truncated, and exits like a shell would
(the program's status, or 128 + signal; 124 when `timeout` ended it, like timeout(1)).
stdin/stdout/stderr are inherited untouched. The program runs so that it dies with the parent
(tracer/launch.py); if the parent itself is killed, `trace recover` finalizes the raw chunks later.
With `ranks`, the program runs under a launcher (mpiexec.mpich -n RANKS); every rank writes
its own r<rank>.* files into the same raw directory and finalize merges them.
"""

from __future__ import annotations

import contextlib
import glob
import os
import re
import shutil
import signal
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from quiver.tracer import tools
from quiver.tracer.launch import run_group
from quiver.tracer.native import ensure_built
from quiver.tracer.recover import LAUNCHER, mark_reason, raw_dir_for, write_marker

DEFAULT_LAUNCHER = "mpiexec.mpich"
# Libraries preloaded into every process, in order; a tracer library that is optional
# (e.g. the PMPI one) is only preloaded when it was built and `ranks` is given.
PRELOAD = ["quiver_omp"]
PRELOAD_MPI = ["quiver_mpi"]


class RecordResult:
    """What `record` did. (A plain class: this module is imported before the program starts, and
    `dataclasses` costs ~7 ms of CPU there.)"""

    def __init__(self, log: Path, exit_code: int, status: int | None, signal: int | None, truncated: bool,
                 has_accesses: bool, warnings: list[str] | None = None, timed_out: bool = False) -> None:
        self.log = log
        self.exit_code = exit_code      # what `trace record` exits with
        self.status = status            # program's exit status, None when killed
        self.signal = signal
        self.truncated = truncated
        self.has_accesses = has_accesses
        self.warnings = warnings if warnings is not None else []
        self.timed_out = timed_out


TMP_IMAGES = "/tmp/tmpfile_*"
EXIT_TIMEOUT = 124  # like timeout(1)
TIME_LIMIT = "time limit"


def cleanup_device_images(raw_dir: Path) -> None:
    """Remove /tmp/tmpfile_* images the run loaded that are still there (the tracer unlinks them)."""
    if not raw_dir.is_dir():
        return
    names = set()
    for p in raw_dir.glob("r*.mod"):
        names.update(re.findall(r"(/tmp/tmpfile_\w+)", p.read_text(errors="replace")))
    for p in raw_dir.glob("r*.info"):
        names.update(re.findall(r"devimg\[\]=(/tmp/tmpfile_\w+)", p.read_text(errors="replace")))
    for name in names:
        try:
            os.unlink(name)
        except OSError:
            pass


def remove_leftover_images(before: set[str], exe: Path) -> None:
    """Delete device images the run extracted but the tracer never saw (a crash before the image
    was loaded): new /tmp/tmpfile_* whose bytes are embedded in the executable."""
    new = set(glob.glob(TMP_IMAGES)) - before
    if not new:
        return
    try:
        blob = exe.read_bytes()
    except OSError:
        return
    for name in new:
        try:
            with open(name, "rb") as f:
                head = f.read(4096)
            if head.startswith(b"\x7fELF") and head in blob:
                os.unlink(name)
        except OSError:
            pass


def resolve_program(prog: str) -> Path | None:
    if os.sep in prog:
        p = Path(prog)
        return p if p.exists() else None
    found = shutil.which(prog)
    return Path(found) if found else None


# names only a binary built by `trace cc` / `trace mpicc` calls (tracer/native/qv_entry_points.inc)
INSTRUMENTED_MARKERS = (b"__sanitizer_cov_load", b"__quiver_range_load")


def is_instrumented(path: Path | None) -> bool:
    """Built with `trace cc`: the binary calls the sanitizer-coverage load callbacks."""
    if path is None or not path.is_file():
        return False
    try:
        with open(path, "rb") as f:
            head = f.read(4)
            if head != b"\x7fELF":
                return False
            body = f.read()
            return any(marker in body for marker in INSTRUMENTED_MARKERS)
    except OSError:
        return False


def is_executable_format(path: Path) -> bool:
    """An ELF binary or a script with a #! line: what execve runs (anything else fails with ENOEXEC)."""
    try:
        with open(path, "rb") as f:
            head = f.read(4)
    except OSError:
        return True  # let execve give the real reason
    return head == b"\x7fELF" or head.startswith(b"#!")


def calls_offload_runtime(path: Path) -> bool:
    """The binary has `target` constructs (calls __tgt_target_kernel, __tgt_target_data_*_mapper ...):
    map clauses, whose objects finalize looks up. `trace cc` registers an offload image in every
    program (__tgt_register_lib), so that alone says nothing."""
    try:
        with open(path, "rb") as f:
            return b"__tgt_target" in f.read()
    except OSError:
        return True  # unknown: prepare for them


def links_mpi_tracer(path: Path | None) -> bool:
    """Built with `trace mpicc`: the binary needs libquiver_mpi.so."""
    if path is None or not path.is_file():
        return False
    try:
        with open(path, "rb") as f:
            return f.read(4) == b"\x7fELF" and b"libquiver_mpi.so" in f.read()
    except OSError:
        return False


LAUNCHERS = ("mpiexec", "mpirun", "srun")


def tracer_env(raw_dir: Path, libdir: Path, mpi: bool, base: dict[str, str] | None = None,
               launched: bool = False) -> dict[str, str]:
    env = dict(os.environ if base is None else base)
    libs = []
    if mpi:  # first: its load/store callbacks watch window memory and pass other accesses on
        libs += [str(libdir / f"lib{n}.so") for n in PRELOAD_MPI if (libdir / f"lib{n}.so").exists()]
    libs += [str(libdir / f"lib{n}.so") for n in PRELOAD]
    if env.get("LD_PRELOAD"):
        libs.append(env["LD_PRELOAD"])
    env["LD_PRELOAD"] = ":".join(libs)
    env["QUIVER_RAW_DIR"] = str(raw_dir)
    env.pop("QUIVER_RANK", None)
    if launched:  # the launcher's own processes have no rank: they must not record as rank 0
        env["QUIVER_EXPECT_RANK"] = "1"
    else:
        env.pop("QUIVER_EXPECT_RANK", None)
    return env


def launcher_prefix(ranks: int | None, launcher: str | None) -> list[str]:
    if not ranks:
        return []
    cmd = (launcher or DEFAULT_LAUNCHER).split()
    return [*cmd, "-n", str(ranks)]


def _signal_name(sig: int) -> str:
    try:
        return signal.Signals(sig).name
    except ValueError:
        return f"signal {sig}"


@contextlib.contextmanager
def finalizing_status(raw: Path, out: Path) -> Iterator[Callable[[int, int], None] | None]:
    """On a terminal, a transient status line on stderr while the raw chunks become the log (seconds
    on a big run, which otherwise looks like a hang), with the share of events written: yields the
    ``progress(rows written, rows)`` callback for finalize; nothing (None) when stderr is a file or a pipe."""
    if not sys.stderr.isatty():
        yield None
        return
    from rich.console import Console
    from rich.live import Live
    from rich.spinner import Spinner

    try:
        size = sum(f.stat().st_size for f in raw.rglob("*") if f.is_file())
    except OSError:
        size = 0
    spinner = Spinner("dots", text=f"trace: finalizing {out} ({size / 2**20:.1f} MiB of raw chunks)")
    with Live(spinner, console=Console(stderr=True), transient=True, refresh_per_second=12.5) as live:
        def progress(done: int, total: int) -> None:
            spinner.update(text=f"trace: finalizing {out.name}: {100 * done // max(total, 1)}% of {total:,} events")
            live.refresh()

        yield progress


POLL_S = 0.05   # how often the raw directory's size is looked at while the program runs


def _prepare_finalize(exe: Path, raw: Path, ended: threading.Event) -> threading.Thread:
    """While the program runs rather than after it: start the tools finalize runs on the executable
    (tracer/tools.py), import the finalize of small runs (finalize_small: no numpy), and, in a thread,
    the finalize of big ones (numpy: ~0.1-0.2 s of CPU; pyarrow only when the log is big) once the raw
    directory holds more records than finalize_small takes (small_max_rows: one record batch). The caller joins the thread (it
    ends with the program) before finalizing.

    numpy's OpenBLAS starts a thread per core at import (~0.05 s of CPU, more on a busy machine) and
    finalize multiplies no matrices: this process asks for one (the program's environment was
    fixed when it started)."""
    tools.prestart(exe, objects=calls_offload_runtime(exe))
    os.environ["OPENBLAS_NUM_THREADS"] = "1"
    from quiver.tracer.finalize_small import small_max_rows
    from quiver.tracer.rawread import RAW_BYTES, raw_event_bytes

    most = small_max_rows()

    def import_numpy_path() -> None:
        while not ended.wait(POLL_S):
            if raw_event_bytes(raw) > most * RAW_BYTES:
                import quiver.tracer.finalize  # noqa: F401
                return

    thread = threading.Thread(target=import_numpy_path, name="quiver-finalize-import")
    thread.start()
    return thread


class ProgramNotRunnable(OSError):
    """The program exists but the kernel refuses to run it (no shebang, wrong architecture ...)."""


def record(argv: Sequence[str], out: Path, ranks: int | None = None, launcher: str | None = None,
           warn=lambda msg: print(f"trace: {msg}", file=sys.stderr), split: bool = False,
           timeout: float | None = None, force: bool = False) -> RecordResult:
    """Run `argv` under the tracer and write `out` (with `split`: a directory, one log per rank);
    `timeout`: seconds after which the run is ended (SIGTERM, then SIGKILL) and the log marked truncated.
    Raises FileNotFoundError for a missing program, FileExistsError (output_guard.OutputRefused) for an
    `out` it must not replace (tracer/output_guard.py; `force` allows replacing a regular file),
    ProgramNotRunnable when the program cannot be executed. All before the program runs."""
    try:
        return _record(argv, out, ranks, launcher, warn, split, timeout, force)
    finally:
        tools.stop_all()  # the tool processes finalize did not use


def _record(argv: Sequence[str], out: Path, ranks: int | None, launcher: str | None, warn,
            split: bool, timeout: float | None, force: bool) -> RecordResult:
    from quiver.tracer.output_guard import check_output, make_raw_dir

    if Path(out).name in ("", ".", ".."):
        raise FileExistsError(f"-o {str(out)!r}: not a file name")
    out = Path(out).resolve()
    prog = resolve_program(argv[0])
    if prog is None:
        raise FileNotFoundError(argv[0])
    if not os.access(prog, os.X_OK):
        raise PermissionError(argv[0])
    if not is_executable_format(prog):
        raise ProgramNotRunnable(f"cannot run {argv[0]}: not an executable (no ELF header and no #! line)")
    # under a launcher given as the program, the recorded binary is further down argv
    target = next((resolve_program(a) for a in argv[1:] if resolve_program(a) and is_instrumented(
        resolve_program(a))), None) if Path(argv[0]).name.startswith(LAUNCHERS) else None
    check_output(out, [prog, target], split=split, force=force)
    if split:
        from quiver.tracer.finalize_split import prepare_split_dir

        prepare_split_dir(out)
    libdir = ensure_built()
    raw = make_raw_dir(out, raw_dir_for(out), force=force)
    instrumented = is_instrumented(target or prog)
    warnings = []
    if not instrumented:
        msg = (f"warning: {argv[0]} was not built with `trace cc`: memory accesses are missing "
               "(constructs and data movement are recorded)")
        warnings.append(msg)
        warn(msg)
    launched = bool(ranks) or target is not None or Path(argv[0]).name.startswith(LAUNCHERS)
    env = tracer_env(raw, libdir, mpi=launched or links_mpi_tracer(prog), launched=launched)
    cmd = [*launcher_prefix(ranks, launcher), *argv]
    if ranks and shutil.which(cmd[0]) is None:
        raise FileNotFoundError(cmd[0])
    run_meta = {"program": argv[0], "argv": list(argv), "has_accesses": instrumented,
                "launcher": cmd[: len(cmd) - len(argv)] or None}
    write_marker(raw, out, split, run_meta)  # for `trace recover` if this process is killed
    images_before = set(glob.glob(TMP_IMAGES))
    program_ended = threading.Event()
    importer: list[threading.Thread] = []
    try:
        ended = run_group(cmd, env, timeout=timeout,
                          while_running=lambda: importer.append(_prepare_finalize(target or prog, raw, program_ended)),
                          on_timeout=lambda: mark_reason(raw, TIME_LIMIT))
    except OSError as e:  # the program could not be started (e.g. ENOEXEC): nothing to recover later
        shutil.rmtree(raw, ignore_errors=True)
        raise ProgramNotRunnable(f"cannot run {argv[0]}: {e.strerror or e}") from None
    finally:
        program_ended.set()
        for thread in importer:
            thread.join()
        cleanup_device_images(raw)
        remove_leftover_images(images_before, target or prog)
    code = ended.code
    sig = -code if code < 0 else None
    status = code if code >= 0 else None
    # a launcher reports a rank killed by a signal as 128+sig or similar: the raw info knows
    run_meta["exit_status"] = status
    if sig is not None:
        run_meta["signal"] = sig
        run_meta["truncated"] = True
    if ended.timed_out:
        run_meta["truncated"] = True
        run_meta["truncated_reason"] = TIME_LIMIT
    with finalizing_status(raw, out) as progress:
        if split:
            from quiver.tracer.finalize_split import finalize_split

            meta = finalize_split(raw, out, run_meta, progress=progress)
        else:
            from quiver.tracer.finalize_small import finalize_run

            meta = finalize_run(raw, out, run_meta, progress=progress)
    if meta.get("signal") is not None and sig is None:
        sig = int(meta["signal"])
    truncated = bool(meta["truncated"])
    if ended.timed_out:
        warn(f"time limit reached ({timeout:g} s): program ended; log is truncated")
        exit_code = EXIT_TIMEOUT
    elif sig is not None:
        warn(f"program killed by signal {sig} ({_signal_name(sig)}); log is truncated")
        exit_code = 128 + sig
    else:
        if truncated:
            warn(f"log is truncated ({meta.get('truncated_reason')})")
        exit_code = status if status is not None else 1
    if os.environ.get("QUIVER_KEEP_RAW"):
        (raw / LAUNCHER).unlink(missing_ok=True)  # finalized: nothing to recover
    else:
        shutil.rmtree(raw, ignore_errors=True)
    return RecordResult(out, exit_code, status, sig, truncated, instrumented, warnings, ended.timed_out)
