"""Human names of the log's codes: one table each, used by every report, view and export.

Why here: reports (replay/), notebook views and exports (quiver/) all show construct kinds, map
types and allocation kinds; naming them in one place keeps `target data`'s closing brace, a
``release`` clause or an aligned allocation worded the same everywhere.
"""

from __future__ import annotations

from .schema import AllocKind, ConstructKind, MapType

CONSTRUCT_NAMES: dict[int, str] = {
    int(ConstructKind.TARGET): "target",
    int(ConstructKind.TARGET_DATA): "target data",
    int(ConstructKind.TARGET_ENTER_DATA): "target enter data",
    int(ConstructKind.TARGET_EXIT_DATA): "target exit data",
    int(ConstructKind.TARGET_UPDATE): "target update",
    int(ConstructKind.TARGET_DATA_END): "end of target data",
}
# the same keyed by the views' lower-case kind names (``target_data_end``)
CONSTRUCT_NAMES_BY_KEY: dict[str, str] = {ConstructKind(k).name.lower(): v for k, v in CONSTRUCT_NAMES.items()}

ALLOC_NAMES: dict[int, str] = {
    int(AllocKind.MALLOC): "malloc",
    int(AllocKind.CALLOC): "calloc",
    int(AllocKind.REALLOC): "realloc",
    int(AllocKind.ALIGNED): "aligned allocation",
    int(AllocKind.GLOBAL): "global",
    int(AllocKind.STACK): "stack object",
    int(AllocKind.NEW): "new",
    int(AllocKind.NEW_ARRAY): "new[]",
}

# map-type modifiers, in the order a clause writes them
_MODIFIERS = ((MapType.ALWAYS, "always"), (MapType.CLOSE, "close"), (MapType.PRESENT, "present"))


def construct_name(kind: int) -> str:
    return CONSTRUCT_NAMES.get(int(kind), "target construct")


def map_type_name(bits: int, construct_kind: int | None = None) -> str:
    """The map type as written in a clause: ``to``, ``from``, ``tofrom``, ``alloc``, ``release`` or
    ``delete``, after its modifiers (``always, to``). A clause without motion is ``release`` on
    ``target exit data``, else ``alloc`` (what a ``target data`` clause says at both ends)."""
    to, frm = bool(bits & MapType.TO), bool(bits & MapType.FROM)
    if bits & MapType.DELETE:
        base = "delete"
    elif to and frm:
        base = "tofrom"
    elif to:
        base = "to"
    elif frm:
        base = "from"
    elif construct_kind == ConstructKind.TARGET_EXIT_DATA:  # `target data` itself cannot say release
        base = "release"
    else:
        base = "alloc"
    return ", ".join([*(m for bit, m in _MODIFIERS if bits & bit), base])
