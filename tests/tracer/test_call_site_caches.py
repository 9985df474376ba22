"""Differential tests of the tracer's fast paths for what stays per access (qv_access.c: runs found by
where they continue, families, call-site caches appended by the program, chains of family members,
inline skip), on programs of tests/programs/cache/ whose control events (target update, enter/exit
data, kernels, free/malloc of the same address, a host team's barrier) fall between accesses the
program appends itself.

Each program is recorded built with the pass plugin at -O2 and per access (`--no-range-pass`, the
reference; also at -O1 where -O2 vectorises the per-access build's loads away): both must give
exactly the findings of the `/* expect KIND VAR */` markers, and the same findings with the same
bytes.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from test_range_pass import NESTS, PER_ACCESS, calls_under_gdb, expected, findings, mapping_report

pytestmark = pytest.mark.clang

CACHE = Path(__file__).resolve().parents[1] / "programs" / "cache"

# program -> reference builds besides -O2 per access
PROGRAMS = {
    "update_chunks": (), "update_chunks_ok": (), "alternate_arrays": (), "break_early": (),
    "partial_kernel": (), "device_steps": (), "reuse_rounds": (), "host_team_fill": (),
    "scatter_overflow": (), "gather_overflow": (),
    # at -O2 the per-access build's loop is vectorised: only -O1 shows its per-access order
    "write_ahead": ("-O1",),
}


def report(log: Path) -> list[tuple]:
    """Findings as (kind, variable, line, bytes): the element index is not compared (a hoisted
    range has no element width, so its findings give none)."""
    return sorted((k, v, line, b) for k, v, line, _, _, b in mapping_report(log))


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_fast_paths_give_the_per_access_findings(record_c, omp_build, name):
    src = CACHE / f"{name}.c"
    exe = omp_build(src, opt="-O2").read_bytes()
    assert b"__quiver_range_load_c" in exe or b"__quiver_range_store_c" in exe  # a call-site cache
    builds = {"range": ("-O2", ()), "per_access": ("-O2", PER_ACCESS)}
    builds.update({f"per_access{o}": (o, PER_ACCESS) for o in PROGRAMS[name]})
    runs = {b: record_c(src, opt=opt, extra=extra) for b, (opt, extra) in builds.items()}
    for b, run in runs.items():
        assert run.returncode == 0, (b, run.stderr)
        assert run.stdout == runs["per_access"].stdout
        assert findings(run.log, src) == expected(src), b
    reports = {b: report(run.log) for b, run in runs.items()}
    for b in runs:
        assert reports[b] == reports["per_access"], b


@pytest.mark.skipif(not shutil.which("gdb"), reason="needs gdb")
def test_a_strided_walk_of_single_accesses_is_appended_by_the_program(omp_build, tmp_path, monkeypatch):
    """tests/programs/nests/rem_gather.c reads `v[r*nx + r % nx]` per access (the index wraps): a
    diagonal, one element every nx + 1, for nx rows at a time. Once the tracer has made it a strided
    run of one access per block, the call site's cache takes the next blocks one stride apart (next =
    end + stride - 8) and the program appends them itself: about 3 calls per nx rows (the wrap starts
    a new run) instead of one per row."""
    exe = omp_build(NESTS / "rem_gather.c", opt="-O2")
    monkeypatch.setenv("OMP_NUM_THREADS", "1")

    def calls(n: int) -> int:  # while recording (the caches are only filled then)
        monkeypatch.setenv("QUIVER_RAW_DIR", str(tmp_path / f"raw{n}"))
        return calls_under_gdb(exe, [str(n), "16"], ["__quiver_range_load_c"])["__quiver_range_load_c"]

    small, big = calls(100), calls(400)
    assert 0 < big - small <= 300 // 16 * 4  # one call per row (300) before


@pytest.mark.skipif(not shutil.which("gdb"), reason="needs gdb")
def test_conditional_reads_and_a_sliding_pair_are_appended_by_the_program(omp_build, tmp_path, monkeypatch):
    """tests/programs/nests/pair_reads.c: `if (keep[i]) q[i] -= 0.1 * (f[i + 1] - f[i])` with one
    element in 9 skipped. The conditional loads and the store have masked call-site caches (the program
    sets the element's bit itself, gaps and all), and the two reads of f are one 16-byte load per i that
    rereads the 8 bytes the one before read last: its cache expects the next load 8 bytes before the
    run's end. About one call per gap instead of one per element (before: 0.93 load calls and 0.15 store
    calls per element)."""
    exe = omp_build(NESTS / "pair_reads.c", opt="-O2")
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    entries = ["__quiver_range_load_c", "__quiver_range_store_c"]

    def calls(n: int) -> dict[str, int]:  # while recording (the caches are only filled then)
        monkeypatch.setenv("QUIVER_RAW_DIR", str(tmp_path / f"raw{n}"))
        return calls_under_gdb(exe, [str(n)], entries)

    small, big = calls(400), calls(1600)
    assert 0 < big["__quiver_range_load_c"] - small["__quiver_range_load_c"] <= 1200 * 35 // 100
    assert 0 < big["__quiver_range_store_c"] - small["__quiver_range_store_c"] <= 1200 // 10


def site_calls_added(exe: Path, small: str, big: str, tmp_path: Path, monkeypatch, *more: str) -> tuple[int, int]:
    """The calls of `__quiver_range_load_c` and `_store_c` (a call-site cache missed) that a run with argument
    `big` makes more than one with `small` (both followed by `more`), one thread, while recording (the caches
    are only filled then)."""
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    entries = ["__quiver_range_load_c", "__quiver_range_store_c"]
    counts = []
    for arg in (small, big):
        monkeypatch.setenv("QUIVER_RAW_DIR", str(tmp_path / f"raw{arg}"))
        counts.append(calls_under_gdb(exe, [arg, *more], entries))
    return tuple(counts[1][e] - counts[0][e] for e in entries)


@pytest.mark.skipif(not shutil.which("gdb"), reason="needs gdb")
def test_an_access_its_block_already_made_gets_no_call(omp_build, tmp_path, monkeypatch):
    """tests/programs/nests/reread_rmw.c: under `if (alive[i])`, `v[i] = ... x[i]; x[i] += ... v[i];
    y[i] = v[i] + ...` loads x[i] again after the store to v[i] and v[i] again after the store to x[i]
    (clang cannot tell the pointers apart). The repeated loads are covered by the thread's earlier
    access in the block and get no call: the two conditional loads left (v, x) and the three stores
    are appended by the program's masked caches, a call per window of 512 slots (QV_MASK_WORDS words of
    the cache's bitmap) and stream: a full window rolls over to the next one at once, masked from its first
    slot. Before: the reread of x missed its cache on every element (its run's last slot was not in the
    skip interval the program checks): 1.4 load calls per element; 0.031 and 0.047 with windows of 64."""
    exe = omp_build(NESTS / "reread_rmw.c", opt="-O2")
    loads, stores = site_calls_added(exe, "500", "8000", tmp_path, monkeypatch)
    # two kernels of 7500 more elements: two load streams, three store streams, about one call per stream
    # and window of 512 slots (0.0039 and 0.0059 per element; 0.031 and 0.047 with windows of 64 slots,
    # 0.06 and 0.09 while a full window's next slot started a plain run and its first gap called again)
    assert 0 < loads <= 2 * 7500 * 5 // 1000
    assert 0 < stores <= 2 * 7500 * 8 // 1000


@pytest.mark.skipif(not shutil.which("gdb"), reason="needs gdb")
def test_the_read_streams_of_a_conditional_stencil_are_appended_by_the_program(omp_build, tmp_path, monkeypatch):
    """tests/programs/nests/cond_stencil.c: `if (keep[k]) dst[k] = ... src[k - 1], src[k], src[k + 1],
    src[k - nx], src[k + nx]` over rows of 96 floats, ~30% of the cells skipped in stretches of 8. Every row is
    read by the streams of the row below (a row ahead), of the row itself (one 12-byte block of the three
    loads) and of the row above; a masked run that read drops no read that comes to the tracer (its gaps
    leave no interval the program could skip inline) and no other access's call site takes it: each
    stream's call site appends its own reads.
    Before: 2.1 load calls and 0.7 store calls per cell (each read the stream ahead held was dropped in a
    call; two sites took one run from each other); 0.24 with the drops alone undone, 2.1 with the sites."""
    exe = omp_build(NESTS / "cond_stencil.c", opt="-O2")
    loads, stores = site_calls_added(exe, "64", "264", tmp_path, monkeypatch)
    cells = 2 * 200 * 94  # two steps over 200 more rows of 94 interior cells
    assert 0 < loads <= cells * 12 // 100  # 0.089 per cell (the block's calls at the gaps)
    assert 0 < stores <= cells // 100  # 0.002


@pytest.mark.skipif(not shutil.which("gdb"), reason="needs gdb")
def test_a_stencil_whose_border_a_continue_skips_is_appended_by_the_program(omp_build, tmp_path, monkeypatch):
    """tests/programs/nests/skip_border.c: one loop over a flattened index, the border columns left by a
    `continue` (every access conditional), rows of 520 doubles. The read streams a[k - 1] and a[k + 1]
    read each other's bytes two elements apart: a conditional read run drops no read that comes to the
    tracer and no other access's call site takes it (as a masked one), so each stream's site appends its
    own reads. Before: one load call per cell (the two sites took one run from each other at every
    element, or every read of a[k - 1] the run of a[k + 1] held was dropped in a call)."""
    exe = omp_build(NESTS / "skip_border.c", opt="-O2")
    loads, stores = site_calls_added(exe, "8", "48", tmp_path, monkeypatch)
    cells = 2 * 40 * 518  # two sweeps over 40 more rows of 518 interior cells
    assert 0 < loads <= cells // 50
    assert 0 < stores <= cells // 100


@pytest.mark.skipif(not shutil.which("gdb"), reason="needs gdb")
def test_conditional_fields_of_an_array_of_structs_are_appended_by_the_program(omp_build, tmp_path, monkeypatch):
    """tests/programs/nests/cond_fields.c: `if (p[i].alive) { p[i].x += ... p[i].vx; p[i].y += ... q[i].vy; }`
    over 24-byte structs. Each conditional access's call site knows its elements are 24 bytes apart (its
    desc's QV_DESC_PITCH): its masked run's slots are that far apart, it takes nothing but its slots, so the
    runs of the other fields, whose hulls it interleaves with, neither cut its window nor conflict with it.
    Before: every conditional access was a call (a masked run of 4-byte slots per field, each hull cutting
    the others' windows)."""
    exe = omp_build(NESTS / "cond_fields.c", opt="-O2")
    loads, stores = site_calls_added(exe, "400", "8400", tmp_path, monkeypatch)
    elements = 2 * 8000  # two steps over 8000 more particles (~75% live): 4 load and 2 store streams
    assert 0 < loads <= elements // 50
    assert 0 < stores <= elements // 100


@pytest.mark.skipif(not shutil.which("gdb"), reason="needs gdb")
def test_all_pairs_but_the_diagonal_are_ranges(omp_build, tmp_path, monkeypatch):
    """tests/programs/nests/skip_self.c over every pair: `if (j != i)` around the whole inner loop body
    (all-pairs interactions) makes each access its loop's range without the element of iteration j == i
    (two range calls), and an invariant address under it (`y[i]`) one element per row: 720 load calls for
    633,600 more pairs. Before: every access was conditional, and the invariant one missed its call-site
    cache on every iteration: 316,389 (an n-body force loop ran 85x native)."""
    exe = omp_build(NESTS / "skip_self.c", opt="-O2")
    loads, stores = site_calls_added(exe, "40", "400", tmp_path, monkeypatch, "all")
    pairs = 4 * (400 * 400 - 40 * 40)  # four kernels over every pair (selfonly too, with a second argument)
    assert 0 < loads <= pairs // 100
    assert 0 < stores <= pairs // 100


@pytest.mark.skipif(not shutil.which("gdb"), reason="needs gdb")
def test_clamped_indices_are_ranges(omp_build, tmp_path, monkeypatch):
    """tests/programs/nests/clamp_index.c's 3x3 blur alone, `g[clampi(y + dy, 0, h - 1) * w + clampi(x + dx, 0,
    w - 1)]`: a clamp of the counter is monotone and moves by at most one element, so the x loop touches
    every element between the clamp's values at its two ends: one range per row and point of the
    neighbourhood. Before: each read a call-site cache, cut where the clamp repeats an element."""
    exe = omp_build(NESTS / "clamp_index.c", opt="-O2")
    loads, stores = site_calls_added(exe, "40", "4000", tmp_path, monkeypatch, "counts")
    pixels = 30 * (4000 - 40)  # 0 load calls (every read a range); 126,720 with the loads per access
    assert loads <= pixels // 50 and stores <= pixels // 50


@pytest.mark.skipif(not shutil.which("gdb"), reason="needs gdb")
def test_an_address_read_again_under_a_test_is_reported_once_per_loop(omp_build, tmp_path, monkeypatch):
    """tests/programs/nests/cond_invariant.c: `if (a[k] > t) b[k] += s[i]` with s[i] read under the test in the
    inner loop (the compiler cannot hoist it): the access of one address over its loop, whose loop holds no
    call, is reported the first time in each run of the loop only (a flag per thread and loop run). Before:
    the call-site cache never took the same bytes twice, a call per true test (a 1024^2 grid: 13.4x native,
    5.4x after, the rest the conditional streams)."""
    exe = omp_build(NESTS / "cond_invariant.c", opt="-O2")
    loads, _stores = site_calls_added(exe, "200", "20000", tmp_path, monkeypatch)
    elements = 16 * (20000 - 200)  # two kernels of 16 rows: s[i] under 70% of the tests, u[i] under 40%
    # 616 load calls; 348,463 with the flag off
    assert 0 < loads <= elements // 50
