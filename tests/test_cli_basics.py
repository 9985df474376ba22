"""The `trace` command itself: help, `trace info`, and bad input handled in one line with exit 2."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from quiver.formats import FORMAT_VERSION, ConstructKind, DataOpKind, LogBuilder, MapType

TRACE = [sys.executable, "-m", "quiver.cli"]


def run_trace(*args: str | Path) -> subprocess.CompletedProcess:
    return subprocess.run([*TRACE, *map(str, args)], check=False, capture_output=True, text=True, timeout=120)


@pytest.fixture
def demo_log(tmp_path):
    b = LogBuilder(program="./demo", argv=["./demo", "3"], devices=[0])
    b.alloc(0x1000, 400, site=("demo.c", 4, "main"))
    c = b.construct_begin(ConstructKind.TARGET, site=("demo.c", 9, "main"))
    b.map_clause(c, "b", 0x1000, 400, MapType.TO, site=("demo.c", 9, "main"), text="b[0:100]")
    b.data_op(DataOpKind.ALLOC, 0x1000, 0x9000, 400, construct=c, var="b")
    b.access(0x9000, 4, device=0, construct=c, site=("demo.c", 11, "main"), thread=1)
    b.construct_end(c)
    return b.write(tmp_path / "demo.arrow")


def test_help_lists_the_commands():
    out = run_trace("--help")
    assert out.returncode == 0
    for command in ("record", "analyze", "info", "export", "cc", "cxx", "mpicc"):
        assert command in out.stdout


def test_info_describes_the_log(demo_log):
    out = run_trace("info", demo_log)
    assert out.returncode == 0, out.stderr
    assert "program:        ./demo 3" in out.stdout
    assert f"format version: {FORMAT_VERSION}" in out.stdout
    assert "status:         complete" in out.stdout
    as_json = json.loads(run_trace("info", "--json", demo_log).stdout)
    assert as_json["counts"]["maps"] == 1 and as_json["counts"]["data_ops"] == 1
    assert as_json["threads"] == 2 and as_json["devices"] == [0] and as_json["truncated"] is False


def _bad_inputs(tmp: Path, good: Path) -> dict[str, tuple[Path, str]]:
    empty = tmp / "empty.arrow"
    empty.write_bytes(b"")
    text = tmp / "notes.txt"
    text.write_text("not a log\n")
    rand = tmp / "random.bin"
    rand.write_bytes(bytes(range(256)) * 16)
    cut = tmp / "cut.arrow"
    cut.write_bytes(good.read_bytes()[:300])
    return {
        "missing": (tmp / "nope.arrow", "no such file"),
        "empty": (empty, "empty file"),
        "text": (text, "not an Arrow IPC file"),
        "random": (rand, "not an Arrow IPC file"),
        "truncated": (cut, "truncated"),
    }


@pytest.mark.parametrize("command", ["info", "analyze"])
@pytest.mark.parametrize("case", ["missing", "empty", "text", "random", "truncated"])
def test_unusable_input_is_one_line_and_exit_2(tmp_path, demo_log, command, case):
    path, reason = _bad_inputs(tmp_path, demo_log)[case]
    out = run_trace(command, path)
    assert out.returncode == 2
    assert "Traceback" not in out.stderr
    lines = out.stderr.strip().splitlines()
    assert 1 <= len(lines) <= 3
    assert reason in out.stderr


@pytest.mark.parametrize("args", [["info", "--bogus", "x.arrow"], ["frobnicate"], ["analyze", "--format", "xml", "x"]])
def test_unknown_options_and_commands_exit_2_in_one_line(args):
    out = run_trace(*args)
    assert out.returncode == 2
    assert "Traceback" not in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1


def test_version():
    from quiver.formats.version import __version__

    for flag in ("--version", "-V"):
        r = run_trace(flag)
        assert r.returncode == 0 and r.stdout == f"trace (quiver) {__version__}\n" and r.stderr == ""
    assert "--version" in run_trace("--help").stdout


def test_closed_stdout_ends_quietly(demo_log):
    """`trace export -o - | head -c 10`: the reader goes away; like any filter, exit 0 and no message."""
    for args in (["export", str(demo_log), "--to", "chrome", "-o", "-"], ["info", "--json", str(demo_log)]):
        proc = subprocess.Popen([*TRACE, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        proc.stdout.close()                       # nobody reads: every write gets EPIPE
        err = proc.stderr.read().decode()
        assert proc.wait(timeout=120) == 0, err
        assert err == "", err


def test_help_has_readable_types_and_no_boxes():
    r = subprocess.run([*TRACE, "analyze", "--help"], capture_output=True, text=True, check=False,
                       env={**__import__("os").environ, "COLUMNS": "160"})
    assert r.returncode == 0
    assert "<bool>" not in r.stdout and "<path>" not in r.stdout and "╭" not in r.stdout
    assert "  -f, --format [text|json|sarif]  report format  [default: text]" in r.stdout
    assert any(len(line) > 100 for line in r.stdout.splitlines())   # wrapped at the terminal, not at 80


def test_explain_filter_says_what_did_not_match(demo_log):
    r = run_trace("explain", "--variable", "nope", demo_log)
    assert r.returncode == 0
    assert r.stdout.splitlines()[0] == "no target construct maps a variable named `nope` (mapped: b)"
    r = run_trace("explain", "--line", "99", "--format", "json", demo_log)
    assert json.loads(r.stdout)["unmatched"] == "no target construct at line 99 (constructs at lines: 9)"
    assert "unmatched" not in json.loads(run_trace("explain", "--variable", "b", "-f", "json", demo_log).stdout)
