"""`trace record` never destroys what it did not create (issue 21): it refuses, before running the
program, an output that is not a quiver log, the program itself or a directory; it never removes a
user's `<out>.raw/`; it never writes through a link planted beside the output."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from quiver.formats import read_log

TRACE = str(Path(sys.executable).with_name("trace"))

pytestmark = pytest.mark.clang

PROGRAM = "omp/seed000_fig2.c"      # prints nothing, one target region: a recorded run is quick


def record(tmp_path: Path, exe: Path, *out_args: str, refused: bool = True) -> subprocess.CompletedProcess:
    """`trace record OUT_ARGS -- exe`; when it should be refused, the program is a wrapper that would
    leave a marker file `ran` (so the test sees the refusal came before the program ran)."""
    program = exe
    if refused:
        program = tmp_path / "wrap.sh"
        program.write_text(f"#!/bin/sh\ntouch {tmp_path / 'ran'}\nexec {exe} \"$@\"\n")
        program.chmod(0o755)
    return subprocess.run([TRACE, "record", *out_args, "--", str(program)], capture_output=True, text=True,
                          cwd=tmp_path, check=False)


def snapshot(path: Path) -> tuple:
    st = os.lstat(path)
    body = path.read_bytes() if stat.S_ISREG(st.st_mode) else os.readlink(path) if stat.S_ISLNK(st.st_mode) \
        else sorted(p.name for p in path.iterdir())
    return stat.S_IFMT(st.st_mode), st.st_mtime_ns, body


def test_refuses_an_existing_file_that_is_not_a_log(tmp_path, omp_build):
    exe = omp_build(PROGRAM)
    notes = tmp_path / "notes.txt"
    notes.write_text("my notes\n")
    before = snapshot(notes)
    r = record(tmp_path, exe, "-o", str(notes))
    assert r.returncode == 2
    assert r.stderr == f"trace: error: {notes} exists and is not a quiver event log; choose another -o (or --force)\n"
    assert snapshot(notes) == before
    assert not (tmp_path / "ran").exists()           # refused before the program ran
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt", "wrap.sh"]
    r = record(tmp_path, exe, "--force", "-o", str(notes), refused=False)
    assert r.returncode == 0, r.stderr
    assert read_log(notes).num_events > 0


def test_refuses_the_program_and_directories(tmp_path, omp_build):
    exe = omp_build(PROGRAM)
    prog = tmp_path / "prog"
    prog.write_bytes(exe.read_bytes())
    prog.chmod(0o755)
    before = snapshot(prog)
    r = subprocess.run([TRACE, "record", "-o", str(prog), "--", str(prog)], capture_output=True, text=True,
                       cwd=tmp_path, check=False)
    assert r.returncode == 2
    assert r.stderr == f"trace: error: {prog} is the program being recorded; choose another -o (or --force)\n"
    assert snapshot(prog) == before
    outdir = tmp_path / "results"
    outdir.mkdir()
    (outdir / "keep").write_text("x")
    for out in (str(outdir), ""):
        r = record(tmp_path, exe, "-o", out)
        assert r.returncode == 2 and len(r.stderr.splitlines()) == 1, r.stderr
        assert "trace: error:" in r.stderr
        assert not (tmp_path / "ran").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["prog", "results", "wrap.sh"]
    assert [p.name for p in outdir.iterdir()] == ["keep"]


def test_keeps_a_users_raw_directory(tmp_path, omp_build):
    exe = omp_build(PROGRAM)
    raw = tmp_path / "run.arrow.raw"
    raw.mkdir()
    (raw / "data.csv").write_text("1,2\n")
    before = snapshot(raw), snapshot(raw / "data.csv")
    r = record(tmp_path, exe, "-o", "run.arrow")
    assert r.returncode == 2
    assert r.stderr.startswith(f"trace: error: {raw} already exists") and len(r.stderr.splitlines()) == 1
    assert not (tmp_path / "ran").exists()
    r = record(tmp_path, exe, "--force", "-o", "run.arrow", refused=False)   # beside it, never in or over it
    assert r.returncode == 0, r.stderr
    assert read_log(tmp_path / "run.arrow").num_events > 0
    assert (snapshot(raw), snapshot(raw / "data.csv")) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run.arrow", "run.arrow.raw", "wrap.sh"]


def test_never_writes_through_a_planted_link(tmp_path, omp_build):
    exe = omp_build(PROGRAM)
    secret = tmp_path / "secret"
    secret.write_text("private\n")
    secret.chmod(0o600)
    for name in ("run.arrow.part", "run.arrow.raw.part", "run.arrow.tmp"):
        (tmp_path / name).symlink_to(secret)
    before = snapshot(secret)
    r = record(tmp_path, exe, "-o", "run.arrow", refused=False)
    assert r.returncode == 0, r.stderr
    assert snapshot(secret) == before
    assert read_log(tmp_path / "run.arrow").num_events > 0
    assert os.readlink(tmp_path / "run.arrow.part") == str(secret)


def test_an_executable_without_a_shebang_is_unusable_input(tmp_path):
    script = tmp_path / "script"
    script.write_text("echo hi\n")
    script.chmod(0o755)
    r = subprocess.run([TRACE, "record", "-o", "run.arrow", "--", str(script)], capture_output=True, text=True,
                       cwd=tmp_path, check=False)
    assert r.returncode == 2
    assert r.stderr == "trace: error: cannot run " + str(script) + ": not an executable (no ELF header and no #! line)\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["script"]


def test_an_arrow_file_that_is_not_a_log_is_refused_and_a_log_of_another_version_replaced(tmp_path):
    """The check before the program runs reads the footer's bytes (formats/sniff.py): quiver's format
    marker, in any version, is a log to replace; any other Arrow file is the user's."""
    import pyarrow as pa
    from pyarrow import ipc
    from quiver.formats import LogBuilder
    from quiver.tracer.output_guard import OutputRefused, check_output

    def arrow_file(name: str, metadata: dict[str, str]) -> Path:
        path = tmp_path / name
        schema = pa.schema([("x", pa.int64())], metadata=metadata)
        with ipc.new_file(str(path), schema) as w:
            w.write_table(pa.table({"x": [1, 2]}, schema=schema))
        return path

    for path in (arrow_file("table.arrow", {"quiver.run": "{}"}),
                 arrow_file("other.arrow", {"quiver.format": "another-tool"})):
        with pytest.raises(OutputRefused, match="exists and is not a quiver event log"):
            check_output(path, [], split=False, force=False)
    check_output(arrow_file("v99.arrow", {"quiver.format": "quiver-events", "quiver.format_version": "99"}), [],
                 split=False, force=False)                     # quiver's, of another version: replaced
    log = LogBuilder().write(tmp_path / "log.arrow")
    check_output(log, [], split=False, force=False)
    cut = tmp_path / "cut.arrow"
    cut.write_bytes(log.read_bytes()[:-3])                     # no footer magic: not a finished log
    with pytest.raises(OutputRefused):
        check_output(cut, [], split=False, force=False)
