"""The names of a recording's raw directories beside its log, with the standard library only.

Why apart from tracer/recover.py: every `trace analyze/info/explain/export` asks whether a killed
recording left a raw directory beside the log it reads; recover.py and its imports are loaded only
when one may be there (or the log is missing: a recording may still be flushing).
"""

from __future__ import annotations

import os

RAW_SUFFIX = ".raw"


def raw_prefixes(name: str) -> tuple[str, str]:
    """How the raw directories of log ``name`` start: ``LOG.raw`` and uniquely named ``(.)LOG.raw*``."""
    return f"{name}{RAW_SUFFIX}", f".{name}{RAW_SUFFIX}"


def may_have_recording(log: str) -> bool:
    """Whether ``log`` is missing or has a name beside it that starts like one of its raw directories."""
    parent, name = os.path.split(log)
    try:
        entries = os.listdir(parent or ".")
    except OSError:
        return True
    return name not in entries or any(e.startswith(raw_prefixes(name)) for e in entries)
