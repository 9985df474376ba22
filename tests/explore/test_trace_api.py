"""The Python API: quiver.open(...) frames, findings, history, VSM state, timeline (LogBuilder logs)."""

from __future__ import annotations

import polars as pl
import pytest

import quiver


def test_findings_frame_has_one_row_per_finding(saxpy_log):
    t = quiver.open(saxpy_log)
    f = t.findings(["redundant-transfer"])
    assert f.select("kind", "advisory", "variable", "file", "line", "side", "bytes", "clause").rows() == [
        ("unused-transfer", True, "a", "saxpy.c", 10, "device", 400, "map(tofrom: a[0:N])")]
    assert f["fix"][0] == "change `map(tofrom: a[0:N])` to `map(from: a[0:N])` at saxpy.c:10"
    with pytest.raises(ValueError, match="unknown check 'nope'"):
        t.findings(["nope"])


def test_history_of_a_variable_translates_device_accesses(saxpy_log):
    h = quiver.open(saxpy_log).history("a")
    assert h.select("operation", "side", "line").rows() == [
        ("allocated (heap)", "host", 5), ("write", "host", 8), ("map clause", "host", 10),
        ("device copy allocated", "host <-> device 0", 10), ("copied to the device", "host <-> device 0", 10),
        ("write", "device 0", 13), ("copied back to the host", "host <-> device 0", 10),
        ("device copy released", "host <-> device 0", 10), ("read", "host", 16)]
    assert h["host_addr"].unique().to_list() == [0x10000]
    assert h.filter(pl.col("operation") == "map clause")["detail"].to_list() == ["target: map(tofrom: a[0:N])"]


def test_history_of_an_address_range_and_unknown_variable(saxpy_log):
    t = quiver.open(saxpy_log)
    h = t.history(addr=0x20000 + 396, size=4)         # the last element of b
    assert h.filter(pl.col("side") == "device 0")["operation"].to_list() == ["read"]
    assert h["offset"].to_list()[0] == -396
    with pytest.raises(KeyError, match="no mapped variable named 'zz'.*a, b"):
        t.history("zz")


def test_history_follows_rma_into_the_target_window(mpi_log):
    h = quiver.open(mpi_log).history(addr=0x5010, size=8, rank=1)
    assert h.select("rank", "side", "operation", "line").rows() == [
        (1, "remote", "put from rank 0 writes here", 14), (1, "host", "read", 18)]


def test_vsm_state_of_a_variable_over_time(saxpy_log):
    t = quiver.open(saxpy_log)
    seq = {op: s for s, op in t.history("a").select("seq", "operation").iter_rows()}
    before = t.vsm_state("a", at=seq["copied to the device"] - 1)
    assert before.select("bytes", "state").rows() == [(400, "OV valid, CV0 uninitialised")]
    after_kernel = t.vsm_state("a", at=seq["write"])
    assert after_kernel.select("bytes", "ov_valid", "ov_init", "cv0_valid", "state").rows() == [
        (400, False, True, True, "OV stale, CV0 valid")]
    assert t.vsm_state("a").select("state").item() == "OV valid, CV0 uninitialised"
    with pytest.raises(ValueError, match="not an event of this log"):
        t.vsm_state("a", at=10_000)


def test_timeline_explain_and_transfers(saxpy_log):
    t = quiver.open(saxpy_log)
    tl = t.timeline()
    assert tl.filter(pl.col("category") == "kernel").select("name", "track").rows() == [
        ("kernel saxpy.c:10", "device 0 (driven by thread 0)")]
    assert tl.filter(pl.col("category") == "transfer")["bytes"].sum() == 1200
    ex = t.explain()
    assert ex.filter(pl.col("variable") == "b").select("copy_in_bytes", "copy_out_bytes", "alloc_runs").row(0) == (
        400, 0, 1)
    tr = t.transfers()
    assert tr.select("variable", "op", "wasted_bytes").rows() == [
        ("a", "transfer_to", 400), ("b", "transfer_to", 0), ("a", "transfer_from", 0)]


def test_history_and_vsm_state_of_a_strided_device_run(tmp_path):
    from quiver.formats import ConstructKind, DataOpKind, LogBuilder, MapType

    b = LogBuilder(program="rows")
    b.alloc(0x10000, 1024, site=("rows.c", 3, "main"))
    c = b.construct_begin(ConstructKind.TARGET, site=("rows.c", 5, "main"))
    b.map_clause(c, "g", 0x10000, 1024, MapType.TO | MapType.FROM, site=("rows.c", 5, "main"), text="g[0:256]")
    b.data_op(DataOpKind.ALLOC, 0x10000, 0x90000, 1024, construct=c, var="g")
    b.data_op(DataOpKind.TRANSFER_TO, 0x10000, 0x90000, 1024, construct=c, var="g")
    # the interiors of 4 rows of 256 bytes: 248 bytes from byte 4 of each row
    b.access(0x90004, 248, write=True, device=0, construct=c, site=("rows.c", 7, "main"), stride=256, blocks=4,
             width=4)
    b.construct_end(c)
    t = quiver.open(b.write(tmp_path / "rows.arrow"))
    hit = t.history(addr=0x10000 + 3 * 256 + 100, size=4)      # inside the last block
    assert hit.filter(pl.col("side") == "device 0").select("operation", "host_addr", "bytes", "detail").rows() == [
        ("write", 0x10004, 4 * 248, "strided run: 4 blocks of 248 bytes every 256 bytes")]
    gap = t.history(addr=0x10000 + 256, size=4)                # between two blocks: not touched
    assert gap.filter(pl.col("side") == "device 0").is_empty()
    state = t.vsm_state("g")
    assert state.select("bytes", "state").rows()[:3] == [(4, "OV valid, CV0 valid"), (248, "OV stale, CV0 valid"),
                                                        (8, "OV valid, CV0 valid")]
    assert state["bytes"].sum() == 1024 and len(state) == 9


def test_plot_timeline_zooms_to_from_ns_to_ns(saxpy_log):
    """from_ns/to_ns set the axis (in µs since the log's first event), not only which slices are kept."""
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    t = quiver.open(saxpy_log)
    whole = t.timeline()
    first = int(whole["start_ns"].min())
    end = int((whole["start_ns"] + whole["dur_ns"]).max())
    full = t.plot_timeline().get_xlim()
    lo = first + (end - first) // 3
    hi = lo + max((end - first) // 10, 1)
    zoom = t.plot_timeline(from_ns=lo, to_ns=hi).get_xlim()
    origin = first - full[0] * 1e3          # x = 0 is the log's first event, at every zoom
    assert zoom == pytest.approx(((lo - origin) / 1e3, (hi - origin) / 1e3))
    assert zoom[1] - zoom[0] < (full[1] - full[0]) / 5
