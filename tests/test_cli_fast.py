"""The command lines `trace` runs without typer (quiver/cli.py fast_command) do what typer would do."""

from __future__ import annotations

import inspect
import os
import subprocess
import sys

import pytest
from quiver.formats import ConstructKind, DataOpKind, LogBuilder, read_log
from quiver.tracer import cc, mpicc
from typer.main import get_command

from quiver import cli
from quiver.cli_app import app, run_app
from quiver.commands import record as record_cli

USUAL_RECORD_LINES = [
    ["--", "./prog"],
    ["-o", "x.arrow", "--", "./prog", "1", "2"],
    ["--output", "x.arrow", "./prog", "-o", "y"],
    ["--output=x.arrow", "--", "./prog"],
    ["-n", "4", "--split", "-o", "run.d", "--", "./app", "--", "x"],
    ["--ranks=12", "--launcher", "mpiexec.mpich -bind-to core", "--", "./app"],
    ["--launcher=srun", "-n", "2", "./app"],
    ["./prog", "--split"],
    ["--split", "--", "-", "x"],
    ["-", "x"],
    ["--timeout", "2m", "-o", "x.arrow", "--", "./prog"],
    ["--timeout=30", "./prog"],
    ["--force", "-o", "x.arrow", "--", "./prog"],
]
TYPER_RECORD_LINES = [  # help, mistakes and rarer spellings
    ["-oX", "--", "./prog"],
    ["-o", "a", "-o", "b", "--", "./prog"],
    ["--output=", "--", "./prog"],
    ["-n", "0", "--", "./prog"],
    ["-n", "x", "--", "./prog"],
    ["-n", "+3", "--", "./prog"],
    ["-n", "-3", "--", "./prog"],
    ["-o", "-x", "--", "./prog"],
    ["--split=1", "--", "./prog"],
    ["-o=x", "--", "./prog"],
    ["--bogus", "--", "./prog"],
    ["-h"],
    ["--help", "--", "./prog"],
    ["-o"],
    ["-o", "x.arrow"],
    ["--"],
    [],
]


def _typer_kwargs(args: list[str], monkeypatch) -> dict | None:
    """What the typer command passes to record_cli.run for `trace record ARGS` (None: a usage error or help)."""
    seen: dict = {}

    def fake_run(program, output, ranks, launcher, split, timeout=None, force=False):
        seen.update(program=program, output=output, ranks=ranks, launcher=launcher, split=split, timeout=timeout,
                    force=force)
        return 0

    monkeypatch.setattr(record_cli, "run", fake_run)
    code = run_app(["record", *args])
    return seen if seen and code == 0 else None


@pytest.mark.parametrize("args", USUAL_RECORD_LINES, ids=" ".join)
def test_usual_record_lines_parse_as_typer_parses_them(args, monkeypatch):
    assert record_cli.parse(args) == _typer_kwargs(args, monkeypatch)


@pytest.mark.parametrize("args", TYPER_RECORD_LINES, ids=lambda a: " ".join(a) or "(none)")
def test_other_record_lines_go_to_typer(args):
    assert record_cli.parse(args) is None


def test_record_options_are_the_typer_commands():
    params = get_command(app).commands["record"].params
    opts = {o for p in params if p.param_type_name == "option" for o in p.opts if o not in ("-h", "--help")}
    assert opts == set(record_cli.VALUE_OPTIONS) | set(record_cli.FLAG_OPTIONS)
    by_param = {p.name: set(p.opts) for p in params if p.param_type_name == "option"}
    for opt, param in (record_cli.VALUE_OPTIONS | record_cli.FLAG_OPTIONS).items():
        assert opt in by_param[param]
    assert {n for n in by_param if n != "help"} | {"program"} == set(inspect.signature(record_cli.run).parameters)


@pytest.mark.parametrize("name", sorted(cli.PASS_THROUGH))
@pytest.mark.parametrize("args", [["-g", "-O2", "x.c", "-o", "x"], [], ["-h"], ["--he", "-"]])
def test_compiler_wrappers_pass_the_same_arguments(name, args, monkeypatch):
    calls = []
    for module in (cc, mpicc):
        monkeypatch.setattr(module, "run", lambda lang, a, m=module: calls.append((m.__name__, lang, list(a))) or 0)
    fast = cli.fast_command([name, *args])
    assert fast is not None and fast() == 0
    assert run_app([name, *args]) == 0
    assert calls[0] == calls[1]


