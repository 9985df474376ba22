"""The redundant-transfer checker on LogBuilder logs: exact variables, bytes, reasons and fixes."""

from __future__ import annotations

import pytest
from quiver.formats import ConstructKind, DataOpKind, LogBuilder, MapType, read_log
from quiver.replay.registry import CHECKERS, CheckOptions, available_checkers
from quiver.replay.report.findings import ADVISORY_KINDS, FindingKind
from quiver.replay.transfers.advice import check_transfers
from quiver.replay.transfers.redundant import transfer_waste

TO, FROM, TOFROM = int(MapType.TO), int(MapType.FROM), int(MapType.TO | MapType.FROM)
F = "r.c"


def check_redundant_transfers(log, options):
    """The unused-transfer findings of the transfers checker (the old redundant-transfer check)."""
    return [f for f in check_transfers(log, options) if f.kind is FindingKind.UNUSED_TRANSFER]


class Prog:
    """A tiny program written as a log: host variables, target constructs, kernel accesses."""

    def __init__(self, **run):
        self.b = LogBuilder(program="./r", devices=[0], **run)
        self.dev = {}  # (device, host) -> device address

    def target(self, line, maps, body=(), *, kind=ConstructKind.TARGET, device=0, rank=0, present=()):
        """maps: (var, host, bytes, map_type bits); body: (var, offset, bytes, write) device accesses."""
        b = self.b
        c = b.construct_begin(kind, site=(F, line, "main"), device=device, rank=rank)
        for i, (var, host, size, bits) in enumerate(maps):
            b.map_clause(c, var, host, size, bits, site=(F, line, "main"), text=f"{var}[0:{size // 4}]", index=i,
                         device=device, rank=rank)
        entry = kind in (ConstructKind.TARGET, ConstructKind.TARGET_DATA, ConstructKind.TARGET_ENTER_DATA)
        leave = kind in (ConstructKind.TARGET, ConstructKind.TARGET_DATA_END, ConstructKind.TARGET_EXIT_DATA)
        for var, host, size, bits in maps:
            key = (rank, device, host)
            if entry and var not in present:
                self.allocs = getattr(self, "allocs", 0) + 1      # a fresh device block per allocation
                self.dev[key] = 0x900000 + 0x10000 * self.allocs + (device << 24)
                b.data_op(DataOpKind.ALLOC, host, self.dev[key], size, construct=c, var=var, device=device, rank=rank)
            if (entry or kind == ConstructKind.TARGET_UPDATE) and bits & MapType.TO and (
                    var not in present or kind == ConstructKind.TARGET_UPDATE):
                b.data_op(DataOpKind.TRANSFER_TO, host, self.dev[key], size, construct=c, var=var, device=device,
                          rank=rank)
        if kind == ConstructKind.TARGET:
            b.kernel(c, device=device, rank=rank)
        hosts = {var: host for var, host, _s, _b in maps}
        for var, off, size, write in body:
            b.access(self.dev[(rank, device, hosts[var])] + off, size, write=write, device=device, construct=c,
                     site=(F, line + 2, "main"), thread=1, rank=rank)
        for var, host, size, bits in maps:
            key = (rank, device, host)
            copies_back = (leave and var not in present) or kind == ConstructKind.TARGET_UPDATE
            if copies_back and bits & MapType.FROM:
                b.data_op(DataOpKind.TRANSFER_FROM, host, self.dev[key], size, construct=c, var=var,
                          device=device, rank=rank)
            if leave and var not in present:
                b.data_op(DataOpKind.DELETE, host, self.dev[key], size, construct=c, var=var, device=device, rank=rank)
        b.construct_end(c, kind, device=device, rank=rank)

    def host(self, addr, size, write=False, line=30, rank=0):
        self.b.access(addr, size, write=write, site=(F, line, "main"), rank=rank)

    def findings(self, tmp_path, **extra):
        return check_redundant_transfers(read_log(self.b.write(tmp_path / "r.arrow")), CheckOptions(extra=extra))


