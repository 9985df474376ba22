"""The mapping checker on the papers' listings and seed 000 Table III's classes (builder logs via OmpSim).

Each buggy case asserts the exact kind, variable, line and fix; each correct case asserts no finding.
"""

from __future__ import annotations

import pytest
from omp_sim import OmpSim
from oracle import oracle_detections
from quiver.formats import read_log
from quiver.replay.mapping.vsm import check_mapping, run_vsm
from quiver.replay.registry import CheckOptions
from quiver.replay.report.findings import FindingKind

UUM = FindingKind.USE_OF_UNINITIALIZED_MEMORY
STALE = FindingKind.USE_OF_STALE_DATA
BO = FindingKind.BUFFER_OVERFLOW


@pytest.fixture
def analyze(tmp_path):
    def run(sim: OmpSim):
        path = sim.write(tmp_path / "run.arrow")
        cols = sim.columns()
        assert run_vsm(cols).detections == oracle_detections(cols)   # both engines agree on every case
        return check_mapping(read_log(path), CheckOptions())

    return run


def summary(findings):
    return [(f.kind, f.variable, f.access.line, f.access.side) for f in findings]


# ---- seed 000 (ARBALEST) ------------------------------------------------------------------------

def test_seed000_fig1_alloc_is_uum_on_device(analyze):
    N = 50
    sim = OmpSim("fig1.c")
    a, b, c = (sim.global_array(v, 4 * n) for v, n in (("a", N), ("b", N * N), ("c", N)))
    with sim.target(7, [sim.map("to", "a", a, 0, N, 8, "a[0:N]"), sim.map("alloc", "b", b, 0, N * N, 9, "b[0:N*N]"),
                        sim.map("tofrom", "c", c, 0, N, 10, "c[0:N]")]) as k:
        k.read(b, 4 * N * N, 16)
        k.read(a, 4 * N, 16)
        k.write(c, 4 * N, 16)
    f, = analyze(sim)
    assert summary([f]) == [(UUM, "b", 16, "device")]
    assert f.fix == "change `map(alloc: b[0:N*N])` at fig1.c:9 to `map(to: b[0:N*N])`"
    assert f.extent == "b: 2500 elements mapped (4-byte), element 0 accessed"
    assert [(r.role, r.site.line) for r in f.related][:2] == [("map-clause", 9), ("construct", 7)]
    assert f.history[-2].operation.startswith("device 0 copy allocated by target (map(alloc: b[0:N*N]))")
    assert f.history[-1].site.line == 16


def test_seed000_fig2_line5_stale_on_host(analyze):
    sim = OmpSim("fig2.c")
    a = sim.stack_array(4)
    sim.host_write(a, 4, 1)                           # before any mapping: dropped by the tracer
    with sim.target(2, [sim.scalar("to", "a", a, 4, 2)]) as k:
        k.read(a, 4, 3)
        k.write(a, 4, 3)
    sim.host_read(a, 4, 5)
    f, = analyze(sim)
    assert summary([f]) == [(STALE, "a", 5, "host")]
    assert f.fix == "change `map(to: a)` at fig2.c:2 to `map(tofrom: a)`"
    ops = [h.operation for h in f.history]
    assert ops[-3:] == ["device write on device 0", "device 0 copy released by target", "read on the host (first bad access)"]


def test_seed000_fig6_pointer_swap(analyze):
    size = 64
    sim = OmpSim("main.c")
    p = sim.malloc("h_A0", 4 * size, 127, op=4)
    q = sim.malloc("h_Anext", 4 * size, 128, op=4)
    h_a0, h_anext = p, q
    with sim.target_data(133, [sim.map("to", "h_A0", p, 0, size, 133, "h_A0[0:size]"),
                               sim.map("tofrom", "h_Anext", q, 0, size, 134, "h_Anext[0:size]")]):
        for _ in range(3):
            with sim.target(20, [sim.map("to", "A0", h_a0, 0, size, 20, "A0[0:n]"),
                                 sim.map("tofrom", "Anext", h_anext, 0, size, 20, "Anext[0:n]")]) as k:
                k.read(h_a0, 4 * size, 22)
                k.write(h_anext, 4 * size, 22)
            h_a0, h_anext = h_anext, h_a0
    sim.host_read(h_anext, 4 * size, 146)
    f, = analyze(sim)
    assert summary([f]) == [(STALE, "h_A0", 146, "host")]
    assert f.fix == "change `map(to: h_A0[0:size])` at main.c:133 to `map(tofrom: h_A0[0:size])`"


