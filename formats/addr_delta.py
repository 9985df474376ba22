"""The `addr` column as stored from format version 4: each batch's first value, then the difference
to the previous row (modulo 2^64).

Why: `addr` is the one column whose values barely repeat (a coalesced run's address moves with
every row), so zstd decompressed it at a third of the speed of all the other columns the VSM
reads together; its differences repeat like the other columns (a sweep of 12-byte ranges is
+12, +12, ...), and the log of a stencil or sweep shrinks accordingly. Each record batch is
coded on its own, so any batch decodes without its neighbours; readers of quiver.formats only
ever see absolute addresses (formats/reader.py decodes as it reads).
"""

from __future__ import annotations

from array import array
from itertools import pairwise
from operator import sub
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

_MASK = (1 << 64) - 1


def encode(addr: np.ndarray | array) -> np.ndarray | array:
    """Differences of consecutive values (uint64, wrapping); the first value is kept. An array.array
    (a small run's finalize, no numpy) gives an array.array."""
    if isinstance(addr, array):
        return _encode_array(addr)
    import numpy as np

    out = np.empty(len(addr), np.uint64)
    if len(addr):
        out[0] = addr[0]
        np.subtract(addr[1:], addr[:-1], out=out[1:])
    return out


def _encode_array(addr: array) -> array:
    """encode() of an array.array without numpy. The differences of the values read as int64 are the
    wrapped uint64 differences read as int64 whenever they fit in int64 (addresses of one address
    space always do): computed so at C speed (map), the exact way otherwise."""
    if not len(addr):
        return array("Q")
    signed = memoryview(addr).cast("B").cast("q")
    try:
        out = array("q", [signed[0]])
        out.extend(map(sub, signed[1:], signed))
    except OverflowError:
        return array("Q", [addr[0]] + [(b - a) & _MASK for a, b in pairwise(addr)])
    return array("Q", out.tobytes())


def decode(stored: np.ndarray) -> np.ndarray:
    """The absolute values (the running sum, wrapping modulo 2^64 like the differences)."""
    import numpy as np

    return np.cumsum(stored, dtype=np.uint64)
