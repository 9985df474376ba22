"""Recording survives the launcher and the batch system (issue 17): real programs under real signals.

`trace record` is killed (SIGKILL, SIGTERM) or ends the program itself (--timeout) while the program
runs; no process of the run may be left, and what was recorded before is analysed (a finding recorded
before the end). Crashes on a broken stack (stack overflow) and a program dying while a nowait kernel
runs on a helper thread still leave the events before them.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
from pathlib import Path

import pytest
from quiver.formats import read_log
from run_guard import kill_survivors, marker_line, read_line, start_record, survivors

pytestmark = [pytest.mark.clang, pytest.mark.slow]

PROGRAMS = Path(__file__).resolve().parents[1] / "programs" / "crash"


def _analyze_json(trace_cli_run, log: Path) -> tuple[subprocess.CompletedProcess, dict]:
    r = trace_cli_run("analyze", "-f", "json", str(log))
    return r, json.loads(r.stdout) if r.stdout else {}


def _findings(doc: dict) -> list[tuple[str, str, int]]:
    return sorted((f["kind"], f["variable"], f["access"]["line"]) for f in doc["findings"])


def _stale_a(source: str) -> list[tuple[str, str, int]]:
    return [("use-of-stale-data", "a", marker_line(PROGRAMS / source, "stale"))]


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM])
def test_killing_trace_record_leaves_no_process_and_the_log_is_recovered(omp_build, tmp_path, trace_cli_run, sig):
    exe = omp_build(PROGRAMS / "stale_then_wait.c")
    log = tmp_path / "run.arrow"
    proc, tag = start_record(["-o", str(log), "--", str(exe)], tmp_path)
    try:
        assert read_line(proc).startswith("ready")
        proc.send_signal(sig)
        proc.wait(120)
        assert survivors(tag) == []
    finally:
        kill_survivors(tag)
    raw = tmp_path / "run.arrow.raw"
    if sig == signal.SIGKILL:  # nobody finalized: recover explicitly
        assert proc.returncode == -signal.SIGKILL and raw.is_dir() and not log.exists()
        r = trace_cli_run("recover", str(raw))
        assert r.returncode == 0, r.stderr
        assert r.stderr.startswith(f"trace: recovered {log} from {raw} (")
        assert r.stderr.rstrip().endswith("log truncated: launcher killed)")
        reason = "launcher killed"
    else:  # SIGTERM goes to the program, trace record finalizes
        assert proc.returncode == 128 + signal.SIGTERM
        assert "trace: program killed by signal 15 (SIGTERM); log is truncated" in proc.stderr.read().decode()
        reason = "signal 15 (SIGTERM)"
    assert log.exists() and not raw.exists()
    run = read_log(log).run
    assert run["truncated"] is True and run["truncated_reason"] == reason
    r, doc = _analyze_json(trace_cli_run, log)
    assert r.returncode == 1, r.stderr
    assert _findings(doc) == _stale_a("stale_then_wait.c")
    text = trace_cli_run("analyze", str(log)).stdout.splitlines()
    assert re.fullmatch(rf"==quiver== WARNING: log truncated \({re.escape(reason)}\): events after "
                        r"\d+\.\d{3} (s|ms|us) are missing", text[0]), text[0]


def test_analyze_recovers_an_interrupted_recording_by_itself(omp_build, tmp_path, trace_cli_run):
    exe = omp_build(PROGRAMS / "stale_then_wait.c")
    log = tmp_path / "run.arrow"
    proc, tag = start_record(["-o", str(log), "--", str(exe)], tmp_path)
    try:
        read_line(proc)
        proc.kill()
        proc.wait(120)
        assert survivors(tag) == []
    finally:
        kill_survivors(tag)
    r = trace_cli_run("analyze", str(log))
    assert r.returncode == 1
    assert r.stderr.startswith(f"trace: {log}: its recording was interrupted; recovered it from run.arrow.raw (")
    assert "use-of-stale-data" in r.stdout
    again = trace_cli_run("info", str(log))  # recovered once: nothing more to say
    assert again.returncode == 0 and again.stderr == ""
    assert "status:         TRUNCATED (launcher killed)" in again.stdout


def test_recover_refuses_a_recording_that_is_still_running(omp_build, tmp_path, trace_cli_run):
    exe = omp_build(PROGRAMS / "stale_then_wait.c")
    log = tmp_path / "run.arrow"
    proc, tag = start_record(["-o", str(log), "--", str(exe)], tmp_path)
    try:
        read_line(proc)
        r = trace_cli_run("recover", str(tmp_path / "run.arrow.raw"))
        assert r.returncode == 2
        assert r.stderr == (f"trace: error: {tmp_path / 'run.arrow.raw'} is still being recorded (trace record, "
                            f"pid {proc.pid}, is running)\n")
        info = trace_cli_run("info", str(log))  # no auto-recovery of a live run either
        assert "recovered" not in info.stderr and info.returncode == 2
    finally:
        proc.kill()
        proc.wait(120)
        assert survivors(tag) == []
        kill_survivors(tag)


def test_timeout_ends_the_program_like_a_batch_system(omp_build, tmp_path, trace_cli_run):
    exe = omp_build(PROGRAMS / "stale_then_wait.c")
    log = tmp_path / "run.arrow"
    proc, tag = start_record(["--timeout", "2s", "-o", str(log), "--", str(exe)], tmp_path)
    try:
        out, err = proc.communicate(timeout=120)
        assert survivors(tag) == []
    finally:
        kill_survivors(tag)
    assert proc.returncode == 124
    assert out.decode().startswith("ready")
    assert "trace: time limit reached (2 s): program ended; log is truncated" in err.decode().splitlines()
    run = read_log(log).run
    assert run["truncated"] is True and run["truncated_reason"] == "time limit"
    r, doc = _analyze_json(trace_cli_run, log)
    assert r.returncode == 1 and _findings(doc) == _stale_a("stale_then_wait.c")
    assert doc["summary"]["note"].startswith("log truncated (time limit): events after ")


@pytest.mark.parametrize("bad", ["0", "-3", "soon", "5x"])
def test_timeout_rejects_a_bad_duration(tmp_path, trace_cli_run, bad):
    r = trace_cli_run("record", "--timeout", bad, "-o", str(tmp_path / "x.arrow"), "--", "true")
    assert r.returncode == 2
    assert r.stderr.startswith("trace: error: ") and "duration" in r.stderr and r.stderr.count("\n") == 1
    assert not (tmp_path / "x.arrow").exists()


@pytest.mark.parametrize("where", ["host", "target"])
def test_stack_overflow_leaves_the_events_before_it(record_c, trace_cli_run, where):
    run = record_c(PROGRAMS / "stack_overflow.c", args=[where])
    assert run.returncode == 128 + signal.SIGSEGV
    log = read_log(run.log)
    assert log.run["truncated_reason"] == "signal 11 (SIGSEGV)"
    t = run.open()
    targets = t.events.filter(t.events["kind"] == 20)  # CONSTRUCT_BEGIN
    assert targets.height == (2 if where == "target" else 1)  # the overflow's own region began
    r, doc = _analyze_json(trace_cli_run, run.log)
    assert r.returncode == 1 and _findings(doc) == _stale_a("stack_overflow.c")


def test_nowait_kernel_on_a_helper_thread_keeps_its_accesses_when_the_program_dies(record_c, trace_cli_run):
    run = record_c(PROGRAMS / "nowait_crash.c")
    assert run.returncode == 128 + signal.SIGABRT and run.stdout == "aborting\n"
    r, doc = _analyze_json(trace_cli_run, run.log)
    assert r.returncode == 1
    assert _findings(doc) == [("use-of-uninitialized-memory", "b", marker_line(PROGRAMS / "nowait_crash.c", "uninit"))]
    assert {f["access"]["side"] for f in doc["findings"]} == {"device"}


def _read_until(fd: int, needle: bytes, limit: float = 60.0) -> bytes:
    """What the terminal shows until `needle` appears or the other side closes (a hang guard)."""
    import select

    seen = b""
    while needle not in seen:
        ready, _, _ = select.select([fd], [], [], limit)
        assert ready, f"the terminal showed no {needle!r}: {seen!r}"
        try:
            chunk = os.read(fd, 4096)
        except OSError:  # EIO: the other side is gone
            break
        if not chunk:
            break
        seen += chunk
    return seen


def test_on_a_terminal_the_program_is_the_foreground_job(tmp_path):
    """The program runs in its own process group: on a terminal that group must be the foreground one,
    or reading the terminal would stop it (SIGTTIN)."""
    import pty

    from run_guard import TRACE

    log = tmp_path / "tty.arrow"
    pid, fd = pty.fork()
    if pid == 0:  # the child: a session leader whose terminal is the pty, like a login shell's job
        os.execv(TRACE, [TRACE, "record", "-o", str(log), "--", "/usr/bin/head", "-n1"])
    try:
        _read_until(fd, b"memory accesses are missing")  # `head` was not built with trace cc: the warning
        os.write(fd, b"from the terminal\n")
        shown = _read_until(fd, b"\0")  # until trace record ends and closes the terminal
        _, status = os.waitpid(pid, 0)
        pid = 0
    finally:
        if pid:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        os.close(fd)
    assert os.waitstatus_to_exitcode(status) == 0
    assert shown.count(b"from the terminal") == 2  # the terminal's echo, then head's copy
    assert read_log(log).run["truncated"] is False
