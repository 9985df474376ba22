"""The `trace cc` pass plugin (tracer/native/pass/quiver_range.cpp): range callbacks for loops.

Real programs built at -O2 with and without the plugin (`--no-range-pass`) must record the same
bytes at the same lines and give the same findings (the plugin only makes far fewer callbacks).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from quiver.formats.blocks import explode_blocks
from quiver.tracer import cc
from quiver.tracer.native import pass_plugin

pytestmark = pytest.mark.clang

RANGE = Path(__file__).resolve().parents[1] / "programs" / "range"
STRIDED = Path(__file__).resolve().parents[1] / "programs" / "strided"
TRACE = str(Path(sys.executable).with_name("trace"))
MARKER = re.compile(r"/\* expect ([a-z-]+) (\w+) \*/")
PER_ACCESS = ("--no-range-pass",)


def expected(src: Path) -> set[tuple[str, str, int]]:
    return {(k, v, n) for n, line in enumerate(src.read_text().splitlines(), 1) for k, v in MARKER.findall(line)}


def findings(log: Path, src: Path) -> set[tuple[str, str, int]]:
    r = subprocess.run([TRACE, "analyze", str(log), "--check", "mapping", "--format", "json"],
                       capture_output=True, text=True, check=False)
    assert r.returncode in (0, 1), r.stderr
    return {(f["kind"], f["variable"], f["access"]["line"]) for f in json.loads(r.stdout)["findings"]
            if Path(f["access"]["file"]).name == src.name}


def coverage(t) -> dict[tuple[int, bool, str], list[tuple[int, int]]]:
    """Bytes accessed per (line, write, side), as merged [lo, hi) intervals. Device reads are keyed
    by line 0: a thread's read of bytes it already read in the same kernel is recorded once, at the
    line that read them first, and which line that is differs between the builds."""
    out = {}
    a = explode_blocks(t.accesses.filter(pl.col("file").str.ends_with(".c")))
    a = a.with_columns(pl.when(pl.col("write") | (pl.col("side") == "host")).then(pl.col("line"))
                       .otherwise(0).alias("line"))
    for (line, write, side), g in a.group_by(["line", "write", "side"]):
        lo = g["addr"].to_numpy().astype(np.int64)
        hi = lo + g["bytes"].to_numpy().astype(np.int64)
        order = np.argsort(lo, kind="stable")
        merged: list[tuple[int, int]] = []
        for x, y in zip(lo[order].tolist(), hi[order].tolist(), strict=True):
            if merged and x <= merged[-1][1]:
                merged[-1] = (merged[-1][0], max(merged[-1][1], y))
            else:
                merged.append((x, y))
        out[(line, write, side)] = merged
    return out


def relative(cov, base_of) -> dict:
    """Intervals relative to the start of the allocation they fall in (runs differ in addresses)."""
    return {k: [(lo - base_of(lo), hi - base_of(lo)) for lo, hi in v] for k, v in cov.items()}


def test_plugin_is_built_and_used():
    plugin = pass_plugin()
    assert plugin is not None and plugin.name == "libquiver_range.so"
    cmd = cc.command("cc", ["-O2", "-c", "x.c"])
    assert f"-fpass-plugin={plugin}" in cmd
    assert not any(a.startswith("-fsanitize-coverage") for a in cmd)
    assert "-fno-vectorize" not in cmd
    off = cc.command("cc", ["-O2", "-c", "x.c", "--no-range-pass"])
    assert "-fsanitize-coverage=func,trace-loads,trace-stores" in off and "--no-range-pass" not in off
    # per access: no vector loads/stores (SanitizerCoverage has no callback for them), after the
    # user's flags so that theirs cannot turn the vectorisers back on
    assert off[-2:] == ["-fno-vectorize", "-fno-slp-vectorize"]
    assert cc.command("cc", ["--version", "--no-range-pass"])[-1] == "--version"


def test_driver_forwards_the_plugin_to_host_and_device(tmp_path):
    src = tmp_path / "x.c"
    src.write_text("int main(void) { return 0; }\n")
    r = subprocess.run([TRACE, "cc", "-O2", "-c", str(src), "-###"], capture_output=True, text=True, check=False)
    jobs = [line for line in r.stderr.splitlines() if '"-cc1"' in line]
    assert len(jobs) == 3  # host IR for the device, device object, host object
    assert all("-fpass-plugin=" in j for j in jobs)
    assert sum('"-fopenmp-is-target-device"' in j for j in jobs) == 1


def test_stencil_nest_same_bytes_far_fewer_events(record_c, omp_build):
    src = RANGE / "stencil_nest.c"
    runs = {name: record_c(src, args=["24"], opt="-O2", extra=extra)
            for name, extra in (("range", ()), ("per_access", PER_ACCESS))}
    for name, run in runs.items():
        assert run.returncode == 0, (name, run.stderr)
    assert runs["range"].stdout == runs["per_access"].stdout
    assert b"__quiver_range_load" in omp_build(src, opt="-O2").read_bytes()
    assert b"__quiver_range_load" not in omp_build(src, opt="-O2", extra=PER_ACCESS).read_bytes()
    logs = {name: run.open() for name, run in runs.items()}
    covs = {}
    for name, t in logs.items():
        starts = np.sort(t.data_ops.filter(pl.col("op") == "alloc")["device_addr"].to_numpy().astype(np.int64))

        def base_of(a, starts=starts):
            i = np.searchsorted(starts, a, side="right") - 1
            return int(starts[i]) if i >= 0 else 0
        covs[name] = relative({k: v for k, v in coverage(t).items() if k[2] == "device"}, base_of)
    assert covs["range"] == covs["per_access"]
    # the loads of lines 14-15 and the store of line 14; rows of b have gaps (x = 0 and n-1 are
    # not written), so the store is one interval per row, never one per plane
    assert {(line, w) for line, w, _ in covs["range"]} >= {(14, True), (0, False)}
    n = 24
    assert len(covs["range"][(14, True, "device")]) == (n - 2) * (n - 2)


def device_coverage(t) -> dict:
    """coverage() of the device accesses, relative to the device copy they fall in."""
    starts = np.sort(t.data_ops.filter(pl.col("op") == "alloc")["device_addr"].to_numpy().astype(np.int64))

    def base_of(a):
        i = np.searchsorted(starts, a, side="right") - 1
        return int(starts[i]) if i >= 0 else 0
    return relative({k: v for k, v in coverage(t).items() if k[2] == "device"}, base_of)


def mapping_report(log: Path) -> list[tuple]:
    r = subprocess.run([TRACE, "analyze", str(log), "--check", "mapping", "--format", "json"],
                       capture_output=True, text=True, check=False)
    assert r.returncode in (0, 1), r.stderr
    return sorted((f["kind"], f["variable"], f["access"]["line"], f.get("element"), f.get("element_size"), f["bytes"])
                  for f in json.loads(r.stdout)["findings"])


def mapping_sites(log: Path) -> list[tuple]:
    """mapping_report() without the bytes: how often a thread's re-read of bytes it already read in
    the kernel is dropped depends on which runs are still pending, which ranges change (the element,
    line and variable do not)."""
    return [r[:-1] for r in mapping_report(log)]


def test_unrolled_loop_is_one_record_per_nest(record_c):
    """The W reads of a row, unrolled by the compiler into straight-line loads, each stride over the
    rows: their W strided records are one record of W elements per row, rows that touch (one range
    per nest): same bytes, same finding with the same element index as per access (at -O1: at -O2
    the per-access build's loads are vector loads it does not see)."""
    src = RANGE / "unrolled_rows.c"
    ir = subprocess.run([TRACE, "cc", "-O2", "-S", "-emit-llvm", "--offload-device-only", str(src), "-o", "-"],
                        capture_output=True, text=True, check=True).stdout
    assert re.search(r"call void @__quiver_range_load_strided\(ptr %\w+, i64 64, i64 64, i64 %\w+, i64 8\)", ir)  # 8 doubles, width 8
    assert not re.search(r"call void @__quiver_range_load_strided\(ptr %\w+, i64 8,", ir)
    runs = {"range": record_c(src, opt="-O2"), "per_access": record_c(src, opt="-O1", extra=PER_ACCESS)}
    for name, run in runs.items():
        assert run.returncode == 0, (name, run.stderr)
    covs = {name: device_coverage(run.open()) for name, run in runs.items()}
    assert covs["range"] == covs["per_access"]
    reports = {name: mapping_report(run.log) for name, run in runs.items()}
    assert reports["range"] == reports["per_access"] == [("use-of-uninitialized-memory", "in", 17, 24, 8, 64)]


@pytest.mark.parametrize("name", ["csr_gather", "two_sites"])
def test_calls_skipped_or_appended_inline_record_the_same_bytes(record_c, omp_build, name):
    """CSR `p[col[k]]`: the callbacks of re-reads are skipped in the program (the interval the tracer
    publishes in __quiver_skip), and the row pointer, col/val ranges, new gather elements and q[i]
    are appended to their runs through the call-site caches; two sites feeding one run in turn
    (two_sites.c) keep each other's appends. The log has the same bytes at the same lines as per
    access."""
    src = RANGE / f"{name}.c"
    assert b"__quiver_skip" in omp_build(src, opt="-O2").read_bytes()
    runs = {build: record_c(src, opt="-O2", extra=extra) for build, extra in (("range", ()), ("per_access", PER_ACCESS))}
    for build, run in runs.items():
        assert run.returncode == 0, (build, run.stderr)
        assert run.stdout == runs["per_access"].stdout
    covs = {build: device_coverage(run.open()) for build, run in runs.items()}
    assert covs["range"] == covs["per_access"]
    assert mapping_report(runs["range"].log) == mapping_report(runs["per_access"].log)


@pytest.mark.parametrize("name", ["inplace_prefix", "hoisted_uninit", "conditional_read", "csr_gather", "two_sites",
                                  "strided_recurrence"])
@pytest.mark.parametrize("extra", [(), PER_ACCESS], ids=["range", "per_access"])
def test_findings_match_markers_at_O2(record_c, name, extra):
    src = RANGE / f"{name}.c"
    run = record_c(src, opt="-O2", extra=extra)
    assert run.returncode == 0, run.stderr
    assert findings(run.log, src) == expected(src)


@pytest.mark.parametrize("name", ["stencil_nest", "csr_gather", "hoisted_uninit", "conditional_read"])
def test_O0_skips_private_slots_and_records_the_same_bytes(record_c, name):
    """-O0 keeps every local in a stack slot: loads and stores of slots whose address is never
    taken get no callback (no map clause can name them), the others get the inline skip and the
    call-site caches; the log has the same device bytes and findings as per access."""
    src = RANGE / f"{name}.c"
    ir = subprocess.run([TRACE, "cc", "-O0", "-S", "-emit-llvm", "--offload-device-only", str(src), "-o", "-"],
                        capture_output=True, text=True, check=True).stdout
    plain = subprocess.run([TRACE, "cc", "-O0", "-S", "-emit-llvm", "--offload-device-only", "--no-range-pass",
                            str(src), "-o", "-"], capture_output=True, text=True, check=True).stdout
    calls = len(re.findall(r"call void @__(?:sanitizer_cov|quiver)_\w+\(", ir))
    assert "__quiver_skip" in ir and 0 < calls < len(re.findall(r"call void @__sanitizer_cov_(?:load|store)", plain))
    same_bytes_as_per_access(record_c, src, "-O0")


def same_bytes_as_per_access(record_c, src: Path, opt: str, racing_first_read: bool = False) -> dict:
    """Record ``src`` built with the pass and per access (``PER_ACCESS``): same output, same device
    bytes per line, same mapping findings (see mapping_sites; with ``racing_first_read``, when several
    threads read bad bytes and which is first in the log is timing, without the element); the two
    runs, by build."""
    args = ["24"] if src.stem == "stencil_nest" else []
    runs = {build: record_c(src, args=args, opt=opt, extra=extra)
            for build, extra in (("range", ()), ("per_access", PER_ACCESS))}
    for build, run in runs.items():
        assert run.returncode == 0, (build, run.stderr)
        assert run.stdout == runs["per_access"].stdout
    covs = {build: device_coverage(run.open()) for build, run in runs.items()}
    assert covs["range"] == covs["per_access"]
    sites = {build: [f[:3] if racing_first_read else f for f in mapping_sites(run.log)] for build, run in runs.items()}
    assert sites["range"] == sites["per_access"]
    return runs


NESTS = Path(__file__).resolve().parents[1] / "programs" / "nests"
NEST_SHAPES = ["halo_rows", "subblock3d", "colmajor", "triangle", "window_rows", "collapse_reread", "collapse2_halo",
               "collapse2_steps", "collapse2_fixed", "collapse3_box", "collapse3_steps", "box27", "blur_int", "transpose",
               "redblack", "collapse2_rect", "collapse2_int_window", "columns_step", "window_loops", "tiled_and",
               "recurrence", "unsigned_cols", "after_scan", "redblack_odd", "planes_order", "rem_gather",
               "rem_overlap", "aos_cells", "cond_store", "cond_mask", "pair_reads", "reread_rmw", "cond_stencil", "skip_border", "colour_if", "cond_fields",
               "store_first", "skip_self", "clamp_index", "cond_invariant"]


def device_ir(src: Path, opt: str = "-O2") -> str:
    return subprocess.run([TRACE, "cc", opt, "-S", "-emit-llvm", "--offload-device-only", str(src), "-o", "-"],
                          capture_output=True, text=True, check=True).stdout


def strided_calls(ir: str) -> list[str]:
    """The strided record calls of a device module: (kind, row bytes, stride, rows, width) as text."""
    return re.findall(r"call void @__quiver_range_(load|store)_strided\(ptr %\w+, (i64 \S+), (i64 \S+), (i64 \S+), "
                      r"i64 (\d+)\)", ir)


@pytest.mark.parametrize("name", ["blur_int", "collapse2_int_window"])
def test_a_32_bit_index_over_a_collapsed_loop_is_one_nest_record_per_window_row(name):
    """`p[(y + dy) * w + x + dx]` with `int` operands is one 32-bit recurrence over dy and dx
    sign-extended once: widened under a run-time no-wrap check (at the corners of the collapsed
    loop's planes too), the 3x3 windows of a thread's chunk of pixels are one nest record per window
    row at -O1 (rows of 12 bytes over dx, one per pixel; 3 records for dy = -1, 0, 1) instead of one
    strided record per pixel (or one call per read before the widening)."""
    ir = device_ir(NESTS / f"{name}.c", "-O1")
    assert not strided_calls(ir)
    loads = re.findall(r"call void @__quiver_range_load_nest\(ptr %\w+, i64 (\w+),(?: i64 \S+){5} i64 (\d+)\)", ir)
    assert loads == [("12", "0")] * 3
    assert [k for k, _ in nest_calls(ir)] == ["load"] * 3 + ["store"]
    # the per-access copy, when a check fails: one call per read
    assert name != "blur_int" or ir.count("call void @__quiver_range_load_c(") == 1


def test_nests_whose_rows_do_not_touch_are_strided_records():
    """One strided record per nest (or per plane) instead of one call per row or per access: halo
    rows (a range of n-2 doubles per row), a column-major sweep (one record per thread's chunk of
    columns: rows of the chunk's floats, the element width kept), unrolled rows of 5 ints with gaps (one record of 20-byte rows) or overlapping
    (stride 12: the tracer makes it one range). A triangular nest is never one record."""
    halo = strided_calls(device_ir(NESTS / "halo_rows.c"))
    assert sorted(k for k, *_ in halo) == ["load"] * 4 + ["store"]
    assert all(width == "0" for *_, width in halo)  # rows are ranges over the inner loop
    col = strided_calls(device_ir(NESTS / "colmajor.c"))
    assert [(k, w) for k, *_, w in col] == [("load", "4"), ("store", "4")]
    assert all("%" in b for _, b, *_ in col)  # (columns: rows as wide as the thread's chunk of columns)
    win = strided_calls(device_ir(NESTS / "window_rows.c"))
    assert [(k, b, s, w) for k, b, s, _, w in win] == [("store", "i64 20", "i64 32", "4"),
                                                      ("load", "i64 20", "i64 32", "4"),
                                                      ("load", "i64 20", "i64 12", "4")]
    tri = device_ir(NESTS / "triangle.c")
    assert not strided_calls(tri) and "@__quiver_range_load_c(" in tri


def test_an_access_under_a_residue_test_is_a_strided_record():
    """`if (i % 3 == c)` and `if ((i + j) % 2 == colour)` around the whole body: each access runs on one residue
    class of the loop's iterations, so it is one strided record of single elements (stride 3 and 2 elements)
    from the class's first iteration, not a call per access (a masked run per stream, whose hulls cut each
    other's windows: one call per element). The bytes and findings are per access's
    (test_nest_shapes_record_the_same_bytes_as_per_access[colour_if])."""
    calls = strided_calls(device_ir(NESTS / "colour_if.c", "-O2"))
    assert sorted((k, b, s, w) for k, b, s, _, w in calls) == (
        [("load", "i64 8", "i64 16", "8")] * 4 + [("load", "i64 8", "i64 24", "8")] * 3 +
        [("store", "i64 8", "i64 16", "8"), ("store", "i64 8", "i64 24", "8")])


@pytest.mark.parametrize("opt", ["-O1", "-O2"])
def test_a_load_of_what_a_residue_store_wrote_this_iteration_follows_the_store(opt):
    """`if (((i + j) & 1) == c) w[k] = ...; if (j % 4 == (i & 1)) probe[k] = w[k];`: the colour is a bit test
    (`& 1`, which the compiler may branch on as `!= 0`: the other class mod 2) and the probe's load of `w`
    reads the colour's store of the same iteration: each is a strided record (stride 2 and 4 elements)
    whose ranges overlap, exact with the load reported after the store (storeFirst), not the loop's
    per-access copy. Per kernel: the store's record, then the load's. Bytes and findings are per access's
    (test_nest_shapes_record_the_same_bytes_as_per_access[store_first])."""
    ir = device_ir(NESTS / "store_first.c", opt)
    records = {}
    for fn in re.split(r"^define ", ir, flags=re.MULTILINE):
        name = re.search(r"_(fresh|stale)_l\d+\.omp_outlined\.omp_outlined\(", fn)
        if name:
            records[name.group(1)] = [(kind, stride) for kind, _, stride, _, _ in strided_calls(fn)]
    # fresh: f, then the stores of w and probe, then the load of w; stale: f and `probe[k] +=`'s load (load
    # first), the stores, then the load of v
    assert records == {
        "fresh": [("load", "i64 16"), ("store", "i64 16"), ("store", "i64 32"), ("load", "i64 32")],
        "stale": [("load", "i64 16"), ("load", "i64 32"), ("store", "i64 16"), ("store", "i64 32"), ("load", "i64 32")]}


def column_stores(ir: str) -> list[tuple[str, str]]:
    """(row bytes, width) of the strided store records of a module."""
    return [(b, w) for k, b, _, _, w in strided_calls(ir) if k == "store"]


@pytest.mark.parametrize("opt", ["-O0", "-O1", "-O2"])
def test_a_transpose_stores_one_strided_record_per_chunk(opt):
    """An out-of-place transpose (`b[j*n + i] = a[i*n + j]`): the store is a column per i (a strided
    record of single elements), and the next i's column is the adjacent one (the chunk loop's step
    moves it by one element), so over the thread's chunk of i it is one strided record of n rows as
    wide as the chunk (row bytes a run-time value, the element width kept) in the chunk loop's
    preheader, and no record per column is left (the step is a constant: the tile check folds away).
    On the device with 64-bit and with `int` indices, and on the host (`omp parallel for`, -O1/-O2)."""
    src = NESTS / "transpose.c"
    dev = column_stores(device_ir(src, opt))
    assert len(dev) == 2 and all(w == "4" and not b.startswith("i64 4") and "%" in b for b, w in dev), dev
    if opt != "-O0":
        host = subprocess.run([TRACE, "cc", opt, "-S", "-emit-llvm", "--offload-host-only", str(src), "-o", "-"],
                              capture_output=True, text=True, check=True).stdout
        # (the host module also holds the two kernels' host fallbacks)
        got = column_stores(host)
        assert len(got) == 3 and all(w == "4" and "%" in b for b, w in got), got


@pytest.mark.parametrize("opt", ["-O0", "-O1", "-O2"])
def test_columns_with_a_run_time_step_are_checked(opt):
    """columns_step.c: column stores over a loop stepping by one element (a backwards column under
    `schedule(static, 5)`, a column walked from the last one down) are one record per chunk at every
    level; a column whose step is a run-time value (`i * st`) gets the record per chunk behind the
    run-time check |8 * st| <= 8 and the per-column record for when it fails (-O1, -O2; at -O0 only
    the per-column records: the bound `n / st` may trap, so it is not moved out of the loop)."""
    stores = column_stores(device_ir(NESTS / "columns_step.c", opt))
    chunk = [b for b, w in stores if w == "8" and "%" in b]
    column = [b for b, w in stores if w == "8" and b == "i64 8"]
    assert len(chunk) == (2 if opt == "-O0" else 4) and len(column) == 2, stores


@pytest.mark.skipif(not shutil.which("gdb"), reason="needs gdb")
@pytest.mark.parametrize("opt", ["-O0", "-O1"])
def test_a_transpose_makes_one_strided_call_per_chunk(omp_build, opt):
    """At run time the transpose's column stores are one strided call per thread's chunk and kernel
    (before: one per column, 2n - 1 for the two device kernels)."""
    n = 200
    exe = omp_build(NESTS / "transpose.c", opt=opt)
    hits = calls_under_gdb(exe, [str(n)], ["__quiver_range_store_strided"])
    assert 0 < hits["__quiver_range_store_strided"] < n / 10


@pytest.mark.parametrize("opt", ["-O1", "-O2"])
def test_a_transpose_within_one_array_runs_per_access(record_c, opt):
    """A transpose that reads back the array it writes (`e[j][i] = ...; s += e[i][j]`): the row and
    the column overlap, the run-time check fails and the per-access copy runs, so the first read
    before a write is element 1 (element 0 was written just before), as per access; hoisted without
    the check, the row's range would come before the column's writes and name element 0. The loop
    still has its strided record for when the check holds. (Bytes and coverage are not compared: a
    read of bytes the thread wrote is dropped only while that write's run is pending.)"""
    src = NESTS / "transpose_overlap.c"
    assert [k for k, *_ in strided_calls(device_ir(src, opt))] == ["load", "store"]
    runs = {build: record_c(src, opt=opt, extra=extra) for build, extra in (("range", ()), ("per_access", PER_ACCESS))}
    for build, run in runs.items():
        assert run.returncode == 0, (build, run.stderr)
    got = {build: mapping_sites(run.log) for build, run in runs.items()}
    want = [("use-of-uninitialized-memory", "e", 17, 1, 4)]
    assert got == {"range": want, "per_access": want}
    assert findings(runs["range"].log, src) == expected(src)


def nest_calls(ir: str) -> list[str]:
    """The collapsed-loop record calls of a device module: (kind, width) per call."""
    return re.findall(r"call void @__quiver_range_(load|store)_nest\(ptr %\w+(?:, i64 \S+){6}, i64 (\d+)\)", ir)


@pytest.mark.parametrize("opt", ["-O1", "-O2"])
def test_collapsed_loops_are_one_nest_call_per_chunk(opt):
    """A collapse(2) nest (iv / m, iv % m of one induction variable) gets one nest call per access
    in the chunk loop's preheader instead of one call per row: the 7-point stencil's store and its
    7 loads, of which in[c-1], in[c], in[c+1] (one line, rows one element apart) are one record of
    rows 2 elements longer (rows over the x loop: no width); the column blocks of 4 floats of the chunked static
    and the dynamic schedule: rows of one float each (width 4) when -O2 unrolled the block loop,
    rows of 16 bytes over it at -O1. A collapse(3) nest (`iv / m`, `(iv % m) / m2`, `(iv % m) % m2`) gets
    one nest3 call per access: the box's store and its two loads, the steps program's two kernels
    without a condition (a transposed read, a reversed write; `r += t`), rows of one element each."""
    halo = nest_calls(device_ir(NESTS / "collapse2_halo.c", opt))
    assert sorted(halo) == [("load", "0")] * 5 + [("store", "0")]
    steps = nest_calls(device_ir(NESTS / "collapse2_steps.c", opt))
    assert {k for k, _ in steps} == {"load", "store"} and len(steps) >= 5
    assert {w for _, w in steps} == ({"4"} if opt == "-O2" else {"0"})
    fixed = nest_calls(device_ir(NESTS / "collapse2_fixed.c", opt))   # a 32-bit iv: checks widened
    assert sorted(k for k, _ in fixed) == ["load"] * 4 + ["store"]
    box = device_ir(NESTS / "collapse3_box.c", opt)
    assert sorted(nest3_calls(box)) == [("load", "8")] * 2 + [("store", "8")]
    assert sorted(nest3_calls(device_ir(NESTS / "collapse3_steps.c", opt))) == [("load", "4")] * 3 + [("store", "4")] * 2


def nest3_calls(ir: str) -> list[str]:
    """The collapse(3) record calls of a device module: (kind, width) per call."""
    return re.findall(r"call void @__quiver_range_(load|store)_nest3\(ptr %\w+(?:, i64 \S+){8}, i64 (\d+)\)", ir)


O3_SHAPES = {"halo_rows", "collapse3_box", "box27", "blur_int", "transpose"}  # -O3 on the short fixed loops and the transpose only (CI time)


@pytest.mark.parametrize(("name", "opt"), [(name, opt) for name in NEST_SHAPES for opt in ("-O0", "-O1", "-O2", "-O3")
                                           if opt != "-O3" or name in O3_SHAPES])
def test_nest_shapes_record_the_same_bytes_as_per_access(record_c, name, opt):
    """Strided records (and their merging, and the tracer forming the strided run at once) record
    exactly the bytes of per-access instrumentation, with the same findings (kind, variable, line).
    At -O1 (no vector accesses in the per-access build) also the same bad bytes (except for the box
    filter: per access each of a point's 27 reads counts its bytes again, a box record counts the
    neighbourhoods' union once); a record of rows that are ranges over an inner loop has no element
    width (as a hoisted range), so the element index is compared where the record has one."""
    src = NESTS / f"{name}.c"
    runs = {build: record_c(src, opt=opt, extra=extra) for build, extra in (("range", ()), ("per_access", PER_ACCESS))}
    for build, run in runs.items():
        assert run.returncode == 0, (build, run.stderr)
        assert run.stdout == runs["per_access"].stdout
    covs = {build: device_coverage(run.open()) for build, run in runs.items()}
    assert covs["range"] == covs["per_access"]
    reports = {build: mapping_report(run.log) for build, run in runs.items()}
    assert [f[:3] for f in reports["range"]] == [f[:3] for f in reports["per_access"]]
    for got, want in zip(reports["range"], reports["per_access"], strict=True):
        assert got[3] is None or got[3:5] == want[3:5]
        assert opt != "-O1" or name in OVERLAPPING_READS or got[5] == want[5]
    assert findings(runs["range"].log, src) == expected(src)


OVERLAPPING_READS = {"box27", "blur_int", "collapse2_int_window", "window_loops",  # per access, a byte read by several points' neighbourhoods counts once per read
                     "cond_invariant"}  # (and u[i] once per true test; with the pass once per row)


def test_race_on_a_collapse3_nest_record_is_the_per_access_race(record_c):
    """The race checker takes a collapse(3) kernel's nest3 records as it takes its single accesses:
    a `target update from` that does not wait for the `nowait` kernel races with the kernel's write,
    the same finding (variable, lines, copy) with the pass as per access."""
    from quiver.formats import read_log
    from quiver.replay.nowait.races import check_races
    from quiver.replay.registry import CheckOptions

    src = NESTS / "collapse3_nowait.c"
    assert [k for k, _ in nest3_calls(device_ir(src))] == ["load", "store"]
    found = {}
    for build, extra in (("range", ()), ("per_access", PER_ACCESS)):
        run = record_c(src, opt="-O2", extra=extra)
        assert run.returncode == 0, (build, run.stderr)
        found[build] = sorted({(f.variable, f.access.line, f.related[0].site.line, f.details["copy"])
                               for f in check_races(read_log(run.log), CheckOptions())})
    assert found["range"] == found["per_access"] == [("x", 16, 15, "device")]


def calls_under_gdb(exe: Path, args: list[str], functions: list[str]) -> dict[str, int]:
    """How often each of `functions` (tracer entry points) is called in one run of exe (not
    recorded: the entry points are called either way), counted by gdb breakpoints."""
    cmd = ["gdb", "-batch", "-nx", "-ex", "set breakpoint pending on"]
    for k, f in enumerate(functions, 1):
        cmd += ["-ex", f"break {f}", "-ex", f"ignore {k} 100000000"]
    cmd += ["-ex", "run", "-ex", "info breakpoints", "--args", str(exe), *args]
    out = subprocess.run(cmd, capture_output=True, text=True, check=False, timeout=300).stdout
    hits = dict.fromkeys(functions, 0)
    current = None
    for line in out.splitlines():
        m = re.match(r"^\d+\s+breakpoint\s+keep\s+y\s+\S+ in (\w+) ", line)
        if m:
            current = m.group(1)
        m = re.search(r"already hit (\d+) time", line)
        if m and current in hits:
            hits[current] = int(m.group(1))
    return hits


@pytest.mark.skipif(not shutil.which("gdb"), reason="needs gdb")
def test_red_black_sweep_stays_hoisted(omp_build):
    """Red-black Gauss-Seidel: the store u[i*n+j] and the loads u[i*n+j-1], u[i*n+j+1] (j += 2) are
    strided records of one stride (16) whose hulls overlap but whose residues (0 and 8, 8 bytes
    each) do not: the run-time load/store check holds, so each row is 4 strided load calls and no
    per-access call (before: the loop's per-access copy, one call per read). u[i*n+j-1] and
    u[i*n+j+1] are one record: the second's rows are the first's one stride on, so together they are
    the first's rows and one more (5 calls per row before)."""
    n = 34
    exe = omp_build(NESTS / "redblack.c", opt="-O2")
    hits = calls_under_gdb(exe, [str(n), "1"], ["__quiver_range_load_strided", "__quiver_range_load_c"])
    rows = 2 * (n - 2)  # two colours
    assert hits["__quiver_range_load_strided"] == 4 * rows
    assert hits["__quiver_range_load_c"] < n  # (the first kernel's, not one per row)


def test_tall_narrow_grid_records_per_chunk_not_per_row(record_c):
    """A tall grid of 8-float rows: the records of rows i-1 and i+1 overlap (one holds the other's
    rows but its ends); the tracer drops the held rows at once (tests/tracer/test_strided_clip.py
    counts the work). The same bytes and the same finding (b's border, never written, read by the
    second sweep) as per access, and a handful of ACCESS rows per thread and kernel, not per row."""
    src = STRIDED / "tall_rows.c"
    same_bytes_as_per_access(record_c, src, "-O2", racing_first_read=True)  # every thread reads b's border
    assert findings(record_c(src, opt="-O2").log, src) == expected(src)
    rows, sweeps = 2000, 2
    run = record_c(src, args=[str(rows), str(sweeps)], opt="-O2")
    assert run.returncode == 0, run.stderr
    acc = run.open().accesses.filter(pl.col("side") == "device")
    threads = acc["thread"].n_unique()
    assert len(acc) <= 8 * threads * sweeps
    assert int(explode_blocks(acc.filter(pl.col("write")))["bytes"].sum()) == sweeps * (rows - 2) * 6 * 4


def test_window_loops_in_the_row_loop_are_one_box_record_per_row(record_c):
    """-O1 keeps a 9-point window's two loops of 3 inside the row loop: over the row loop the window's
    rows grow into 3 whole rows of the grid (a box of one dimension), one nest record per grid row
    (schedule(static, 1): a thread's chunk is one row) instead of one strided record of 3 rows per
    point. At -O0 too, through the promoted copy (top-tested loops: no rows when a body never ran; the
    static,1 loop's counter steps by the team's threads, a run-time stride the copy rebuilds). Its bytes
    and finding are per access's (test_nest_shapes_record_the_same_bytes_as_per_access)."""
    src = NESTS / "window_loops.c"
    for opt in ("-O1", "-O0"):
        assert [k for k, _ in nest_calls(device_ir(src, opt))] == ["load", "load"], opt
    n = 48
    run = record_c(src, args=[str(n)], opt="-O1")
    assert run.returncode == 0, run.stderr
    reads = run.open().accesses.filter((pl.col("side") == "device") & ~pl.col("write"))
    assert len(reads) <= 2 * (n - 2)  # two sweeps, at most one record per row (before: (n - 2)^2 per sweep)
    assert findings(run.log, src) == expected(src)
    # -O0: rows whose loop over the points never runs (m = 1) read nothing, though the window's loops
    # around them would (the box's count is 0 then)
    run = record_c(src, args=[str(n), "1"], opt="-O0")
    assert run.returncode == 0, run.stderr
    v_reads = run.open().accesses.filter((pl.col("side") == "device") & ~pl.col("write") & (pl.col("line") == 28))
    assert len(v_reads) == 0


def test_loops_tested_by_two_terms_are_hoisted_at_O0():
    """-O0 compiles `i < ii + T && i < n` into a chain of blocks meeting in a phi that is the loop's exit
    (no exit count for ScalarEvolution): the promoted copy folds the chain into one test at the top, so a tile's loads
    and its transposed stores are one strided record each (3 loads and 2 stores over the two tiled
    loops, as at -O1) instead of one call per access. Same bytes and finding as per access:
    test_nest_shapes_record_the_same_bytes_as_per_access[tiled_and]."""
    ir = device_ir(NESTS / "tiled_and.c", "-O0")
    assert sorted(k for k, *_ in strided_calls(ir)) == ["load"] * 3 + ["store"] * 2


@pytest.mark.skipif(not shutil.which("gdb"), reason="needs gdb")
@pytest.mark.parametrize("opt", ["-O0", "-O1", "-O2"])
def test_recurrences_are_hoisted_per_row_not_per_access(omp_build, opt):
    """`a[i] = a[i-2] ...` and `x[i] -= c[i] * x[i+1]` (counting down) in rows of a worksharing loop:
    the load reads what the store wrote d iterations before, so the load/store check failed and the
    rows ran their per-access copy (one call per element: a descending stream never hits the call-site
    cache). Now each row is a few range calls (the load's unwritten bytes, the stores, the rest): the
    calls no longer grow with the row length. The bytes and the finding (each row's last x, never
    written) are per access's (test_nest_shapes_record_the_same_bytes_as_per_access, "recurrence")."""
    exe = omp_build(NESTS / "recurrence.c", opt=opt)
    fns = ["__quiver_range_load_c", "__quiver_range_store_c", "__sanitizer_cov_load8", "__sanitizer_cov_store8"]
    rows = 8
    short, long_ = (calls_under_gdb(exe, [str(rows), str(n)], fns) for n in (200, 400))
    grown = sum(long_[f] - short[f] for f in fns)
    assert grown < rows, (short, long_)  # per access: 3 reads and 2 writes more per element and row


@pytest.mark.skipif(not shutil.which("gdb"), reason="needs gdb")
@pytest.mark.parametrize("opt", ["-O0", "-O1", "-O2"])
def test_unsigned_columns_against_a_64_bit_bound_are_hoisted(omp_build, opt):
    """`for (unsigned x = 1; x < w - 1; x++)` with a `size_t w` has no trip count (the 32-bit x could
    wrap first): the count that holds when x does not wrap, checked at run time with the widened
    indices, hoists each row, so the per-access calls no longer grow with the row length (before: one
    call per pixel and neighbour). At -O0 the checks are rebuilt from the promoted copy too, and a
    top-tested loop's counter is checked at its last test as well. Same bytes and finding as per
    access: test_nest_shapes_record_the_same_bytes_as_per_access[unsigned_cols]."""
    exe = omp_build(NESTS / "unsigned_cols.c", opt=opt)
    fns = ["__quiver_range_load_c", "__quiver_range_store_c", "__sanitizer_cov_load1", "__sanitizer_cov_store1"]
    short, long_ = (calls_under_gdb(exe, [str(n)], fns) for n in (40, 80))
    # hoisted: a few calls more per row of the 40 more (-O0: a row's loads of `rows`/`s`); per access:
    # ~5 more per pixel of the 4800 more
    assert sum(long_[f] - short[f] for f in fns) <= 2 * 40 * 2, (short, long_)


@pytest.mark.skipif(not shutil.which("gdb"), reason="needs gdb")
def test_a_bound_found_by_an_earlier_loop_is_rebuilt_at_O0(omp_build):
    """`while (k < n && row[k] >= 0) k++; for (q = 0; q < k; q++) v[...] = ...` at -O0: the copy names
    the bound k as the `while` loop's recurrence (its value after the loop); it is rebuilt from k's
    stack slot, so each row's stores and reads are ranges and the per-access calls stop growing with
    the row length (before: "not rebuilt", one call per element). Same bytes and finding as per
    access: test_nest_shapes_record_the_same_bytes_as_per_access[after_scan]."""
    exe = omp_build(NESTS / "after_scan.c", opt="-O0")
    fns = ["__quiver_range_load_c", "__quiver_range_store_c", "__sanitizer_cov_load4", "__sanitizer_cov_store4"]
    short, long_ = (calls_under_gdb(exe, [str(n)], fns) for n in (64, 128))
    grown = {f: long_[f] - short[f] for f in fns}
    # the scans' reads stay per access (data-dependent exits: 64 more per row of 16); the copy loop's
    # 2 x 64 more per row must not
    assert grown["__quiver_range_store_c"] + grown["__sanitizer_cov_store4"] < 16, (short, long_)


def device_write_lines(log_run, src: Path) -> set[int]:
    """Lines of the device stores recorded in ``src`` (each a record of its own when not merged)."""
    a = log_run.open().accesses.filter((pl.col("side") == "device") & pl.col("write") &
                                       pl.col("file").str.ends_with(src.name))
    return set(a["line"].to_list())


@pytest.mark.parametrize("opt", ["-O0", "-O2"])
def test_array_of_structs_records_the_same_bytes_and_reports_the_field_line(record_c, opt):
    """An array of 48-byte structs: each field a strided record of stride 48, loads and stores of one
    struct on both sides of each other (the load/store check takes the residue of a negative
    difference). Same bytes and finding as per access; with the pass at -O2 each field's line is a
    record of its own, so the finding names acc[i].az's line, not the struct's first field's."""
    src = NESTS / "aos.c"
    runs = {build: record_c(src, opt=opt, extra=extra) for build, extra in (("range", ()), ("per_access", PER_ACCESS))}
    for build, run in runs.items():
        assert run.returncode == 0, (build, run.stderr)
        assert run.stdout == runs["per_access"].stdout

    def device_bytes(run) -> dict:
        return {w: sorted(set().union(*(range(lo, hi) for k, v in device_coverage(run.open()).items() if k[1] == w
                                        for lo, hi in v)))
                for w in (False, True)}
    assert device_bytes(runs["range"]) == device_bytes(runs["per_access"])
    kinds = {build: {(k, v) for k, v, _ in findings(run.log, src)} for build, run in runs.items()}
    assert kinds["range"] == kinds["per_access"] == {("use-of-uninitialized-memory", "acc")}
    if opt == "-O2":
        assert findings(runs["range"].log, src) == expected(src)
        assert device_write_lines(runs["range"], src) >= {20, 22, 26, 27, 28, 29, 30, 31}


@pytest.mark.skipif(not shutil.which("gdb"), reason="needs gdb")
def test_array_of_structs_stays_hoisted(omp_build):
    """The kick kernel of aos.c is strided records only: its per-access calls (call-site caches) do
    not grow with the steps, one strided load per field read and one store per field written do
    (before the residue fix: the loop's per-access copy, one call per field and particle)."""
    n = 64
    exe = omp_build(NESTS / "aos.c", opt="-O2")
    fns = ["__quiver_range_load_c", "__quiver_range_store_c", "__quiver_range_load_strided",
           "__quiver_range_store_strided"]
    one, three = (calls_under_gdb(exe, [str(n), str(steps)], fns) for steps in (1, 3))
    per_access = sum(three[f] - one[f] for f in fns[:2]) / 2
    loads, stores = ((three[f] - one[f]) / 2 for f in fns[2:])
    assert per_access < n / 4  # host launch bookkeeping, not per particle
    assert stores > 0 and loads == 1.5 * stores  # 9 fields read, 6 written per thread and step


def inner_loops(asm: str) -> list[list[str]]:
    """The instructions of each loop nested in another loop of a verbose assembly listing (LLVM
    marks a loop's header block `This Inner Loop Header: Depth=N`, on its label's line or the next,
    and its other blocks `in Loop: Header=BB... Depth=N`)."""
    loops: list[list[str]] = []
    header, body, last = None, [], None
    for line in asm.splitlines():
        label = re.match(r"^(?:\.L(BB\d+_\d+)|# %bb\.\d+):", line)
        if label or line.startswith("\t.cfi_endproc"):
            if header and not (label and f"in Loop: Header={header} " in line):
                loops.append(body)
                header, body = None, []
            last = label.group(1) if label else None
        m = re.search(r"Inner Loop Header: Depth=(\d+)", line)
        if m and int(m.group(1)) >= 2 and last:
            if header:
                loops.append(body)
            header, body = last, []
            continue
        if header and line.startswith("\t") and not line.lstrip().startswith("."):
            body.append(line)
    if header:
        loops.append(body)
    return loops


@pytest.mark.parametrize("opt", ["-O1", "-O2"])
def test_the_loop_a_holding_check_runs_keeps_its_registers(opt):
    """A red-black row loop: its rows are strided records (calls in the row loop), and when the
    run-time load/store check holds the loop runs as compiled, without callbacks. That copy must be
    the program's own code, not one that reloads its pointers from the stack every iteration: the
    check is marked likely, so the per-access copy's many values do not take its registers."""
    asm = subprocess.run([TRACE, "cc", opt, "-g", "-S", "--offload-device-only", str(NESTS / "redblack.c"), "-o", "-"],
                         capture_output=True, text=True, check=True).stdout
    plain = [body for body in inner_loops(asm) if not any("call" in ins for ins in body)]
    assert plain, "the uninstrumented copy of the row loop"
    for body in plain:
        assert not [ins for ins in body if "Reload" in ins], "\n".join(body)


@pytest.mark.skipif(not shutil.which("gdb"), reason="needs gdb")
def test_records_beside_a_read_of_a_wrapping_index_stay_hoisted(omp_build, monkeypatch):
    """cond_store: the conditional store `out[i]` is per access (not on every iteration), but its
    address is affine, so its hull is known and the loads of `in` stay one range beside it.
    rem_gather: the read `v[r*nx + r % nx]` is per access (not affine), and alias analysis cannot
    tell it from the structs' fields; its hull over the loop (the remainder in [0, nx)) misses them,
    so the fields' stores stay strided records: no per-access store grows with the rows (before: two
    per row). rem_overlap: the wrapping read's hull meets the store's record, the run-time check
    fails, and the loop's per-access version stores every row (one thread: its chunk holds the rows
    the read wraps over; a chunk further on passes the check). Built without inline checks and caches
    (QUIVER_NO_INLINE_SKIP), so every per-access access is one callback to count."""
    monkeypatch.setenv("QUIVER_NO_INLINE_SKIP", "1")
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    fns = ["__sanitizer_cov_store8", "__sanitizer_cov_load8"]

    def grown(name: str, more: str) -> dict[str, int]:
        exe = omp_build(NESTS / f"{name}.c", opt="-O2", extra=("-DQV_PLAIN_CALLS",))
        small, big = (calls_under_gdb(exe, [str(n), more] if more else [str(n)], fns) for n in (100, 400))
        return {f: big[f] - small[f] for f in fns}

    cond = grown("cond_store", "")
    assert cond["__sanitizer_cov_load8"] == 0  # `in` one range (before: one load per element)
    assert cond["__sanitizer_cov_store8"] > 0  # the conditional store, per access
    gather = grown("rem_gather", "16")
    assert gather["__sanitizer_cov_load8"] == 300  # the wrapping read, one per row
    assert gather["__sanitizer_cov_store8"] == 0
    overlap = grown("rem_overlap", "8")
    assert overlap["__sanitizer_cov_store8"] == 300


@pytest.mark.skipif(not shutil.which("gdb"), reason="needs gdb")
def test_interleaved_field_runs_grow_without_a_scan(omp_build, tmp_path, monkeypatch):
    """aos_cells.c: each field of the particles is one strided record per cell, and a cell's record
    continues the previous cell's run. The fields' runs interleave (one stride, phases apart): they
    share no byte, so one field's run does not bound another's window, and each row joins its run on
    the fast path; and a field's store run grows over the rows its older load run holds (that run
    drops no write, and a later write of its bytes follows its reads in the log too). Before, the
    stores' rows went through run_grow's scan of all runs, two per row (21,600 more for 300 more
    cells); now at most one per written field, cell and step (where a window ends)."""
    exe = omp_build(NESTS / "aos_cells.c", opt="-O2")
    monkeypatch.setenv("OMP_NUM_THREADS", "1")

    def grows(cells: int) -> int:  # while recording (the coalescer only works then)
        monkeypatch.setenv("QUIVER_RAW_DIR", str(tmp_path / f"raw{cells}"))
        return calls_under_gdb(exe, [str(cells), "12"], ["run_grow"])["run_grow"]

    assert grows(400) - grows(100) <= 300 * 3 * 2


def cond_mask_truth(n: int) -> dict[tuple[int, bool], tuple[int, int]]:
    """tests/programs/nests/cond_mask.c's conditional accesses, by (line, write, variable): how many
    elements each touches (the program's hash, in Python) and the element's bytes."""
    def mix(x: int) -> int:
        x ^= x >> 16
        x = (x * 0x45D9F3B) & 0xFFFFFFFF
        return x ^ (x >> 16)
    lines = {k: i for i, line in enumerate((NESTS / "cond_mask.c").read_text().splitlines(), 1)
             for k in ("out[i] = in[i]", "sum += f[i]", "flag[i] = 1") if k in line}
    inv = [(mix(i) % 1000) / 1000.0 for i in range(n)]
    return {(lines["out[i] = in[i]"], True, "out"): (sum(v > 0.3 for v in inv), 8),
            (lines["sum += f[i]"], False, "f"): (sum(mix(7 * i + 1) % 5 != 0 for i in range(n)), 4),
            (lines["flag[i] = 1"], True, "flag"): (sum(mix(i) % 10 == 0 for i in range(n)), 1)}


@pytest.mark.parametrize("opt", ["-O0", "-O2"])
def test_conditional_accesses_are_masked_rows(record_c, opt):
    """A store or read its loop skips on some elements (`if (in[i] > 0.3) out[i] = ...`, data-dependent
    gaps) is one masked row per window of 64 elements (format 6: a bit per element), not one row per
    stretch between the gaps: each conditional access's rows are few, and the blocks they stand for are
    exactly the elements whose condition held (counted here from the program's hash)."""
    from quiver.formats.blocks import explode_blocks

    n = 3001
    run = record_c(NESTS / "cond_mask.c", opt=opt, args=[str(n)])
    assert run.returncode == 0, run.stderr
    t = run.open()
    acc = t.accesses.filter(pl.col("side") == "device")
    copies = {v: (a, a + b) for v, a, b in t.data_ops.filter(pl.col("op") == "alloc")
              .select("variable", "device_addr", "bytes").iter_rows()}
    for (line, write, var), (count, elem) in cond_mask_truth(n).items():
        lo, hi = copies[var]
        rows = acc.filter((pl.col("line") == line) & (pl.col("write") == write) & (pl.col("addr") >= lo)
                          & (pl.col("addr") < hi))
        assert rows["mask"].null_count() < len(rows), (line, write)  # masked rows
        assert len(rows) <= n // 16, (line, write, len(rows))  # ~600 stretches between gaps for ~70% of 3001
        assert explode_blocks(rows)["bytes"].sum() == count * elem, (line, write)
