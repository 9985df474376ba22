"""A struct whose pointer member alone was mapped, then the whole struct implicitly (builder log).

`map(to: x.v[0:n])` in `target enter data` maps x's pointer member (8 bytes at &x + 8) and its
pointee, not x.n. The kernel's implicit map of the whole struct x (16 bytes from &x) finds it
present: the runtime maps nothing more (no data op), and the kernel's read of x.n, 8 bytes before the
member's device copy, reads device memory no clause mapped. That is an overflow of x: x's window
(its host object on the device) is found through the CV holding a byte of the clause's section, not
only its first byte (tests/programs/unmapped/struct_member_only.c is the recorded program; there
libomptarget pads the member's allocation, and the read is an uninitialised read of that padding).
"""

from __future__ import annotations

from omp_sim import Clause, Kernel, OmpSim
from oracle import oracle_detections
from quiver.formats import ConstructKind, MapType, read_log
from quiver.replay.mapping.vsm import check_mapping, run_vsm
from quiver.replay.registry import CheckOptions
from quiver.replay.report.findings import FindingKind

IMPLICIT_TOFROM = int(MapType.TO | MapType.FROM | MapType.TARGET_PARAM | MapType.IMPLICIT)


def struct_log(tmp_path, read_n: bool):
    sim = OmpSim("struct.c")
    x = sim.malloc("x", 16, 7, op=6)                   # the struct's host object (a stack object)
    sim.enter_data(9, [sim.scalar("to", "x", x + 8, 8, 9)])   # the member x.v only
    c = sim._begin(ConstructKind.TARGET, 11, [Clause(IMPLICIT_TOFROM, "x", x, 16, "x", 11)])
    sim.b.kernel(c, device=sim.device, site=sim.site(11))
    k = Kernel(sim, c)
    if read_n:
        k.local(k.dev(x + 8) - 8, 4, 14)               # x.n: 8 bytes before the member's device copy
    k.read(x + 8, 8, 15)                               # x.v: mapped
    sim.b.construct_end(c, ConstructKind.TARGET, device=sim.device)
    path = sim.write(tmp_path / "struct.arrow")
    cols = sim.columns()
    assert run_vsm(cols).detections == oracle_detections(cols)
    return check_mapping(read_log(path), CheckOptions())


def test_reading_the_unmapped_member_overflows_the_struct(tmp_path):
    (f,) = struct_log(tmp_path, read_n=True)
    assert (f.kind, f.variable, f.access.line, f.access.side) == (FindingKind.BUFFER_OVERFLOW, "x", 14, "device")
    assert [(r.role, r.site.line) for r in f.related][:2] == [("map-clause", 9), ("construct", 11)]


def test_the_mapped_member_alone_is_fine(tmp_path):
    assert struct_log(tmp_path, read_n=False) == []
