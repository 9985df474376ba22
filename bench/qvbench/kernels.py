"""The benchmark kernels (bench/kernels/*.c) and the sizes each mode runs them at.

``full`` sizes run 0.5-5 s natively on 2 cores; ``tools`` sizes are reduced so that valgrind and
the sanitizers finish in seconds (native is measured again at that size for their ratios);
``quick`` sizes only prove the pipeline works (CI smoke).

The first six are shaped like the SPEC ACCEL codes the tracer was tuned on; the rest are shapes
nobody tuned for (issue 16): short rows that skip a halo, collapse(3), a strided column sweep, C++
over std::vector::data(), a small program and a small MPI program on 2 ranks (the fixed cost), and
-O0 / -O1 builds. Those have no ``tools`` sizes: the comparison with valgrind and the sanitizers
stays on the first six.
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
    file: str = ""                # source under bench/kernels/ when several kernels share one (stencil96-60)
    opt: str = "-O2"              # optimisation level of both builds
    tuned: bool = True            # one of the six kernels the tracer was tuned on
    openmp: bool = False          # an MPI program built with -fopenmp (hybrid)

    @property
    def source(self) -> Path:
        return self.path or KERNEL_DIR / (self.file or f"{self.name}.c")

    @property
    def cxx(self) -> bool:
        return self.source.suffix in (".cpp", ".cc", ".cxx")

    @property
    def has_tools(self) -> bool:
        return bool(self.tools)

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
    Kernel("halo-omp", "the halo exchange, hybrid: OpenMP threads sweep, the master puts (FUNNELED)",
           ("2000000", "300"), (), ("10000", "10"), ranks=2, file="halo_omp.c", openmp=True, tuned=False),
    # Shapes nobody tuned for (issue 16).
    Kernel("stencil96-60", "7-point float stencil, 96^3, rows of 94, target data + swap", ("96", "60"), (),
           ("24", "4"), file="stencil96.c", tuned=False),
    Kernel("stencil96-600", "the same at 600 sweeps", ("96", "600"), (), ("24", "8"), file="stencil96.c",
           tuned=False),
    Kernel("heat2d", "2D Jacobi heat sweep with a one-cell halo", ("2000", "30"), (), ("64", "4"), tuned=False),
    Kernel("collapse3", "3D box update under collapse(3)", ("160", "16"), (), ("24", "2"), tuned=False),
    Kernel("colmajor", "column-major (strided) sweep of a row-major matrix", ("2048", "8"), (), ("64", "2"),
           tuned=False),
    Kernel("vector", "C++: triad and reduction over std::vector::data()", ("4000000", "20"), (), ("10000", "2"),
           file="vector.cpp", tuned=False),
    Kernel("small", "small test program: one mapped array, one target region (fixed cost)", ("1000",), (),
           ("1000",), tuned=False),
    Kernel("small-mpi", "small MPI-RMA program: 2 ranks, two puts in one fence epoch (fixed cost under mpiexec)",
           ("1000", "1"), (), ("1000", "1"), ranks=2, file="halo.c", tuned=False),
    Kernel("heat2d-O1", "heat2d built -O1", ("2000", "30"), (), ("64", "4"), file="heat2d.c", opt="-O1",
           tuned=False),
    Kernel("heat2d-O0", "heat2d built -O0", ("2000", "10"), (), ("64", "4"), file="heat2d.c", opt="-O0",
           tuned=False),
    Kernel("matvec-O1", "matvec built -O1", ("4000", "20"), (), ("200", "10"), file="matvec.c", opt="-O1",
           tuned=False),
    Kernel("matvec-O0", "matvec built -O0", ("4000", "5"), (), ("200", "10"), file="matvec.c", opt="-O0",
           tuned=False),
    Kernel("box27-O1", "27-point box filter, dz/dy/dx loops of 3 kept by -O1", ("112", "12"), (), ("16", "2"),
           file="box27.c", opt="-O1", tuned=False),
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


def from_source(path: Path, args: list[str], opt: str = "-O2") -> Kernel:
    """A kernel of the user's own (`bench/run.py --source prog.c --args "..." --opt -O1`): every size runs `args`."""
    if not path.is_file():
        raise ValueError(f"{path}: no such C file")
    t = tuple(args)
    return Kernel(path.stem, f"your program {path.name}", t, t, t, needs_libm=True, path=path.resolve(), opt=opt,
                  tuned=False)
