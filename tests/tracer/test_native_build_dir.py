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
