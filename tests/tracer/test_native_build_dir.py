"""Where the native libraries are built: next to their sources when that directory is writable (a
checkout, a virtualenv), else in the user's cache (a wheel installed into a read-only site-packages)."""

from __future__ import annotations

from pathlib import Path

from quiver.tracer import native


def test_read_only_package_builds_in_the_user_cache(monkeypatch, tmp_path: Path) -> None:
    monkeypatch.delenv("QUIVER_NATIVE_BUILD", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setattr(native.os, "access", lambda path, mode: False)
    assert native.build_dir().parent == tmp_path / "quiver" / "native"


def test_writable_package_builds_next_to_its_sources(monkeypatch) -> None:
    monkeypatch.delenv("QUIVER_NATIVE_BUILD", raising=False)
    assert native.build_dir().parent == native.NATIVE_DIR / "build"


def test_the_environment_wins(monkeypatch, tmp_path: Path) -> None:
    monkeypatch.setenv("QUIVER_NATIVE_BUILD", str(tmp_path))
    assert native.build_dir().parent == tmp_path


def test_the_build_hash_reads_the_sources_wherever_the_package_lies(monkeypatch, tmp_path: Path) -> None:
    """The sources are found under a package installed below a directory named `build` (a CI
    workspace, `/tmp/build/venv/...`: every source was skipped before, so the libraries were never
    rebuilt for changed sources), and what past builds and caches left beside them is not listed."""
    native_dir = tmp_path / "build" / "site-packages" / "quiver" / "tracer" / "native"
    for src in native._source_files():
        dst = native_dir / src.relative_to(native.NATIVE_DIR)
        dst.parent.mkdir(parents=True, exist_ok=True)
        dst.write_bytes(src.read_bytes())
    (native_dir / "build" / "0123456789abcdef").mkdir(parents=True)
    (native_dir / "build" / "0123456789abcdef" / "stale.c").write_text("int x;\n")
    (native_dir / "__pycache__").mkdir()
    (native_dir / "__pycache__" / "cached.h").write_text("\n")
    monkeypatch.setattr(native, "NATIVE_DIR", native_dir)
    listed = {p.relative_to(native_dir).as_posix() for p in native._source_files()}
    assert {"qv_access.c", "qv_coalesce.inc", "mpi/qv_mpi.c", "pass/quiver_range.cpp"} <= listed
    assert not any(name.startswith(("build/", "__pycache__/")) for name in listed)
