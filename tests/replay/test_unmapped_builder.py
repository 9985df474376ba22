"""Unmapped memory and lines of optimised code, on logs built with the public LogBuilder.

A kernel reads a heap block no clause maps, right after the device copy of another variable (the
case that used to be "buffer-overflow on b, element -4024"); its access has no line (optimised
code), so the finding takes the enclosing construct's line and says so.
"""

from __future__ import annotations

from quiver.formats import ConstructKind, DataOpKind, EventKind, LogBuilder, MapType, read_log
from quiver.replay.mapping.vsm import check_mapping
from quiver.replay.registry import CheckOptions

HOST_B, DEV_B = 0x20000, 0x30000
HOST_W = DEV_B - 4096   # host offloading: one address space; w lies in b's device copy's band
SOURCE = """#include <stdlib.h>
int main(void) {
  double *b = malloc(4096);
  double *w = calloc(512, sizeof(double));
"""


def _log(tmp_path, access_line: int):
    src = tmp_path / "k.c"
    src.write_text(SOURCE.replace("calloc(512, sizeof(double))", "malloc(4096)"))
    f = str(src)
    b = LogBuilder()
    b.alloc(HOST_B, 4096, b.location(f, 3, "main"))
    b.event(EventKind.ALLOC, addr=HOST_W, size=4096, id=b.new_id("alloc"), op=2, loc=b.location(f, 4, "main"))
    c = b.construct_begin(ConstructKind.TARGET, b.location(f, 9, "main"))
    b.map_clause(c, "b", HOST_B, 4096, MapType.FROM, b.location(f, 9, "main"), text="b[0:512]")
    b.data_op(DataOpKind.ALLOC, HOST_B, DEV_B, 4096, construct=c, var="b")
    b.kernel(c)
    b.access(HOST_W, 4096, device=0, construct=c, site=b.location(f, access_line, "main"), width=8)
    b.access(DEV_B, 4096, write=True, device=0, construct=c, site=b.location(f, 10, "main"), width=8)
    b.data_op(DataOpKind.TRANSFER_FROM, HOST_B, DEV_B, 4096, construct=c, var="b")
    b.data_op(DataOpKind.DELETE, HOST_B, DEV_B, 4096, construct=c, var="b")
    b.construct_end(c)
    return read_log(b.write(tmp_path / "k.arrow"))


def test_device_read_of_an_unmapped_host_object_is_unmapped_memory_not_an_overflow(tmp_path):
    [f] = check_mapping(_log(tmp_path, 10), CheckOptions())
    assert (f.kind.value, f.access.line, f.element, f.element_size) == ("unmapped-memory", 10, 0, 8)
    assert "no map clause maps" in f.message
    assert f.variable == "w" and "`map(to: w[0:512])` to the target construct" in f.fix and "k.c:9" in f.fix
    assert [r.role for r in f.related] == ["construct", "allocation"]
    assert f.related[1].message == "malloc of 4096 bytes"   # the runtime saw calloc; the source says malloc
    assert "line_from" not in f.details


def test_an_access_without_a_line_takes_the_enclosing_construct_line_and_says_so(tmp_path):
    [f] = check_mapping(_log(tmp_path, 0), CheckOptions())
    assert f.kind.value == "unmapped-memory" and f.access.line == 9 and f.access.file.endswith("k.c")
    assert f.details["line_from"].startswith("the enclosing `target` construct")


def test_a_finding_counts_elements_when_any_of_its_accesses_knows_the_width(tmp_path):
    """A vectorised read (width unknown) then a scalar write past the same section: one finding, in elements."""
    b = LogBuilder()
    b.alloc(HOST_B, 256, b.location("v.c", 3, "main"))
    c = b.construct_begin(ConstructKind.TARGET, b.location("v.c", 5, "main"))
    b.map_clause(c, "b", HOST_B, 128, MapType.TO, b.location("v.c", 5, "main"), text="b[0:n]")
    b.data_op(DataOpKind.ALLOC, HOST_B, DEV_B, 128, construct=c, var="b")
    b.data_op(DataOpKind.TRANSFER_TO, HOST_B, DEV_B, 128, construct=c, var="b")
    b.kernel(c)
    site = b.location("v.c", 6, "main")
    b.access(DEV_B + 96, 64, device=0, construct=c, site=site)                       # width unknown
    b.access(DEV_B + 160, 4, write=True, device=0, construct=c, site=site, width=4)
    b.data_op(DataOpKind.DELETE, HOST_B, DEV_B, 128, construct=c, var="b")
    b.construct_end(c)
    [f] = check_mapping(read_log(b.write(tmp_path / "v.arrow")), CheckOptions())
    assert (f.kind.value, f.variable, f.element_size, f.element, f.bytes) == ("buffer-overflow", "b", 4, 32, 36)
