"""Turn code addresses into (file, line, column, function) after the run.

Why after: symbolising in the program would cost time on the recording path. The raw
directory lists the loaded objects (`r<R>.mod`) and holds copies of the device images, so
each PC maps to (object, address in the object); one llvm-symbolizer-19 process resolves all
the addresses of the run, object by object, in one batch, and in the same batch the global
objects behind map clauses (`DATA` lines: the symbol table's entry holding an address, which a
separate `llvm-nm` process used to list whole, ~12 ms of CPU on every offloading run).
"""

from __future__ import annotations

import json
from bisect import bisect_right
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from quiver.tracer import tools
from quiver.tracer.rawread import Module

Location = tuple[str, int, int, str]
UNKNOWN: Location = ("??", 0, 0, "??")
DataObject = tuple[int, int, str]   # start (run-time address), size, symbol name


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


def _data_object(line: str, addr: int, bias: int) -> DataObject | None:
    """The object of a `DATA` record of llvm-symbolizer when it holds `addr` (an address in the file):
    the tool answers with the nearest symbol at or below, which may end before `addr`."""
    try:
        data = json.loads(line)["Data"]
        start, size, name = int(data["Start"], 16), int(data["Size"], 16), str(data["Name"])
    except (json.JSONDecodeError, KeyError, TypeError, ValueError):
        return None
    return (start + bias, size, name) if start <= addr < start + size and name else None


def _ints(values: Any) -> list[int]:
    """Python ints of a numpy array, an array.array or a list (symbolising needs no numpy)."""
    return values.tolist() if hasattr(values, "tolist") else [int(v) for v in values]


def symbolize(pcs: Sequence[int], modules: list[Module]) -> list[Location]:
    """Locations of unique pcs (already adjusted for return addresses), in the order given."""
    return symbolize_with_objects(pcs, modules)[0]


def symbolize_with_objects(pcs: Sequence[int], modules: list[Module],
                           data: Sequence[tuple[Module, Iterable[int]]] = ()) -> tuple[list[Location], list[list[DataObject]]]:
    """Locations of unique pcs (already adjusted for return addresses), in the order given; and for
    each (object, run-time addresses) of `data`, the object's symbols holding any of the addresses
    (start, size, name; by start, each once).

    All of it goes to one llvm-symbolizer process (tools.prestart started it with the program), so
    a device image found after the run costs no process start. An object whose path cannot be
    quoted (a double quote or a newline in it) or no longer exists gives UNKNOWN and no symbols."""
    result: list[Location] = [UNKNOWN] * len(pcs)
    objects: list[list[DataObject]] = [[] for _ in data]
    tool = tools.symbolizer()
    if tool is None:
        return result, objects
    lines: list[str] = []
    asked: list[int] = []
    if len(pcs) and modules:
        mods = sorted(modules, key=lambda m: m.lo)
        los = [m.lo for m in mods]
        by_module: dict[int, list[int]] = {}     # module -> positions of its pcs
        for k, pc in enumerate(_ints(pcs)):
            mi = bisect_right(los, pc) - 1
            if mi >= 0 and pc < mods[mi].hi:
                by_module.setdefault(mi, []).append(k)
        pc_list = _ints(pcs)
        for mi in sorted(by_module):
            mod = mods[mi]
            if not _quotable(mod.path):
                continue
            sel = by_module[mi]
            lines += [f'"{mod.path}" 0x{(pc_list[k] - mod.bias) & 0xFFFFFFFFFFFFFFFF:x}' for k in sel]
            asked += sel
    code_lines = len(lines)
    data_asked: list[tuple[int, int]] = []   # (query, address in the file)
    for q, (mod, addrs) in enumerate(data):
        if not _quotable(mod.path):
            continue
        for a in sorted({v & 0xFFFFFFFFFFFFFFFF for v in _ints(addrs)}):
            if a >= mod.bias:
                lines.append(f'DATA "{mod.path}" 0x{a - mod.bias:x}')
                data_asked.append((q, a - mod.bias))
    if not lines:
        return result, objects
    out = tools.answers(tools.symbolizer_argv(tool), lines)
    if len(out) != len(lines):  # the tool failed or printed something unexpected
        return result, objects
    found = [_location(line) for line in out[:code_lines]]
    if None not in found:
        for k, loc in zip(asked, found, strict=True):
            result[k] = loc
    seen: set[tuple[int, int]] = set()
    for (q, addr), line in zip(data_asked, out[code_lines:], strict=True):
        obj = _data_object(line, addr, data[q][0].bias)
        if obj is not None and (q, obj[0]) not in seen:
            seen.add((q, obj[0]))
            objects[q].append(obj)
    for found_q in objects:
        found_q.sort()
    return result, objects


def parse_psource(s: str) -> Location | None:
    """';file;function;line;col;;' (ident_t.psource with -g) -> location."""
    parts = s.split(";")
    if len(parts) < 5 or parts[1] in ("", "unknown"):
        return None
    try:
        return (parts[1], int(parts[3]), int(parts[4]), parts[2])
    except ValueError:
        return None
