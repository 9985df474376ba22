"""-O0 builds get range calls too (issue 16): the pass analyses a promoted copy of each function and
emits the calls into the unchanged original (docs/cc.md "Optimisation levels").

Real programs built at -O0 with the pass and per access (`--no-range-pass`) must record the same
device bytes per line and give the same findings (kind, variable, line, bytes); the hoisted build
must really contain range calls, and its line table must hold exactly the rows of a build without
the -O0 ranges (QUIVER_NO_O0_RANGES=1)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from test_range_pass import (
    NESTS,
    RANGE,
    expected,
    findings,
    nest3_calls,
    nest_calls,
    same_bytes_as_per_access,
)

pytestmark = pytest.mark.clang

TRACE = str(Path(sys.executable).with_name("trace"))
RANGE_CALL = re.compile(r"call void @__quiver_range_(?:load|store)(?:_w|_strided|_nest|_nest3)?\(.*!dbg !(\d+)")


def device_ir(src: Path, env: dict[str, str] | None = None) -> str:
    return subprocess.run([TRACE, "cc", "-g", "-O0", "-S", "-emit-llvm", "--offload-device-only", str(src), "-o", "-"],
                          capture_output=True, text=True, check=True, env={**os.environ, **(env or {})}).stdout


def range_lines(ir: str) -> set[int]:
    """Source lines of the range calls in an IR listing."""
    loc = dict(re.findall(r"^!(\d+) = !DILocation\(line: (\d+)", ir, re.MULTILINE))
    return {int(loc[d]) for d in RANGE_CALL.findall(ir)}


def test_O0_hoists_affine_loops_only():
    """The 2D sweep with halo (5 accesses, line 21: strided records), the pointer walk (34) and the last loops (39: `v[i]`
    and the loop-invariant `s`; 40, which never runs: a call that reports no bytes) are hoisted; the
    loop whose bound moves (26-27), the loop that breaks (31-32) and the loop calling `fill` (36-37)
    keep their per-access calls."""
    assert range_lines(device_ir(RANGE / "o0_loop_shapes.c")) == {21, 34, 39, 40}
    assert range_lines(device_ir(RANGE / "o0_loop_shapes.c", {"QUIVER_NO_O0_RANGES": "1"})) == set()


@pytest.mark.parametrize("name", ["o0_loop_shapes", "stencil_nest", "inplace_prefix", "hoisted_uninit"])
def test_O0_ranges_record_the_same_bytes_as_per_access(record_c, name):
    src = RANGE / f"{name}.c"
    runs = same_bytes_as_per_access(record_c, src, "-O0")
    assert findings(runs["range"].log, src) == expected(src)


def test_O0_collapsed_loops_are_one_nest_call_per_chunk():
    """At -O0 too a collapsed loop's accesses are one nest call per access and thread chunk (the
    promoted copy's `iv / m` and `iv % m`, its i128 trip count, the divisions by m rebuilt in the
    original as `udiv` by umax(m, 1)), at the lines of the accesses: the 7-point stencil's store and
    its loads (in[c-1], in[c], in[c+1] one record), the rectangles' kernels (the empty block loop's
    too), collapse(3)'s box. QUIVER_NO_O0_RANGES=1: none."""
    halo = device_ir(NESTS / "collapse2_halo.c")
    assert sorted(nest_calls(halo)) == [("load", "0")] * 5 + [("store", "0")]
    assert range_lines(halo) >= {20, 21}
    rect = nest_calls(device_ir(NESTS / "collapse2_rect.c"))
    assert sorted(k for k, _ in rect) == ["load"] * 5 + ["store"] * 3
    assert sorted(nest3_calls(device_ir(NESTS / "collapse3_box.c"))) == [("load", "8")] * 2 + [("store", "8")]
    assert not nest_calls(device_ir(NESTS / "collapse2_halo.c", {"QUIVER_NO_O0_RANGES": "1"}))


def source_lines(obj: Path) -> set[int]:
    """The source lines that have rows in the object's line tables (addresses and columns dropped)."""
    out = subprocess.run(["llvm-dwarfdump-19", "--debug-line", str(obj)], capture_output=True, text=True,
                         check=True).stdout
    return {int(x) for x in re.findall(r"^0x[0-9a-f]+\s+(\d+)\s", out, re.MULTILINE)} - {0}


@pytest.mark.parametrize("src", [RANGE / "o0_loop_shapes.c", NESTS / "collapse2_halo.c"], ids=lambda p: p.stem)
def test_O0_ranges_keep_the_line_table(tmp_path, src):
    """The range code in a preheader carries the preheader's own location and the range calls their
    access's: the host object's line table covers the same source lines with and without the -O0
    ranges (the rows' addresses move, since code is added); the collapsed loop's nest calls too."""
    objs = {}
    for name, env in (("ranges", {}), ("none", {"QUIVER_NO_O0_RANGES": "1"})):
        objs[name] = tmp_path / f"{name}.o"
        subprocess.run([TRACE, "cc", "-g", "-O0", "-c", str(src), "-o", str(objs[name])], check=True,
                       env={**os.environ, **env})
    assert source_lines(objs["ranges"]) == source_lines(objs["none"])
    assert ({7, 21, 34, 39} if src.stem == "o0_loop_shapes" else {16, 20, 21}) <= source_lines(objs["ranges"])
