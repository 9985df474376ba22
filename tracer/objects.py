"""Extents of the global and stack objects behind mapped sections, found after the run.

Why: a checker must know the host object a section claims to cover ("mapped section larger
than its object"). Heap blocks are recorded as they are allocated; globals come from the
executable's symbol table (llvm-symbolizer's DATA lookups), stack arrays from the debug info (the
variable named in the map clause, declared in the function of the construct).
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Sequence
from pathlib import Path

from quiver.tracer import tools
from quiver.tracer.rawread import Module
from quiver.tracer.symbolize import symbolize_with_objects

BASE_SIZES = {
    "char": 1, "signed char": 1, "unsigned char": 1, "_Bool": 1, "bool": 1, "short": 2, "unsigned short": 2,
    "int": 4, "unsigned int": 4, "long": 8, "unsigned long": 8, "long long": 8, "unsigned long long": 8,
    "float": 4, "double": 8, "long double": 16, "int8_t": 1, "uint8_t": 1, "int16_t": 2, "uint16_t": 2,
    "int32_t": 4, "uint32_t": 4, "int64_t": 8, "uint64_t": 8, "size_t": 8, "ptrdiff_t": 8,
}


def global_objects(exe: Module | None, addrs: Sequence[int]) -> list[tuple[int, int, str]]:
    """(start, size, name) of the executable's data symbols that contain any of `addrs` (finalize asks
    for them in its one llvm-symbolizer batch, tracer/symbolize.py; this asks alone)."""
    if exe is None or len(addrs) == 0 or not Path(exe.path).exists():
        return []
    return symbolize_with_objects([], [], [(exe, addrs)])[1][0]


_ARRAY = re.compile(r"^(.*?)((?:\[\d+\])+)$")
_DIE = re.compile(r"^0x[0-9a-f]+:\s+DW_TAG_")


def type_size(type_name: str) -> int | None:
    """Bytes of a DWARF type as llvm-dwarfdump prints it ("double[16]", "int[4][8]", "vec_t")."""
    t = type_name.strip()
    m = _ARRAY.match(t)
    count = 1
    if m:
        t = m.group(1).strip()
        for d in re.findall(r"\[(\d+)\]", m.group(2)):
            count *= int(d)
    t = re.sub(r"^(const|volatile|struct|union|enum)\s+", "", t)
    if t.endswith("*"):
        return 8 * count
    size = BASE_SIZES.get(t)
    return size * count if size else None


def is_indirect(type_name: str) -> bool:
    """A DWARF type name of a pointer: "double *", and the declarator forms of pointers to arrays and
    functions, "double (*)[16]", "double (*)[]" (a VLA row type), "int (*)(int)". (A reference keeps
    its referent's size, found through its type DIE.)"""
    t = type_name.rstrip()
    return t.endswith("*") or "(*" in t


def stack_objects(exe: str, wanted: set[tuple[str, str]]) -> dict[tuple[str, str], int]:
    """Size of each (function, variable) that is a local of that function, from the debug info."""
    tool = tools.dwarfdump()
    if not tool or not wanted or not Path(exe).exists():
        return {}
    # the whole dump when `trace record` started it with the program (a small executable), else
    # only the DIEs with the wanted names: both list every variable DIE after its parents
    argv = tools.dwarf_all_argv(tool, exe)
    if not tools.started(argv):
        argv = tools.dwarf_names_argv(tool, exe, sorted({v for _, v in wanted}))
    found: dict[tuple[str, str], tuple[str, str]] = {}
    func = None
    block: list[str] = []
    for line in [*tools.output(argv).splitlines(), ""]:
        if _DIE.match(line) or not line.strip():
            _close_block(block, func, wanted, found)
            if "DW_TAG_subprogram" in line:
                func = None
            block = [line]
            continue
        block.append(line)
        m = re.search(r'DW_AT_name\s+\("([^"]+)"\)', line)
        if m and block and "DW_TAG_subprogram" in block[0]:
            func = m.group(1)

    out = {}
    for key, (tname, offset) in found.items():
        if is_indirect(tname):
            continue  # a pointer: the mapped object is its pointee, not the local
        size = type_size(tname) or _die_byte_size(tool, exe, offset)
        if size:
            out[key] = size
    return out


def _close_block(block, func, wanted, found) -> None:
    if not block or "DW_TAG_variable" not in block[0] or func is None:
        return
    text = "\n".join(block)
    name = re.search(r'DW_AT_name\s+\("([^"]+)"\)', text)
    typ = re.search(r'DW_AT_type\s+\((0x[0-9a-f]+) "([^"]+)"\)', text)
    if not name or not typ or "DW_AT_location" not in text or "DW_OP_fbreg" not in text:
        return
    key = (func, name.group(1))
    if key in wanted:
        found[key] = (typ.group(2), typ.group(1))


def _die_byte_size(tool: str, exe: str, offset: str, depth: int = 0) -> int | None:
    """DW_AT_byte_size of a type DIE, following typedefs and array element types a few hops."""
    if depth > 4:
        return None
    proc = subprocess.run([tool, f"--debug-info={offset}", exe], check=False, capture_output=True, text=True)
    text = proc.stdout
    m = re.search(r"DW_AT_byte_size\s+\((0x[0-9a-f]+)\)", text)
    if m:
        size = int(m.group(1), 16)
        if "DW_TAG_array_type" not in text:
            return size
    nxt = re.search(r'DW_AT_type\s+\((0x[0-9a-f]+) "([^"]+)"\)', text)
    if nxt is None:
        return None
    base = BASE_SIZES.get(nxt.group(2)) or _die_byte_size(tool, exe, nxt.group(1), depth + 1)
    if base and "DW_TAG_array_type" in text:
        counts = [int(c, 16) for c in re.findall(r"DW_AT_count\s+\((0x[0-9a-f]+)\)", text)]
        for c in counts:
            base *= c
    return base
