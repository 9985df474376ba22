"""Turn code addresses into (file, line, column, function) after the run.

Why after: symbolising in the program would cost time on the recording path. The raw
directory lists the loaded objects (`r<R>.mod`) and holds copies of the device images, so
each PC maps to (object, address in the object); llvm-symbolizer-19 resolves all the
addresses of one object in one batch.
"""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
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


def _symbolize_object(tool: str, path: str, offsets: np.ndarray) -> list[Location]:
    if not Path(path).exists():
        return [UNKNOWN] * len(offsets)
    stdin = "\n".join(f"0x{int(o):x}" for o in offsets) + "\n"
    out: list[Location] = []
    for line in tools.output(tools.symbolizer_argv(tool, path), stdin).splitlines():
        try:
            rec = json.loads(line)
        except json.JSONDecodeError:
            continue
        frames = rec.get("Symbol") or []
        f = frames[0] if frames else {}
        file = f.get("FileName") or "??"
        func = f.get("FunctionName") or "??"
        out.append((file, int(f.get("Line") or 0), int(f.get("Column") or 0), func))
    if len(out) != len(offsets):  # the tool failed or printed something unexpected
        return [UNKNOWN] * len(offsets)
    return out


def symbolize(pcs: np.ndarray, modules: list[Module]) -> list[Location]:
    """Locations of unique pcs (already adjusted for return addresses), in the order given."""
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
    groups = [(mods[int(mi)], np.nonzero(ok & (idx == mi))[0]) for mi in np.unique(idx[ok])]
    with ThreadPoolExecutor(max(1, min(4, len(groups)))) as pool:  # one symbolizer process per object
        found = pool.map(lambda g: _symbolize_object(tool, g[0].path, pcs[g[1]] - np.uint64(g[0].bias)), groups)
        for (_, sel), locs in zip(groups, found, strict=True):
            for k, loc in zip(sel, locs, strict=True):
                result[int(k)] = loc
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
