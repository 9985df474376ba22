"""Race checker on real programs compiled with `trace cc` and recorded with `trace record`.

The hidden-helper thread runs each `nowait` task whenever it likes, so assertions hold for every
recorded order: happens-before does not depend on timing.
"""

from __future__ import annotations

import pytest
from quiver.formats import EventKind, SyncKind, read_log
from quiver.replay.nowait.races import check_races
from quiver.replay.registry import CheckOptions

pytestmark = [pytest.mark.clang, pytest.mark.slow]


def races(record_c, src: str, **kw):
    run = record_c(f"nowait/{src}", **kw)
    assert run.returncode == 0, run.stderr
    return check_races(read_log(run.log), CheckOptions())


def test_read_before_taskwait(record_c):
    found = races(record_c, "read_before_taskwait.c")
    assert [(f.variable, f.access.line, f.related[0].site.line, f.details["copy"]) for f in found] == \
        [("a", 10, 8, "host")]
    f = found[0]
    assert f.access.file.endswith("read_before_taskwait.c")
    assert "the copy from the device by `target nowait` (line 8)" in f.related[0].message
    assert f.fix.startswith("add `#pragma omp taskwait` before line 10")


def test_update_before_kernel_ends(record_c):
    found = races(record_c, "update_before_kernel_ends.c")
    assert [(f.variable, f.access.line, f.related[0].site.line, f.details["copy"]) for f in found] == \
        [("x", 10, 9, "device")]
    f = found[0]
    assert "the copy from the device by `target update` (line 10)" in f.message
    assert "kernel of `target nowait` (line 8)" in f.related[0].message
    assert "taskwait` before line 10" in f.fix and "depend(out: x)" in f.fix


def test_seed000_fig2(record_c):
    found = races(record_c, "seed000_fig2.c")
    assert found and {f.variable for f in found} == {"a"}
    # every race pairs the nowait region (launched at line 9, kernel at line 11) with the host side:
    # `a += 1` at 13, the end of the data region (line 7) or the read at 16, depending on when it ran
    for f in found:
        assert f.related[0].site.line in (9, 11), f.message
        assert f.access.line in (7, 13, 16), f.message


@pytest.mark.parametrize("src", ["depend_chain.c", "enter_exit_nowait.c", "taskgroup.c", "many_kernels.c"])
def test_correct_programs_have_no_race(record_c, src):
    assert races(record_c, src) == []


def test_worker_thread_launching_nowait_work(record_c):
    """Correct program: the fork orders the worker's tasks after the initial thread's writes."""
    run = record_c("nowait/parallel_worker.c")
    assert run.returncode == 0, run.stderr
    log = read_log(run.log)
    kind, op = log.col("kind"), log.col("op")
    assert ((kind == int(EventKind.SYNC)) & (op == int(SyncKind.PARALLEL_BEGIN))).any()   # the fork is recorded
    assert check_races(log, CheckOptions()) == []


def test_update_inside_a_data_region(record_c):
    """Whether the kernel ran inside the region (device copy) or after it (the host memory itself,
    its data unmapped), the update at line 12 and the kernel's write at line 11 are unordered."""
    found = races(record_c, "update_in_data_region.c")
    pairs = {(f.variable, f.access.line, f.related[0].site.line) for f in found}
    assert ("a", 12, 11) in pairs
    assert {f.variable for f in found} == {"a"}


def _line(src: str, fragment: str, nth: int = 0) -> int:
    from pathlib import Path

    text = (Path(__file__).resolve().parents[1] / "programs" / "nowait" / src).read_text().splitlines()
    return [n for n, t in enumerate(text, 1) if fragment in t][nth]


def test_an_update_with_depend_then_an_unordered_nowait_kernel(record_c):
    """The update's dependences (an undeferred task's, beside the target tasks') are analysed (they made
    the thread order fail with an IndexError). The update waits for the kernel it depends on: the wait
    is the creator's next row after the dependences, not the dependence row itself, which is recorded
    before the kernel ends (an edge into it ordered nothing: four false races). What is left is the one
    race: the nowait kernel without depend against the update after it."""
    src = "update_depend_then_nowait.c"
    found = races(record_c, src)
    pairs = {(f.variable, f.access.line, f.related[0].site.line) for f in found}
    assert pairs == {("b", _line(src, "#pragma omp target update", 1), _line(src, "b[i] += 1"))}
