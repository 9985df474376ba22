"""The wrapper's reading of a compiler command line: when it links, compiles, or only prints."""

from __future__ import annotations

import pytest
from quiver.tracer import cc
from quiver.tracer.cc_args import Mode, expand_response_files, mode


@pytest.mark.parametrize(("args", "expected"), [
    (["-v", "probe.o", "-o", "cmTC"], Mode.LINK),                      # CMake's ABI probe
    (["-v", "-c", "probe.c", "-o", "probe.o"], Mode.COMPILE),
    (["prog.c"], Mode.LINK),
    (["-O2", "a.o", "b.o", "-lm", "-o", "app"], Mode.LINK),
    (["-shared", "-fPIC", "lib.c", "-o", "lib.so"], Mode.LINK),
    (["-MD", "-MT", "x.o", "-MF", "x.d", "-c", "x.c"], Mode.COMPILE),
    (["-MMD", "-MP", "x.c", "-o", "x"], Mode.LINK),                     # dependencies as a side effect
    (["-M", "x.c"], Mode.COMPILE),
    (["-E", "conftest.c"], Mode.COMPILE),
    (["-x", "c", "-E", "-"], Mode.COMPILE),
    (["-x", "c", "-"], Mode.LINK),
    (["-S", "x.c"], Mode.COMPILE),
    (["-fsyntax-only", "x.c"], Mode.COMPILE),
    (["x.h"], Mode.COMPILE),                                           # a precompiled header
    (["-x", "c-header", "pch.inc"], Mode.COMPILE),
    (["--version"], Mode.INFO),
    (["-v"], Mode.INFO),
    (["-dumpmachine"], Mode.INFO),
    (["-print-file-name=libomp.so"], Mode.INFO),
    (["-print-search-dirs"], Mode.INFO),
    (["-o", "out.c"], Mode.INFO),                                      # the value of -o is no input
    (["-I", "inc", "-D", "X", "-include", "cfg.h", "-c", "x.c"], Mode.COMPILE),
])
def test_mode(args, expected):
    assert mode(args) is expected


def test_response_files_are_read_for_classifying(tmp_path):
    (tmp_path / "inner.rsp").write_text("-c 'my file.c'\n")
    (tmp_path / "outer.rsp").write_text(f"-O2 @{tmp_path / 'inner.rsp'}\n")
    args = [f"@{tmp_path / 'outer.rsp'}"]
    assert expand_response_files(args) == ["-O2", "-c", "my file.c"]
    assert mode(args) is Mode.COMPILE
    (tmp_path / "link.rsp").write_text("a.o b.o -o app")
    assert mode([f"@{tmp_path / 'link.rsp'}"]) is Mode.LINK
    assert mode(["@missing.rsp"]) is Mode.LINK                            # clang: an input file named so


def test_command_adds_the_tracer_only_when_linking():
    link = cc.command("cc", ["-v", "probe.o", "-o", "probe"])
    assert "-lquiver_rt" in link and "-fopenmp" in link
    compile_only = cc.command("cc", ["-c", "x.c"])
    assert "-fopenmp" in compile_only and "-lquiver_rt" not in compile_only
    assert cc.command("cc", ["--version"]) == [cc.compiler("cc"), "--version"]
    assert cc.command("cc", ["-print-resource-dir", "--no-range-pass"]) == [cc.compiler("cc"), "-print-resource-dir"]