@pytest.mark.parametrize("record_width", [True, False])
def test_seed002_fig1_alloc_half_section(analyze, record_width):
    SIZE = 1000
    sim = OmpSim("error.cpp", record_width=record_width)
    a = sim.malloc("a", 4 * SIZE, 4)
    b = sim.malloc("b", 4 * SIZE, 5)
    sim.host_write(b, 4 * SIZE, 9)
    with (sim.target_data(11, [sim.map("from", "a", a, 0, SIZE, 12, "a[0:SIZE]"),
                               sim.map("alloc", "b", b, 0, SIZE // 2, 13, "b[0:SIZE / 2]")]),
          sim.target(14, [sim.map("from", "a", a, 0, SIZE, 15, "a[0:SIZE]"),
                          sim.map("to", "b", b, 0, SIZE // 2, 16, "b[0:SIZE / 2]")]) as k):
        k.read(b, 4 * SIZE, 18, via=b)
        k.write(a, 4 * SIZE, 18)
    findings = analyze(sim)
    assert summary(findings) == [(BO, "b", 18, "device"), (UUM, "b", 18, "device")]
    bo, uum = findings
    assert bo.fix == "enlarge `b[0:SIZE / 2]` to `b[0:SIZE]` in `map(alloc: b[0:SIZE / 2])` at error.cpp:13"
    assert uum.fix == "change `map(alloc: b[0:SIZE / 2])` at error.cpp:13 to `map(to: b[0:SIZE / 2])`"
    if record_width:
        assert bo.extent == "b: 500 elements mapped (4-byte), element 500 accessed"
        assert bo.bytes == 2000 and bo.element_size == 4
    else:
        assert bo.extent == "b: 2000 bytes mapped (element size unknown), byte 2000 accessed"
    ignored = [r for r in uum.related if r.role == "ignored-clause"]
    assert [(r.site.line, r.message.split(" had")[0]) for r in ignored] == [(16, "map(to: b[0:SIZE / 2])")]


# ---- seed 003 (OmpSan) ---------------------------------------------------------------------------

def _listing_2_3(sim: OmpSim, openmp45: bool):
    A = sim.stack_array(40)
    B = sim.stack_array(40)
    sim.enter_data(5, [sim.map("to", "A", A, 0, 10, 5, "A[0:10]"), sim.map("alloc", "B", B, 0, 10, 5, "B[0:10]")])
    with sim.target(6, [sim.map("alloc", "B", B, 0, 10, 6, "B[0:10]")]) as k:
        k.read(A, 40, 8, via=A)
        k.write(B, 40, 8)
        if openmp45:   # OpenMP 4.5: `alloc` on exit does not decrement the reference count
            sim._find(B).refs += 1
    sim.exit_data(9, [sim.map("from", "B", B, 0, 10, 9, "B[0:10]")])
    sim.host_read(B, 40, 12)


def test_seed003_listing_2_3_under_openmp_5_is_correct(analyze):
    sim = OmpSim("l23.c")
    _listing_2_3(sim, openmp45=False)
    assert analyze(sim) == []


def test_seed003_listing_2_3_under_openmp_45_refcount(analyze):
    sim = OmpSim("l23.c")
    _listing_2_3(sim, openmp45=True)
    f, = analyze(sim)
    assert summary([f]) == [(STALE, "B", 12, "host")]
    assert f.fix == "add `#pragma omp target update from(B[0:10])` before line 12"


def test_seed003_listing_2_5_refcount_suppresses_copy_out(analyze):
    N = 100
    sim = OmpSim("l25.c")
    A = sim.global_array("A", 4 * N)
    with sim.target_data(3, [sim.map("from", "A", A, 0, N, 3, "A[0:N]")]):
        with sim.target(5, [sim.map("from", "A", A, 0, N, 5, "A[0:N]")]) as k:
            k.write(A, 4 * N, 7)
        sim.host_read(A, 4 * N, 9)
    f, = analyze(sim)
    assert summary([f]) == [(STALE, "A", 9, "host")]
    assert f.fix == "add `#pragma omp target update from(A[0:N])` before line 9"


def test_seed003_listing_2_6_update_is_correct(analyze):
    N = 100
    sim = OmpSim("l26.c")
    A = sim.global_array("A", 4 * N)
    with sim.target_data(3, [sim.map("from", "A", A, 0, N, 3, "A[0:N]")]):
        with sim.target(5, [sim.map("from", "A", A, 0, N, 5, "A[0:N]")]) as k:
            k.write(A, 4 * N, 7)
        sim.update(8, frm=[sim.map("from", "A", A, 0, N, 8, "A[0:N]")])
        sim.host_read(A, 4 * N, 10)
    assert analyze(sim) == []


# ---- seed 000 Table III classes ------------------------------------------------------------------

def test_read_after_from_of_unwritten_device_copy_is_uum_on_host(analyze):
    N = 16
    sim = OmpSim("t.c")
    a = sim.malloc("a", 4 * N, 3)
    with sim.target(5, [sim.map("from", "a", a, 0, N, 5, "a[0:N]")]) as k:
        k.write(a, 4 * 4, 7)           # writes only the first 4 elements
    sim.host_read(a, 4 * N, 10)
    f, = analyze(sim)
    assert summary([f]) == [(UUM, "a", 10, "host")]
    assert f.extent == "a: 16 elements mapped (4-byte), element 4 accessed"
    assert f.fix.startswith("change `map(from: a[0:N])` at t.c:5 to `map(tofrom: a[0:N])`")


def test_enter_data_alloc_then_device_read_is_uum(analyze):
    N = 8
    sim = OmpSim("t.c")
    a = sim.malloc("a", 4 * N, 3)
    sim.enter_data(4, [sim.map("alloc", "a", a, 0, N, 4, "a[0:N]")])
    with sim.target(6, []) as k:
        k.read(a, 4 * N, 7)
    sim.exit_data(9, [sim.map("delete", "a", a, 0, N, 9, "a[0:N]")])
    f, = analyze(sim)
    assert summary([f]) == [(UUM, "a", 7, "device")]
    assert f.fix == "change `map(alloc: a[0:N])` at t.c:4 to `map(to: a[0:N])`"


def test_read_past_short_section_on_device(analyze):
    N = 32
    sim = OmpSim("t.c")
    a = sim.malloc("a", 4 * N, 3)
    b = sim.malloc("b", 4 * N, 4)
    with sim.target(6, [sim.map("to", "a", a, 0, N // 2, 6, "a[0:N/2]"), sim.map("from", "b", b, 0, N, 6, "b[0:N]")]) as k:
        k.read(a, 4 * N, 8, via=a)
        k.write(b, 4 * N, 8)
    f, = analyze(sim)
    assert summary([f]) == [(BO, "a", 8, "device")]
    assert f.extent == "a: 16 elements mapped (4-byte), element 16 accessed"
    assert f.bytes == 64
    assert f.fix == "enlarge `a[0:N/2]` to `a[0:N]` in `map(to: a[0:N/2])` at t.c:6"


@pytest.mark.parametrize("maptype,what", [("to", "copy-in"), ("from", "copy-out"), ("tofrom", "copy-in and copy-out")])
def test_copy_past_host_allocation(analyze, maptype, what):
    N = 10
    sim = OmpSim("t.c")
    a = sim.malloc("a", 4 * N, 3)
    b = sim.malloc("b", 4 * N, 4)
    with sim.target(6, [sim.map(maptype, "a", a, 0, N + 1, 6, "a[0:N+1]"), sim.map("to", "b", b, 0, N, 6, "b[0:N]")]):
        pass
    f, = analyze(sim)
    assert (f.kind, f.variable, f.access.line) == (BO, "a", 6)
    assert f.message.startswith(f"{what} of `a` goes past the end of its host object")
    assert f.bytes == 4
    assert f.fix == f"shrink `a[0:N+1]` to `a[0:N]` in `map({maptype}: a[0:N+1])` at t.c:6"


def test_stale_host_data_after_release(analyze):
    N = 8
    sim = OmpSim("t.c")
    a = sim.malloc("a", 4 * N, 3)
    sim.enter_data(5, [sim.map("to", "a", a, 0, N, 5, "a[0:N]")])
    with sim.target(7, []) as k:
        k.write(a, 4 * N, 8)
    sim.exit_data(10, [sim.map("release", "a", a, 0, N, 10, "a[0:N]")])
    sim.host_read(a, 4 * N, 12)
    f, = analyze(sim)
    assert summary([f]) == [(STALE, "a", 12, "host")]
    assert f.fix == "change `map(release: a[0:N])` at t.c:10 to `map(from: a[0:N])`"


def test_missing_from_on_data_region(analyze):
    N = 8
    sim = OmpSim("t.c")
    a = sim.malloc("a", 4 * N, 3)
    with (sim.target_data(5, [sim.map("to", "a", a, 0, N, 5, "a[0:N]")], end_line=9),
          sim.target(6, [sim.map("tofrom", "a", a, 0, N, 6, "a[0:N]")]) as k):
        k.write(a, 4 * N, 7)
    sim.host_read(a, 4 * N, 11)
    f, = analyze(sim)
    assert summary([f]) == [(STALE, "a", 11, "host")]
    assert f.fix == "change `map(to: a[0:N])` at t.c:5 to `map(tofrom: a[0:N])`"


def test_partial_from(analyze):
    N = 8
    sim = OmpSim("t.c")
    a = sim.malloc("a", 4 * N, 3)
    b = sim.malloc("b", 4 * N, 3)
    sim.enter_data(5, [sim.map("to", "a", a, 0, N, 5, "a[0:N]"), sim.map("to", "b", b, 0, N, 5, "b[0:N]")])
    with sim.target(7, []) as k:
        k.write(a, 4 * N, 8)
    sim.exit_data(10, [sim.map("from", "a", a, 0, N // 2, 10, "a[0:N/2]"), sim.map("delete", "b", b, 0, N, 10, "b[0:N]")])
    sim.host_read(a, 4 * N, 12)
    f, = analyze(sim)
    assert summary([f]) == [(STALE, "a", 12, "host")]
    assert f.extent == "a: 8 elements mapped (4-byte), element 4 accessed"
    assert f.fix == "enlarge `a[0:N/2]` to `a[0:N]` in `map(from: a[0:N/2])` at t.c:10"


def test_refcount_suppresses_copy_out_of_outer_alloc(analyze):
    N = 8
    sim = OmpSim("t.c")
    a = sim.malloc("a", 4 * N, 3)
    with (sim.target_data(5, [sim.map("alloc", "a", a, 0, N, 5, "a[0:N]")]),
          sim.target(6, [sim.map("tofrom", "a", a, 0, N, 6, "a[0:N]")]) as k):
        k.write(a, 4 * N, 7)
    sim.host_read(a, 4 * N, 10)
    findings = analyze(sim)
    assert summary(findings) == [(STALE, "a", 10, "host")]
    assert findings[0].fix == "change `map(alloc: a[0:N])` at t.c:5 to `map(from: a[0:N])`"


def test_host_write_inside_data_region_is_stale_on_device(analyze):
    N = 8
    sim = OmpSim("t.c")
    a = sim.malloc("a", 4 * N, 3)
    with sim.target_data(5, [sim.map("to", "a", a, 0, N, 5, "a[0:N]")]):
        sim.host_write(a, 4 * N, 6)
        with sim.target(7, [sim.map("to", "a", a, 0, N, 7, "a[0:N]")]) as k:
            k.read(a, 4 * N, 8)
    f, = analyze(sim)
    assert summary([f]) == [(STALE, "a", 8, "device")]
    assert f.fix == "add `#pragma omp target update to(a[0:N])` before line 7 (t.c)"


# ---- correct programs: no finding ------------------------------------------------------------------

def test_always_to_is_correct(analyze):
    N = 8
    sim = OmpSim("t.c")
    a = sim.malloc("a", 4 * N, 3)
    with sim.target_data(5, [sim.map("to", "a", a, 0, N, 5, "a[0:N]")]):
        sim.host_write(a, 4 * N, 6)
        with sim.target(7, [sim.map("always,to", "a", a, 0, N, 7, "a[0:N]")]) as k:
            k.read(a, 4 * N, 8)
    assert analyze(sim) == []


def test_update_to_and_from_are_correct(analyze):
    N = 8
    sim = OmpSim("t.c")
    a = sim.malloc("a", 4 * N, 3)
    with sim.target_data(5, [sim.map("alloc", "a", a, 0, N, 5, "a[0:N]")]):
        sim.update(6, to=[sim.map("to", "a", a, 0, N, 6, "a[0:N]")])
        with sim.target(7, []) as k:
            k.read(a, 4 * N, 8)
            k.write(a, 4 * N, 8)
        sim.update(9, frm=[sim.map("from", "a", a, 0, N, 9, "a[0:N]")])
        sim.host_read(a, 4 * N, 10)
    sim.host_read(a, 4 * N, 12)
    assert analyze(sim) == []


def test_nested_data_regions_are_correct(analyze):
    N = 8
    sim = OmpSim("t.c")
    a = sim.malloc("a", 4 * N, 3)
    b = sim.malloc("b", 4 * N, 3)
    with (sim.target_data(5, [sim.map("tofrom", "a", a, 0, N, 5, "a[0:N]")]),
          sim.target_data(6, [sim.map("to", "b", b, 0, N, 6, "b[0:N]"), sim.map("to", "a", a, 0, N, 6, "a[0:N]")]),
          sim.target(7, [sim.map("tofrom", "a", a, 0, N, 7, "a[0:N]")]) as k):
        k.read(b, 4 * N, 8)
        k.write(a, 4 * N, 8)
    sim.host_read(a, 4 * N, 12)
    sim.host_read(b, 4 * N, 12)
    assert analyze(sim) == []


def test_enter_exit_with_delete_is_correct(analyze):
    N = 8
    sim = OmpSim("t.c")
    a = sim.malloc("a", 4 * N, 3)
    sim.enter_data(4, [sim.map("to", "a", a, 0, N, 4, "a[0:N]")])
    with sim.target(5, []) as k:
        k.read(a, 4 * N, 6)
        k.write(a, 4 * N, 6)
    sim.update(8, frm=[sim.map("from", "a", a, 0, N, 8, "a[0:N]")])
    sim.exit_data(9, [sim.map("delete", "a", a, 0, N, 9, "a[0:N]")])
    sim.host_read(a, 4 * N, 10)
    assert analyze(sim) == []


def test_pointer_attachment_initialises_the_pointer(analyze):
    sim = OmpSim("t.c", width=8)
    s = sim.malloc("s", 16, 3)              # struct { int n; double *p; }
    data = sim.malloc("data", 64, 4)
    with sim.target(6, [sim.scalar("alloc", "s", s, 16, 6), sim.map("to", "s.p", data, 0, 8, 6, "s.p[0:8]")]) as k:
        k.attach(s + 8, 6)                  # the runtime writes data's device address into s.p on the device
        k.read(s + 8, 8, 7)                 # the kernel loads s.p
        k.read(data, 64, 7)
    assert analyze(sim) == []


def test_firstprivate_and_device_local_data_are_not_reported(analyze):
    N = 8
    sim = OmpSim("t.c")
    a = sim.malloc("a", 4 * N, 3)
    with sim.target(5, [sim.firstprivate("n", 0x5555_5555_5555_5555_5555 & ((1 << 64) - 1), 5),
                        sim.map("tofrom", "a", a, 0, N, 5, "a[0:N]")]) as k:
        k.local(0x7FFE_0000_0000, 64, 6, write=True)     # a device-local array
        k.local(0x7FFE_0000_0000, 64, 7)
        k.read(a, 4 * N, 7)
        k.write(a, 4 * N, 7)
    sim.host_read(a, 4 * N, 9)
    assert analyze(sim) == []


def test_reused_heap_memory_starts_fresh(analyze):
    N = 8
    sim = OmpSim("t.c")
    a = sim.malloc("a", 4 * N, 3)
    with sim.target(5, [sim.map("to", "a", a, 0, N, 5, "a[0:N]")]) as k:
        k.write(a, 4 * N, 6)               # stale on the host, but never read there
    sim.free(a, 7)
    sim.heap = a                           # the next malloc returns the same block
    b = sim.malloc("b", 4 * N, 8)
    sim.host_write(b, 4 * N, 9)
    with sim.target(10, [sim.map("to", "b", b, 0, N, 10, "b[0:N]")]) as k:
        k.read(b, 4 * N, 11)
    assert analyze(sim) == []


def test_a_buggy_construct_in_a_loop_is_one_finding(analyze):
    N = 4
    sim = OmpSim("t.c")
    a = sim.malloc("a", 4 * N, 3)
    for _ in range(300):
        with sim.target(5, [sim.map("alloc", "a", a, 0, N, 5, "a[0:N]")]) as k:
            k.read(a, 4 * N, 6)
    f, = analyze(sim)
    assert summary([f]) == [(UUM, "a", 6, "device")]
    assert (f.occurrences, f.bytes) == (300, 300 * 4 * N)
