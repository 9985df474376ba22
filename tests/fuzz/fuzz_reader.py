"""Coverage-guided fuzz target (atheris / libFuzzer) over the log reader, split manifests and the
validation every consumer relies on (issues 17 and 21).

An input is one byte of mode, then the payload:
  mode even: the payload is a single log file: read_log, every batch (all columns and a projection),
             the table, `trace info`'s scan, the footer-only helpers;
  mode odd:  a split directory: manifest.json, rank-00000.arrow and rank-00001.arrow, the first two
             preceded by their length (2 bytes, little endian): open_logs and every rank log.
Every input must give a log or LogFormatError; anything else (another exception, a hang under
libFuzzer's -timeout, memory over -rss_limit_mb) is a finding.

    QUIVER_FUZZ_WORK=/tmp/fz python tests/fuzz/fuzz_reader.py -max_total_time=600 /tmp/new-corpus tests/fuzz/corpus
(QUIVER_FUZZ_WORK: where inputs are written; libFuzzer exits without Python clean-up, so remove it after)
    python tests/fuzz/fuzz_reader.py tests/fuzz/corpus/<file>                                 # one input
tests/fuzz/test_fuzz.py runs it for a few seconds over the committed corpus (tests/fuzz/corpus/,
written by tests/fuzz/make_corpus.py).
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path

WORK = Path(os.environ.get("QUIVER_FUZZ_WORK") or os.path.join(tempfile.gettempdir(), f"quiver-fuzz-{os.getpid()}"))


def _exercise(log) -> None:
    from quiver.info import log_summary

    for i in range(log.num_batches):
        log.batch(i)
        log.batch(i, ["kind", "op", "aux2"])
    log.table  # noqa: B018 - decodes and checks every batch
    log_summary(log)
    for sid in (-1, 0, len(log.strings)):
        log.string(sid)


def _take(data: bytes) -> tuple[bytes, bytes]:
    n = int.from_bytes(data[:2], "little")
    return data[2:2 + n], data[2 + n:]


def pack_split(manifest: bytes, first: bytes, second: bytes) -> bytes:
    """The fuzz input of a split directory (make_corpus.py)."""
    return b"\1" + len(manifest).to_bytes(2, "little") + manifest + len(first).to_bytes(2, "little") + first + second


def one_input(data: bytes) -> None:
    from quiver.formats import LogFormatError, is_quiver_log, open_logs, read_log
    from quiver.formats.reader import log_run

    if not data:
        return
    mode, payload = data[0], data[1:]
    target = WORK / ("case.arrow" if mode % 2 == 0 else "case.d")
    shutil.rmtree(WORK / "case.d", ignore_errors=True)
    try:
        if mode % 2 == 0:
            target.write_bytes(payload)
            is_quiver_log(target)
            try:
                log_run(target)
            except LogFormatError:
                pass
            _exercise(read_log(target))
        else:
            target.mkdir()
            manifest, rest = _take(payload)
            first, second = _take(rest)
            (target / "manifest.json").write_bytes(manifest)
            (target / "rank-00000.arrow").write_bytes(first)
            (target / "rank-00001.arrow").write_bytes(second)
            for log in open_logs(target):
                _exercise(log)
    except LogFormatError as e:
        message = str(e)
        assert message and "\n" not in message, f"not one line: {message!r}"


_EXIT_HOOK = None


def _exit_before_arrow_teardown() -> None:
    """libFuzzer ends a run with exit(): the C++ destructors then shut pyarrow's thread pool down while
    this thread holds the GIL, and a pool thread releasing a Python buffer waits for the GIL forever (a
    clean run that never ends). The last exit handler registered runs first: it ends the process there,
    with exit()'s status."""
    import ctypes

    global _EXIT_HOOK

    def hook(status: int, _arg: object) -> None:
        shutil.rmtree(WORK, ignore_errors=True)
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(status)

    _EXIT_HOOK = ctypes.CFUNCTYPE(None, ctypes.c_int, ctypes.c_void_p)(hook)   # kept alive with the process
    ctypes.CDLL(None).on_exit(_EXIT_HOOK, None)


def _watchdog() -> None:
    """With QUIVER_FUZZ_WATCHDOG=seconds: a run still going then prints every thread's stack and exits 1.
    Why: libFuzzer's -timeout acts only when its alarm lands on the fuzzing thread and Python code runs
    again; a unit stuck in native code (a deadlock) outlived it once, silently. faulthandler's watchdog
    is a C thread that needs no GIL."""
    import faulthandler

    seconds = float(os.environ.get("QUIVER_FUZZ_WATCHDOG") or 0)
    if seconds > 0:
        faulthandler.dump_traceback_later(seconds, exit=True)


def main(argv: list[str]) -> None:
    import atheris

    with atheris.instrument_imports(include=["quiver"]):
        import quiver.formats
        import quiver.formats.blocks
        import quiver.formats.integrity
        import quiver.formats.logset
        import quiver.formats.reader
        import quiver.formats.validate

        import quiver.info  # noqa: F401
    WORK.mkdir(parents=True, exist_ok=True)
    _exit_before_arrow_teardown()
    _watchdog()
    try:
        atheris.Setup(argv, one_input)
        atheris.Fuzz()
    finally:
        shutil.rmtree(WORK, ignore_errors=True)


if __name__ == "__main__":
    os.environ.setdefault("POLARS_MAX_THREADS", "1")
    main(sys.argv)