@pytest.mark.parametrize("args", [["cc", "--help"], ["cc", "--", "x.c"], ["mpicc", "--help=1"], ["info", "x"], [],
                                  ["--help"], ["analyze", "-c", "all", "x.arrow"]])
def test_other_lines_go_to_typer(args):
    assert cli.fast_command(args) is None


def test_the_usual_record_line_does_not_import_typer():
    code = ("import sys; from quiver import cli; "
            "assert cli.fast_command(['record', '-o', 'x.arrow', '--', 'true']) is not None; "
            "assert cli.fast_command(['cc', '-c', 'x.c']) is not None; "
            "print(sorted(m for m in ('typer', 'pydantic', 'numpy', 'pyarrow') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


@pytest.fixture
def analyzed_log(tmp_path):
    """A log with a finding: a device read of a section mapped `alloc`."""
    b = LogBuilder(program="./demo", argv=["./demo"], devices=[0])
    b.alloc(0x1000, 400, site=("demo.c", 4, "main"))
    b.access(0x1000, 400, write=True, site=("demo.c", 5, "main"))
    c = b.construct_begin(ConstructKind.TARGET, site=("demo.c", 9, "main"))
    b.map_clause(c, "b", 0x1000, 400, 0, site=("demo.c", 9, "main"), text="alloc: b[0:100]")
    b.data_op(DataOpKind.ALLOC, 0x1000, 0x9000, 400, construct=c, var="b")
    b.access(0x9000, 4, device=0, construct=c, site=("demo.c", 11, "main"), thread=1)
    b.construct_end(c)
    return b.write(tmp_path / "demo.arrow")


@pytest.mark.parametrize("opts", [[], ["--format", "json"], ["-f", "sarif"], ["--format=text"], ["-f", "json", "@"]])
def test_plain_analyze_lines_report_what_typer_reports(analyzed_log, opts, monkeypatch, capsys):
    args = ["analyze", *[str(analyzed_log) if a == "@" else a for a in opts]]
    if "@" not in opts:
        args.append(str(analyzed_log))
    assert cli.fast_command(args) is not None
    fast = cli.run(args), capsys.readouterr()
    monkeypatch.setattr(cli, "fast_command", lambda a: None)
    typer_ran = cli.run(args), capsys.readouterr()
    assert fast == typer_ran
    assert fast[0] == 1 and "b" in fast[1].out


def test_the_usual_analyze_line_imports_only_what_it_needs(analyzed_log):
    """`trace analyze LOG` of a plain offloading log: no typer (quiver/commands/analyze_run.py), no numpy.ma
    (np.unique and wrapping decoded addresses for Arrow import it), no numba (the race, schedule and RMA
    checkers have nothing to do), no shutil (formats/native_build.py `which`), and numpy's OpenBLAS asked for
    one thread. The imports ran without the garbage collector, which is on again for the checks, what they
    loaded frozen (quiver/cli.py `import_without_gc`)."""
    code = ("import gc, os, sys; from quiver import cli; "
            f"code = cli.run(['analyze', '-f', 'json', {str(analyzed_log)!r}]); "
            "print(code, sorted(m for m in ('typer', 'pydantic', 'numpy.ma', 'numba', 'shutil') if m in sys.modules), "
            "os.environ.get('OPENBLAS_NUM_THREADS'), gc.isenabled(), gc.get_freeze_count() > 10_000, file=sys.stderr)")
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env)
    assert out.stderr.strip() == "1 [] 1 True True"


