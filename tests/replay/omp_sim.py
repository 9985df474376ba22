"""A small model of libomptarget (OpenMP 5.x reference counting) that writes the events the tracer records.

Why: checker tests describe a program the way it is written (constructs, clauses, loops) and get the
log the real runtime + tracer would produce: MAP_CLAUSE per item, DATA_OP only for what reference
counting lets through, device accesses at device-copy addresses, host accesses only to memory that
has been mapped (the tracer drops the others).

    sim = OmpSim("fig1.c")
    b = sim.malloc("b", 4 * N, line=3)
    sim.host_write(b, 4 * N, line=5)
    with sim.target(line=7, clauses=[sim.map("alloc", "b", b, 0, N, line=9)]) as k:
        k.read(b, 4 * N, line=16)
    cols = sim.columns()
"""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass

from quiver.formats import ConstructKind, DataOpKind, EventKind, LogBuilder, MapType

TYPES = {"to": MapType.TO, "from": MapType.FROM, "tofrom": MapType.TO | MapType.FROM, "alloc": 0,
         "release": 0, "delete": MapType.DELETE}


@dataclass
class Clause:
    bits: int
    var: str
    addr: int
    size: int
    text: str
    line: int


@dataclass
class Entry:
    host: int
    size: int
    dev: int
    refs: int


class OmpSim:
    def __init__(self, file: str = "prog.c", function: str = "main", width: int = 4, record_width: bool = True,
                 device: int = 0):
        self.file, self.function, self.width, self.device = file, function, width, device
        self.record_width = record_width
        self.b = LogBuilder(program=file.rsplit(".", 1)[0])
        self.heap = 0x10_0000
        self.devmem = 0x7F00_0000_0000
        self.present: list[Entry] = []
        self.tracked: list[tuple[int, int]] = []

    # ---- host memory ---------------------------------------------------------------------------
    def site(self, line: int) -> tuple[str, int, str]:
        return (self.file, line, self.function)

    def malloc(self, name: str, nbytes: int, line: int, op: int = 1) -> int:
        addr = self.heap
        self.heap += (nbytes + 63) // 64 * 64 + 64
        self.b.event(EventKind.ALLOC, addr=addr, size=nbytes, id=self.b.new_id("alloc"), op=op,
                     loc=self.b.location(*self.site(line)))
        return addr

    def global_array(self, name: str, nbytes: int) -> int:
        addr = self.heap
        self.heap += (nbytes + 63) // 64 * 64 + 64
        self.b.event(EventKind.ALLOC, addr=addr, size=nbytes, id=self.b.new_id("alloc"), op=5)
        return addr

    def stack_array(self, nbytes: int) -> int:
        """A local array: no ALLOC event (the recorder does not know its extent)."""
        addr = self.heap
        self.heap += (nbytes + 63) // 64 * 64 + 64
        return addr

    def free(self, addr: int, line: int) -> None:
        self.b.free(addr, site=self.site(line))

    def _access(self, addr: int, nbytes: int, write: bool, line: int, device: int, construct: int = -1) -> None:
        self.b.event(EventKind.ACCESS, addr=addr, size=nbytes, op=1 if write else 0, device=device, id=construct,
                     loc=self.b.location(*self.site(line)), aux=self.width if self.record_width else 0)

    def _mapped_once(self, addr: int, nbytes: int) -> bool:
        return any(lo < addr + nbytes and addr < hi for lo, hi in self.tracked)

    def host_write(self, addr: int, nbytes: int, line: int) -> None:
        if self._mapped_once(addr, nbytes):
            self._access(addr, nbytes, True, line, -1)

    def host_read(self, addr: int, nbytes: int, line: int) -> None:
        if self._mapped_once(addr, nbytes):
            self._access(addr, nbytes, False, line, -1)

    # ---- clauses ---------------------------------------------------------------------------------
    def map(self, maptype: str, var: str, base: int, lower: int, length: int, line: int,
            text: str | None = None) -> Clause:
        """``map(maptype: var[lower:length])`` (elements of ``width`` bytes); ``always,to`` etc. allowed."""
        bits = 0
        for part in maptype.replace(" ", "").split(","):
            bits |= MapType.ALWAYS if part == "always" else TYPES[part]
        item = text or f"{var}[{lower}:{length}]"
        return Clause(int(bits), var, base + lower * self.width, length * self.width, item, line)

    def scalar(self, maptype: str, var: str, addr: int, nbytes: int, line: int) -> Clause:
        bits = 0
        for part in maptype.split(","):
            bits |= MapType.ALWAYS if part.strip() == "always" else TYPES[part.strip()]
        return Clause(int(bits), var, addr, nbytes, var, line)

    def firstprivate(self, var: str, value: int, line: int) -> Clause:
        return Clause(int(MapType.LITERAL | MapType.TARGET_PARAM), var, value, 8, var, line)

    # ---- runtime ---------------------------------------------------------------------------------
    def _find(self, addr: int) -> Entry | None:
        for e in self.present:
            if e.host <= addr < e.host + e.size:
                return e
        return None

    def _begin(self, kind: ConstructKind, line: int, clauses: list[Clause], nowait: bool = False) -> int:
        c = self.b.construct_begin(kind, site=self.site(line), device=self.device, nowait=nowait)
        for i, cl in enumerate(clauses):
            self.b.map_clause(c, cl.var, cl.addr, cl.size, cl.bits, site=self.site(cl.line), text=cl.text, index=i,
                              device=self.device)
        return c

    def _data_op(self, op: DataOpKind, host: int, dev: int, size: int, c: int, var: str, line: int) -> None:
        self.b.data_op(op, host, dev, size, construct=c, var=var, device=self.device, site=self.site(line))

    def _enter(self, c: int, line: int, clauses: list[Clause]) -> None:
        for cl in clauses:
            if cl.bits & MapType.LITERAL:
                continue
            e = self._find(cl.addr)
            if e is not None:
                e.refs += 1
                if cl.bits & MapType.ALWAYS and cl.bits & MapType.TO:
                    self._data_op(DataOpKind.TRANSFER_TO, cl.addr, e.dev + cl.addr - e.host, cl.size, c, cl.var,
                                  line)
                continue
            if cl.size == 0:
                continue
            e = Entry(cl.addr, cl.size, self.devmem, 1)
            self.devmem += (cl.size + 4095) // 4096 * 4096 + 4096
            self.present.append(e)
            self.tracked.append((cl.addr, cl.addr + cl.size))
            self._data_op(DataOpKind.ALLOC, e.host, e.dev, e.size, c, cl.var, line)
            if cl.bits & MapType.TO:
                self._data_op(DataOpKind.TRANSFER_TO, e.host, e.dev, e.size, c, cl.var, line)

    def _exit(self, c: int, line: int, clauses: list[Clause]) -> None:
        for cl in reversed(clauses):
            if cl.bits & MapType.LITERAL:
                continue
            e = self._find(cl.addr)
            if e is None:
                continue
            e.refs = 0 if cl.bits & MapType.DELETE else e.refs - 1
            if cl.bits & MapType.FROM and (e.refs == 0 or cl.bits & MapType.ALWAYS):
                self._data_op(DataOpKind.TRANSFER_FROM, cl.addr, e.dev + cl.addr - e.host, cl.size, c, cl.var,
                              line)
            if e.refs == 0:
                self._data_op(DataOpKind.DELETE, e.host, e.dev, e.size, c, cl.var, line)
                self.present.remove(e)

    def enter_data(self, line: int, clauses: list[Clause]) -> None:
        c = self._begin(ConstructKind.TARGET_ENTER_DATA, line, clauses)
        self._enter(c, line, clauses)
        self.b.construct_end(c, ConstructKind.TARGET_ENTER_DATA, device=self.device)

    def exit_data(self, line: int, clauses: list[Clause]) -> None:
        c = self._begin(ConstructKind.TARGET_EXIT_DATA, line, clauses)
        self._exit(c, line, clauses)
        self.b.construct_end(c, ConstructKind.TARGET_EXIT_DATA, device=self.device)

    def update(self, line: int, to: list[Clause] = (), frm: list[Clause] = ()) -> None:
        items = [Clause(MapType.TO, x.var, x.addr, x.size, x.text, x.line) for x in to] + \
                [Clause(MapType.FROM, x.var, x.addr, x.size, x.text, x.line) for x in frm]
        c = self._begin(ConstructKind.TARGET_UPDATE, line, items)
        for cl in items:
            e = self._find(cl.addr)
            if e is not None:
                op = DataOpKind.TRANSFER_TO if cl.bits & MapType.TO else DataOpKind.TRANSFER_FROM
                self._data_op(op, cl.addr, e.dev + cl.addr - e.host, cl.size, c, cl.var, line)
        self.b.construct_end(c, ConstructKind.TARGET_UPDATE, device=self.device)

    @contextmanager
    def target_data(self, line: int, clauses: list[Clause], end_line: int | None = None):
        c = self._begin(ConstructKind.TARGET_DATA, line, clauses)
        self._enter(c, line, clauses)
        self.b.construct_end(c, ConstructKind.TARGET_DATA, device=self.device)
        yield
        end = self._begin(ConstructKind.TARGET_DATA_END, line, clauses)
        self._exit(end, end_line or line, clauses)
        self.b.construct_end(end, ConstructKind.TARGET_DATA_END, device=self.device)

    @contextmanager
    def target(self, line: int, clauses: list[Clause]):
        c = self._begin(ConstructKind.TARGET, line, clauses)
        self._enter(c, line, clauses)
        self.b.kernel(c, device=self.device, site=self.site(line))
        yield Kernel(self, c)
        self._exit(c, line, clauses)
        self.b.construct_end(c, ConstructKind.TARGET, device=self.device)

    def columns(self):
        return self.b.columns()

    def write(self, path):
        return self.b.write(path)


