"""The MPI test programs (tests/programs/mpi/) and what each expects, from its header comment:
``ranks: 3  expect: @B races with @A; @D races with @C`` (or ``expect: none``), where ``@X``
marks a source line with a ``// @X`` comment; the first site is the finding's access, the
second its related "other-access".
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

PROGRAMS = Path(__file__).resolve().parents[1] / "programs" / "mpi"
# hybrid MPI + OpenMP programs (header ``flags: -fopenmp``)
HYBRID = PROGRAMS.parent / "hybrid"

TRACE = str(Path(sys.executable).with_name("trace"))


@dataclass
class Program:
    name: str
    source: Path
    ranks: int
    lines: dict[str, int]                      # marker -> line
    expected: list[tuple[int, int]]            # (access line, other-access line)
    flags: list[str] = field(default_factory=list)   # extra `trace mpicc` flags (header ``flags:``)


def parse(source: Path) -> Program:
    text = source.read_text()
    head = text.split("*/", 1)[0]
    ranks = int(re.search(r"ranks:\s*(\d+)", head).group(1))
    lines = {m: i + 1 for i, line in enumerate(text.splitlines()) for m in re.findall(r"// @(\w)", line)}
    expect = re.search(r"expect:\s*(.*)", head).group(1).strip()
    pairs = re.findall(r"@(\w) races with @(\w)", expect)
    flags = re.search(r"flags:\s*(\S+(?: -\S+)*)", head)
    return Program(source.stem, source, ranks, lines, sorted((lines[a], lines[b]) for a, b in pairs),
                   flags.group(1).split() if flags else [])


def all_programs() -> list[Program]:
    return [parse(p) for p in sorted([*PROGRAMS.glob("*.c"), *HYBRID.glob("*.c")])]
