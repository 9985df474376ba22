"""formats/jit.py: which way a kernel runs for a log of a given size, and QUIVER_JIT overriding it."""

from __future__ import annotations

import pytest
from quiver.formats.jit import SMALL_LOG, kernel, sized, sized_for_work


@kernel
def _twice(x):
    return 2 * x


@pytest.mark.parametrize(("mode", "events", "compiled"), [
    ("auto", 0, False), ("auto", SMALL_LOG, False), ("auto", SMALL_LOG + 1, True),
    ("never", 10**9, False), ("always", 0, True), ("bogus", 10, False),
])
def test_the_log_size_and_quiver_jit_choose(monkeypatch, mode, events, compiled):
    monkeypatch.setenv("QUIVER_JIT", mode)
    with sized(events) as chosen:
        assert chosen is compiled
        assert _twice.compiled is compiled
        if not compiled:
            assert _twice(21) == 42 and not _twice.loaded   # ran as plain Python: numba never asked


def test_outside_an_analysis_kernels_are_compiled_unless_never(monkeypatch):
    monkeypatch.delenv("QUIVER_JIT", raising=False)
    assert _twice.compiled
    monkeypatch.setenv("QUIVER_JIT", "never")
    assert not _twice.compiled


@pytest.mark.parametrize(("mode", "work", "compiled"), [
    ("auto", 10, False), ("auto", SMALL_LOG + 1, True), ("never", 10**9, False), ("always", 10, True),
])
def test_a_checker_with_more_work_than_events_runs_compiled(monkeypatch, mode, work, compiled):
    """A small log of strided rows standing for many blocks: the work decides, not the rows; little work
    leaves the enclosing choice (here: a small log's, interpreted unless QUIVER_JIT=always)."""
    monkeypatch.setenv("QUIVER_JIT", mode)
    with sized(100):
        with sized_for_work(work) as chosen:
            assert chosen is compiled
            assert _twice.compiled is compiled
        assert _twice.compiled is (mode == "always" or (mode == "auto" and _twice.loaded))   # the enclosing choice