def test_tofrom_written_only_on_device_wastes_the_copy_in(saxpy_log):
    (f,) = check_redundant_transfers(read_log(saxpy_log), CheckOptions())
    assert f.kind is FindingKind.REDUNDANT_TRANSFER and f.variable == "a"
    assert (f.access.file, f.access.line, f.access.side, f.access.device) == ("saxpy.c", 10, "device", 0)
    assert f.bytes == 400 and f.occurrences == 1
    assert f.fix == "change `map(tofrom: a[0:N])` to `map(from: a[0:N])` at saxpy.c:10"
    assert "overwritten on the device before any read" in f.message
    assert f.related[0].role == "map-clause" and f.related[0].message == "map(tofrom: a[0:N])"
    assert f.details["direction"] == "to" and f.details["transferred_bytes"] == 400


def test_nothing_when_the_kernel_reads_what_was_copied(tmp_path):
    from explore_logs import saxpy_tofrom_log
    log = read_log(saxpy_tofrom_log(tmp_path / "s.arrow", kernel_reads_a=True))
    assert check_redundant_transfers(log, CheckOptions()) == []
    waste = transfer_waste(log)
    assert waste["wasted_bytes"].to_list() == [0, 0, 0]
    assert waste["used_bytes"].to_list() == [400, 400, 400]


def test_copy_back_overwritten_on_host_before_any_read(tmp_path):
    p = Prog()
    p.host(0x1000, 64, write=True)
    p.target(10, [("x", 0x1000, 64, FROM)], body=[("x", 0, 64, True)])
    p.host(0x1000, 64, write=True, line=20)   # overwrites the result unread
    p.host(0x1000, 64, line=21)
    (f,) = p.findings(tmp_path)
    assert (f.variable, f.access.line, f.access.side, f.bytes) == ("x", 10, "host", 64)
    assert f.fix == "change `map(from: x[0:16])` to `map(alloc: x[0:16])` at r.c:10"
    assert "overwritten on the host before any read" in f.message


def test_update_to_never_read_and_enter_data_released_unread(tmp_path):
    p = Prog()
    p.host(0x1000, 40, write=True)
    p.host(0x2000, 40, write=True)
    p.target(5, [("u", 0x1000, 40, TO), ("v", 0x2000, 40, TO)], kind=ConstructKind.TARGET_ENTER_DATA)
    p.target(7, [("u", 0x1000, 40, TO)], kind=ConstructKind.TARGET_UPDATE)
    p.target(9, [("u", 0x1000, 40, TO)], body=[("u", 0, 40, False)], present=("u",))
    p.target(12, [("u", 0x1000, 40, 0), ("v", 0x2000, 40, 0)], kind=ConstructKind.TARGET_EXIT_DATA)
    got = {(f.variable, f.access.line): f for f in p.findings(tmp_path)}
    assert sorted(got) == [("v", 5)]
    # v's copy was released unread; u's update sent unchanged bytes (a duplicate, not an unused copy:
    # the enter data copy is the one the kernel read)
    assert "released before any read" in got[("v", 5)].message
    (dup,) = [f for f in check_transfers(read_log(tmp_path / "r.arrow"), CheckOptions())
              if f.kind is FindingKind.DUPLICATE_TRANSFER]
    assert (dup.variable, dup.access.line, dup.bytes) == ("u", 7, 40)
    assert got[("v", 5)].fix == "change `map(to: v[0:10])` to `map(alloc: v[0:10])` at r.c:5"


def test_update_that_nobody_reads_is_to_be_removed(tmp_path):
    p = Prog()
    p.host(0x1000, 40, write=True)
    p.target(5, [("u", 0x1000, 40, TO)], kind=ConstructKind.TARGET_ENTER_DATA)
    p.target(7, [("u", 0x1000, 40, TO)], body=[("u", 0, 40, False)], present=("u",))
    p.host(0x1000, 40, write=True)
    p.target(8, [("u", 0x1000, 40, TO)], kind=ConstructKind.TARGET_UPDATE)
    p.target(9, [("u", 0x1000, 40, 0)], body=[("u", 0, 40, True)], present=("u",))
    p.target(12, [("u", 0x1000, 40, 0)], kind=ConstructKind.TARGET_EXIT_DATA)
    (f,) = p.findings(tmp_path)
    assert (f.variable, f.access.line) == ("u", 8)
    assert f.fix == "remove `target update to(u[0:10])` at r.c:8: nothing reads these bytes"


