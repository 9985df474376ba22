"""Whether a file is a quiver log, from the bytes of its Arrow footer, with the standard library only.

Why: `trace record -o LOG` over an existing LOG checks, before the program starts, that it replaces a
log quiver wrote (tracer/output_guard.py). reader.is_quiver_log answers with pyarrow and numpy, ~0.13 s
of imports on the path to the program's start. An Arrow IPC file starts with the magic and ends with its
footer (a flatbuffer holding the schema and its metadata), the footer's length (int32, little-endian)
and the magic again; a quiver log's schema metadata maps META_FORMAT to FORMAT_NAME. Both in the footer
is the test. The version is not checked: a log of another version is still quiver's to replace.
"""

from __future__ import annotations

import os
import stat

FORMAT_NAME = "quiver-events"
META_FORMAT = b"quiver.format"      # schema-metadata key whose value is FORMAT_NAME
ARROW_MAGIC = b"ARROW1"
_HEAD = 8                           # the magic, padded
_TAIL = 4 + len(ARROW_MAGIC)        # footer length, magic


def footer_names_quiver(path: str | os.PathLike) -> bool:
    """Whether ``path`` is a regular Arrow IPC file whose footer carries quiver's format marker."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return False
    with os.fdopen(fd, "rb") as f:
        size = os.fstat(fd).st_size
        if not stat.S_ISREG(os.fstat(fd).st_mode) or size < _HEAD + _TAIL or f.read(len(ARROW_MAGIC)) != ARROW_MAGIC:
            return False
        f.seek(size - _TAIL)
        tail = f.read(_TAIL)
        n = int.from_bytes(tail[:4], "little", signed=True)
        if tail[4:] != ARROW_MAGIC or not 0 < n <= size - _HEAD - _TAIL:
            return False
        f.seek(size - _TAIL - n)
        footer = f.read(n)
    return META_FORMAT in footer and FORMAT_NAME.encode() in footer
