"""The notebooks run top to bottom (nbclient, the python3 kernel of this venv) on logs they record."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
HAVE_CLANG = shutil.which("clang-19") is not None
HAVE_MPI = shutil.which("mpicc.mpich") is not None and shutil.which("mpiexec.mpich") is not None

CASES = [
    pytest.param("01-explore-a-run.ipynb", marks=pytest.mark.skipif(not HAVE_CLANG, reason="needs clang-19")),
    pytest.param("02-find-and-fix-a-mapping-bug.ipynb",
                 marks=pytest.mark.skipif(not HAVE_CLANG, reason="needs clang-19")),
    pytest.param("03-mpi-rma-races.ipynb", marks=pytest.mark.skipif(not (HAVE_CLANG and HAVE_MPI),
                                                                   reason="needs clang-19 and mpich")),
]


def test_notebooks_are_committed_without_outputs():
    names = sorted(p.name for p in NOTEBOOKS.glob("*.ipynb"))
    assert names == ["01-explore-a-run.ipynb", "02-find-and-fix-a-mapping-bug.ipynb", "03-mpi-rma-races.ipynb"]
    for name in names:
        nb = nbformat.read(NOTEBOOKS / name, as_version=4)
        assert all(not c.get("outputs") for c in nb.cells if c.cell_type == "code"), name


@pytest.mark.slow
@pytest.mark.parametrize("name", CASES)
def test_notebook_runs_top_to_bottom(name, monkeypatch):
    # the python3 kernel of this venv first (its kernel.json says "python": this interpreter),
    # whatever other python3 kernels the user has registered
    monkeypatch.setenv("JUPYTER_PATH", str(Path(sys.prefix) / "share" / "jupyter"))
    nb = nbformat.read(NOTEBOOKS / name, as_version=4)
    client = NotebookClient(nb, timeout=900, kernel_name="python3", allow_errors=False,
                            resources={"metadata": {"path": str(NOTEBOOKS)}})
    client.execute()
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]
    assert not [o for o in outputs if o.output_type == "error"]
    pngs = [o for o in outputs if "image/png" in o.get("data", {})]
    assert pngs, f"{name} shows no plot"
