"""Read a raw directory written by the native tracers (layout: tracer/native/qv_raw.h).

Why: the native side only appends fixed-size records; this module turns them into
numpy arrays in one call per file (no per-event Python loop) for finalize, or, for a small run's
finalize (tracer/finalize_small.py), into bytes: importing this module does not import numpy.
"""

from __future__ import annotations

import contextlib
import mmap
import os
import re
import struct
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

RAW_BYTES = 96                  # sizeof(qv_event_t)
RAW_WORDS = RAW_BYTES // 8      # int64 words per record

# Must match qv_event_t in native/qv_raw.h (96 bytes, native little-endian); a numpy dtype, made on
# first use (module __getattr__ below).
_RAW_FIELDS = (
    [
        ("time_ns", "<i8"),
        ("addr", "<u8"),
        ("addr2", "<u8"),
        ("size", "<u8"),
        ("id", "<i8"),
        ("id2", "<i8"),
        ("aux", "<i8"),
        ("aux2", "<i8"),
        ("pc", "<u8"),
        ("loc_str", "<i4"),
        ("op", "<i4"),
        ("name", "<i4"),
        ("device", "<i4"),
        ("thread", "<i4"),
        ("kind", "<i2"),
        ("flags", "<i2"),
    ]
)


def _raw_dtype() -> Any:
    import numpy as np

    dtype = np.dtype(_RAW_FIELDS)
    assert dtype.itemsize == RAW_BYTES
    globals()["RAW_DTYPE"] = dtype
    return dtype


def __getattr__(name: str) -> Any:
    if name == "RAW_DTYPE":
        return _raw_dtype()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

F_AUX_STR = 0x1
F_AUX2_STR = 0x2
F_PC_RET = 0x4
F_ID2_STR = 0x8
F_NAME_INT = 0x10

_EV_RE = re.compile(r"^r(\d+)\.t(\d+)\.ev$")


# Plain classes, no dataclasses: `trace record` imports this module while a small program runs, and
# `dataclasses` (inspect, ast, dis) costs ~7 ms of CPU that the program's ranks compete for.
class Module(NamedTuple):
    """One loaded ELF object: pc in [lo, hi) symbolises as pc - bias in `path`."""

    bias: int
    lo: int
    hi: int
    path: str


class RankRaw:
    """Everything one rank left in the raw directory."""

    def __init__(self, rank: int, streams: list[Any], strings: list[str], modules: list[Module],
                 info: dict[str, str], nthreads: int = 0, partial_records: int = 0) -> None:
        self.rank = rank
        self.streams = streams    # per thread file, in file order: RAW_DTYPE arrays (memory-mapped), or bytes
        self.strings = strings
        self.modules = modules
        self.info = info
        self.nthreads = nthreads
        self.partial_records = partial_records

    @property
    def events(self) -> Any:
        """All events of the rank in one array (a copy: small raw directories only)."""
        import numpy as np

        return np.concatenate(self.streams) if self.streams else np.zeros(0, _raw_dtype())


def read_events(path: Path) -> tuple[Any, bool]:
    """Events of one thread file, memory-mapped; a trailing partial record (crash mid-write) is dropped."""
    import numpy as np

    dtype = _raw_dtype()
    size = path.stat().st_size
    whole = size // RAW_BYTES
    if whole == 0:
        return np.zeros(0, dtype), size != 0
    return np.memmap(path, dtype=dtype, mode="r", shape=(whole,)), whole * RAW_BYTES != size


def read_event_bytes(path: Path) -> tuple[bytearray, bool]:
    """read_events as the file's whole records, in a (writable, so ctypes can point into it) bytearray."""
    with open(path, "rb") as f:   # read into the bytearray: one copy of the file, not two
        data = bytearray(os.fstat(f.fileno()).st_size)
        got = f.readinto(data)
    del data[got:]
    whole = len(data) // RAW_BYTES * RAW_BYTES
    cut = whole != len(data)
    del data[whole:]
    return data, cut


def map_event_bytes(path: Path) -> tuple[mmap.mmap | bytearray, bool]:
    """read_event_bytes without reading: the file's whole records mapped copy-on-write (writable, so
    ctypes can point into it; nothing is written back). The pages come from the page cache as they
    are read, instead of a copy of the file into fresh memory (17 MB for 12,000 small kernels)."""
    with open(path, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        whole = size // RAW_BYTES * RAW_BYTES
        if not whole:
            return bytearray(), size != 0
        return mmap.mmap(f.fileno(), whole, access=mmap.ACCESS_COPY), whole != size


def read_strings(path: Path) -> list[str]:
    """Interned strings by id; a record cut by a crash is dropped."""
    if not path.exists():
        return []
    buf = path.read_bytes()
    out: dict[int, str] = {}
    pos = 0
    while pos + 8 <= len(buf):
        sid, n = struct.unpack_from("<II", buf, pos)
        if pos + 8 + n > len(buf):
            break
        out[sid] = buf[pos + 8 : pos + 8 + n].decode("utf-8", "replace")
        pos += 8 + n
    strings = [""] * (max(out) + 1 if out else 0)
    for sid, s in out.items():
        strings[sid] = s
    return strings


def read_modules(path: Path) -> list[Module]:
    if not path.exists():
        return []
    mods = []
    for line in path.read_text(errors="replace").splitlines():
        parts = line.split(" ", 3)
        if len(parts) == 4:
            mods.append(Module(int(parts[0], 16), int(parts[1], 16), int(parts[2], 16), parts[3]))
    return mods


def read_info(path: Path) -> dict[str, str]:
    """key=value lines; a key given twice keeps its last value, except list-valued keys."""
    info: dict[str, str] = {}
    if not path.exists():
        return info
    for line in path.read_text(errors="replace").splitlines():
        key, sep, value = line.partition("=")
        if not sep:
            continue
        if key in info and key.endswith("[]"):
            info[key] += "\n" + value
        else:
            info[key] = value
    return info


def ranks_in(raw_dir: Path) -> list[int]:
    ranks = set()
    for p in raw_dir.iterdir():
        m = re.match(r"^r(\d+)\.", p.name)
        if m:
            ranks.add(int(m.group(1)))
    return sorted(ranks)


def raw_event_bytes(raw_dir: Path) -> int:
    """Bytes of the whole raw records written so far (all ranks and threads), without reading them."""
    total = 0
    with contextlib.suppress(OSError):
        for entry in os.scandir(raw_dir):
            if _EV_RE.match(entry.name):
                with contextlib.suppress(OSError):
                    total += entry.stat().st_size // RAW_BYTES * RAW_BYTES
    return total


def read_rank(raw_dir: Path, rank: int, events: Callable[[Path], tuple[Any, bool]] = read_events) -> RankRaw:
    """What rank `rank` left; its thread files read by `events` (read_events or read_event_bytes)."""
    parts, partial, threads = [], 0, 0
    for p in sorted(raw_dir.iterdir()):
        m = _EV_RE.match(p.name)
        if m and int(m.group(1)) == rank:
            ev, cut = events(p)
            parts.append(ev)
            partial += int(cut)
            threads = max(threads, int(m.group(2)) + 1)
    return RankRaw(
        rank=rank,
        streams=parts,
        strings=read_strings(raw_dir / f"r{rank}.str"),
        modules=read_modules(raw_dir / f"r{rank}.mod"),
        info=read_info(raw_dir / f"r{rank}.info"),
        nthreads=threads,
        partial_records=partial,
    )
