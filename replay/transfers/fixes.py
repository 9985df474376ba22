"""The concrete change that removes each kind of wasted data movement, as words for a finding's fix."""

from __future__ import annotations

from quiver.formats import ConstructKind, MapType


def without_direction(direction: str, kind_code: int, map_type: int | None, map_name: str, clause: str,
                      where: str) -> str:
    """Stop copying ``clause`` in ``direction`` ("to" or "from") at the construct at ``where``: remove the
    update, or rewrite the map type without that direction."""
    if kind_code == ConstructKind.TARGET_UPDATE:
        return f"remove `target update {direction}({clause})` at {where}"
    bits = int(map_type or 0)
    keep_to = bool(bits & MapType.TO) and direction != "to"
    keep_from = bool(bits & MapType.FROM) and direction != "from"
    if kind_code == ConstructKind.TARGET_EXIT_DATA and not keep_from:
        new = "release"             # (a `target data` clause has no release: alloc there)
    else:
        new = "tofrom" if keep_to and keep_from else "to" if keep_to else "from" if keep_from else "alloc"
    if bits & MapType.IMPLICIT:
        return f"add `map({new}: {clause})` to the construct at {where} (the implicit map is `{map_name}`)"
    return f"change `map({map_name}: {clause})` to `map({new}: {clause})` at {where}"


def unused_transfer_fix(direction: str, kind_code: int, map_type: int | None, map_name: str, clause: str,
                        where: str, used: int, moved: int, wasted: int) -> str:
    if wasted < moved:
        side = "the device" if direction == "to" else "the host"
        return (f"only {used} of {moved} bytes copied were read on {side}: narrow the section "
                f"`{clause}` at {where} to the part that is used")
    fix = without_direction(direction, kind_code, map_type, map_name, clause, where)
    return fix + (": nothing reads these bytes" if kind_code == ConstructKind.TARGET_UPDATE else "")


def duplicate_fix(direction: str, kind_code: int, map_type: int | None, map_name: str, clause: str, where: str,
                  device: int, held: int, duplicate: int, unchanged: int, moved: int, runs: int) -> str:
    """``unchanged``: the bytes of these copies that changed nothing at all (duplicate or round trip)."""
    if direction == "to" and held < duplicate:
        # re-sent after the device copy was released: keep the copy instead
        many = f" (it ran {runs} times)" if runs > 1 else ""
        return (f"keep '{clause}' on device {device} instead of mapping it again at {where}{many}: map it once in "
                f"an enclosing `#pragma omp target data map({map_name.split(', ')[-1]}: {clause})` (or `target "
                f"enter data` before and `target exit data` after the repeated constructs)")
    if unchanged < moved:
        what = "the host wrote" if direction == "to" else "the device wrote"
        return (f"copy only what changed: narrow `{clause}` at {where} to a sub-section covering the elements "
                f"{what} since the last copy ({unchanged} of {moved} bytes were already there)")
    if kind_code != ConstructKind.TARGET_UPDATE and int(map_type or 0) & MapType.ALWAYS:
        return f"drop `always` from `map({map_name}: {clause})` at {where}: the destination already holds the bytes"
    return without_direction(direction, kind_code, map_type, map_name, clause, where) + \
        ": the destination already holds these bytes"


def round_trip_fix(kind_code: int, map_type: int | None, map_name: str, clause: str, where: str, unchanged: int,
                   moved: int) -> str:
    if unchanged < moved:
        return (f"copy back only what the device changed: narrow `{clause}` at {where} to a sub-section "
                f"({unchanged} of {moved} bytes came back unchanged)")
    return without_direction("from", kind_code, map_type, map_name, clause, where) + \
        ": the device never changes these bytes"


def repeated_allocation_fix(map_name: str, clause: str, where: str, device: int, times: int) -> str:
    kind = map_name.split(", ")[-1] or "alloc"
    return (f"'{clause}' was allocated on device {device} {times} times at {where}: map it once in an enclosing "
            f"`#pragma omp target data map({kind}: {clause})` around the repeated constructs (or `target enter "
            f"data` before them and `target exit data` after) so that each finds it present")


def unused_allocation_fix(kind_code: int, map_name: str, clause: str, where: str, implicit: bool) -> str:
    if kind_code == ConstructKind.TARGET_UPDATE:
        return f"remove `target update` of `{clause}` at {where}"
    if implicit:
        return (f"no kernel reads or writes '{clause}': stop referring to it in the target region at {where} "
                f"(it is mapped implicitly)")
    return f"remove `map({map_name}: {clause})` from the construct at {where}: no kernel reads or writes it"