def test_partial_waste_suggests_a_narrower_section_above_the_threshold(tmp_path):
    p = Prog()
    p.host(0x1000, 400, write=True)
    p.target(10, [("a", 0x1000, 400, TO)], body=[("a", 0, 100, False)])
    (f,) = p.findings(tmp_path)
    assert f.bytes == 300 and "narrow the section `a[0:100]`" in f.fix
    assert p.findings(tmp_path, redundant_min_fraction=0.8) == []


def test_loop_of_constructs_is_one_finding_with_occurrences(tmp_path):
    p = Prog()
    p.host(0x1000, 80, write=True)
    for _ in range(3):
        p.target(10, [("a", 0x1000, 80, TOFROM)], body=[("a", 0, 80, True)])
        p.host(0x1000, 80)
    (f,) = p.findings(tmp_path)
    assert (f.occurrences, f.bytes, f.details["transfers"]) == (3, 240, 3)


def test_device_address_reused_by_another_variable_translates_to_the_right_one(tmp_path):
    b = LogBuilder(program="./reuse", devices=[0])
    for line, var, host in ((10, "a", 0x1000), (20, "b", 0x5000)):
        b.access(host, 40, write=True)
        c = b.construct_begin(ConstructKind.TARGET, site=(F, line, "main"))
        b.map_clause(c, var, host, 40, TO, site=(F, line, "main"), text=var)
        b.data_op(DataOpKind.ALLOC, host, 0x9000, 40, construct=c, var=var)
        b.data_op(DataOpKind.TRANSFER_TO, host, 0x9000, 40, construct=c, var=var)
        b.kernel(c)
        if var == "b":   # only the second kernel reads its copy
            b.access(0x9000, 40, device=0, construct=c, thread=1)
        b.data_op(DataOpKind.DELETE, host, 0x9000, 40, construct=c, var=var)
        b.construct_end(c)
    (f,) = check_redundant_transfers(read_log(b.write(tmp_path / "reuse.arrow")), CheckOptions())
    assert (f.variable, f.access.line, f.bytes) == ("a", 10, 40)


def test_freed_host_block_forgets_the_unread_copy_back(tmp_path):
    p = Prog()
    p.b.alloc(0x1000, 64)
    p.target(10, [("x", 0x1000, 64, FROM)], body=[("x", 0, 64, True)])
    p.b.free(0x1000)
    p.b.alloc(0x1000, 64)
    p.host(0x1000, 64, write=True)
    assert p.findings(tmp_path) == []


def test_two_devices_and_two_ranks_are_kept_apart(tmp_path):
    p = Prog(ranks=2)
    for rank in (0, 1):
        p.host(0x1000, 40, write=True, rank=rank)
        for dev in (0, 1):
            reads = rank == 0 or dev == 0   # only rank 1 on device 1 leaves its copy unread
            p.target(10 + dev, [("a", 0x1000, 40, TO)], body=[("a", 0, 40, False)] if reads else [],
                     device=dev, rank=rank)
    (f,) = p.findings(tmp_path)
    assert (f.access.rank, f.access.device, f.access.line, f.bytes) == (1, 1, 11, 40)


def test_truncated_log_does_not_blame_bytes_pending_at_the_end(tmp_path):
    for truncated, expected in ((False, 1), (True, 0)):
        p = Prog(truncated=truncated)
        p.host(0x1000, 40, write=True)
        p.target(5, [("u", 0x1000, 40, TO)], kind=ConstructKind.TARGET_ENTER_DATA)
        assert len(p.findings(tmp_path)) == expected


def test_logs_without_accesses_give_no_advice(tmp_path):
    p = Prog(has_accesses=False)
    p.target(5, [("u", 0x1000, 40, TO)], kind=ConstructKind.TARGET_ENTER_DATA)
    assert p.findings(tmp_path) == []


def test_registered_off_by_default_and_advisory():
    from quiver.replay.driver import resolve_checks
    assert CHECKERS["transfers"][2] is False
    assert available_checkers()["transfers"] is check_transfers
    assert resolve_checks(["redundant-transfer"]) == ["transfers"]      # the old name still works
    assert FindingKind.REDUNDANT_TRANSFER is FindingKind.UNUSED_TRANSFER
    assert {FindingKind.UNUSED_TRANSFER, FindingKind.DUPLICATE_TRANSFER, FindingKind.ROUND_TRIP,
            FindingKind.REPEATED_ALLOCATION, FindingKind.UNUSED_ALLOCATION} <= ADVISORY_KINDS


