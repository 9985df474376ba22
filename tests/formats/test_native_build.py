"""Libraries tuned for the CPU's vector level (formats/native_build.py): named by level, and without a
compiler the best library this CPU runs is used, never one it cannot run."""

from __future__ import annotations

from pathlib import Path

import pytest
from quiver.formats import native_build


@pytest.fixture
def source(tmp_path: Path, monkeypatch) -> Path:
    monkeypatch.setenv("QUIVER_NATIVE_BUILD", str(tmp_path / "cache"))
    src = tmp_path / "answer.c"
    src.write_text("int qv_answer(void) { return 42; }\n")
    return src


def _plant(source: Path, level: str) -> Path:
    """A library file of ``source`` as another machine would have built it for ``level``."""
    key = native_build._source_key("answer", [source], ["-O2"])
    path = native_build.cache_root() / f"{key}-{level}-0badc0de.so"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"")
    return path


def test_a_build_is_named_by_the_level_it_was_tuned_for(source, monkeypatch):
    monkeypatch.setattr(native_build, "cpu_level", lambda: "avx2")
    path = native_build.build_library("answer", [source], ["-O2"])
    assert path.name.split("-")[2] == "avx2" and path.exists()


@pytest.mark.parametrize(("here", "planted", "chosen"), [
    ("avx512", ["base", "avx2"], "avx2"),         # the best one this CPU runs
    ("avx2", ["avx512", "base"], "base"),         # never one tuned beyond this CPU
    ("avx512", ["avx512", "avx2", "base"], "avx512"),
    ("base", ["base"], "base"),
])
def test_without_a_compiler_the_best_library_this_cpu_runs_is_used(source, monkeypatch, here, planted, chosen):
    paths = {level: _plant(source, level) for level in planted}
    monkeypatch.setenv("QUIVER_KERNEL_CC", "no-such-compiler")
    monkeypatch.setattr(native_build, "cpu_level", lambda: here)
    assert native_build.build_library("answer", [source], ["-O2"]) == paths[chosen]


def test_without_a_compiler_a_library_only_for_a_better_cpu_is_refused(source, monkeypatch):
    _plant(source, "avx512")
    monkeypatch.setenv("QUIVER_KERNEL_CC", "no-such-compiler")
    monkeypatch.setattr(native_build, "cpu_level", lambda: "avx2")
    with pytest.raises(native_build.BuildError, match="no C compiler"):
        native_build.build_library("answer", [source], ["-O2"])


def test_the_cpu_level_is_one_of_the_levels():
    assert native_build.cpu_level() in native_build.CPU_LEVELS
