"""Name a host object (an ALLOC row) the way the program's source does.

Why: a heap block has no name in the log, only its allocation site; the user knows it as ``w`` in
``double *w = malloc(...)``. And optimised builds call the allocator the compiler chose (malloc +
memset becomes calloc), while the user wrote malloc: the report names the call the source shows.
Globals and stack objects (ALLOC op 5 / 6) carry their name from the symbol table or debug info.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from quiver.formats import AllocKind
from quiver.formats.names import ALLOC_NAMES

HEAP_CALLS = ("malloc", "calloc", "realloc", "aligned_alloc", "posix_memalign", "memalign", "omp_alloc",
              "new")
_ASSIGN = re.compile(r"(?P<lhs>[A-Za-z_][\w.\->\[\]]*?)\s*(?:\[[^\]=]*\])?\s*=\s*(?:\([^()]*\)\s*)*"
                     r"(?:std::)?(?P<call>" + "|".join(HEAP_CALLS) + r")\b")
_CALL = re.compile(r"\b(?:std::)?(?P<call>" + "|".join(HEAP_CALLS) + r")\b")
_MEMALIGN = re.compile(r"posix_memalign\s*\(\s*\(?[^&,]*&\s*(?P<lhs>[A-Za-z_]\w*)")


@dataclass(frozen=True)
class HostObject:
    name: str          # the variable ("w", "s.data"), or "" when the source does not say
    allocator: str     # "malloc", "calloc", ..., "global", "stack object"


@lru_cache(maxsize=256)
def _source_line(file: str, line: int) -> str:
    if line <= 0:
        return ""
    try:
        with Path(file).open(errors="replace") as fh:
            for n, text in enumerate(fh, 1):
                if n == line:
                    return text
    except OSError:
        return ""
    return ""


def host_object(op: int, name: str, file: str, line: int) -> HostObject:
    """The object an ALLOC row stands for: op (ALLOC op code), its name string, its site."""
    recorded = ALLOC_NAMES.get(op, "allocation")
    if op in (AllocKind.GLOBAL, AllocKind.STACK):
        return HostObject(name, recorded)
    text = _source_line(file, line).split("//", 1)[0]
    m = _ASSIGN.search(text)
    if m is None and "posix_memalign" in text:
        pm = _MEMALIGN.search(text)
        return HostObject(pm["lhs"] if pm else "", "posix_memalign")
    call = m["call"] if m else (_CALL.search(text)["call"] if _CALL.search(text) else "")
    lhs = m["lhs"] if m else ""
    return HostObject(lhs.rsplit("->", 1)[-1] if lhs else "", source_allocator(call, recorded))


def source_allocator(call: str, recorded: str) -> str:
    """The allocator the source names when it differs only by the compiler's rewrite (malloc vs calloc)."""
    if call in ("malloc", "calloc") and recorded in ("malloc", "calloc"):
        return call
    return recorded
