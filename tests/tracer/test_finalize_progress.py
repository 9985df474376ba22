"""`trace record`'s status line while finalizing: the share of events written, on a terminal only."""

from __future__ import annotations

import io
import sys

from quiver.tracer.record import finalizing_status


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_terminal_sees_the_share_of_events_written(monkeypatch, tmp_path):
    err = Terminal()
    monkeypatch.setattr(sys, "stderr", err)
    with finalizing_status(tmp_path, tmp_path / "run.arrow") as progress:
        assert progress is not None
        progress(512, 2048)
        shown = err.getvalue()
    assert "trace: finalizing run.arrow: 25% of 2,048 events" in shown


def test_a_file_or_pipe_gets_nothing(monkeypatch, tmp_path):
    err = io.StringIO()
    monkeypatch.setattr(sys, "stderr", err)
    with finalizing_status(tmp_path, tmp_path / "run.arrow") as progress:
        assert progress is None
    assert err.getvalue() == ""
