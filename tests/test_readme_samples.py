"""README's sample output is the tool's: run what `make demo` runs (examples/demo.sh) in a copy of
its layout and compare with the README's blocks line by line.

Masked: what changes from run to run or machine to machine (time span, size on disk, how many
threads ran the kernel and so how many sync/access events and accesses there are, stack addresses)."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.clang, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
MASKS = [(re.compile(r"^(time span:|size on disk:|threads:)\s.*$"), r"\1 *"),
         (re.compile(r"^(  sync|  accesses)(\s+)\d+$"), r"\1\2*"),
         (re.compile(r" in \d+ access(es)?$"), " in * accesses"),
         (re.compile(r"\bat 0x[0-9a-f]+\b"), "at 0x*")]


def masked(text: str) -> list[str]:
    out = []
    for line in text.rstrip("\n").splitlines():
        for pattern, repl in MASKS:
            line = pattern.sub(repl, line)
        out.append(line)
    return out


def readme_block(command: str) -> str:
    """The ```text block of README.md that starts with `$ command`."""
    readme = (ROOT / "README.md").read_text()
    start = readme.index(f"```text\n$ {command}\n") + len("```text\n")
    return readme[start:readme.index("\n```", start)]


def test_readme_demo_output_is_current(tmp_path):
    src = tmp_path / "notebooks" / "programs"
    src.mkdir(parents=True)
    shutil.copy(ROOT / "notebooks" / "programs" / "saxpy_bug.c", src)
    (tmp_path / "examples" / "out").mkdir(parents=True)
    trace = str(BIN / "trace")

    def run(*args: str) -> str:
        proc = subprocess.run([trace, *args], cwd=tmp_path, capture_output=True, text=True, check=False)
        assert proc.returncode in (0, 1), proc.stderr
        return proc.stdout.replace(f"{tmp_path}/", "")

    run("cc", "-g", "-O0", "notebooks/programs/saxpy_bug.c", "-o", "examples/out/saxpy_alloc")
    run("record", "-o", "examples/out/saxpy_alloc.arrow", "--", "examples/out/saxpy_alloc")
    for command in ("trace info examples/out/saxpy_alloc.arrow", "trace analyze examples/out/saxpy_alloc.arrow"):
        got = f"$ {command}\n" + run(*command.split()[1:])
        assert masked(got) == masked(readme_block(command)), command


@pytest.mark.skipif(shutil.which("mpiexec.mpich") is None, reason="needs mpich")
def test_readme_mpi_output_is_current(tmp_path):
    """README's MPI-RMA sample: every_race.c recorded on 3 ranks, both races, paths relative."""
    shutil.copy(ROOT / "tests" / "programs" / "mpi" / "every_race.c", tmp_path)
    trace = str(BIN / "trace")
    subprocess.run([trace, "mpicc", "-g", "every_race.c", "-o", "every_race"], cwd=tmp_path, check=True)
    subprocess.run([trace, "record", "-n", "3", "-o", "run.arrow", "--", "./every_race"], cwd=tmp_path, check=True,
                   capture_output=True, timeout=120)
    got = subprocess.run([trace, "analyze", "run.arrow"], cwd=tmp_path, capture_output=True, text=True, check=False)
    assert got.returncode == 1, got.stderr
    command = "trace analyze run.arrow"
    assert masked(f"$ {command}\n" + got.stdout.replace(f"{tmp_path}/", "")) == masked(readme_block(command))


def test_demo_script_prints_its_commands():
    text = (ROOT / "examples" / "demo.sh").read_text()
    assert "printf '\\n$ %s\\n' \"$*\"" in text
    for command in ("trace cc -g -O0 notebooks/programs/saxpy_bug.c -o examples/out/saxpy_alloc",
                    "trace info examples/out/saxpy_alloc.arrow", "trace analyze examples/out/saxpy_alloc.arrow"):
        assert f"run {command}" in text


def test_record_doc_crash_example_is_current(tmp_path):
    """docs/record.md's crash example: the program's output, our one line, the exit status, `trace info`."""
    doc = (ROOT / "docs" / "record.md").read_text()
    start = doc.index("$ trace record -o crash.arrow -- ./crash segv\n")
    block = doc[start:doc.index("\n```", start)]
    trace = str(BIN / "trace")
    shutil.copy(ROOT / "tests" / "programs" / "omp" / "crash.c", tmp_path)
    subprocess.run([trace, "cc", "-g", "-O0", "crash.c", "-o", "crash"], cwd=tmp_path, check=True)
    rec = subprocess.run([trace, "record", "-o", "crash.arrow", "--", "./crash", "segv"], cwd=tmp_path,
                         capture_output=True, text=True, check=False)
    info = subprocess.run([trace, "info", "crash.arrow"], cwd=tmp_path, capture_output=True, text=True, check=True)
    got = ("$ trace record -o crash.arrow -- ./crash segv\n" + rec.stdout + rec.stderr + "$ echo $?\n"
           + f"{rec.returncode}\n$ trace info crash.arrow | head -4\n" + "\n".join(info.stdout.splitlines()[:4]))
    assert got == block


@pytest.mark.parametrize(("source", "lang", "log"), [("tests/programs/omp/seed002_fig1.cpp", "cxx", "run.arrow"),
                                                      ("tests/programs/mapping/release_stale.c", "cc", "release.arrow")])
def test_analyze_doc_examples_are_current(tmp_path, source, lang, log):
    """docs/analyze.md's two reports, paths shown from the checkout's root."""
    doc = (ROOT / "docs" / "analyze.md").read_text()
    first = doc.index(f"at {source}:")
    start = doc.rindex("==quiver== ERROR", 0, first)
    block = doc[start:doc.index("\n```", start)]
    trace = str(BIN / "trace")
    exe = tmp_path / "prog"
    subprocess.run([trace, lang, "-g", source, "-o", str(exe)], cwd=ROOT, check=True)
    subprocess.run([trace, "record", "-o", str(tmp_path / log), "--", str(exe)], cwd=tmp_path, check=True,
                   capture_output=True)
    got = subprocess.run([trace, "analyze", log], cwd=tmp_path, capture_output=True, text=True, check=False)
    assert got.returncode == 1, got.stderr
    assert got.stdout.replace(f"{ROOT}/", "").rstrip("\n") == block
