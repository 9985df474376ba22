"""Render map clauses as the user wrote them and rewrite them into fixes.

The log keeps a clause as map-type bits (libomptarget's OMP_TGT_MAPTYPE_*) plus the text of its list
item (``b[0:N/2]``); reports need the clause back in source form (``map(alloc: b[0:N/2])``) and the
concrete change that fixes it (``map(to: b[0:N/2])``, ``b[0:N]``). Every report and advice module
goes through these functions so a clause reads the same everywhere.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from quiver.formats import ConstructKind, MapType
from quiver.formats.names import map_type_name

_SECTION = re.compile(r"^(?P<base>.*)\[(?P<lo>[^\[\]:]*):(?P<len>[^\[\]]*)\]$")

def render_clause(bits: int, item: str, construct_kind: int | None = None) -> str:
    """The clause as written: ``map(alloc: b[0:N])``, or ``to(a[0:N])`` on a ``target update``."""
    if construct_kind == ConstructKind.TARGET_UPDATE:
        return f"{'from' if bits & MapType.FROM and not bits & MapType.TO else 'to'}({item})"
    return f"map({map_type_name(bits, construct_kind)}: {item})"


def with_direction(bits: int, to: bool = False, frm: bool = False) -> int:
    """Map-type bits with copy-in and/or copy-out added (``alloc`` + to = ``to``, ``to`` + from = ``tofrom``)."""
    out = bits & ~int(MapType.DELETE)
    if to:
        out |= int(MapType.TO)
    if frm:
        out |= int(MapType.FROM)
    return out


@dataclass(frozen=True)
class Section:
    """An array section ``base[lower:length]`` parsed from a clause item (last dimension only)."""

    base: str
    lower: str
    length: str

    def text(self) -> str:
        return f"{self.base}[{self.lower}:{self.length}]"

    def lower_int(self) -> int | None:
        try:
            return int(self.lower.strip() or "0", 0)
        except ValueError:
            return None


def int_expression(text: str) -> int | None:
    """The value of an integer literal expression (``64 / 2``, ``(8 * 4)``), else None."""
    try:
        tree = ast.parse(text.strip(), mode="eval").body
    except SyntaxError:
        return None

    def value(node: ast.AST) -> int | None:
        if isinstance(node, ast.Constant) and type(node.value) is int:
            return node.value
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub, ast.Mult, ast.Div)):
            a, b = value(node.left), value(node.right)
            if a is None or b is None or (isinstance(node.op, ast.Div) and b == 0):
                return None
            ops = {ast.Add: a + b, ast.Sub: a - b, ast.Mult: a * b}
            return a // b if isinstance(node.op, ast.Div) else ops[type(node.op)]
        return None

    return value(tree)


def element_width(item: str, nbytes: int) -> int:
    """Element size implied by a clause that maps ``nbytes`` for ``b[lo:LEN]`` with a literal LEN, else 0."""
    sec = parse_section(item)
    if sec is None:
        return 0
    count = int_expression(sec.length)
    if count is None:
        return 0
    width = nbytes // count if count > 0 and nbytes % count == 0 else 0
    return width if width in (1, 2, 4, 8, 16) else 0


def parse_section(item: str) -> Section | None:
    m = _SECTION.match(item.strip())
    if not m:
        return None
    return Section(m["base"], m["lo"].strip(), m["len"].strip())


def resize_item(item: str, length: str) -> str:
    """``b[0:SIZE/2]`` with a new length (``b[0:SIZE]``); a plain variable becomes ``v[0:length]``."""
    sec = parse_section(item)
    if sec is None:
        return f"{item}[0:{length}]"
    return Section(sec.base, sec.lower or "0", length).text()