class Kernel:
    """Device accesses of one target region; host addresses are translated to the device copy."""

    def __init__(self, sim: OmpSim, construct: int):
        self.sim, self.construct = sim, construct

    def dev(self, addr: int, via: int | None = None) -> int:
        e = self.sim._find(via if via is not None else addr)
        assert e is not None, "not mapped"
        return e.dev + addr - e.host

    def read(self, addr: int, nbytes: int, line: int, via: int | None = None) -> None:
        self.sim._access(self.dev(addr, via), nbytes, False, line, self.sim.device, self.construct)

    def write(self, addr: int, nbytes: int, line: int, via: int | None = None) -> None:
        self.sim._access(self.dev(addr, via), nbytes, True, line, self.sim.device, self.construct)

    def local(self, device_addr: int, nbytes: int, line: int, write: bool = False) -> None:
        """An access to device memory that no clause maps (device-local data)."""
        self.sim._access(device_addr, nbytes, write, line, self.sim.device, self.construct)

    def attach(self, pointer_addr: int, line: int) -> None:
        """The runtime writes a device address into the CV of a mapped pointer (PTR_AND_OBJ)."""
        e = self.sim._find(pointer_addr)
        self.sim._data_op(DataOpKind.TRANSFER_TO, 0x7FFF_0000_1000, e.dev + pointer_addr - e.host, 8, self.construct,
                          "", line)
