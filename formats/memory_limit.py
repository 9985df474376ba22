"""Refuse, before allocating, state larger than this machine's memory.

Why: the checkers' shadows are sized from the mapped sections of a log (zeroed or uninitialised
virtual memory, paged in only where used); a damaged or crafted size of 2^40 would ask for TiBs and
end in a MemoryError or the OOM killer instead of a one-line "unusable input" (exit 2).
"""

from __future__ import annotations

import os

from .errors import LogFormatError


def machine_memory() -> int | None:
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError):
        return None


def check_fits(nbytes: int, what: str) -> None:
    """LogFormatError when ``nbytes`` of ``what`` exceed the machine's physical memory."""
    memory = machine_memory()
    if memory is not None and nbytes > memory:
        raise LogFormatError(f"the log needs {nbytes >> 20} MiB for {what}, more than this machine's "
                             f"{memory >> 20} MiB: a damaged size, or analyse it on a larger machine")
