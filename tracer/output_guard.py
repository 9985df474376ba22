"""What `trace record` may write to, decided before the program runs.

Why before: a recording can take hours; a refusal after it (or, worse, a silent overwrite of the
program, a source file or someone's directory) is the data loss users hit with `-o` typos. The rule:
replace only what quiver wrote itself (an event log, a split-log directory), a missing path, or,
with ``--force``, any regular file; never a directory, a FIFO or a device, never a raw directory of
chunks we did not create.
"""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path


def _is_quiver_log(path: Path) -> bool:
    from quiver.formats.sniff import footer_names_quiver  # not reader.is_quiver_log: no numpy, no pyarrow

    return footer_names_quiver(path)


class OutputRefused(FileExistsError):
    """The output path is unsafe to write; the message is one line and says how to proceed."""


def _same_file(a: Path, b: Path | None) -> bool:
    try:
        return b is not None and os.path.samefile(a, b)
    except OSError:
        return False


def check_output(out: Path, programs: list[Path | None], *, split: bool, force: bool) -> None:
    """Raise OutputRefused when writing ``out`` would destroy something quiver did not write."""
    if out.name in ("", ".", ".."):
        raise OutputRefused(f"-o {str(out)!r}: not a file name")
    parent = out.parent
    if not parent.is_dir():
        raise OutputRefused(f"{out}: directory {parent} does not exist")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise OutputRefused(f"{out}: directory {parent} is not writable")
    try:
        st = os.stat(out)
    except FileNotFoundError:
        return
    except OSError as e:
        raise OutputRefused(f"{out}: cannot use as output ({e.strerror})") from None
    if any(_same_file(out, p) for p in programs):
        if not force:
            raise OutputRefused(f"{out} is the program being recorded; choose another -o (or --force)")
        return
    if split:
        return  # finalize_split.prepare_split_dir: replaces only an older split log
    if stat.S_ISDIR(st.st_mode):
        raise OutputRefused(f"{out} is a directory; give a file name with -o (or --split for a split log)")
    if not stat.S_ISREG(st.st_mode):
        raise OutputRefused(f"{out} is not a regular file; choose another -o")
    if not force and not _is_quiver_log(out):
        raise OutputRefused(f"{out} exists and is not a quiver event log; choose another -o (or --force)")


def make_raw_dir(out: Path, preferred: Path, *, force: bool) -> Path:
    """The raw-chunk directory of this run, created new and private (0700).

    ``preferred`` (``<out>.raw``) when it does not exist; when it does (a user's directory, or the
    chunks of a killed run to recover) it is never touched: refused, or with ``--force`` a fresh
    ``<out>.raw.XXXXXX`` beside it is used instead."""
    try:
        os.mkdir(preferred, 0o700)
        return preferred
    except FileExistsError:
        if not force:
            raise OutputRefused(f"{preferred} already exists (raw chunks of an unfinished recording, or not "
                                "ours); recover or remove it, or use --force to record beside it") from None
    except OSError as e:
        raise OutputRefused(f"{preferred}: cannot create ({e.strerror})") from None
    return Path(tempfile.mkdtemp(prefix=f"{preferred.name}.", dir=out.parent))
