"""The layers only point down: formats <- tracer, formats <- replay <- quiver (API, CLI, commands)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# folder -> the quiver sub-packages its modules may import
ALLOWED = {
    "formats": ("quiver.formats",),
    "tracer": ("quiver.formats", "quiver.tracer"),
    "replay": ("quiver.formats", "quiver.replay"),
}


def imported_modules(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(), str(path))
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            out += [(node.lineno, node.module)] + [(node.lineno, f"{node.module}.{a.name}") for a in node.names
                                                    if node.module == "quiver"]
    return out


@pytest.mark.parametrize("folder", sorted(ALLOWED))
def test_imports_point_down(folder):
    bad = []
    for path in sorted((ROOT / folder).rglob("*.py")):
        for line, module in imported_modules(path):
            if module != "quiver" and not module.startswith("quiver."):
                continue
            if module == "quiver" or not module.startswith(ALLOWED[folder]):
                bad.append(f"{path.relative_to(ROOT)}:{line} imports {module}")
    assert not bad, "\n".join(bad)


def test_relative_imports_are_not_used_across_families():
    """Absolute imports everywhere under replay/, so moving a module never changes what it means."""
    bad = [f"{p.relative_to(ROOT)}:{n.lineno}" for p in sorted((ROOT / "replay").rglob("*.py"))
           for n in ast.walk(ast.parse(p.read_text())) if isinstance(n, ast.ImportFrom) and n.level > 1]
    assert not bad, bad


def test_replay_has_a_package_per_checker_family():
    families = {p.name for p in (ROOT / "replay").iterdir() if (p / "__init__.py").is_file()}
    assert {"mapping", "nowait", "rma", "transfers", "distributed", "report"} <= families
    flat = sorted(p.name for p in (ROOT / "replay").glob("*.py"))
    assert flat == ["__init__.py", "driver.py", "log_scan.py", "registry.py"], flat


def test_every_package_ships_in_the_wheel():
    """pyproject lists packages by hand (the folders map into one namespace): a new sub-package missing
    from the list imports in a checkout but not from a wheel."""
    import tomllib

    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    roots = {"quiver": ROOT / "quiver", "quiver.formats": ROOT / "formats", "quiver.replay": ROOT / "replay",
             "quiver.tracer": ROOT / "tracer"}
    found = {name + "".join("." + part for part in init.parent.relative_to(root).parts)
             for name, root in roots.items() for init in root.rglob("__init__.py")
             if "build" not in init.parts}
    assert found == listed, (sorted(found - listed), sorted(listed - found))