@pytest.mark.parametrize("elem, wasted", [(1, 30), (2, 20), (3, 10), (4, 0)])
def test_bytes_are_counted_exactly_whatever_the_access_width(tmp_path, elem, wasted):
    p = Prog()
    p.host(0x1000, 40, write=True)
    p.target(10, [("a", 0x1000, 40, TO)], body=[("a", off, elem, False) for off in range(0, 40, 4)])
    waste = transfer_waste(read_log(p.b.write(tmp_path / "w.arrow")))
    assert waste["wasted_bytes"].to_list() == [wasted]
    assert [f.bytes for f in p.findings(tmp_path, redundant_min_fraction=0.0)] == ([wasted] if wasted else [])


def _strided_prog(expand: bool) -> Prog:
    """`a` (256 bytes) copied in; the kernel reads 4 blocks of 16 bytes every 64 bytes and writes
    3 blocks of 4 bytes every 12 bytes from byte 20 (one strided run each, or one row per block)."""
    p = Prog()
    p.host(0x1000, 256, write=True)
    b = p.b
    c = b.construct_begin(ConstructKind.TARGET, site=(F, 10, "main"))
    b.map_clause(c, "a", 0x1000, 256, TO, site=(F, 10, "main"), text="a[0:64]")
    b.data_op(DataOpKind.ALLOC, 0x1000, 0x9000, 256, construct=c, var="a")
    b.data_op(DataOpKind.TRANSFER_TO, 0x1000, 0x9000, 256, construct=c, var="a")
    b.kernel(c)
    for base, size, stride, blocks, write in ((0x9000, 16, 64, 4, False), (0x9000 + 20, 4, 12, 3, True)):
        if expand:
            for i in range(blocks):
                b.access(base + i * stride, size, write=write, device=0, construct=c, thread=1, site=(F, 12, "main"))
        else:
            b.access(base, size, write=write, device=0, construct=c, thread=1, site=(F, 12, "main"),
                     stride=stride, blocks=blocks)
    b.data_op(DataOpKind.DELETE, 0x1000, 0x9000, 256, construct=c, var="a")
    b.construct_end(c)
    return p


def test_strided_runs_count_each_block_exactly(tmp_path):
    p = _strided_prog(expand=False)
    log = read_log(p.b.write(tmp_path / "strided.arrow"))
    assert int(log.col("aux2").max()) == 4            # the kernel accesses really are strided rows
    waste = transfer_waste(log)
    # read: bytes 0-15, 64-79, 128-143, 192-207; the writes (20-23, 32-35, 44-47) waste 12 more bytes
    assert waste["used_bytes"].to_list() == [64]
    assert waste["wasted_bytes"].to_list() == [192]
    assert waste["first_wasted"].to_list() == [0x1000 + 16]
    (f,) = p.findings(tmp_path)
    assert (f.variable, f.bytes, f.details["read_bytes"]) == ("a", 192, 64)
    assert "overwritten on the device before any read" in f.message
    assert "the device copy was released before any read" in f.message


def test_a_strided_run_is_its_blocks(tmp_path):
    runs = transfer_waste(read_log(_strided_prog(expand=False).b.write(tmp_path / "runs.arrow")))
    blocks = transfer_waste(read_log(_strided_prog(expand=True).b.write(tmp_path / "blocks.arrow")))
    cols = ["used_bytes", "wasted_bytes", "reason", "first_wasted"]
    assert runs.select(cols).equals(blocks.select(cols))


def test_unused_allocation_only_for_copies_released_in_a_truncated_log(tmp_path):
    for truncated, expected in ((False, [("x", 5)]), (True, [])):
        p = Prog(truncated=truncated)
        p.host(0x1000, 40, write=True)
        p.target(5, [("x", 0x1000, 40, 0)], kind=ConstructKind.TARGET_ENTER_DATA)   # alloc, never exited
        log = read_log(p.b.write(tmp_path / f"t{truncated}.arrow"))
        got = [(f.variable, f.access.line) for f in check_transfers(log, CheckOptions())
               if f.kind is FindingKind.UNUSED_ALLOCATION]
        assert got == expected
