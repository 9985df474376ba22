"""Turn code addresses into (file, line, column, function) after the run.

Why after: symbolising in the program would cost time on the recording path. The raw
directory lists the loaded objects (`r<R>.mod`) and holds copies of the device images, so
each PC maps to (object, address in the object); one llvm-symbolizer-19 process resolves all
the addresses of the run, object by object, in one batch.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from quiver.formats.sets import sorted_unique
from quiver.tracer import tools
from quiver.tracer.rawread import Module

Location = tuple[str, int, int, str]
UNKNOWN: Location = ("??", 0, 0, "??")


def dedup_modules(mods: list[Module], renames: dict[str, str]) -> list[Module]:
    """Unique objects, device images replaced by their saved copies."""
    seen, out = set(), []
    for m in mods:
        path = renames.get(m.path, m.path)
        key = (m.lo, m.hi, path)
        if key not in seen:
            seen.add(key)
            out.append(Module(m.bias, m.lo, m.hi, path))
    return out


def _location(line: str) -> Location | None:
    """The location in one JSON record of llvm-symbolizer, None when the line is not one."""
    try:
        rec = json.loads(line)
    except json.JSONDecodeError:
        return None
    frames = rec.get("Symbol") or []
    f = frames[0] if frames else {}
    return (f.get("FileName") or "??", int(f.get("Line") or 0), int(f.get("Column") or 0), f.get("FunctionName") or "??")


def _quotable(path: str) -> bool:
    """A path llvm-symbolizer can be given on an input line (between double quotes)."""
    return '"' not in path and "\n" not in path and Path(path).exists()


def symbolize(pcs: np.ndarray, modules: list[Module]) -> list[Location]:
    """Locations of unique pcs (already adjusted for return addresses), in the order given.

    All objects' addresses go to one llvm-symbolizer process (tools.prestart started it with the
    program), so a device image found after the run costs no process start. An object whose path
    cannot be quoted (a double quote or a newline in it) or no longer exists gives UNKNOWN."""
    result: list[Location] = [UNKNOWN] * len(pcs)
    if len(pcs) == 0 or not modules:
        return result
    tool = tools.symbolizer()
    mods = sorted(modules, key=lambda m: m.lo)
    los = np.array([m.lo for m in mods], dtype=np.uint64)
    his = np.array([m.hi for m in mods], dtype=np.uint64)
    idx = np.searchsorted(los, pcs, side="right") - 1
    ok = (idx >= 0) & (pcs < his[np.maximum(idx, 0)])
    if tool is None:
        return result
    lines: list[str] = []
    asked: list[int] = []
    for mi in sorted_unique(idx[ok]).tolist():
        mod = mods[mi]
        if not _quotable(mod.path):
            continue
        sel = np.nonzero(ok & (idx == mi))[0]
        lines += [f'"{mod.path}" 0x{o:x}' for o in (pcs[sel] - np.uint64(mod.bias)).tolist()]
        asked += sel.tolist()
    if not lines:
        return result
    found = [_location(line) for line in tools.output(tools.symbolizer_argv(tool), "\n".join(lines) + "\n").splitlines()]
    if len(found) != len(asked) or None in found:  # the tool failed or printed something unexpected
        return result
    for k, loc in zip(asked, found, strict=True):
        result[k] = loc
    return result


def parse_psource(s: str) -> Location | None:
    """';file;function;line;col;;' (ident_t.psource with -g) -> location."""
    parts = s.split(";")
    if len(parts) < 5 or parts[1] in ("", "unknown"):
        return None
    try:
        return (parts[1], int(parts[3]), int(parts[4]), parts[2])
    except ValueError:
        return None