def test_a_clean_log_is_analysed_without_the_diagnosis_modules(tmp_path):
    """`trace analyze` of a clean offloading log: the mapping checker finds nothing, so the modules that word
    findings (replay/mapping/diagnosis.py and what it imports, ~3 ms) are not imported, nor numpy.ma."""
    from quiver.formats import MapType

    b = LogBuilder(program="./demo", argv=["./demo"], devices=[0])
    b.alloc(0x1000, 400, site=("demo.c", 4, "main"))
    b.access(0x1000, 400, write=True, site=("demo.c", 5, "main"))
    c = b.construct_begin(ConstructKind.TARGET, site=("demo.c", 9, "main"))
    b.map_clause(c, "b", 0x1000, 400, MapType.TO, site=("demo.c", 9, "main"), text="to: b[0:100]")
    b.data_op(DataOpKind.ALLOC, 0x1000, 0x9000, 400, construct=c, var="b")
    b.data_op(DataOpKind.TRANSFER_TO, 0x1000, 0x9000, 400, construct=c, var="b")
    b.access(0x9000, 4, device=0, construct=c, site=("demo.c", 11, "main"), thread=1)
    b.construct_end(c)
    log = b.write(tmp_path / "clean.arrow")
    code = ("import sys; from quiver import cli; "
            f"code = cli.run(['analyze', '-f', 'json', {str(log)!r}]); "
            "print(code, sorted(m for m in ('quiver.replay.mapping.diagnosis', 'quiver.replay.mapping.host_objects', "
            "'numpy.ma') if m in sys.modules), file=sys.stderr)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stderr.strip() == "0 []"


def test_analyze_of_a_missing_log_fails_as_with_typer(tmp_path, monkeypatch, capsys):
    args = ["analyze", str(tmp_path / "none.arrow")]
    fast = cli.run(args), capsys.readouterr()
    monkeypatch.setattr(cli, "fast_command", lambda a: None)
    assert fast == (cli.run(args), capsys.readouterr())
    assert fast[0] == 2


@pytest.mark.parametrize("args", [[], ["-c", "mapping", "x"], ["--format", "xml", "x"], ["a", "b"], ["--help"],
                                  ["-f", "json", "--format", "text", "x"], ["--", "x"], ["-f"], ["x", "--baseline"]])
def test_other_analyze_lines_go_to_typer(args):
    assert cli.fast_command(["analyze", *args]) is None


def test_analyze_formats_are_the_typer_commands():
    from quiver.commands.analyze import ReportFormat

    assert {f.value for f in ReportFormat} == set(cli.ANALYZE_FORMATS)
    fmt = next(p for p in get_command(app).commands["analyze"].params if p.name == "fmt")
    assert set(fmt.opts) == {"--format", "-f"}


@pytest.mark.parametrize(("text", "seconds"), [("30", 30), ("30s", 30), ("2m", 120), ("2.5m", 150), ("1h", 3600),
                                               ("1d", 86400), (".5", 0.5)])
def test_timeout_durations(text, seconds):
    from quiver.tracer.launch import parse_duration

    assert parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["", "0", "0s", "-1", "1x", "m", "1 m", "1e3"])
def test_timeout_bad_durations(text):
    from quiver.tracer.launch import parse_duration

    with pytest.raises(ValueError, match="invalid duration"):
        parse_duration(text)


@pytest.mark.parametrize("existing", [False, True])
def test_record_starts_the_program_before_importing_numpy(tmp_path, existing):
    """numpy's import (~0.1 s of CPU) runs while the program runs, not before it starts: `trace record`'s
    path to the launch (the tracer libraries, quiver.formats' package, the check that an existing output
    is a log: formats/sniff.py) imports the standard library only, and not even all of it: dataclasses
    (inspect, ast, dis: ~7 ms of CPU), typing (~2 ms) and hashlib (OpenSSL, ~2 ms) are not needed to start
    the program."""
    out = tmp_path / "x.arrow"
    code = ("import sys; from pathlib import Path; from quiver.tracer import record as r\n"
            "real = r.run_group\n"
            "def spy(cmd, env, **kw):\n"
            "    print(sorted(m for m in ('numpy', 'pyarrow', 'numba', 'dataclasses', 'inspect', 'typing', 'hashlib')\n"
            "                 if m in sys.modules))\n"
            "    return real(cmd, env, **kw)\n"
            "r.run_group = spy\n"
            f"r.record(['true'], Path({str(out)!r}), warn=lambda m: None)\n")
    for _ in range(2 if existing else 1):   # the second run replaces the first one's log
        run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
        assert run.stdout.strip() == "[]", run.stderr
    assert read_log(out).run["argv"] == ["true"]
