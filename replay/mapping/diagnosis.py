"""Turn VSM detections into findings a developer can act on: what, where, why (history) and the fix.

Why separate: the two engines (C VSM kernel, Python oracle) only say *which bytes went bad where*;
wording, element indices, the history of the first bad byte and the concrete clause change are the
same whichever engine found it, and live here. docs/analyze.md lists the fix rules.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

from quiver.formats import ConstructKind, DataOpKind, EventKind, EventLog, MapType
from quiver.formats.names import construct_name
from quiver.replay.mapping.clauses import (
    element_width,
    parse_section,
    render_clause,
    resize_item,
    with_direction,
)
from quiver.replay.mapping.events import (
    OVERFLOW,
    S_CV_INIT,
    S_CV_VALID,
    S_OV_INIT,
    S_OV_VALID,
    SECTION_OVERFLOW,
    STALE,
    UNMAPPED,
    UUM,
    ControlEvents,
    Detection,
    fetch_rows,
)
from quiver.replay.mapping.host_objects import HostObject, host_object
from quiver.replay.report.findings import Finding, FindingKind, HistoryStep, Related, Site, merge_findings

# what a DATA_OP with no construct (id -1) is: a device memory routine's copy
ROUTINE = "omp_target_memcpy"


def is_routine_copy(row: dict | None) -> bool:
    """Whether a row is a transfer by a device memory routine (``omp_target_memcpy``, ``_rect``, ``_async``)."""
    return bool(row and row["kind"] == EventKind.DATA_OP and row["id"] < 0
                and row["op"] in (DataOpKind.TRANSFER_TO, DataOpKind.TRANSFER_FROM))


KINDS = {UUM: FindingKind.USE_OF_UNINITIALIZED_MEMORY, STALE: FindingKind.USE_OF_STALE_DATA,
         OVERFLOW: FindingKind.BUFFER_OVERFLOW, SECTION_OVERFLOW: FindingKind.BUFFER_OVERFLOW,
         UNMAPPED: FindingKind.UNMAPPED_MEMORY}


@dataclass
class Context:
    """The log's control structure as Python dicts (constructs, clauses, data ops, allocations)."""

    log: EventLog
    constructs: dict[tuple[int, int], dict] = field(default_factory=dict)
    clauses: dict[int, dict] = field(default_factory=dict)
    by_construct: dict[tuple[int, int], list[dict]] = field(default_factory=dict)
    events: dict[int, dict] = field(default_factory=dict)      # every control row, by global index
    allocs: list[dict] = field(default_factory=list)
    rows: dict[int, dict] = field(default_factory=dict)        # fetched access rows

    @classmethod
    def build(cls, log: EventLog, control: ControlEvents) -> Context:
        ctx = cls(log)
        cols = {c: control[c].tolist() for c in control.cols}
        for i, g in enumerate(control.event.tolist()):
            row = {c: cols[c][i] for c in cols}
            row["g"] = g
            ctx.events[g] = row
            kind = row["kind"]
            if kind == EventKind.CONSTRUCT_BEGIN:
                ctx.constructs[(row["rank"], row["id"])] = row
            elif kind == EventKind.MAP_CLAUSE:
                ctx.clauses[g] = row
                ctx.by_construct.setdefault((row["rank"], row["id"]), []).append(row)
            elif kind == EventKind.ALLOC:
                ctx.allocs.append(row)
        return ctx

    # ---- names and sites --------------------------------------------------------------------
    def site(self, loc: int, side: str = "host", device: int = -1, rank: int = 0, thread: int = 0) -> Site:
        sl = self.log.location(loc)
        return Site(file=sl.file or "??", line=sl.line, function=source_function(sl.function), side=side,
                    device=device, rank=rank, thread=thread)

    def string(self, sid: int) -> str:
        return self.log.string(sid)

    def access(self, g: int) -> dict | None:
        """The row of a detection's access: an ACCESS row (fetched), or the DATA_OP of a device memory
        routine (``omp_target_memcpy``: its host side read or written, or a device copy it read)."""
        return self.rows.get(g) or self.events.get(g)

    def construct_of(self, row: dict) -> dict | None:
        return self.constructs.get((row["rank"], row["id"]))

    def construct_kind(self, row: dict) -> int | None:
        c = self.construct_of(row)
        return c["op"] if c else None

    def clause_text(self, clause: dict) -> str:
        item = self.string(clause["aux2"]) or self.string(clause["name"]) or "?"
        return render_clause(clause["op"], item, self.construct_kind(clause))

    def clause_item(self, clause: dict | None, fallback: str) -> str:
        if clause is None:
            return fallback
        return self.string(clause["aux2"]) or self.string(clause["name"]) or fallback

    def clause_for(self, construct_key: tuple[int, int], name: int, host: int) -> dict | None:
        """The clause of a construct that names this variable (by name, else by address)."""
        cands = self.by_construct.get(construct_key, [])
        for c in cands:
            if name >= 0 and c["name"] == name:
                return c
        for c in cands:
            if c["addr"] <= host < c["addr"] + max(c["size"], 1):
                return c
        return None

    def allocation(self, det: Detection) -> dict | None:
        """The ALLOC event of the detection's host object (the latest one before the detection)."""
        if det.object_lo < 0:
            return None
        found = None
        for a in self.allocs:
            if a["g"] > det.event:
                break
            if a["rank"] == det.rank and a["addr"] == det.object_lo and a["addr"] + a["size"] == det.object_hi:
                found = a
        return found

    def host_object(self, alloc: dict) -> HostObject:
        """The variable and allocator the source names for an ALLOC row."""
        sl = self.log.location(alloc["loc"])
        return host_object(alloc["op"], self.string(alloc["name"]), sl.file or "", sl.line)

    def length_expression(self, nbytes: int, width: int) -> str:
        """A length as the program spells it when some clause maps exactly nbytes from index 0 (``SIZE``)."""
        for c in self.clauses.values():
            sec = parse_section(self.string(c["aux2"]))
            if c["size"] == nbytes and sec is not None and sec.lower_int() == 0 and sec.length:
                return sec.length
        return str(nbytes // width) if width else f"{nbytes} bytes"


_OFFLOAD_ENTRY = re.compile(r"^__omp_offloading_[0-9a-f]+_[0-9a-f]+_(?P<fn>.+?)_l\d+")


def source_function(name: str) -> str:
    """The user's function for compiler-outlined code (``__omp_offloading_..._main_l8...`` -> ``main``)."""
    m = _OFFLOAD_ENTRY.match(name)
    if m:
        return m["fn"]
    head = name.split(".omp_outlined", 1)[0].removesuffix("_debug__")
    return head or name


def guess_width(det: Detection) -> int:
    """Element size: the recorded access width, else the size of a single (uncoalesced) access, else 0."""
    if det.width > 0:
        return det.width
    if det.access_size in (1, 2, 4, 8, 16) and det.kind != SECTION_OVERFLOW:
        return det.access_size
    return 0


def state_text(state: int) -> str:
    def copy(valid: int, init: int) -> str:
        return "valid" if state & valid else ("stale" if state & init else "uninitialised")

    return f"host copy {copy(S_OV_VALID, S_OV_INIT)}, device copy {copy(S_CV_VALID, S_CV_INIT)}"


@dataclass
class Described:
    """What the words of one finding are built from."""

    det: Detection
    var: str
    width: int
    clause: dict | None
    section_lo: int
    section_bytes: int

    def index(self, addr: int) -> int:
        """Element index of a host address: from the host object's start if known, else the section's."""
        w = self.width or 1
        if self.det.object_lo >= 0:
            return (addr - self.det.object_lo) // w
        return (addr - self.section_lo) // w

    def extent(self) -> str:
        if self.det.kind == UNMAPPED:
            at = f"{'element' if self.width else 'byte'} {self.index(self.det.host_addr)} accessed"
            size = self.det.object_hi - self.det.object_lo
            if not size:   # known only through the pointer the construct passed
                return f"{self.var}: points to host memory no clause maps (not a heap block or global); {at}"
            held = f"{size // self.width} {self.width}-byte elements" if self.width else f"{size} bytes"
            return f"{self.var}: host object of {held}, none mapped; {at}"
        if self.width:
            n = self.section_bytes // self.width
            return (f"{self.var}: {n} element{'s' if n != 1 else ''} mapped ({self.width}-byte), "
                    f"element {self.index(self.det.host_addr)} accessed")
        return (f"{self.var}: {self.section_bytes} bytes mapped (element size unknown), "
                f"byte {self.index(self.det.host_addr)} accessed")


def describe(ctx: Context, det: Detection) -> Described:
    if det.kind == UNMAPPED:
        alloc = ctx.allocation(det)
        var = "?"
        if alloc is not None:
            obj = ctx.host_object(alloc)
            var = obj.name or f"{obj.allocator} block at {ctx.site(alloc['loc']).short()}"
        elif det.name >= 0:   # reached through a firstprivate pointer of the construct
            var = ctx.string(det.name) or "?"
        return Described(det, var, guess_width(det), None, det.object_lo, det.object_hi - det.object_lo)
    var = ctx.string(det.name) or "?"
    clause = ctx.clauses.get(det.clause_event)
    entry = ctx.events.get(det.entry_event)
    if det.kind == SECTION_OVERFLOW and clause is None:
        entry = ctx.events.get(det.event)    # a copy that no clause explains
    if entry is not None:
        lo, nbytes = entry["addr"], entry["size"]
    elif clause is not None:
        lo, nbytes = clause["addr"], clause["size"]
    else:
        lo, nbytes = det.host_addr, 0
    width = guess_width(det)
    if not width and clause is not None:   # vectorised accesses: the clause's section says it
        width = element_width(ctx.string(clause["aux2"]), clause["size"])
    return Described(det, var, width, clause, lo, nbytes)


# ---- history ------------------------------------------------------------------------------------

def history_steps(ctx: Context, d: Described) -> list[HistoryStep]:
    det = d.det
    steps = []
    for g, state in det.history:
        row = ctx.events.get(g) or ctx.rows.get(g)
        if row is None:
            continue
        steps.append(HistoryStep(operation_text(ctx, d, row), operation_site(ctx, row), state_text(state)))
    access = ctx.access(det.event)
    if access is not None and det.kind in (UUM, STALE):
        side = f"device {det.device}" if det.device >= 0 else "the host"
        by = f" by {ROUTINE}" if is_routine_copy(access) else ""
        steps.append(HistoryStep(f"read on {side}{by} (first bad access)", operation_site(ctx, access), ""))
    return steps


def operation_site(ctx: Context, row: dict) -> Site:
    side = "device" if row["kind"] == EventKind.ACCESS and row["device"] >= 0 else "host"
    loc = row["loc"]
    if loc < 0 and row["kind"] == EventKind.DATA_OP:   # a data op happens at its construct
        construct = ctx.construct_of(row)
        loc = construct["loc"] if construct else loc
    return ctx.site(loc, side, row["device"] if side == "device" else -1, row["rank"], row["thread"])


def operation_text(ctx: Context, d: Described, row: dict) -> str:
    kind = row["kind"]
    if kind == EventKind.ACCESS:
        what = "write" if row["op"] & 1 else "read"
        return f"device {what} on device {row['device']}" if row["device"] >= 0 else f"host {what}"
    if kind == EventKind.ALLOC:
        return f"host memory allocated ({ctx.host_object(row).allocator}, {row['size']} bytes)"
    if kind == EventKind.DATA_OP:
        construct = ctx.construct_of(row)
        by = f" by {construct_name(construct['op'])}" if construct else (f" by {ROUTINE}" if is_routine_copy(row)
                                                                        else "")
        dev = row["device"]
        op = row["op"]
        if op in (DataOpKind.ALLOC, DataOpKind.ASSOCIATE):
            clause = f" ({ctx.clause_text(d.clause)})" if d.clause and row["g"] == d.det.entry_event else ""
            return f"device {dev} copy allocated{by}{clause}, not initialised"
        if op == DataOpKind.TRANSFER_TO:
            return f"copied host -> device {dev}{by}"
        if op == DataOpKind.TRANSFER_FROM:
            return f"copied device {dev} -> host{by}"
        return f"device {dev} copy released{by}"
    return EventKind(kind).name.lower()


# ---- fixes --------------------------------------------------------------------------------------

def _at(ctx: Context, row: dict | None) -> str:
    if row is None:
        return ""
    s = ctx.site(row["loc"])
    return f" at {s.short()}" if s.line > 0 else ""


def _line_of(ctx: Context, row: dict | None) -> str:
    if row is None:
        return "?"
    s = ctx.site(row["loc"])
    return str(s.line) if s.line > 0 else s.short()


def _change(ctx: Context, clause: dict, bits: int) -> str:
    new = render_clause(bits, ctx.clause_item(clause, "?"), ctx.construct_kind(clause))
    return f"change `{ctx.clause_text(clause)}`{_at(ctx, clause)} to `{new}`"


def fix_device_read(ctx: Context, d: Described) -> str:
    det, clause = d.det, d.clause
    item = ctx.clause_item(clause, d.var)
    access = ctx.access(det.event)
    construct = ctx.construct_of(access) if access else None
    if construct is None and is_routine_copy(access):   # a memcpy from the device copy: before the memcpy
        construct = access
    if det.kind == UUM:
        if clause is not None and not clause["op"] & MapType.TO:
            return _change(ctx, clause, with_direction(clause["op"], to=True))
        if clause is None:
            name = construct_name(construct["op"]) if construct and construct is not access else "target"
            return f"map `{d.var}` with `map(to: {item})` on the {name} construct{_at(ctx, construct)}"
        return (f"initialise `{d.var}` on the host before{_at(ctx, clause)}: its host copy held uninitialised "
                "data when it was copied to the device (see history)")
    return f"add `#pragma omp target update to({item})` before line {_line_of(ctx, construct)}" \
           + (f" ({ctx.site(construct['loc']).file})" if construct else "")


def fix_host_read(ctx: Context, d: Described) -> str:
    det, clause = d.det, d.clause
    item = ctx.clause_item(clause, d.var)
    read = ctx.access(det.event)
    if det.kind == UUM:
        source = _last_copy_out(ctx, det)
        src_clause = ctx.clause_for((source["rank"], source["id"]), det.name, source["addr"]) if source else None
        target = src_clause or clause
        if src_clause is not None and ctx.construct_kind(src_clause) == ConstructKind.TARGET_UPDATE:
            # a motion clause copies nothing in: the device copy must start from the host's values where
            # it was mapped (`alloc` -> `to`), else the bytes no kernel wrote go back uninitialised
            target = clause if clause is not None and clause is not src_clause else None
            when = f" when `target update` at line {_line_of(ctx, source)} copied it back"
        else:
            when = " when it was copied back"
        if target is not None and not target["op"] & MapType.TO:
            return (_change(ctx, target, with_direction(target["op"], to=True))
                    + f" (its device copy still held bytes the device never wrote{when})")
        return f"write all of `{d.var}` on the device before it is copied back{_at(ctx, src_clause or target)}"
    if det.release_event < 0:
        return f"add `#pragma omp target update from({item})` before line {_line_of(ctx, read)}"
    release = ctx.events.get(det.release_event)
    rconstruct = ctx.construct_of(release) if release else None
    rclause = ctx.clause_for((release["rank"], release["id"]), det.name, release["addr"]) if release else None
    if rclause is not None and rclause["op"] & MapType.FROM and not rclause["op"] & MapType.DELETE:
        if rclause["size"] < d.section_bytes:
            return _enlarge(ctx, d, rclause, d.section_lo + d.section_bytes - 1)
        return f"add `#pragma omp target update from({item})` before line {_line_of(ctx, rconstruct)}"
    if rclause is not None and not rclause["op"] & MapType.DELETE:
        return _change(ctx, rclause, with_direction(rclause["op"], frm=True))
    structured = clause is not None and ctx.construct_kind(clause) in (ConstructKind.TARGET,
                                                                       ConstructKind.TARGET_DATA)
    if structured and rclause is None:
        return _change(ctx, clause, with_direction(clause["op"], frm=True))
    return f"add `#pragma omp target update from({item})` before line {_line_of(ctx, rconstruct)}"


def _last_copy_out(ctx: Context, det: Detection) -> dict | None:
    for g, _state in reversed(det.history):
        row = ctx.events.get(g)
        if row and row["kind"] == EventKind.DATA_OP and row["op"] == DataOpKind.TRANSFER_FROM:
            return row
    return None


def _enlarge(ctx: Context, d: Described, clause: dict, last_byte: int) -> str:
    """Enlarge a clause's section so it covers ``last_byte`` (and the whole host object when known)."""
    width = d.width
    end = last_byte + 1
    end = max(end, d.det.object_hi)
    nbytes = end - clause["addr"]
    if width and nbytes % width:
        nbytes += width - nbytes % width
    item = ctx.clause_item(clause, d.var)
    sec = parse_section(item)
    if sec is not None and sec.lower_int() not in (0, None):
        length = f"{nbytes // width}" if width else f"{nbytes} bytes"
    else:
        length = ctx.length_expression(nbytes, width)
    return f"enlarge `{item}` to `{resize_item(item, length)}` in `{ctx.clause_text(clause)}`{_at(ctx, clause)}"


def fix_overflow(ctx: Context, d: Described) -> str:
    det, clause = d.det, d.clause
    if clause is None:
        return f"map all of `{d.var}` that the kernel accesses"
    if det.object_hi >= 0 and det.last_host_addr >= det.object_hi:
        count = (det.object_hi - det.object_lo) // (d.width or 1)
        unit = "elements" if d.width else "bytes"
        return (f"the kernel accesses past the end of `{d.var}` itself ({count} {unit}): fix the index or the "
                f"loop bound at line {ctx.site(det.loc).line}")
    return _enlarge(ctx, d, clause, det.last_host_addr)


def fix_unmapped(ctx: Context, d: Described) -> str:
    """Map the whole host object on the construct of the access (or on the enclosing target data)."""
    det = d.det
    access = ctx.rows.get(det.event)
    construct = ctx.construct_of(access) if access else None
    size = det.object_hi - det.object_lo or det.last_host_addr + 1 - det.object_lo
    length = ctx.length_expression(size, d.width) if d.width else f"{size} / sizeof({d.var}[0])"
    direction = "from" if access and access["op"] & 1 else "to"
    where = f"the {construct_name(construct['op'])} construct{_at(ctx, construct)}" if construct else \
        "the target construct"
    return (f"map it: add `map({direction}: {d.var}[0:{length}])` to {where}, or to the enclosing "
            "`target data` region (tofrom if the kernel also writes what the host reads back; "
            "or pass device memory with is_device_ptr)")


def fix_section(ctx: Context, d: Described) -> str:
    det, clause = d.det, d.clause
    keep = det.object_hi - d.section_lo
    if clause is None:
        return f"copy at most {keep} bytes of `{d.var}` (its host object holds {det.object_hi - det.object_lo})"
    item = ctx.clause_item(clause, d.var)
    length = ctx.length_expression(keep, d.width)
    return f"shrink `{item}` to `{resize_item(item, length)}` in `{ctx.clause_text(clause)}`{_at(ctx, clause)}"


# ---- messages -----------------------------------------------------------------------------------

def message(ctx: Context, d: Described) -> str:
    det = d.det
    if det.kind == SECTION_OVERFLOW:
        bits = d.clause["op"] if d.clause else (MapType.TO if _is_copy(ctx, det, DataOpKind.TRANSFER_TO) else
                                                MapType.FROM)
        what = {MapType.TO: "copy-in", MapType.FROM: "copy-out"}.get(bits & (MapType.TO | MapType.FROM),
                                                                   "copy-in and copy-out")
        if not bits & (MapType.TO | MapType.FROM):
            what = "device allocation"
        return (f"{what} of `{d.var}` goes past the end of its host object: {d.section_bytes} bytes mapped, "
                f"the host object has {det.object_hi - d.section_lo} bytes from the section start")
    where = f"on device {det.device}" if det.device >= 0 else "on the host"
    if det.kind == UNMAPPED:
        access = ctx.access(det.event)
        what = "write" if access and access["op"] & 1 else "read"
        obj = f"the memory `{d.var}` points to" if det.object_hi == det.object_lo else f"`{d.var}`"
        return (f"{what} {where} of {obj}, host memory that no map clause maps: the kernel dereferences a "
                "host address (on a GPU this reads or corrupts unrelated memory)")
    other = f"device {det.entry_device}" if det.entry_device >= 0 else "the device"
    access = ctx.access(det.event)
    what = "write" if access and access["kind"] == EventKind.ACCESS and access["op"] & 1 else "read"
    if is_routine_copy(access):
        to = "to" if access["op"] == DataOpKind.TRANSFER_TO else "from"
        where += f" by {ROUTINE} (a copy {to} device {access['device']})"
    if det.kind == OVERFLOW:
        return f"{what} {where} outside the mapped section of `{d.var}`"
    if det.kind == UUM and det.device >= 0:
        return (f"{what} of uninitialised memory {where}: the device copy of `{d.var}` was never written or "
                "copied in")
    if det.kind == UUM:
        return (f"{what} of uninitialised memory {where}: `{d.var}` was copied back from {other} before anything "
                "initialised it there")
    if det.device >= 0:
        return f"{what} of stale data {where}: the host wrote `{d.var}` after it was copied to the device"
    return f"{what} of stale data {where}: `{d.var}` was last written on {other} and not copied back"


def _is_copy(ctx: Context, det: Detection, op: int) -> bool:
    row = ctx.events.get(det.event)
    return bool(row and row["kind"] == EventKind.DATA_OP and row["op"] == op)


def related(ctx: Context, d: Described) -> list[Related]:
    det = d.det
    out = []
    if d.clause is not None:
        out.append(Related("map-clause", ctx.site(d.clause["loc"]), ctx.clause_text(d.clause)))
    access = ctx.rows.get(det.event)
    if access is not None and access["kind"] == EventKind.ACCESS and access["device"] >= 0:
        construct = ctx.construct_of(access)
        if construct is not None:
            out.append(Related("construct", ctx.site(construct["loc"]), construct_name(construct["op"])))
            ignored = ctx.clause_for((construct["rank"], construct["id"]), det.name, det.host_addr)
            # (an implicit map, the compiler's zero-length map of a pointer the kernel uses, is no clause
            # the user wrote: saying it had no effect would send them looking for it)
            if ignored is not None and d.clause is not None and ignored["g"] != d.clause["g"] \
                    and (ignored["rank"], ignored["id"]) != (d.clause["rank"], d.clause["id"]) \
                    and not ignored["op"] & MapType.IMPLICIT:
                out.append(Related("ignored-clause", ctx.site(ignored["loc"]),
                                   f"{ctx.clause_text(ignored)} had no effect: `{d.var}` was already present"))
    if det.release_event >= 0:
        release = ctx.events.get(det.release_event)
        construct = ctx.construct_of(release) if release else None
        if release is not None:
            by = construct_name(construct["op"]) if construct else "the runtime"
            out.append(Related("release", ctx.site(construct["loc"] if construct else release["loc"]),
                               f"device copy released by {by}"))
    alloc = ctx.allocation(det)
    if alloc is not None:
        out.append(Related("allocation", ctx.site(alloc["loc"]),
                           f"{ctx.host_object(alloc).allocator} of {alloc['size']} bytes"))
    return out


def to_finding(ctx: Context, det: Detection) -> Finding:
    d = describe(ctx, det)
    line_note = ""
    if det.kind == SECTION_OVERFLOW:
        access = ctx.site(det.loc, "host", -1, det.rank)
        fix = fix_section(ctx, d)
    else:
        side = "device" if det.device >= 0 else "host"
        row = ctx.access(det.event) or {}
        access = ctx.site(det.loc, side, det.device, det.rank, row.get("thread", 0))
        access, line_note = _with_a_line(ctx, access, row)
        if det.kind == OVERFLOW:
            fix = fix_overflow(ctx, d)
        elif det.kind == UNMAPPED:
            fix = fix_unmapped(ctx, d)
        elif det.device >= 0:
            fix = fix_device_read(ctx, d)
        else:
            fix = fix_host_read(ctx, d)
    details = {"host_address": f"{det.host_addr:#x}", "bad_bytes": det.bytes}
    if det.kind != SECTION_OVERFLOW and line_note:
        details["line_from"] = line_note
    if det.device_addr >= 0:
        details["device_address"] = f"{det.device_addr:#x}"
    if det.entry_device >= 0:
        details["mapping_device"] = det.entry_device
    if det.object_lo >= 0:
        details["host_object_bytes"] = det.object_hi - det.object_lo
    return Finding(
        kind=KINDS[det.kind], message=message(ctx, d), access=access, variable=d.var, related=related(ctx, d),
        history=history_steps(ctx, d), fix=fix, element=d.index(det.host_addr) if d.width else None,
        element_size=d.width or None, extent=d.extent(), bytes=det.bytes, occurrences=det.occurrences,
        details=details)


def _with_a_line(ctx: Context, access: Site, row: dict) -> tuple[Site, str]:
    """The access site, or (optimised code whose access has no line) the enclosing construct's line,
    with a note saying so."""
    if access.line > 0 or not row:
        return access, ""
    construct = ctx.construct_of(row) if row.get("device", -1) >= 0 else None
    if construct is None:
        return access, ""
    at = ctx.site(construct["loc"])
    if at.line <= 0:
        return access, ""
    file = access.file if access.file not in ("", "??") else at.file
    note = f"the enclosing `{construct_name(construct['op'])}` construct (the access itself has no line)"
    return replace(access, file=file, line=at.line, function=access.function or at.function), note


def _in_device_memory(ctx: Context, det: Detection) -> bool:
    """Whether an unmapped access hit device memory with no host side (omp_target_alloc) live at the time:
    a device pointer used without is_device_ptr, valid since OpenMP 5.1."""
    live: dict[int, int] = {}
    for g in sorted(ctx.events):
        if g > det.event:
            break
        row = ctx.events[g]
        if row["kind"] != EventKind.DATA_OP or row["rank"] != det.rank or row["addr"] != 0:
            continue
        if row["op"] == DataOpKind.ALLOC:
            live[row["addr2"]] = row["size"]
        elif row["op"] == DataOpKind.DELETE:
            live.pop(row["addr2"], None)
    return any(lo <= det.device_addr < lo + size for lo, size in live.items())


def diagnose(log: EventLog, control: ControlEvents, detections: list[Detection],
             dropped: int = 0) -> list[Finding]:
    """Findings for the detections of one replay, merged and in report order."""
    if not detections:
        return []
    ctx = Context.build(log, control)
    detections = [det for det in detections if not (det.kind == UNMAPPED and _in_device_memory(ctx, det))]
    wanted = {det.event for det in detections} | {g for det in detections for g, _ in det.history}
    ctx.rows = fetch_rows(log, [g for g in wanted if g not in ctx.events])
    return merge_findings([to_finding(ctx, det) for det in detections])
