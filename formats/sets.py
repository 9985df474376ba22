"""Sorted unique values of an integer array, without `np.unique`.

Why: numpy 2's plain `np.unique(a)` imports numpy.ma on its first call (~10 ms of a small run's
`trace record`) and hashes every value, which on the columns and PC lists finalize and the writer
reduce (a few distinct values among many rows) is several times slower than sorting them.
"""

from __future__ import annotations

import numpy as np


def sorted_unique(values: np.ndarray) -> np.ndarray:
    """What np.unique(values) returns for a 1-D integer array."""
    s = np.sort(np.asarray(values).ravel())
    if len(s) < 2:
        return s
    keep = np.empty(len(s), dtype=bool)
    keep[0] = True
    np.not_equal(s[1:], s[:-1], out=keep[1:])
    return s[keep]
