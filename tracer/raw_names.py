"""The names of a recording's raw directories beside its log, with the standard library only.

Why apart from tracer/recover.py: every `trace analyze/info/explain/export` asks whether a killed
recording left a raw directory beside the log it reads (to recover it, or to say a recording still
flushes it); recover.py and its imports are loaded only when a name beside the log looks like one.
"""

from __future__ import annotations

import os

RAW_SUFFIX = ".raw"


def raw_prefixes(name: str) -> tuple[str, str]:
    """How the raw directories of log ``name`` start: ``LOG.raw`` and uniquely named ``(.)LOG.raw*``."""
    return f"{name}{RAW_SUFFIX}", f".{name}{RAW_SUFFIX}"


def may_have_recording(log: str) -> bool:
    """Whether a name beside ``log`` starts like one of its raw directories (recover.py's _raw_dirs_of)."""
    parent, name = os.path.split(log)
    try:
        entries = os.listdir(parent or ".")
    except OSError:
        return True
    return any(e.startswith(raw_prefixes(name)) for e in entries)
