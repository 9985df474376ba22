"""The benchmark kernels (bench/kernels/*.c) and the sizes each mode runs them at.

``full`` sizes run 0.5-5 s natively on 2 cores; ``tools`` sizes are reduced so that valgrind and
the sanitizers finish in seconds (native is measured again at that size for their ratios);
``quick`` sizes only prove the pipeline works (CI smoke).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

KERNEL_DIR = Path(__file__).resolve().parent.parent / "kernels"


@dataclass(frozen=True)
class Kernel:
    name: str
    shape: str                    # what real code it stands for
    full: tuple[str, ...]
    tools: tuple[str, ...]
    quick: tuple[str, ...]
    ranks: int = 0                # > 0: an MPI program run on that many ranks
    needs_libm: bool = False
    path: Path | None = None      # a program of the user's (--source); default bench/kernels/<name>.c

    @property
    def source(self) -> Path:
        return self.path or KERNEL_DIR / f"{self.name}.c"

    @property
    def mpi(self) -> bool:
        return self.ranks > 0

    def args(self, size: str) -> tuple[str, ...]:
        return {"full": self.full, "tools": self.tools, "quick": self.quick}[size]


KERNELS: list[Kernel] = [
    Kernel("stencil", "503.postencil: 7-point 3D stencil, pointer swap", ("256", "100"), ("128", "20"), ("32", "4")),
    Kernel("lbm", "504.polbm: 19-velocity collide and stream", ("64", "100"), ("48", "20"), ("12", "4")),
    Kernel("cg", "554.pcg: CSR sparse CG", ("1000", "250"), ("500", "60"), ("60", "10"), needs_libm=True),
    Kernel("matvec", "dense matrix-vector products", ("4000", "100"), ("2000", "30"), ("200", "10")),
    Kernel("pipeline", "nowait target tasks chained by depend", ("16", "1000000", "60"), ("4", "200000", "4"),
           ("4", "10000", "4")),
    Kernel("halo", "MPI-RMA halo exchange, MPI_Put + fence", ("2000000", "300"), ("500000", "60"),
           ("10000", "10"), ranks=2),
]


def select(names: str | None) -> list[Kernel]:
    """Kernels named in a comma-separated list (all when None); unknown names raise ValueError."""
    if not names:
        return list(KERNELS)
    by_name = {k.name: k for k in KERNELS}
    wanted = [n.strip() for n in names.split(",") if n.strip()]
    unknown = [n for n in wanted if n not in by_name]
    if unknown:
        raise ValueError(f"unknown kernel(s) {', '.join(unknown)}; known: {', '.join(by_name)}")
    return [by_name[n] for n in wanted]


def from_source(path: Path, args: list[str]) -> Kernel:
    """A kernel of the user's own (`bench/run.py --source prog.c --args "..."`): every size runs `args`."""
    if not path.is_file():
        raise ValueError(f"{path}: no such C file")
    t = tuple(args)
    return Kernel(path.stem, f"your program {path.name}", t, t, t, needs_libm=True, path=path.resolve())
