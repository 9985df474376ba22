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
